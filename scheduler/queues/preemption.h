#ifndef JOBSET_SCHEDULER_QUEUES_PREEMPTION_H_
#define JOBSET_SCHEDULER_QUEUES_PREEMPTION_H_

// Classical preemption (kueue-semantics.md §4.1-4.3, PRE preemption.go,
// classical/).
//
// Candidates are admitted workloads using a (flavor, resource) the
// preemptor's assignment marked Preempt:
//   - in its ClusterQueue if withinClusterQueue allows (LowerPriority;
//     LowerOrNewerEqualPriority also takes equal priority queued later):
//     reason InClusterQueue;
//   - with reclaimWithinCohort, in ClusterQueues and subtrees (up to the
//     common ancestor) using more than their quota: InCohortReclamation
//     where the preemptor's side of the tree holds the quota (hierarchical
//     reclaim) or it will not borrow afterwards; InCohortReclaimWhileBorrowing
//     when borrowWithinCohort allows a lower-priority candidate at or below
//     maxPriorityThreshold.
// Candidates are ordered (CandidatesOrdering), removed one by one from a
// simulated snapshot until the preemptor fits, then re-added backwards,
// skipping the last removed, wherever the preemptor still fits; what stays
// removed are the targets.
//
// Beyond Kueue (jobsetd's additions, both off unless the times are set):
//   - Work lost: where Kueue prefers the candidate admitted most recently,
//     we prefer the one whose work since max(quota reservation, last
//     restart) is shortest; without a known restart this is Kueue's order.
//   - Minimum runtime: a workload whose not_preemptible_before is after
//     `now` is no candidate (unless it is already being evicted).

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "scheduler/queues/cluster_state.h"
#include "scheduler/queues/fair_sharing.h"
#include "scheduler/queues/flavor_assigner.h"
#include "scheduler/queues/model.h"

namespace jobset::scheduler::queues {

// Kueue's Preempted condition reasons.
inline constexpr absl::string_view kInClusterQueue = "InClusterQueue";
inline constexpr absl::string_view kInCohortReclamation = "InCohortReclamation";
inline constexpr absl::string_view kInCohortReclaimWhileBorrowing =
    "InCohortReclaimWhileBorrowing";

struct PreemptionTarget {
  const AdmittedWorkload* victim = nullptr;  // points into the ClusterState
  std::string reason;                        // one of the constants above
};

// What the preemptor needs: its workload, ClusterQueue, the (flavor,
// resource) pairs assigned in Preempt mode, and everything it will use.
// With `fair_sharing`, fair_preemption.h chooses the targets.
struct Preemptor {
  const Workload* workload = nullptr;
  const ClusterQueue* cq = nullptr;
  std::set<FlavorResource> need_preemption;
  FlavorResourceQuantities requests;
  const FairSharing* fair_sharing = nullptr;
};

// Returns whether `candidate` may be preempted by the preemptor under
// `policy` (SatisfiesPreemptionPolicy): priority, and queue order for
// LowerOrNewerEqualPriority.
bool SatisfiesPolicy(const Workload& preemptor, const Workload& candidate,
                     PreemptionPolicy policy);

// Returns whether `candidate` may be a candidate at all: it uses one of
// `need_preemption`, and (beyond Kueue) its minimum runtime is over or it
// is already being evicted.
bool MayBeCandidate(const AdmittedWorkload& candidate,
                    const std::set<FlavorResource>& need_preemption,
                    absl::Time now);

// Returns whether candidate `a` is preempted before `b`: already evicted
// first; other ClusterQueues before the preemptor's `cq`; lower priority;
// less work lost (see above; a missing reservation counts as `now`); UID.
bool CandidateLess(const Workload& a, const Workload& b, absl::string_view cq,
                   absl::Time now);

// Returns the workloads to preempt so that the preemptor fits, or none if
// no allowed set makes it fit: classical preemption, or fair sharing's when
// the preemptor carries it. `state` is used for simulation and restored.
std::vector<PreemptionTarget> GetTargets(const Preemptor& preemptor,
                                         ClusterState& state, absl::Time now);

// Returns whether preemption could make room for `quantity` of `fr`
// (the flavor assigner's oracle): no candidates, preemption within the
// ClusterQueue, or reclaim from others, with the borrowing level after.
PreemptionSimulation SimulatePreemption(const Workload& workload,
                                        const ClusterQueue& cq,
                                        const FairSharing* fair_sharing,
                                        const FlavorResource& fr,
                                        int64_t quantity, ClusterState& state,
                                        absl::Time now);

// workloadFits: whether the preemptor's requests are available in its
// ClusterQueue as `tree` stands, within its quota unless `allow_borrowing`.
bool PreemptorFits(const Preemptor& p, const QuotaTree& tree,
                   bool allow_borrowing);

// fillBackWorkloads: with `targets` removed from `state`, re-adds them,
// newest removal first but skipping the last, wherever the preemptor still
// fits; drops those from `targets`, whose usage stays removed.
void FillBack(const Preemptor& p, std::vector<PreemptionTarget>& targets,
              ClusterState& state, bool allow_borrowing);

// Removes or re-adds every target's usage in `state`.
void RemoveTargets(const std::vector<PreemptionTarget>& targets,
                   ClusterState& state);
void RestoreTargets(const std::vector<PreemptionTarget>& targets,
                    ClusterState& state);

// Returns the Evicted / Preempted condition message: "Preempted to
// accommodate a workload (UID: <uid>, JobUID: <job>) due to <why>;
// preemptor path: /<root>/.../<cq>; preemptee path: /.../<cq>".
std::string PreemptionMessage(const Workload& preemptor,
                              absl::string_view reason,
                              absl::string_view preemptor_path,
                              absl::string_view preemptee_path);

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_PREEMPTION_H_
