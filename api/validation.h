#ifndef JOBSET_API_VALIDATION_H_
#define JOBSET_API_VALIDATION_H_

#include "absl/status/status.h"
#include "api/features.h"
#include "api/field_errors.h"
#include "api/validation_limits.h"
#include "proto/jobset.pb.h"

// Admission checks for JobSets, reproducing upstream JobSet's validating
// webhook, CRD schema and CEL rules (jobset.x-k8s.io/v1alpha2) together with
// the Kubernetes object-metadata rules. Every problem of a request is
// reported, each under its JSON field path, e.g.
//   JobSet "train" is invalid: spec.replicatedJobs[1].name: Duplicate value:
//   "workers"; spec.successPolicy.operator: Unsupported value: "Some":
//   supported values: "All", "Any"
// The functions are pure: no I/O, no clock.

namespace jobset::api {

// Checks a JobSet about to be created and returns every problem found:
//   - metadata: name (or generateName) a DNS-1123 subdomain, namespace a
//     DNS-1123 label, label and annotation keys qualified names, label values
//     valid;
//   - the CRD schema and CEL rules: required fields, enumerations, minimums,
//     at most 5 dependsOn per ReplicatedJob with unique names, unique
//     ReplicatedJob and failure-policy rule names, InOrder startup and
//     dependsOn mutually exclusive;
//   - the webhook rules: names generated for child Jobs and pods (simulating
//     generateName's 5-character suffix) are DNS-1035 labels of at most 63
//     characters, replicas x parallelism fits in an int32, dependsOn only on
//     earlier ReplicatedJobs and never on the first, success and failure
//     policy targets exist, failure rule names and reasons are valid, feature
//     gated strategies and actions, the coordinator exists and its endpoint
//     is a valid label value, the subdomain is a DNS-1035 label, managedBy a
//     domain-prefixed path;
//   - jobsetd's own rules: volumeClaimPolicies are not supported, each
//     ReplicatedJob's Job template must pass ValidateJobTemplate, and the
//     resilience annotations must be valid (resilience_annotations.h; on
//     update too);
//   - jobsetd's `limits` (validation_limits.h): pods and Jobs per attempt,
//     containers, init containers, volumes, env vars, ports, command bytes,
//     label and annotation bytes.
// Expects a defaulted JobSet (SetJobSetDefaults); a JobSet without defaults
// gets errors for what defaulting would have filled in, never a crash.
FieldErrors ValidateJobSet(const JobSet& jobset, const Features& features = {},
                           const Limits& limits = {});

// Returns OK when ValidateJobSet finds no problem; otherwise
// kInvalidArgument: `JobSet "<name or generateName>" is invalid: <errors>`.
absl::Status ValidateJobSetCreate(const JobSet& jobset,
                                  const Features& features = {},
                                  const Limits& limits = {});

// Checks an update of `old_jobset` to `new_jobset`, both defaulted. Returns
// OK or kInvalidArgument naming every problem:
//   - metadata.name and metadata.namespace may not change, nor
//     metadata.uid when the new object carries one; labels and annotations
//     may change but must stay valid;
//   - spec.successPolicy, failurePolicy, startupPolicy, network,
//     volumeClaimPolicies, managedBy and each ReplicatedJob's dependsOn are
//     immutable, presence included;
//   - spec.replicatedJobs is immutable as a whole (no adding, removing,
//     renaming or reordering), except that while the old or new JobSet is
//     suspended the pod templates' labels, annotations, nodeSelector and
//     tolerations may change, and with the ElasticJobSet gate an Indexed
//     ReplicatedJob's parallelism and completions may change to an equal
//     value of at least 1 unless the JobSet has finished;
//   - suspend, ttlSecondsAfterFinished (still at least 0) and coordinator
//     may change freely;
//   - jobsetd's `limits` that an update can cross: pods and Jobs per attempt
//     (ElasticJobSet), label and annotation bytes of the JobSet and of its
//     Job and pod templates.
// Does not re-run the create-time rules, as upstream.
absl::Status ValidateJobSetUpdate(const JobSet& old_jobset,
                                  const JobSet& new_jobset,
                                  const Features& features = {},
                                  const Limits& limits = {});

}  // namespace jobset::api

#endif  // JOBSET_API_VALIDATION_H_
