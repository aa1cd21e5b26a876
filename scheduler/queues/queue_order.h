#ifndef JOBSET_SCHEDULER_QUEUES_QUEUE_ORDER_H_
#define JOBSET_SCHEDULER_QUEUES_QUEUE_ORDER_H_

// The order of one ClusterQueue's pending workloads, and where a head that
// was not admitted goes (kueue-semantics.md §3.1, QC/cluster_queue.go).
//
// One heap per ClusterQueue over all its LocalQueues: the sticky preemptor
// first (BestEffortFIFO, while its preemptions run), then priority
// descending, queue-order timestamp ascending, UID. A cycle pops one head
// per ClusterQueue. BestEffortFIFO parks a head that fails with NoFit or no
// preemption candidates in the inadmissible set, so the next one becomes
// head; parked workloads return when capacity in their cohort tree may have
// changed (a workload finished, was deleted or evicted; a ClusterQueue,
// Cohort, flavor or LocalQueue changed). StrictFIFO re-heaps every failure
// but a namespace mismatch, so its head blocks the queue.
//
// Not modelled: the bulk parking of equally shaped workloads
// (SchedulingEquivalenceHashing) and re-heaping a failed head because
// capacity changed while its cycle ran; the caller knows those events.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/quota.h"

namespace jobset::scheduler::queues {

struct PendingWorkload {
  // Shared, not copied: a caller that keeps its models between cycles and
  // runs hands them to each without copying them.
  std::shared_ptr<const Workload> workload;
  // In the inadmissible set: not offered until the caller clears it.
  bool parked = false;
  // requeueState.requeueAt: not offered before (backoff after eviction).
  absl::Time requeue_at = absl::InfinitePast();
};

// The pending workloads of one ClusterQueue.
struct PendingQueue {
  std::string cluster_queue;
  std::vector<PendingWorkload> workloads;  // any order
  // UID of the BestEffortFIFO head waiting for its preemptions; "" none.
  std::string sticky_uid;
};

// Returns whether `a` goes before `b` in a ClusterQueue's heap: higher
// priority, then older queue-order timestamp, then smaller UID.
bool QueueOrderLess(const Workload& a, const Workload& b);

// Returns the indexes of the workloads that may be offered at `now`, in heap
// order with the sticky one first; parked and backing-off ones are left out.
std::vector<size_t> HeapOrder(const PendingQueue& queue, absl::Time now);

// Returns the head: the first index of HeapOrder, if any.
std::optional<size_t> Head(const PendingQueue& queue, absl::Time now);

// Why a head was not admitted, as the queue manager sees it (RequeueReason).
enum class RequeueReason {
  kGeneric,                 // not nominated: queue inactive or missing
  kNamespaceMismatch,       // namespaceSelector (checked by the caller)
  kNoFit,                   // flavor assignment found no fit
  kPreemptionNoCandidates,  // needs preemption, nothing to preempt
  kFailedAfterNomination,   // skipped in its cycle (no longer fits, ...)
  kPendingPreemption,       // preemptions issued; waits for the victims
};

enum class Requeue {
  kHeap,  // offered again next cycle
  kPark,  // parked until capacity may have changed
};

// Returns where a head that was not admitted goes (RequeueWorkload):
// StrictFIFO back to the heap unless the namespace did not match;
// BestEffortFIFO back to the heap only after a failure after nomination or
// with preemptions pending, parked otherwise.
Requeue RequeueAfter(QueueingStrategy strategy, RequeueReason reason);

// Returns whether the head becomes the sticky head: BestEffortFIFO with its
// preemptions pending, so that workloads skipped behind it cannot take the
// freed quota first.
bool BecomesSticky(QueueingStrategy strategy, RequeueReason reason);

// Returns the ClusterQueues whose parked workloads return when capacity
// changes at ClusterQueue `cq`: every queue under the same root cohort (only
// `cq` itself without a cohort), sorted by name. Empty for an unknown queue.
std::vector<std::string> QueuesToUnpark(const QuotaTree& tree,
                                        absl::string_view cq);

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_QUEUE_ORDER_H_
