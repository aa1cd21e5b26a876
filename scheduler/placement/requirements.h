#ifndef JOBSET_SCHEDULER_PLACEMENT_REQUIREMENTS_H_
#define JOBSET_SCHEDULER_PLACEMENT_REQUIREMENTS_H_

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/k8s.pb.h"

namespace jobset::scheduler::placement {

// Resource names with a fixed unit. Every other name ("nvidia.com/gpu",
// "google.com/tpu", "ephemeral-storage", ...) is an extended resource counted
// in whole units.
inline constexpr absl::string_view kCpu = "cpu";        // millicores
inline constexpr absl::string_view kMemory = "memory";  // bytes
// When a node declares allocatable "pods", every pod consumes one.
inline constexpr absl::string_view kPods = "pods";

// An amount of each resource. Used for a pod's request and for a node's
// allocatable and allocated capacity.
struct Resources {
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
  // Extended resources by name, in whole units (for example
  // {"nvidia.com/gpu", 8}). Sorted, so that messages are deterministic.
  std::map<std::string, int64_t, std::less<>> extended;

  bool operator==(const Resources&) const = default;
};

// A node selector requirement of required node affinity.
struct NodeSelectorRequirement {
  enum class Operator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
  std::string key;
  Operator op = Operator::kIn;
  std::vector<std::string> values;  // In, NotIn
  int64_t number = 0;               // Gt, Lt

  bool operator==(const NodeSelectorRequirement&) const = default;
};

// Requirements ANDed. An empty term matches no node (as in Kubernetes).
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;

  bool operator==(const NodeSelectorTerm&) const = default;
};

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };

// A Kubernetes toleration. `exists` is operator Exists (else Equal); an unset
// effect tolerates every effect; an empty key with Exists tolerates every
// taint.
struct Toleration {
  std::string key;
  bool exists = false;
  std::string value;
  std::optional<TaintEffect> effect;

  bool operator==(const Toleration&) const = default;
};

// A port a pod claims on its node: the hostPort of a container port, and for
// a hostNetwork pod every container port.
struct HostPort {
  enum class Protocol { kTcp, kUdp, kSctp };
  Protocol protocol = Protocol::kTcp;
  int32_t port = 0;

  auto operator<=>(const HostPort&) const = default;
};

// What one pod of a Job needs from its node. Every pod of a Job shares the
// Job's pod template, so the controller computes this once per template and
// shares it between the Jobs of a ReplicatedJob.
struct PodRequirements {
  // Effective requests, as Kubernetes computes them: requests, else limits,
  // per resource; init containers run one at a time before the containers, so
  // each resource is max(max over init containers, sum over containers).
  Resources resources;
  std::map<std::string, std::string, std::less<>> node_selector;
  // requiredDuringSchedulingIgnoredDuringExecution: terms are ORed. Unset
  // means no constraint; set with no terms matches no node.
  std::optional<std::vector<NodeSelectorTerm>> required_node_affinity;
  std::vector<Toleration> tolerations;
  // Sorted, no duplicates.
  std::vector<HostPort> host_ports;

  bool operator==(const PodRequirements&) const = default;
};

// Computes the requirements of a pod template. Returns kInvalidArgument naming
// the field path (for example "containers[0].resources.requests[cpu]") when a
// quantity, operator, effect or port is malformed, and kOutOfRange when a sum
// overflows.
absl::StatusOr<PodRequirements> RequirementsFromPodSpec(
    const api::PodSpec& spec);

}  // namespace jobset::scheduler::placement

#endif  // JOBSET_SCHEDULER_PLACEMENT_REQUIREMENTS_H_
