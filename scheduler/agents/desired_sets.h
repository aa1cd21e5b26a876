#ifndef JOBSET_SCHEDULER_AGENTS_DESIRED_SETS_H_
#define JOBSET_SCHEDULER_AGENTS_DESIRED_SETS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "scheduler/controller/agent_fleet.h"
#include "scheduler/placement/requirements.h"

namespace jobset::scheduler {

// What the pods placed on a node and not stopped take of it.
struct NodeLoad {
  int pods = 0;
  placement::Resources allocated;  // What their Jobs' templates request.
};

// Each node's desired set: every pod the controller placed there and has
// not released, as its launch order (with a stop mark once stopped), and
// the fencing of agents' reports against it: a node speaks only of the pods
// of its own set. Orders are kept as given (they share their Job and host
// table), never copied into wire form. Thread-compatible (the hub guards
// it with its lock).
class DesiredSets {
 public:
  // What a report from a node about a pod is.
  enum class Fence {
    kDesired,  // The pod is in the node's set: the report counts.
    kFenced,   // Not in its set and nobody else's: ignored (and released).
    kForeign,  // Bound to another node: refused (ForeignPod says why).
  };

  // Adds `order` to its node's set (replacing an earlier order of the same
  // pod, its stop mark cleared) and returns it as kept.
  const Assignment& Run(Assignment order);
  // Marks pod `pod_uid` of `node`'s set stopped; false when not in the set.
  bool Stop(const std::string& node, const std::string& pod_uid);
  // Takes pod `pod_uid` out of `node`'s set; its uid is nobody's after.
  void Release(const std::string& node, const std::string& pod_uid);

  // Returns `node`'s set, in uid order (what a Welcome carries).
  std::vector<Assignment> Of(const std::string& node) const;
  // Returns the order of pod `pod_uid` in `node`'s set, or null.
  const Assignment* Find(const std::string& node,
                         const std::string& pod_uid) const;
  // Returns what a report by `node` about pod `pod_uid` is.
  Fence Check(const std::string& node, const std::string& pod_uid) const;
  // Returns kPermissionDenied if `pod_uid` is bound to a node other than
  // `node`, else OK.
  absl::Status ForeignPod(const std::string& node,
                          const std::string& pod_uid) const;
  // Returns what `node`'s unstopped pods request.
  NodeLoad Load(const std::string& node) const;

 private:
  // node -> pod uid -> its order and stop mark.
  std::map<std::string, std::map<std::string, Assignment>> sets_;
  // The node each pod of sets_ is bound to, by uid: a node that speaks of
  // another node's pod is refused, not merely fenced.
  absl::flat_hash_map<std::string, std::string> pod_nodes_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_DESIRED_SETS_H_
