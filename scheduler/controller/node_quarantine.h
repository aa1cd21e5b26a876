#ifndef JOBSET_SCHEDULER_CONTROLLER_NODE_QUARANTINE_H_
#define JOBSET_SCHEDULER_CONTROLLER_NODE_QUARANTINE_H_

#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "scheduler/controller/agent_fleet.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/node_sink.h"
#include "scheduler/controller/pass_writes.h"
#include "scheduler/controller/reconcile_pass.h"
#include "store/store.h"

namespace jobset::scheduler {

// Bad-host quarantine's keeping (docs/resilience.md; --quarantine_after):
// the ledger the passes record failures in (node_faults.cc), persisted one
// record per node ("quarantine/<node>", store/keys.h) in the passes that
// change it, and the node taint kept in step with it:
//   - a decided quarantine is tainted once its pass is durable (a pass that
//     did not commit keeps its decisions and records for the next one);
//   - the operator removing the taint (jobsetctl taint NODE
//     jobsetd.io/quarantined-) releases the node: its count starts at zero;
//   - a node quarantined in the ledger that registers without the taint
//     before the taint was ever seen (jobsetd stopped between the commit and
//     the taint) is tainted again.
// Used only from the controller thread.
class NodeQuarantine {
 public:
  // Returns the keeping of a ledger with `config`, or the config's error.
  static absl::StatusOr<NodeQuarantine> Create(
      const resilience::QuarantineConfig& config,
      resilience::DeviceErrorPolicy devices);

  // Replaces the ledger with the store's records. A record that does not
  // decode or does not check is logged and left out (its node starts from
  // zero); errors are the store's only.
  absl::Status Load(store::Store& store);

  // What a reconcile pass records failures in.
  QuarantineState& pass_state() { return state_; }

  // The node registry's view of `node` arrived (ControllerCore::SetNode).
  void ObserveNode(const NodeInfo& node);

  // After the pass's reconcile, before its placement: the nodes it decided
  // to quarantine carry the taint in `state` at once, so that no gang (the
  // very one that failed there, restarting) is placed on one before the
  // registry's taint comes back. Returns whether a node changed.
  bool TaintDecided(ControllerState& state);

  // Before a pass's commit: drops failures out of the window (at most once a
  // minute) and writes every changed node's record (or its deletion).
  void Stage(absl::Time now, PassWrites& writes);

  // After the pass's commit: `durable` says whether it landed. Taints what
  // it decided (and what ObserveNode found untainted) on `fleet`.
  void Committed(bool durable, AgentFleet& fleet);

 private:
  NodeQuarantine(const resilience::QuarantineConfig& config,
                 QuarantineState state)
      : config_(config), state_(std::move(state)) {}

  resilience::QuarantineConfig config_;
  QuarantineState state_;
  // Nodes seen carrying the quarantine taint since this jobsetd started.
  std::set<std::string> tainted_;
  // Quarantined nodes seen without it before it was ever seen: tainted again.
  std::set<std::string> retaint_;
  // Records written by the pass being committed.
  std::set<std::string> staged_;
  absl::Time last_prune_ = absl::InfinitePast();
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_NODE_QUARANTINE_H_
