#ifndef JOBSET_API_DEFAULTS_H_
#define JOBSET_API_DEFAULTS_H_

#include "proto/jobset.pb.h"

namespace jobset::api {

// The values SetJobSetDefaults fills in.
inline constexpr char kApiVersion[] = "jobset.x-k8s.io/v1alpha2";
inline constexpr char kKind[] = "JobSet";
inline constexpr char kDefaultNamespace[] = "default";
inline constexpr char kDefaultGroupName[] = "default";

// Fills in every default upstream JobSet applies on create (its mutating
// webhook and CRD schema defaults, jobset.x-k8s.io/v1alpha2), leaving fields
// the user set untouched:
//   - apiVersion "jobset.x-k8s.io/v1alpha2", kind "JobSet" and
//     metadata.namespace "default" when empty;
//   - spec.successPolicy {operator: All} and spec.startupPolicy
//     {startupPolicyOrder: AnyOrder} when absent;
//   - spec.network {} when absent, with enableDNSHostnames and
//     publishNotReadyAddresses true when unset;
//   - per ReplicatedJob: replicas 1 when unset, groupName "default" when
//     empty, template.spec.completionMode Indexed when empty, and the pod
//     template's restartPolicy OnFailure when empty;
//   - when spec.failurePolicy is present: restartStrategy Recreate when
//     empty, and each unnamed rule i named "failurePolicyRule<i>";
//   - each volume claim policy's retentionPolicy.whenDeleted Delete when
//     empty.
// Does not default network.subdomain (the controller resolves it from the
// final name, which generateName may not have fixed yet) nor the Job-level
// Kubernetes defaults (parallelism, completions, backoffLimit, ...), which
// the Job layer applies. Idempotent.
void SetJobSetDefaults(JobSet* jobset);

}  // namespace jobset::api

#endif  // JOBSET_API_DEFAULTS_H_
