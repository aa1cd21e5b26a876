#ifndef JOBSET_API_METADATA_VALIDATION_H_
#define JOBSET_API_METADATA_VALIDATION_H_

#include <string>

#include "absl/strings/string_view.h"
#include "api/field_errors.h"
#include "api/validation_limits.h"
#include "google/protobuf/map.h"

namespace jobset::api {

using StringMap = google::protobuf::Map<std::string, std::string>;

// Kubernetes' limit on the total size of an object's annotations (256 KiB).
inline constexpr int64_t kTotalAnnotationSizeLimit = 256 * 1024;

// Checks label keys (qualified names) and values (label values), as
// Kubernetes' ValidateLabels; errors name the key: `<path>[<key>]`. Reports
// in key order. Also checks that keys and values together take at most
// `max_total_bytes` (jobsetd's limit; Kubernetes has none).
void ValidateLabels(const StringMap& labels, absl::string_view path,
                    FieldErrors* errors,
                    int64_t max_total_bytes = Limits().max_label_bytes);

// Checks annotation keys (qualified names, case-insensitively) and their
// total size (at most `max_total_bytes`), as Kubernetes' ValidateAnnotations.
void ValidateAnnotations(const StringMap& annotations, absl::string_view path,
                         FieldErrors* errors,
                         int64_t max_total_bytes = kTotalAnnotationSizeLimit);

// Reports a count above one of jobsetd's Limits:
//   `path: Too many: <count>: must have at most <limit> items (jobsetd
//   --<flag>)`.
void TooManyForLimit(absl::string_view path, int64_t count, int64_t limit,
                     absl::string_view flag, FieldErrors* errors);

// Reports a size above one of jobsetd's Limits:
//   `path: Too long: may not be more than <limit> bytes (<bytes> bytes;
//   jobsetd --<flag>)`.
void TooLongForLimit(absl::string_view path, int64_t bytes, int64_t limit,
                     absl::string_view flag, FieldErrors* errors);

}  // namespace jobset::api

#endif  // JOBSET_API_METADATA_VALIDATION_H_
