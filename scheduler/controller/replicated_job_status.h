#ifndef JOBSET_SCHEDULER_CONTROLLER_REPLICATED_JOB_STATUS_H_
#define JOBSET_SCHEDULER_CONTROLLER_REPLICATED_JOB_STATUS_H_

#include <vector>

#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"
#include "scheduler/controller/child_jobs.h"

namespace jobset::scheduler {

// Returns whether an unfinished Job counts as ready for JobSet:
// succeeded + ready >= min(parallelism, completions), parallelism 1 when
// unset and completions only when set.
bool JobReady(const api::Job& job);

// Recomputes status.replicatedJobsStatus from the current attempt's Jobs
// (upstream's counting rules: ready, succeeded, failed, active, suspended),
// one entry per ReplicatedJob in spec order, keeping the per-index restart
// arrays of the JobSet's current status.
std::vector<api::ReplicatedJobStatus> ComputeReplicatedJobsStatus(
    const api::JobSet& jobset, const ChildJobs& jobs);

// Returns the status entry of ReplicatedJob `name`, or nullptr.
const api::ReplicatedJobStatus* FindReplicatedJobStatus(
    const api::JobSetStatus& status, absl::string_view name);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_REPLICATED_JOB_STATUS_H_
