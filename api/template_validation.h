#ifndef JOBSET_API_TEMPLATE_VALIDATION_H_
#define JOBSET_API_TEMPLATE_VALIDATION_H_

#include "absl/strings/string_view.h"
#include "api/field_errors.h"
#include "api/validation_limits.h"
#include "proto/k8s.pb.h"

namespace jobset::api {

// Checks a ReplicatedJob's Job template (batch/v1 JobTemplateSpec and the pod
// template inside it) for what jobsetd needs to run it, adding one error per
// problem under `path` (e.g. "spec.replicatedJobs[0].template"), including
// jobsetd's per-pod `limits` (containers, init containers, volumes, env vars
// and ports per container, command and args bytes, label and annotation
// bytes).
void ValidateJobTemplate(const JobTemplateSpec& tmpl, absl::string_view path,
                         const Limits& limits, FieldErrors* errors);

// As above, with the default Limits.
inline void ValidateJobTemplate(const JobTemplateSpec& tmpl,
                                absl::string_view path, FieldErrors* errors) {
  ValidateJobTemplate(tmpl, path, Limits(), errors);
}

// Checks only the labels and annotations of the Job template and of its pod
// template (what an update of a suspended JobSet may change), with `limits`.
void ValidateJobTemplateMetadata(const JobTemplateSpec& tmpl,
                                 absl::string_view path, const Limits& limits,
                                 FieldErrors* errors);

}  // namespace jobset::api

#endif  // JOBSET_API_TEMPLATE_VALIDATION_H_
