#include "api/field_errors.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/quote.h"

namespace jobset::api {

void FieldErrors::Invalid(absl::string_view path, absl::string_view value,
                          absl::string_view detail) {
  Add(path, absl::StrCat("Invalid value: ", Quote(value), ": ", detail));
}

void FieldErrors::Invalid(absl::string_view path, int64_t value,
                          absl::string_view detail) {
  Add(path, absl::StrCat("Invalid value: ", value, ": ", detail));
}

void FieldErrors::Required(absl::string_view path, absl::string_view detail) {
  Add(path, detail.empty() ? std::string("Required value")
                           : absl::StrCat("Required value: ", detail));
}

void FieldErrors::NotSupported(absl::string_view path, absl::string_view value,
                               absl::Span<const absl::string_view> supported) {
  Add(path,
      absl::StrCat("Unsupported value: ", Quote(value), ": supported values: ",
                   absl::StrJoin(supported, ", ",
                                 [](std::string* out, absl::string_view s) {
                                   AppendQuoted(out, s);
                                 })));
}

void FieldErrors::Forbidden(absl::string_view path, absl::string_view detail) {
  Add(path, absl::StrCat("Forbidden: ", detail));
}

void FieldErrors::Duplicate(absl::string_view path, absl::string_view value) {
  Add(path, absl::StrCat("Duplicate value: ", Quote(value)));
}

void FieldErrors::TooLong(absl::string_view path, int64_t max_length) {
  Add(path,
      absl::StrCat("Too long: may not be more than ", max_length, " bytes"));
}

void FieldErrors::TooMany(absl::string_view path, int64_t count,
                          int64_t max_items) {
  Add(path, absl::StrCat("Too many: ", count, ": must have at most ", max_items,
                         " items"));
}

void FieldErrors::Add(absl::string_view path, absl::string_view message) {
  errors_.push_back({std::string(path), std::string(message)});
}

absl::Status FieldErrors::ToStatus(absl::string_view object) const {
  if (errors_.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      object, " is invalid: ",
      absl::StrJoin(errors_, "; ", [](std::string* out, const FieldError& e) {
        absl::StrAppend(out, e.ToString());
      })));
}

std::string Child(absl::string_view path, absl::string_view field) {
  return path.empty() ? std::string(field) : absl::StrCat(path, ".", field);
}

std::string Index(absl::string_view path, int64_t index) {
  return absl::StrCat(path, "[", index, "]");
}

std::string Key(absl::string_view path, absl::string_view key) {
  // Bare as Kubernetes prints a key, unless it needs escaping: then quoted.
  std::string quoted = Quote(key);
  if (quoted.size() == key.size() + 2) return absl::StrCat(path, "[", key, "]");
  return absl::StrCat(path, "[", quoted, "]");
}

}  // namespace jobset::api
