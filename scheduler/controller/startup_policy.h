#ifndef JOBSET_SCHEDULER_CONTROLLER_STARTUP_POLICY_H_
#define JOBSET_SCHEDULER_CONTROLLER_STARTUP_POLICY_H_

#include <vector>

#include "proto/jobset.pb.h"

namespace jobset::scheduler {

// Returns whether ReplicatedJob `rjob` has started: ready + succeeded +
// failed == replicas (upstream's InOrder and dependsOn "Ready" rule).
bool ReplicatedJobStarted(const api::ReplicatedJob& rjob,
                          const api::ReplicatedJobStatus& status);

// Returns whether every dependsOn item of spec.replicatedJobs[index] holds
// in `statuses` (one per ReplicatedJob, spec order): Ready as
// ReplicatedJobStarted, Complete as succeeded == replicas.
bool DependenciesMet(const api::JobSet& jobset, int index,
                     const std::vector<api::ReplicatedJobStatus>& statuses);

// Returns whether spec.startupPolicy is InOrder.
bool InOrderStartup(const api::JobSet& jobset);

// Which ReplicatedJobs a pass may create or resume Jobs of, in spec order.
struct StartupPlan {
  std::vector<bool> allowed;
  // InOrder only: the walk stopped at a ReplicatedJob that has not started
  // (StartupPolicyInProgress) rather than finding all started.
  bool in_progress = false;
};

// Plans the creation pass (upstream step 13): while suspended, every
// ReplicatedJob without dependsOn; with InOrder, the first one not yet
// started; otherwise each whose dependencies are met.
StartupPlan PlanCreation(const api::JobSet& jobset,
                         const std::vector<api::ReplicatedJobStatus>& statuses);

// Plans the resume pass (upstream's resumeJobsIfNecessary): ReplicatedJobs
// whose dependencies are met; with InOrder, walking past started ones and
// stopping after the first that has not started.
StartupPlan PlanResume(const api::JobSet& jobset,
                       const std::vector<api::ReplicatedJobStatus>& statuses);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_STARTUP_POLICY_H_
