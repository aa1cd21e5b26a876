#ifndef JOBSET_SCHEDULER_QUEUES_FLAVOR_ASSIGNER_H_
#define JOBSET_SCHEDULER_QUEUES_FLAVOR_ASSIGNER_H_

// Flavor assignment (kueue-semantics.md §3.3-3.4, FA flavorassigner.go).
//
// PodSets go one after another; each sees the usage of the earlier ones, so
// the podSets of one JobSet may land on different flavors. All resources of
// one resource group take the same flavor. Flavors are tried in list order,
// skipping those whose taints the pods do not tolerate or whose nodeLabels
// do not match the pods' selector (restricted to the flavor's label keys).
// Per resource, with `val` = earlier podSets + this one:
//   val > PotentialAvailable          NoFit ("insufficient quota ...")
//   val <= Available                  Fit, at some borrowing level
//   otherwise ("insufficient unused quota ..., N more needed") preemption is
//   simulated if val <= nominal, a subtree below the root could hold it, or
//   borrowWithinCohort is on: reclaim / preempt / no candidates; else NoFit.
// flavorFungibility decides whether to stop at a flavor that needs
// borrowing or preemption; the best flavor seen wins.
//
// Not modelled: resuming from the last tried flavor, TAS, partial admission,
// podSet groups, quotaCheckStrategy IgnoreUndeclared.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/quota.h"

namespace jobset::scheduler::queues {

// Kueue's QuotaReserved False reasons that flavor assignment decides.
inline constexpr absl::string_view kReasonWaitingForQuota = "WaitingForQuota";
inline constexpr absl::string_view kReasonExceedsMaxQuota = "ExceedsMaxQuota";
inline constexpr absl::string_view kReasonNoMatchingFlavor = "NoMatchingFlavor";

// ResourceFlavors by name.
using FlavorIndex = absl::flat_hash_map<std::string, ResourceFlavor>;

// How a flavor can be assigned (FlavorAssignmentMode), worst first.
enum class AssignmentMode { kNoFit, kPreempt, kFit };

// What a preemption simulation found for one (flavor, resource).
enum class PreemptionPossibility { kNoCandidates, kPreempt, kReclaim };

struct PreemptionSimulation {
  PreemptionPossibility possibility = PreemptionPossibility::kNoCandidates;
  // Borrowing level once the targets are gone (see QuotaTree::SubtreeFit).
  int borrow_after = 0;
};

// Simulates preemption for `quantity` of `fr` by the workload being
// assigned: the preemption oracle (preemption.h's SimulatePreemption).
using PreemptionOracle = absl::FunctionRef<PreemptionSimulation(
    const FlavorResource& fr, int64_t quantity)>;

struct FlavorChoice {
  std::string flavor;
  AssignmentMode mode = AssignmentMode::kFit;
  int borrow = 0;  // borrowing level; 0 = within the ClusterQueue
};

struct PodSetFlavors {
  std::string name;
  int32_t count = 0;
  ResourceQuantities requests;  // the podSet's total, pods included
  // Resource -> flavor; empty when no flavor was found for some resource.
  std::map<std::string, FlavorChoice> flavors;
  // Why the podSet is not a plain fit; printed sorted, ", "-joined.
  std::vector<std::string> reasons;

  // Returns the worst mode over its resources (RepresentativeMode).
  AssignmentMode Mode() const;
};

struct Assignment {
  // In workload order, up to and including the first podSet without a
  // flavor.
  std::vector<PodSetFlavors> pod_sets;
  int borrowing = 0;               // the highest borrowing level
  FlavorResourceQuantities usage;  // what the admission adds
  // One of the kReason* constants when Mode() is kNoFit.
  std::string no_fit_reason;

  // Returns the worst mode over the podSets; kNoFit with no podSets.
  AssignmentMode Mode() const;
  // Returns "couldn't assign flavors to pod set <ps>: <reasons>", one per
  // podSet that is not a plain fit, "; "-joined; "" when all fit.
  std::string Message() const;
  // Returns the (flavor, resource) pairs assigned in kPreempt mode.
  std::set<FlavorResource> NeedPreemption() const;
  // Returns status.admission for ClusterQueue `cq`.
  Admission ToAdmission(const std::string& cq) const;
};

// Returns why the pods cannot use the flavor ("untolerated taint {...} in
// flavor f", "flavor f doesn't match node affinity"), or nullopt if they
// can. Selector and affinity keys the flavor does not define are ignored.
std::optional<std::string> FlavorMismatch(const PodPlacement& pods,
                                          const ResourceFlavor& flavor);

// Returns the per-pod requests times count, plus "pods" = count when the
// ClusterQueue covers "pods".
ResourceQuantities PodSetRequests(const PodSet& pod_set,
                                  const ClusterQueue& cq);

// Assigns a flavor to every resource of every podSet of `workload` in
// ClusterQueue `cq`, against the quota in `tree`; `oracle` simulates
// preemption where quota is short (with `fair_sharing`, also while borrowing
// when reclaimWithinCohort allows). Pure apart from `oracle`; reads no clock.
Assignment AssignFlavors(const Workload& workload, const ClusterQueue& cq,
                         const FlavorIndex& flavors, const QuotaTree& tree,
                         PreemptionOracle oracle, bool fair_sharing);

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_FLAVOR_ASSIGNER_H_
