#ifndef JOBSET_API_TEMPLATE_VALIDATION_H_
#define JOBSET_API_TEMPLATE_VALIDATION_H_

#include "absl/strings/string_view.h"
#include "api/field_errors.h"
#include "proto/k8s.pb.h"

namespace jobset::api {

// Checks a ReplicatedJob's Job template (batch/v1 JobTemplateSpec and the pod
// template inside it) for what jobsetd needs to run it, adding one error per
// problem under `path` (e.g. "spec.replicatedJobs[0].template").
void ValidateJobTemplate(const JobTemplateSpec& tmpl, absl::string_view path,
                         FieldErrors* errors);

}  // namespace jobset::api

#endif  // JOBSET_API_TEMPLATE_VALIDATION_H_
