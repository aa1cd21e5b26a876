#ifndef JOBSET_CLI_JSONPATH_H_
#define JOBSET_CLI_JSONPATH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"

// Kubernetes' JSONPath dialect (kubectl -o jsonpath=...), over a JSON value.
// Pure: no I/O.
namespace jobset::cli {

namespace jsonpath_internal {
struct Node;
}  // namespace jsonpath_internal

// A parsed template: text with {actions}. An action is a path (`.a.b`,
// `$.a`, `@.a`, `.a[0]`, `.a[-1:]`, `.a[1:3:2]`, `.a[0,2]`, `.a[*]`, `.*`,
// `..name`, `['name']`, `.a[?(@.b=="x")]` with ==, !=, <, <=, >, >= or a
// bare existence test), a quoted string ("\t"), `range PATH` ... `end`.
// As kubectl: several results of one path are joined by a space, strings
// are printed as they are and other values as compact JSON (object keys
// sorted), and missing keys print nothing. Thread-compatible; immutable
// after Parse.
class JsonPath {
 public:
  // Parses `text`. kInvalidArgument with the parser's reason (e.g.
  // "unclosed action", "unclosed array expect ]") otherwise.
  static absl::StatusOr<JsonPath> Parse(absl::string_view text);

  // Returns the template's output for `data`. kInvalidArgument when the
  // data does not fit the template (an index out of bounds, a filter over
  // a non-array).
  absl::StatusOr<std::string> Execute(
      const google::protobuf::Value& data) const;

 private:
  explicit JsonPath(
      std::shared_ptr<const std::vector<jsonpath_internal::Node>> nodes)
      : nodes_(std::move(nodes)) {}

  std::shared_ptr<const std::vector<jsonpath_internal::Node>> nodes_;
};

// Parses `json` into a Value. kInvalidArgument when it is not JSON.
absl::StatusOr<google::protobuf::Value> ParseJsonValue(absl::string_view json);

// `-o jsonpath=TEMPLATE` applied to what `-o json` prints (`json`), with
// kubectl's error wording: "error parsing jsonpath TEMPLATE, REASON" and
// "error executing jsonpath \"TEMPLATE\": REASON".
absl::StatusOr<std::string> RenderJsonPath(absl::string_view template_text,
                                           absl::string_view json);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_JSONPATH_H_
