#ifndef JOBSET_SCHEDULER_PLACEMENT_FILTERS_H_
#define JOBSET_SCHEDULER_PLACEMENT_FILTERS_H_

// The filters: each answers, for one node and one pod template, whether the
// pod may run there. Place() (placement.cc) runs them in Kubernetes' order:
// schedulable, taints, node affinity/selector, host ports, resources. The
// first that fails names the node's reason in a rejection message.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "scheduler/placement/requirements.h"
#include "scheduler/placement/snapshot.h"

namespace jobset::scheduler::placement {

// Kubernetes' wording for each reason, as in "8 node(s) were unschedulable".
inline constexpr absl::string_view kUnschedulableReason =
    "node(s) were unschedulable";
inline constexpr absl::string_view kNotReadyReason =
    "node(s) had untolerated taint {node.kubernetes.io/not-ready: }";
inline constexpr absl::string_view kAffinityReason =
    "node(s) didn't match Pod's node affinity/selector";
inline constexpr absl::string_view kHostPortsReason =
    "node(s) didn't have free ports for the requested pod ports";
// jobsetd's own reasons, for exclusive topology.
inline constexpr absl::string_view kHeldDomainReason =
    "node(s) were in a topology domain held by another job";
inline constexpr absl::string_view kBusyDomainReason =
    "node(s) were in a topology domain in use by another job";
// A node the JobSet must not use (PlacementRequest::excluded_nodes).
inline constexpr absl::string_view kExcludedReason =
    "node(s) were excluded for this JobSet (straggler)";
// A hot spare, kept for JobSets replacing a lost host.
inline constexpr absl::string_view kSpareReason =
    "node(s) were hot spares (jobsetd.io/spare), kept for replacements";

// Returns whether the toleration tolerates the taint (Kubernetes'
// ToleratesTaint): the effects match or the toleration's is unset; the keys
// match or the toleration's is empty with Exists; Exists ignores the value.
bool Tolerates(const Toleration& toleration, const Taint& taint);

// Returns the first NoSchedule or NoExecute taint that no toleration
// tolerates, or nullptr.
const Taint* FirstUntoleratedTaint(absl::Span<const Taint> taints,
                                   absl::Span<const Toleration> tolerations);

// Returns whether the node's labels satisfy one node selector requirement.
// Gt and Lt compare the label as an integer; a non-integer label fails them.
bool MatchesRequirement(const NodeSelectorRequirement& requirement,
                        const Labels& labels);

// Returns whether every nodeSelector entry equals the node's label.
bool MatchesNodeSelector(
    const std::map<std::string, std::string, std::less<>>& selector,
    const Labels& labels);

// Returns whether any term matches (terms ORed, expressions ANDed; an empty
// term matches nothing). An unset affinity matches every node.
bool MatchesNodeAffinity(
    const std::optional<std::vector<NodeSelectorTerm>>& affinity,
    const Labels& labels);

// Returns whether none of `wanted` is in `used`. Both sorted.
bool HostPortsFree(absl::Span<const HostPort> wanted,
                   absl::Span<const HostPort> used);

// Returns how many pods requesting `request` fit into `free`, at most `limit`
// (`request[r]` and `free[r]` are amounts of the same resource r). A pod that
// requests nothing fits `limit` times.
int64_t PodsThatFit(absl::Span<const int64_t> free,
                    absl::Span<const int64_t> request, int64_t limit);

// The outcome of the filters that depend only on the node record and the
// pod template (not on what this placement has already used).
struct NodeVerdict {
  enum class Kind {
    kFits,
    kUnschedulable,
    kNotReady,
    kUntoleratedTaint,
    kNodeAffinity,
    kHostPorts,
  };
  Kind kind = Kind::kFits;
  const Taint* taint = nullptr;  // for kUntoleratedTaint
};

// Runs the record-only filters in Kubernetes' order and returns the first
// failure: unschedulable (cordoned), not ready, taints, node affinity and
// nodeSelector, host ports already bound on the node.
NodeVerdict CheckNode(const NodeRecord& node,
                      const PodRequirements& requirements);

// Returns the rejection reason of a failed verdict, in Kubernetes' wording.
std::string VerdictReason(const NodeVerdict& verdict);

// Returns Kubernetes' reason for a resource the node lacks: "Insufficient
// nvidia.com/gpu", or "Too many pods" for the pods resource.
std::string InsufficientReason(absl::string_view resource);

}  // namespace jobset::scheduler::placement

#endif  // JOBSET_SCHEDULER_PLACEMENT_FILTERS_H_
