#ifndef JOBSET_SCHEDULER_QUEUES_PENDING_WORKLOADS_H_
#define JOBSET_SCHEDULER_QUEUES_PENDING_WORKLOADS_H_

// Kueue's visibility API (kueue-semantics.md §5): which Workloads wait in a
// ClusterQueue, in the order its queue offers them, with their positions in
// the ClusterQueue and in their LocalQueue. Pure: computed from the stored
// objects on request, as Kueue's queue manager lists its heap and its
// inadmissible set together.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/kueue.pb.h"

namespace jobset::scheduler::queues {

struct PendingPosition {
  const api::Workload* workload = nullptr;
  int32_t position_in_cluster_queue = 0;  // 0-based
  int32_t position_in_local_queue = 0;    // among those of its LocalQueue
};

// Returns the Workloads of `workloads` pending in ClusterQueue
// `cluster_queue`, ordered as its queue offers them: spec.priority
// descending, then Kueue's queue-order time (QueueOrderTime), then uid.
// Pending, as the controller counts a ClusterQueue's pendingWorkloads: not
// Finished, no status.admission, spec.active not false, and spec.queueName
// a LocalQueue of the Workload's namespace that points at `cluster_queue`
// (`local_queues`: "<ns>/<name>" -> spec.clusterQueue). Those the cycle
// holds back (a stopped LocalQueue, a namespace the ClusterQueue does not
// select, BestEffortFIFO's parked ones) are listed too, in their place.
// The sticky head of a preemption in progress is not known here: it is
// listed at its place by priority and time. The returned pointers point
// into `workloads`.
std::vector<PendingPosition> PendingInClusterQueue(
    absl::string_view cluster_queue, absl::Span<const api::Workload> workloads,
    const absl::flat_hash_map<std::string, std::string>& local_queues);

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_PENDING_WORKLOADS_H_
