#ifndef JOBSET_SCHEDULER_CONTROLLER_LIMITS_H_
#define JOBSET_SCHEDULER_CONTROLLER_LIMITS_H_

#include <cstdint>

#include "proto/jobset.pb.h"

namespace jobset::scheduler {

// The most pods one attempt of a JobSet may have (the sum over its
// ReplicatedJobs of replicas x parallelism), unless jobsetd's
// --max_pods_per_jobset says otherwise (api::Limits, the same default). API
// validation refuses more at create; the controller checks again (a JobSet
// stored before the limit existed) and fails such a JobSet instead of expanding
// it. Named here so that both can share it.
inline constexpr int64_t kDefaultMaxPodsPerAttempt = 100'000;

// The reasons of a JobSet's Failed condition that the controller sets
// itself (additions; upstream has no counterpart).
// The attempt would have more pods than the limit.
inline constexpr char kReasonTooManyPods[] = "TooManyPods";
// The store refused a write of the JobSet's records (a value or key over
// the store's limits): the JobSet fails rather than the controller.
inline constexpr char kReasonCommitRefused[] = "CommitRefused";
// One of the JobSet's stored records does not decode (set aside, left in
// the store): what the JobSet runs is unknown.
inline constexpr char kReasonUndecodableRecord[] = "UndecodableRecord";

// Returns the pods one attempt of `jobset` has: the sum over its
// ReplicatedJobs of replicas x parallelism (1 when unset), saturated at
// INT64_MAX.
int64_t PodsPerAttempt(const api::JobSet& jobset);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_LIMITS_H_
