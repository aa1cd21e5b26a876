#ifndef JOBSET_SCHEDULER_QUEUES_FAIR_PREEMPTION_H_
#define JOBSET_SCHEDULER_QUEUES_FAIR_PREEMPTION_H_

// Fair sharing's preemption (kueue-semantics.md §4.5; PRE/preemption.go
// fairPreemptions, PRE/fairsharing/):
//
//   Candidates: the preemptor's ClusterQueue's admitted workloads as
//   withinClusterQueue allows, and, with reclaimWithinCohort, those of every
//   ClusterQueue of its root cohort's tree that borrows on a (flavor,
//   resource) needing preemption; in candidate order (preemption.h).
//   With the preemptor's usage simulated, target ClusterQueues come from the
//   highest share down (a cohort before a ClusterQueue of equal share;
//   subtrees not borrowing are pruned, except on the preemptor's path):
//     - its own ClusterQueue: the next candidate goes (InClusterQueue);
//     - while the preemptor stays within its nominal quota where preemption
//       is needed (FairSharingPreemptWithinNominal, on in Kueue): the next
//       candidate goes (InCohortReclamation);
//     - else the first strategy decides, comparing the shares of the two
//       children of the lowest common ancestor: LessThanOrEqualToFinalShare
//       (preemptor's share after ≤ target's after the removal) or
//       LessThanInitialShare (preemptor's after < target's before). A
//       candidate that passes goes (InCohortFairSharing) and the target is
//       chosen again; one that fails is kept for the second strategy.
//   If the preemptor still does not fit, the second strategy (Kueue allows
//   only LessThanInitialShare there) may take one kept candidate per
//   ClusterQueue. Then fill-back with borrowing allowed. No
//   borrowWithinCohort here.

#include <vector>

#include "absl/time/time.h"
#include "scheduler/queues/cluster_state.h"
#include "scheduler/queues/preemption.h"

namespace jobset::scheduler::queues {

// Returns the targets, or none if the strategies cannot make the preemptor
// (whose fair_sharing is set) fit. `state` is restored.
std::vector<PreemptionTarget> FairPreemptions(const Preemptor& preemptor,
                                              ClusterState& state,
                                              absl::Time now);

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_FAIR_PREEMPTION_H_
