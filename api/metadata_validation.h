#ifndef JOBSET_API_METADATA_VALIDATION_H_
#define JOBSET_API_METADATA_VALIDATION_H_

#include <string>

#include "absl/strings/string_view.h"
#include "api/field_errors.h"
#include "google/protobuf/map.h"

namespace jobset::api {

using StringMap = google::protobuf::Map<std::string, std::string>;

// Kubernetes' limit on the total size of an object's annotations (256 KiB).
inline constexpr int64_t kTotalAnnotationSizeLimit = 256 * 1024;

// Checks label keys (qualified names) and values (label values), as
// Kubernetes' ValidateLabels; errors name the key: `<path>[<key>]`. Reports
// in key order.
void ValidateLabels(const StringMap& labels, absl::string_view path,
                    FieldErrors* errors);

// Checks annotation keys (qualified names, case-insensitively) and their
// total size, as Kubernetes' ValidateAnnotations.
void ValidateAnnotations(const StringMap& annotations, absl::string_view path,
                         FieldErrors* errors);

}  // namespace jobset::api

#endif  // JOBSET_API_METADATA_VALIDATION_H_
