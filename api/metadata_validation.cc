#include "api/metadata_validation.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/names.h"

namespace jobset::api {
namespace {

// Proto maps iterate in no fixed order; errors are reported in key order.
std::map<absl::string_view, absl::string_view> Sorted(const StringMap& map) {
  std::map<absl::string_view, absl::string_view> sorted;
  for (const auto& [key, value] : map) sorted.emplace(key, value);
  return sorted;
}

void AddInvalid(absl::string_view path, absl::string_view value,
                const std::vector<std::string>& details, FieldErrors* errors) {
  for (const std::string& detail : details) {
    errors->Invalid(path, value, detail);
  }
}

}  // namespace

void ValidateLabels(const StringMap& labels, absl::string_view path,
                    FieldErrors* errors, int64_t max_total_bytes) {
  int64_t total_size = 0;
  for (const auto& [key, value] : Sorted(labels)) {
    const std::string key_path = Key(path, key);
    AddInvalid(key_path, key, IsQualifiedName(key), errors);
    AddInvalid(key_path, value, IsValidLabelValue(value), errors);
    total_size += key.size() + value.size();
  }
  if (total_size > max_total_bytes) {
    TooLongForLimit(path, total_size, max_total_bytes, "max_label_bytes",
                    errors);
  }
}

void ValidateAnnotations(const StringMap& annotations, absl::string_view path,
                         FieldErrors* errors, int64_t max_total_bytes) {
  int64_t total_size = 0;
  for (const auto& [key, value] : Sorted(annotations)) {
    AddInvalid(Key(path, key), key, IsQualifiedName(absl::AsciiStrToLower(key)),
               errors);
    total_size += key.size() + value.size();
  }
  if (total_size > max_total_bytes) {
    TooLongForLimit(path, total_size, max_total_bytes, "max_annotation_bytes",
                    errors);
  }
}

void TooManyForLimit(absl::string_view path, int64_t count, int64_t limit,
                     absl::string_view flag, FieldErrors* errors) {
  errors->Add(path, absl::StrCat("Too many: ", count, ": must have at most ",
                                 limit, " items (jobsetd --", flag, ")"));
}

void TooLongForLimit(absl::string_view path, int64_t bytes, int64_t limit,
                     absl::string_view flag, FieldErrors* errors) {
  errors->Add(path,
              absl::StrCat("Too long: may not be more than ", limit, " bytes (",
                           bytes, " bytes; jobsetd --", flag, ")"));
}

}  // namespace jobset::api
