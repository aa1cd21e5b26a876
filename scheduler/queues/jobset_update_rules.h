#ifndef JOBSET_SCHEDULER_QUEUES_JOBSET_UPDATE_RULES_H_
#define JOBSET_SCHEDULER_QUEUES_JOBSET_UPDATE_RULES_H_

// The rules Kueue's JobSet webhook adds to creating and updating a JobSet
// (kueue-semantics.md §2.6; Kueue's jobframework ValidateJobOnCreate and
// ValidateJobOnUpdate as the JobSet webhook calls them), in Kubernetes'
// words through api/field_errors.h. They run beside api/validation.h's
// JobSet rules when Kueue's integration is on. Kueue checks every JobSet
// this way, labelled or not; the rules read only Kueue's labels, so an
// unlabelled JobSet passes unless a label is being removed.
//
// Kueue's rules for prebuilt workloads, elastic jobs, admission gates and
// topology-aware scheduling are not here: jobsetd has none of those.

#include "absl/status/status.h"
#include "proto/jobset.pb.h"

namespace jobset::scheduler::queues {

struct KueueValidationOptions {
  // The configuration's manageJobsWithoutQueueName (jobset_workload.h's
  // IsManaged).
  bool manage_jobs_without_queue_name = false;
  // Whether the JobSet's namespace has a LocalQueue named "default" (Kueue's
  // DefaultLocalQueueExist). Read on update only.
  bool default_local_queue_exists = false;
};

// Checks a JobSet being created:
//   metadata.labels[kueue.x-k8s.io/queue-name], when present, is a DNS-1123
//     subdomain (ValidateQueueName; so an empty one is refused);
//   metadata.labels[kueue.x-k8s.io/max-exec-time-seconds], when present, is
//     an integer ("strconv.Atoi: parsing \"1h\": invalid syntax") greater
//     than 0 ("should be greater than 0");
//   jobsetd's own rule: a JobSet Kueue manages has at most 18
//     replicatedJobs, one Workload podSet each (upstream leaves it
//     suspended forever; §6 scenario 38).
// Returns OK, or kInvalidArgument `JobSet "<name>" is invalid: <path>:
// <message>; ...` with every problem.
absl::Status ValidateKueueJobSetCreate(const api::JobSet& jobset,
                                       const KueueValidationOptions& options);

// Checks an update from `old_jobset` to `new_jobset` (ValidateJobOnUpdate),
// "suspended" meaning spec.suspend is true:
//   queue-name may not change unless the new JobSet is suspended ("field is
//     immutable"), and may not be removed in a namespace with a default
//     LocalQueue ("queue-name must not be empty in namespace with default
//     queue");
//   max-exec-time-seconds may not change unless both are suspended;
//   priority-class may not be added unless the new JobSet is suspended
//     ("WorkloadPriorityClass cannot be added to a non-suspended
//     workload"), nor ever removed ("WorkloadPriorityClass cannot be
//     removed from a workload"); changing it is allowed (the Workload's
//     priority follows);
// then ValidateKueueJobSetCreate's rules on `new_jobset`, as Kueue does.
// Returns OK, or kInvalidArgument as ValidateKueueJobSetCreate.
absl::Status ValidateKueueJobSetUpdate(const api::JobSet& old_jobset,
                                       const api::JobSet& new_jobset,
                                       const KueueValidationOptions& options);

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_JOBSET_UPDATE_RULES_H_
