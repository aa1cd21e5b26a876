#ifndef JOBSET_SCHEDULER_CONTROLLER_SUCCESS_POLICY_H_
#define JOBSET_SCHEDULER_CONTROLLER_SUCCESS_POLICY_H_

#include <vector>

#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"

namespace jobset::scheduler {

// Returns whether spec.successPolicy is satisfied by the current attempt's
// succeeded Jobs: with operator All, the targeted ReplicatedJobs' (all when
// none are listed) succeeded Jobs number at least the sum of their replicas;
// with Any, at least one targeted Job succeeded.
bool SuccessPolicySatisfied(const api::JobSet& jobset,
                            const std::vector<const api::Job*>& successful);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_SUCCESS_POLICY_H_
