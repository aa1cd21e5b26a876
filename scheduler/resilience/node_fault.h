#ifndef JOBSET_SCHEDULER_RESILIENCE_NODE_FAULT_H_
#define JOBSET_SCHEDULER_RESILIENCE_NODE_FAULT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

// What a pod's failure says about its node. Two kinds are the node's fault,
// not the user's (NodeFault): the node was lost, or a container ended with
// an exit code or signal the operator lists as a device error (a GPU that
// fell off the bus, an uncorrectable ECC error). Such a failure should not
// count against the JobSet's failurePolicy.maxRestarts. Two more kinds only
// count toward quarantining the node (quarantine_ledger.h): a pod that failed
// alone while the rest of its gang was fine, and a straggler.

namespace jobset::scheduler::resilience {

// The taint a quarantined node gets, and the reason of the pod condition,
// JobSet event and attempt record of a NodeFault.
inline constexpr absl::string_view kQuarantineTaintKey =
    "jobsetd.io/quarantined";
inline constexpr absl::string_view kQuarantineTaintEffect = "NoSchedule";
inline constexpr absl::string_view kNodeFaultReason = "NodeFault";

// The DisruptionTarget reason the controller gives the pods of a lost node
// (ControllerCore::LoseNode).
inline constexpr absl::string_view kNodeLostDisruption = "NodeLost";

enum class FaultKind {
  kNodeLost,     // "NodeLost": the node stopped answering
  kDeviceError,  // "DeviceError": an operator-listed exit code or signal
  kLoneFailure,  // "LoneFailure": the only pod of its gang to fail
  kStraggler,    // "Straggler": flagged by straggler_detector.h
};

// Returns "NodeLost", "DeviceError", "LoneFailure" or "Straggler".
absl::string_view FaultKindName(FaultKind kind);
// Returns the kind FaultKindName names, or nullopt.
std::optional<FaultKind> ParseFaultKind(absl::string_view name);

// Returns whether `kind` is the node's fault rather than the user's:
// NodeLost and DeviceError.
bool IsNodeFault(FaultKind kind);

// The exit codes and signals that mean a device error on the node (an
// operator's list, from flags; empty: none).
struct DeviceErrorPolicy {
  std::vector<int32_t> exit_codes{};
  std::vector<int32_t> signals{};
};

// How one container of a failed pod ended.
struct ContainerExit {
  std::string container{};
  int32_t exit_code = 0;
  int32_t signal = 0;    // 0: none
  std::string reason{};  // "Error", "OOMKilled", ...
};

// A failed pod, as the controller sees it.
struct PodFailure {
  std::string pod{};
  std::string node{};
  // The reason of its DisruptionTarget condition, if any ("NodeLost",
  // "Drained", ...).
  std::string disruption_reason{};
  std::vector<ContainerExit> exits{};
  // The pods of its attempt, and how many of the others had failed (or were
  // being stopped for a failure) when it failed.
  int64_t gang_size = 1;
  int64_t others_failed = 0;
};

// A failure attributed to a node.
struct Attribution {
  FaultKind kind{};
  // "node lost", `container "main": exit code 74`, `container "main":
  // signal 7`, `container "main": exit code 1 ("Error"), the only failure
  // of 16 pods` (names and reasons quoted as Go's %q).
  std::string detail{};
  bool operator==(const Attribution&) const = default;
};

// Returns what `failure` says about its node, in this order: NodeLost (the
// disruption reason is NodeLost), DeviceError (the first container whose
// exit code or signal `policy` lists), LoneFailure (a gang of 2 or more, no
// other pod failed, and no container was OOMKilled: memory is the user's
// to size); otherwise nullopt: nothing against the node (a drain, a
// preemption, a bug that failed the whole gang).
std::optional<Attribution> AttributeFailure(const PodFailure& failure,
                                            const DeviceErrorPolicy& policy);

// Returns whether `failure` is a NodeFault: it should not count against
// maxRestarts.
bool IsNodeFault(const PodFailure& failure, const DeviceErrorPolicy& policy);

}  // namespace jobset::scheduler::resilience

#endif  // JOBSET_SCHEDULER_RESILIENCE_NODE_FAULT_H_
