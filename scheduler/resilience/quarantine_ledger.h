#ifndef JOBSET_SCHEDULER_RESILIENCE_QUARANTINE_LEDGER_H_
#define JOBSET_SCHEDULER_RESILIENCE_QUARANTINE_LEDGER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/resilience.pb.h"
#include "scheduler/resilience/node_fault.h"

// Node quarantine: failures attributed to a node (node_fault.h), across
// JobSets, counted over a sliding window; the failure that brings a node to
// the threshold decides its quarantine (the controller taints it
// kQuarantineTaintKey:kQuarantineTaintEffect and emits the evidence).
//
// Counting rules:
//   - a failure counts while it is younger than the window: one exactly
//     `window` old no longer counts;
//   - each JobSet restart attempt counts once per node (the first failure
//     recorded for it), so that one bad gang losing 8 pods on a node, or a
//     straggler flagged on every pass, is one failure, not 8; another
//     attempt of the same JobSet counts again;
//   - the ledger's clock never runs back: a failure stamped before the
//     latest time seen is counted at its own time, but windows are measured
//     from the latest time.
// Bounded: at most max_evidence_per_node failures per node (the oldest go
// first) and max_nodes nodes (the node whose last failure is oldest goes
// first, quarantined nodes last); Record costs O(log nodes + evidence).

namespace jobset::scheduler::resilience {

struct QuarantineConfig {
  // --quarantine_after: failures in the window that quarantine a node.
  int threshold = 3;
  // --quarantine_window.
  absl::Duration window = absl::Hours(24);
  // Bounds; threshold must not exceed max_evidence_per_node.
  int max_evidence_per_node = 16;
  int max_nodes = 10000;
};

// Returns OK, or kInvalidArgument naming the setting out of range:
// threshold in [1, max_evidence_per_node], window positive and finite,
// max_nodes at least 1.
absl::Status ValidateQuarantineConfig(const QuarantineConfig& config);

// One failure attributed to a node.
struct Evidence {
  absl::Time time{};
  FaultKind kind = FaultKind::kLoneFailure;
  std::string jobset_namespace{};
  std::string jobset_name{};
  std::string jobset_uid{};
  int32_t attempt = 0;
  std::string pod{};
  std::string detail{};
  bool operator==(const Evidence&) const = default;
};

struct QuarantineDecision {
  std::string node{};
  // The failures in the window, oldest first.
  std::vector<Evidence> evidence{};
  // For the node's event, e.g.
  //   3 failures in 24h (quarantine after 3): 2024-05-01T10:00:00Z NodeLost
  //   default/train attempt 0 pod train-w-0-0 (node lost); ...
  std::string message{};
};

// The ledger. Thread-compatible; used only from the controller thread.
class QuarantineLedger {
 public:
  // Returns a ledger, or ValidateQuarantineConfig's error.
  static absl::StatusOr<QuarantineLedger> Create(
      const QuarantineConfig& config);

  // Returns the ledger `state` describes (as ToProto wrote it), or
  // kInvalidArgument naming what a stored record got wrong (an unknown kind,
  // a bad time, a node listed twice). Evidence beyond the bounds is dropped,
  // oldest first.
  static absl::StatusOr<QuarantineLedger> FromProto(
      const QuarantineConfig& config, const api::QuarantineLedgerState& state);

  // Records `evidence` against `node`. Returns the decision when it brings
  // a node not already quarantined to the threshold; nullopt otherwise (also
  // for evidence already outside the window, or for an attempt already
  // counted on the node, or stamped with an infinite time).
  std::optional<QuarantineDecision> Record(const std::string& node,
                                           Evidence evidence);

  // Returns how many failures count against `node` at `now` (or at the
  // latest time seen, if later).
  int Count(const std::string& node, absl::Time now) const;

  // Returns whether a quarantine of `node` was decided and not released.
  bool IsQuarantined(const std::string& node) const;

  // The operator lifted the quarantine (removed the taint): forgets the
  // node's failures, so that it starts again from zero.
  void Release(const std::string& node);

  // Drops failures outside the window at `now` and nodes left with none
  // (unless quarantined).
  void Prune(absl::Time now);

  size_t node_count() const { return nodes_.size(); }

  // Returns the persisted form, nodes by name.
  api::QuarantineLedgerState ToProto() const;

  // The persisted form of one node (as ToProto lists it), or nullopt when
  // the ledger no longer holds it.
  std::optional<api::NodeFaultRecord> NodeRecord(const std::string& node) const;

  // Returns the nodes whose record changed (added to, released, evicted or
  // pruned) since the last call, and forgets them: what to write back.
  std::set<std::string> TakeChanged() { return std::exchange(changed_, {}); }
  // Puts `nodes` back among the changed ones (their write did not land).
  void MarkChanged(const std::set<std::string>& nodes) {
    changed_.insert(nodes.begin(), nodes.end());
  }

 private:
  struct Node {
    std::vector<Evidence> evidence{};  // oldest first
    bool quarantined = false;
    // The latest failure ever recorded (pruning keeps it): eviction order.
    absl::Time last = absl::InfinitePast();
  };
  // Eviction order: unquarantined before quarantined, then oldest `last`.
  using EvictionKey = std::tuple<bool, absl::Time, std::string>;

  explicit QuarantineLedger(const QuarantineConfig& config) : config_(config) {}

  static EvictionKey KeyOf(const std::string& name, const Node& node) {
    return {node.quarantined, node.last, name};
  }
  // Returns whether `e` still counts at `now`.
  bool InWindow(const Evidence& e, absl::Time now) const;
  void PruneNode(Node& node, absl::Time now) const;
  void Erase(std::map<std::string, Node>::iterator it);
  QuarantineDecision Decide(const std::string& name, const Node& node) const;

  QuarantineConfig config_;
  std::map<std::string, Node> nodes_;
  std::set<EvictionKey> eviction_order_;  // one key per node
  std::set<std::string> changed_;
  absl::Time latest_ = absl::InfinitePast();
};

}  // namespace jobset::scheduler::resilience

#endif  // JOBSET_SCHEDULER_RESILIENCE_QUARANTINE_LEDGER_H_
