#ifndef JOBSET_SCHEDULER_QUEUES_API_OBJECTS_H_
#define JOBSET_SCHEDULER_QUEUES_API_OBJECTS_H_

// Kueue's API objects (proto/kueue.proto) as the admission core's model
// (model.h), and back (kueue-semantics.md §1, §2.2). Pure functions: no
// store, no clock, no gRPC.
//
// The objects are read as stored: defaulted (api/kueue_defaults.h) and
// validated (api/kueue_validation.h). A stored value may still be hostile,
// so every value that is read is checked again: anything this cannot read
// is kInvalidArgument naming the field path, e.g.
//   spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: quantity
//   "x" is malformed
// never a crash. An enumeration left "" reads as its CRD default, as the
// defaults would have set it.
//
// Quantities become model.h's units as Kueue's ResourceValue makes them:
// "cpu" in milli-units, every other resource in its base unit rounded up.

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/jobset.pb.h"
#include "proto/k8s.pb.h"
#include "proto/kueue.pb.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/podset_injection.h"

namespace jobset::scheduler::queues {

// The label of a Workload that names the uid of its job (§2.2).
inline constexpr absl::string_view kJobUidLabel = "kueue.x-k8s.io/job-uid";
// spec.priorityClassSource of a priority from a WorkloadPriorityClass.
inline constexpr absl::string_view kWorkloadPriorityClassSource =
    "kueue.x-k8s.io/workloadpriorityclass";

// ---------------------------------------------------------------------------
// The pieces, shared with PodSetsFor (jobset_workload.h)

// Returns `quantity`, an amount of `resource`, in model.h's units (Kueue's
// ResourceValue): cpu in milli-units, anything else in whole units rounded
// up. kInvalidArgument at `path` when it is malformed, too large or
// negative.
absl::StatusOr<int64_t> ResourceValue(absl::string_view resource,
                                      absl::string_view quantity,
                                      absl::string_view path);

// Returns the podSet `name` of `count` pods whose pods are `pod_template`
// (what Kueue reads of a pod template, §2.3):
//   requests  per pod, as Kubernetes' effective request with Kueue's
//             adjustment: each container's limits fill its missing
//             requests, then per resource
//             max(sum over containers, max over init containers), summed
//             exactly before rounding to model.h's units;
//   placement nodeSelector, required node affinity and tolerations.
// The pod proto has no sidecar containers, pod overhead or pod-level
// resources, so those terms of the formula are absent. Resources requested
// as 0 are kept (they need no quota). `path` names the template, e.g.
// "spec.podSets[0].template"; kInvalidArgument below it for a malformed or
// negative quantity, a total over 64 bits, or a toleration or affinity
// operator that is not Kubernetes'.
absl::StatusOr<PodSet> PodSetFromTemplate(
    absl::string_view name, int32_t count,
    const api::PodTemplateSpec& pod_template, absl::string_view path);

// ---------------------------------------------------------------------------
// API objects -> model.h

// Returns the flavor named metadata.name with spec's nodeLabels, nodeTaints
// and tolerations. topologyName is not read (no TAS).
absl::StatusOr<ResourceFlavor> FlavorFromApi(const api::ResourceFlavor& flavor);

// Returns the ClusterQueue named metadata.name with spec's cohort (or its
// v1beta2 spelling cohortName), queueingStrategy, resourceGroups (quotas
// and limits in model.h's units), preemption (withinClusterQueue,
// reclaimWithinCohort, borrowWithinCohort with maxPriorityThreshold),
// flavorFungibility (v1beta1's Borrow and Preempt read as MayStopSearch)
// stopPolicy and fairSharing.weight (in thousandths). namespaceSelector is
// not read: the caller checks a workload's namespace before the core.
absl::StatusOr<ClusterQueue> ClusterQueueFromApi(const api::ClusterQueue& cq);

// Returns the Cohort named metadata.name with spec's parentName and
// resourceGroups and fairSharing.weight.
absl::StatusOr<Cohort> CohortFromApi(const api::Cohort& cohort);

// Returns Kueue's GetQueueOrderTimestamp of `workload` with its defaults
// (requeuingStrategy.timestamp Eviction, PrioritySortingWithinCohort on;
// jobsetd has no Kueue Configuration to change them): the
// lastTransitionTime of an Evicted condition True with reason
// PodsReadyTimeout or AdmissionCheck, else metadata.creationTimestamp (the
// Unix epoch when unset).
absl::Time QueueOrderTime(const api::Workload& workload);

// Returns the Workload the core reads for `workload`, queued in
// `cluster_queue` (what the caller resolved from its LocalQueue; "" when
// none):
//   namespace_name, name, uid  metadata;
//   job_uid                    the kueue.x-k8s.io/job-uid label ("" when
//                              absent);
//   queue_name                 spec.queueName;
//   priority                   spec.priority (0 when unset);
//   priority_class             spec.priorityClassName when
//                              spec.priorityClassSource is
//                              kWorkloadPriorityClassSource, else "";
//   maximum_execution_time_seconds  spec.maximumExecutionTimeSeconds;
//   pod_sets                   spec.podSets in order, PodSetFromTemplate of
//                              each template, count defaulting to 1, and
//                              reclaimable from status.reclaimablePods;
//   admission                  status.admission when set (resourceUsage in
//                              model.h's units; a missing count is the
//                              podSet's, as Kueue reads it);
//   evicted                    an Evicted condition True while
//                              status.admission is set;
//   times.queue_order          QueueOrderTime (§3.1, §3.6): a preempted
//                              workload keeps its creation time;
//   times.quota_reserved       the lastTransitionTime of QuotaReserved when
//                              it is True and has one, else unset (§4.2);
//   times.last_restart, times.not_preemptible_before  left default: the
//                              caller sets them.
// spec.active is not read: an inactive Workload is the caller's to keep
// out of the queues. kInvalidArgument naming the field for a podSet count
// or reclaimable count below 0, a maximumExecutionTimeSeconds below 1, a
// reclaimablePods entry naming no podSet or naming one twice, or a bad
// quantity or operator.
absl::StatusOr<Workload> WorkloadFromApi(const api::Workload& workload,
                                         absl::string_view cluster_queue);

// ---------------------------------------------------------------------------
// model.h -> API objects

// Returns `admission` as status.admission: clusterQueue, and per podSet
// assignment its name, flavors, resourceUsage (FormatQuantity) and count.
api::Admission AdmissionToApi(const Admission& admission);

// Returns the Workload object Kueue stores for `jobset` (§2.2, JF
// ConstructWorkload), from `workload` = WorkloadFor(jobset, ...):
// apiVersion kueue.x-k8s.io/v1beta1, kind Workload, metadata name and
// namespace, label kueue.x-k8s.io/job-uid (when the uid is not empty);
// spec.podSets one per replicatedJob with the podSet's name and count and
// as template the replicatedJob's pod template as it is in `jobset` (call
// it before Inject(): that copy is what Restore() takes back, through
// SavedTemplatesOf()); spec.queueName; spec.priority always, with
// priorityClassName and priorityClassSource kWorkloadPriorityClassSource
// when the priority came from a WorkloadPriorityClass;
// spec.maximumExecutionTimeSeconds when set; spec.active true. No status;
// metadata.uid and creationTimestamp are the store's to set.
// kInvalidArgument when `workload`'s podSets are not one per replicatedJob
// of `jobset`, named alike.
absl::StatusOr<api::Workload> WorkloadObjectFor(const api::JobSet& jobset,
                                                const Workload& workload);

// Returns what Restore() puts back from `workload`: SaveTemplate() of each
// spec.podSets[i].template, in order.
SavedPodTemplates SavedTemplatesOf(const api::Workload& workload);

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_API_OBJECTS_H_
