#ifndef JOBSET_SCHEDULER_AGENTS_NODE_ADMIN_H_
#define JOBSET_SCHEDULER_AGENTS_NODE_ADMIN_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/agent.pb.h"

// NodeRestriction, as Kubernetes' admission plugin of that name: what a node
// says of itself (its Hello) and what only an admin sets (jobsetctl
// label|taint node) are kept apart in its record (NodeRecord.admin), and
// merged here. Pure functions.
namespace jobset::scheduler {

// Returns the node's labels as placement and `get nodes` see them: those it
// reports (never a restricted one, agent_input.h IsRestrictedNodeLabel),
// less those an admin removed, with those an admin set over them.
std::map<std::string, std::string> EffectiveLabels(
    const api::NodeRecord& record);

// Returns the node's taints: the admin's (NodeRecord.admin); for a record
// stored before admin existed, what its registration had.
std::vector<api::Taint> EffectiveTaints(const api::NodeRecord& record);

// Returns `record`'s registration with its labels and taints as above.
api::NodeRegistration EffectiveRegistration(const api::NodeRecord& record);

// Folds a node's Hello into its stored record `record` (empty for a node
// never seen): the registration becomes `hello` without its taints (the
// caller dropped its restricted labels). A record without admin state takes
// the taints it had (stored before the upgrade) or, for a new node, the
// Hello's, as Kubernetes lets a kubelet register with taints
// (--register-with-taints) and never change them after. Returns whether the
// record changed; sets `*taints_ignored` when the Hello's taints differ from
// the node's (they are not applied).
bool MergeHello(const api::NodeRegistration& hello, api::NodeRecord& record,
                bool* taints_ignored);

// Applies `request` (jobsetctl label node) to `record`, all or nothing:
// labels set and removed by an admin. kInvalidArgument naming the label
// ("labels[k]: ...") or, without overwrite, kubectl's "'k' already has a
// value (v), and --overwrite is false"; kResourceExhausted past
// kMaxNodeLabels.
absl::Status ApplyLabels(const api::LabelNodeRequest& request,
                         api::NodeRecord& record);

// Applies `request` (jobsetctl taint node) to `record`, all or nothing, as
// kubectl's ReorganizeTaints: added taints replace those of the same key and
// effect (only with overwrite; else kubectl's "Node N already has K taint(s)
// with same effect(s) and --overwrite is false"), removed ones must exist
// ("taint \"k:NoSchedule\" not found"); kInvalidArgument naming the field
// ("add[0].effect") for a bad taint.
absl::Status ApplyTaints(const api::TaintNodeRequest& request,
                         api::NodeRecord& record);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_NODE_ADMIN_H_
