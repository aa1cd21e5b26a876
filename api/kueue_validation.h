#ifndef JOBSET_API_KUEUE_VALIDATION_H_
#define JOBSET_API_KUEUE_VALIDATION_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/kueue.pb.h"

// Kueue's validation of its six kinds (kueue-semantics.md §1), in Kueue's and
// Kubernetes' words, e.g.
//   ClusterQueue "research" is invalid:
//   spec.resourceGroups[1].flavors[0].name: Duplicate value: "h100"
//
// Each object passes three checks in the order Kubernetes makes them, and
// the first that fails is reported with every problem it found:
//   1. metadata (name a DNS-1123 subdomain, namespace for LocalQueue and
//      Workload only) and the CRD schema: required fields, enumerations,
//      patterns of names and quantities, minimums, list lengths (16
//      resourceGroups, 64 coveredResources, flavors and resources, 18
//      podSets, 8 nodeLabels, nodeTaints and tolerations);
//   2. the CRD's CEL rules (borrowingLimit needs a cohort, each flavor lists
//      as many resources as coveredResources, flavorFungibility.preference
//      needs TryNextFlavor twice, preemption's reclaim/borrow pair, priority
//      with priorityClassName, ...); skipped, as Kubernetes skips them, when
//      step 1 found a missing, unsupported, too long or too many value;
//   3. Kueue's webhook (pkg/webhooks): resource names, a resource or flavor
//      in one resourceGroup only, quotas at least 0, lendingLimit within
//      nominalQuota and only with a cohort, fairSharing weights, nodeLabels,
//      taints and tolerations, the reserved "pods" resource, admission and
//      reclaimablePods against the podSets, conditions.
// Returns OK or kInvalidArgument: `<Kind> "<name>" is invalid: <errors>`.
//
// Objects may be defaulted (api/kueue_defaults.h) or not: an unset
// enumeration is read as its default. Status is checked as Kueue checks it
// when a controller writes it; on create and update through the object
// itself Kubernetes drops the request's status (the status subresource),
// which is the server's to do.
//
// Where jobsetd departs from Kubernetes' text: a map or list value Go would
// print as a struct is shown as "object" or "array"; labels' errors name the
// key (`spec.nodeLabels[k]`) as api/metadata_validation.h does; a
// resourceUsage that is not a multiple of count names the count (Kueue
// prints a pointer there). Admission checks, topology-aware scheduling and
// elastic workloads are not checked (jobsetd ignores those fields).

namespace jobset::api {

// jobsetd's addition to Kueue (kueue#477, KEP-9876; not Kueue's): a
// ClusterQueue or WorkloadPriorityClass annotated
//   jobsetd.io/minimum-runtime: "30m"
// promises the Workloads it admits (or gives their priority) that long
// after their quota reservation before any preemption may take them. A Go
// duration ("90s", "1h30m"), 0 to 7 days; checked at apply (step 3).
inline constexpr absl::string_view kMinimumRuntimeAnnotation =
    "jobsetd.io/minimum-runtime";
inline constexpr absl::Duration kMaxMinimumRuntime = absl::Hours(24 * 7);

// The annotation's duration on `meta`: zero when absent; kInvalidArgument
// naming the annotation and the value when it is not a duration in range.
absl::StatusOr<absl::Duration> MinimumRuntime(const ObjectMeta& meta);

absl::Status ValidateResourceFlavor(const ResourceFlavor& rf);
// Also: spec.topologyName may not change or be removed once set.
absl::Status ValidateResourceFlavorUpdate(const ResourceFlavor& old_rf,
                                          const ResourceFlavor& new_rf);

absl::Status ValidateClusterQueue(const ClusterQueue& cq);
// The create rules, on the new object (Kueue has no others for v1beta1).
absl::Status ValidateClusterQueueUpdate(const ClusterQueue& old_cq,
                                        const ClusterQueue& new_cq);

absl::Status ValidateCohort(const Cohort& cohort);
absl::Status ValidateCohortUpdate(const Cohort& old_cohort,
                                  const Cohort& new_cohort);

// spec.clusterQueue may be empty (Kueue accepts it; the LocalQueue stays
// inactive until it names a ClusterQueue that exists).
absl::Status ValidateLocalQueue(const LocalQueue& lq);
// Also: spec.clusterQueue may not change while both old and new name one
// ("field is immutable").
absl::Status ValidateLocalQueueUpdate(const LocalQueue& old_lq,
                                      const LocalQueue& new_lq);

// `value` is required.
absl::Status ValidateWorkloadPriorityClass(const WorkloadPriorityClass& wpc);
absl::Status ValidateWorkloadPriorityClassUpdate(
    const WorkloadPriorityClass& old_wpc, const WorkloadPriorityClass& new_wpc);

absl::Status ValidateWorkload(const Workload& wl);
// Also, while the old Workload holds quota (QuotaReserved True): podSets may
// not change, nor queueName (when the new one holds quota too),
// priorityClassSource, priorityClassName (unless the source is
// WorkloadPriorityClass), nor reclaimablePods decrease or go; while both
// are Admitted, maximumExecutionTimeSeconds; status.admission may be set or
// unset but not edited.
absl::Status ValidateWorkloadUpdate(const Workload& old_wl,
                                    const Workload& new_wl);

}  // namespace jobset::api

#endif  // JOBSET_API_KUEUE_VALIDATION_H_
