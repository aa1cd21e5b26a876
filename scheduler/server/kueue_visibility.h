#ifndef JOBSET_SCHEDULER_SERVER_KUEUE_VISIBILITY_H_
#define JOBSET_SCHEDULER_SERVER_KUEUE_VISIBILITY_H_

// Kueue's visibility API (proto/kueue_service.proto ListPendingWorkloads):
// the pending Workloads of a ClusterQueue or a LocalQueue with their
// positions (scheduler/queues/pending_workloads.h), read from the store on
// each request through KueueApi. Costs one read of every LocalQueue and
// every Workload: a diagnostic call, not a watch.

#include "absl/status/statusor.h"
#include "proto/kueue_service.pb.h"
#include "scheduler/server/kueue_api.h"

namespace jobset::scheduler {

// Kueue's default `limit`, and jobsetd's bound on it (a reply of 10,000
// items is about 2 MiB).
inline constexpr int64_t kPendingWorkloadsDefaultLimit = 1000;
inline constexpr int64_t kPendingWorkloadsMaxLimit = 10000;

// INVALID_ARGUMENT unless exactly one of cluster_queue and local_queue is
// set and limit and offset are in bounds; NOT_FOUND in Kubernetes' words
// for a ClusterQueue or LocalQueue that does not exist. The LocalQueue form
// lists that LocalQueue's Workloads only, with their positions in its
// ClusterQueue too (none while it points at no ClusterQueue that exists).
absl::StatusOr<api::PendingWorkloadsSummary> ListPendingWorkloads(
    KueueApi& api, const api::ListPendingWorkloadsRequest& request);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_SERVER_KUEUE_VISIBILITY_H_
