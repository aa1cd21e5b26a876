#ifndef JOBSET_API_FIELD_ERRORS_H_
#define JOBSET_API_FIELD_ERRORS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/quote.h"

namespace jobset::api {

// One problem with one field, in Kubernetes' wording, e.g.
//   spec.replicatedJobs[0].replicas: Invalid value: -1: must be greater than
//   or equal to 0
struct FieldError {
  std::string path;     // "spec.replicatedJobs[0].replicas"
  std::string message;  // "Invalid value: -1: must be ..."

  std::string ToString() const { return path + ": " + message; }
  bool operator==(const FieldError&) const = default;
};

// Collects every problem of one request so that all of them are reported
// together, as the Kubernetes API server does. Every string value it echoes
// is quoted as Go's %q (common/quote.h), so that a hostile one cannot forge
// a line or a field of the message. Thread-compatible.
class FieldErrors {
 public:
  // `path: Invalid value: "value": detail` (the value quoted).
  void Invalid(absl::string_view path, absl::string_view value,
               absl::string_view detail);
  // `path: Invalid value: 5: detail` (a number, unquoted).
  void Invalid(absl::string_view path, int64_t value, absl::string_view detail);
  // `path: Invalid value: ["a" "b"]: detail` (a list of strings, as Go's %q
  // prints one). `values` is any range of strings.
  template <typename Strings>
  void InvalidList(absl::string_view path, const Strings& values,
                   absl::string_view detail) {
    Add(path, absl::StrCat("Invalid value: ", QuoteList(values), ": ", detail));
  }
  // `path: Required value` (with `: detail` when given).
  void Required(absl::string_view path, absl::string_view detail = "");
  // `path: Unsupported value: "v": supported values: "A", "B"`.
  void NotSupported(absl::string_view path, absl::string_view value,
                    absl::Span<const absl::string_view> supported);
  // `path: Forbidden: detail`.
  void Forbidden(absl::string_view path, absl::string_view detail);
  // `path: Duplicate value: "v"`.
  void Duplicate(absl::string_view path, absl::string_view value);
  // `path: Too long: may not be more than N bytes`.
  void TooLong(absl::string_view path, int64_t max_length);
  // `path: Too many: N: must have at most M items`.
  void TooMany(absl::string_view path, int64_t count, int64_t max_items);
  // `path: message`, for anything the helpers above do not cover.
  void Add(absl::string_view path, absl::string_view message);

  bool empty() const { return errors_.empty(); }
  const std::vector<FieldError>& errors() const { return errors_; }

  // Returns OK when there are no errors; otherwise kInvalidArgument with
  // `<object> is invalid: <error>; <error>; ...`, e.g. object = `JobSet
  // "train"`.
  absl::Status ToStatus(absl::string_view object) const;

 private:
  std::vector<FieldError> errors_;
};

// Path helpers: Child("spec", "network") == "spec.network",
// Index("spec.replicatedJobs", 2) == "spec.replicatedJobs[2]",
// Key("metadata.labels", "a/b") == "metadata.labels[a/b]".
std::string Child(absl::string_view path, absl::string_view field);
std::string Index(absl::string_view path, int64_t index);
std::string Key(absl::string_view path, absl::string_view key);

}  // namespace jobset::api

#endif  // JOBSET_API_FIELD_ERRORS_H_
