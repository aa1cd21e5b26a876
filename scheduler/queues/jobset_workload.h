#ifndef JOBSET_SCHEDULER_QUEUES_JOBSET_WORKLOAD_H_
#define JOBSET_SCHEDULER_QUEUES_JOBSET_WORKLOAD_H_

// Kueue's JobSet integration, from a JobSet to the Workload the admission
// core reads (kueue-semantics.md §2.1-2.3; Kueue's pkg/controller/jobframework
// and pkg/controller/jobs/jobset): which JobSets Kueue manages, the
// Workload's name, one podSet per replicatedJob with its per-pod requests,
// and the whole Workload. Pure functions of the JobSet and of what the
// caller looked up for it (the ClusterQueue of its LocalQueue, the
// WorkloadPriorityClasses); no store, no clock.
//
// The JobSet is read as stored: defaulted (api/defaults.h) and validated
// (api/validation.h), so that requests never exceed limits and quantities
// are well formed; a bad quantity is still an error here, not a crash.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/jobset.pb.h"
#include "proto/kueue.pb.h"
#include "scheduler/queues/model.h"

namespace jobset::scheduler::queues {

// The labels Kueue reads on a JobSet.
inline constexpr absl::string_view kQueueNameLabel =
    "kueue.x-k8s.io/queue-name";
inline constexpr absl::string_view kPriorityClassLabel =
    "kueue.x-k8s.io/priority-class";
inline constexpr absl::string_view kMaxExecTimeSecondsLabel =
    "kueue.x-k8s.io/max-exec-time-seconds";

// The most podSets one Workload holds (Kueue's Workload validation), so the
// most replicatedJobs of a JobSet that Kueue can queue.
inline constexpr int kMaxPodSets = 18;

// The reason of the Warning event the caller records when WorkloadFor
// returns kNotFound for the priority-class label (JF ExtractPriority).
inline constexpr absl::string_view kReasonWorkloadPriorityClassNotFound =
    "WorkloadPriorityClassNotFound";

// Returns the queue-name label's value; "" when absent.
std::string QueueName(const api::JobSet& jobset);

// Returns whether Kueue manages `jobset` (§2.1): it carries a non-empty
// queue-name label, or `manage_jobs_without_queue_name` (the configuration's
// manageJobsWithoutQueueName, default false) is set. A managed JobSet stays
// suspended until its Workload is admitted; an unmanaged one runs at once.
// managedJobsNamespaceSelector is the caller's to check first: it reads the
// Namespace's labels, which a JobSet does not carry.
bool IsManaged(const api::JobSet& jobset, bool manage_jobs_without_queue_name);

// Returns Kueue's name for the JobSet's Workload (JF workload_names.go):
// "jobset-<name>-<h>", where <h> is the first 5 hex digits of the SHA-1 of
// "JobSet\njobset.x-k8s.io\n<name>\n<uid>" and the "jobset-<name>" prefix is
// cut to 247 characters (253 less "-" and the hash). For example
// "train" with uid 11111111-2222-3333-4444-555555555555 is
// "jobset-train-33226".
std::string WorkloadName(const api::JobSet& jobset);

// Returns the pods one Job of `rjob` runs at once, as Kueue counts them (JS
// PodsCountPerReplica): min(parallelism, completions), parallelism defaulting
// to 1 and completions to parallelism.
int64_t PodsPerJob(const api::ReplicatedJob& rjob);

// Returns Kueue's status.reclaimablePods for `jobset` (JS ReclaimablePods;
// kueue-semantics §6 scenario 35): for each replicatedJob whose status
// counts 0 < succeeded <= replicas Jobs, its podSet's name and succeeded x
// PodsPerJob, in spec order: the quota of pods that finished is given back
// while the rest run.
std::vector<api::ReclaimablePod> ReclaimablePods(const api::JobSet& jobset);

// Returns one podSet per replicatedJob, in order (JS PodSets, §2.2-2.3):
//   name      the replicatedJob's name, lower-cased;
//   count     replicas (default 1) x PodsPerJob;
//   requests, placement  PodSetFromTemplate() (api_objects.h) of the
//             replicatedJob's pod template, as for a Workload's podSet:
//             per-pod effective requests (limits fill missing requests;
//             max(sum over containers, max over init containers)), cpu in
//             milli-units, everything else in whole units rounded up;
//             nodeSelector, required node affinity and tolerations.
// LimitRange defaults are not applied (jobsetd has no LimitRanges).
// Returns kInvalidArgument naming the field path for a malformed or
// negative quantity, a total over 64 bits, a count outside 0..2^31-1, or a
// toleration or affinity operator that is not Kubernetes'.
absl::StatusOr<std::vector<PodSet>> PodSetsFor(const api::JobSet& jobset);

// Looks up the value of the WorkloadPriorityClass named `name`; nullopt when
// there is none.
using WorkloadPriorityClassLookup =
    absl::FunctionRef<std::optional<int32_t>(absl::string_view name)>;

// Returns the Workload Kueue creates for `jobset` (§2.2, JF ConstructWorkload
// and PrepareWorkloadPriority), with
//   namespace_name, name  the JobSet's namespace and WorkloadName();
//   uid, job_uid          the JobSet's uid (a stored Workload may carry its
//                         own uid; the caller then overwrites `uid`);
//   queue_name            the queue-name label ("" when unlabelled);
//   cluster_queue         `cluster_queue`: the ClusterQueue the caller found
//                         for that LocalQueue, "" when there is none;
//   priority, priority_class  from the priority-class label through
//                         `priority_classes`; without the label 0 and "":
//                         Kueue falls back to the pods' PriorityClass, and
//                         jobsetd has no PriorityClass objects (§1.7);
//   maximum_execution_time_seconds  the max-exec-time-seconds label when it
//                         is an int32 > 0, else unset (as Kueue);
//   pod_sets              PodSetsFor();
//   times.queue_order     the JobSet's creationTimestamp (the Unix epoch
//                         when unset);
// no admission. Returns kNotFound with Kueue's event message
// `WorkloadPriorityClass "<name>" not found` when the label names no class
// (no Workload is created; the caller records a Warning event with
// kReasonWorkloadPriorityClassNotFound and keeps the JobSet suspended);
// kInvalidArgument for more than kMaxPodSets replicatedJobs, or as
// PodSetsFor().
absl::StatusOr<Workload> WorkloadFor(
    const api::JobSet& jobset, absl::string_view cluster_queue,
    WorkloadPriorityClassLookup priority_classes);

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_JOBSET_WORKLOAD_H_
