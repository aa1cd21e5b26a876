#ifndef JOBSET_CLI_JSONPATH_PARSER_H_
#define JOBSET_CLI_JSONPATH_PARSER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"

// The parsed form of a JsonPath template (cli/jsonpath.h) and its parser.
// Internal to the jsonpath library: jsonpath.cc evaluates what this parses.
namespace jobset::cli::jsonpath_internal {

struct Filter;

// One index or slice of `[...]`.
struct ArrayParam {
  bool slice = false;
  std::optional<int64_t> start, end;
  int64_t step = 1;
};

struct Step {
  enum class Kind { kField, kWildcard, kRecursive, kArray, kFilter };
  Kind kind = Kind::kField;
  std::vector<std::string> names;        // kField: one, or a union of names.
  std::vector<ArrayParam> params;        // kArray: a union of indices/slices.
  std::shared_ptr<const Filter> filter;  // kFilter.
};

struct Path {
  bool from_root = false;  // `$`; else the current value (`@`, `.`).
  std::vector<Step> steps;
};

struct Operand {
  std::optional<Path> path;  // Else `literal`.
  ::google::protobuf::Value literal;
};

struct Filter {
  Operand left;
  std::string op;  // Empty: whether `left` exists.
  Operand right;
};

struct Node {
  enum class Kind { kText, kPath, kRange };
  Kind kind = Kind::kText;
  std::string text;
  Path path;
  std::vector<Node> body;  // kRange.
};

// Parses a template (`text` with {actions}) into its nodes, `range` ... `end`
// nested as kRange bodies. kInvalidArgument with the parser's reason (kubectl's
// wording) when it is not one. Pure.
absl::StatusOr<std::vector<Node>> ParseTemplate(absl::string_view text);

}  // namespace jobset::cli::jsonpath_internal

#endif  // JOBSET_CLI_JSONPATH_PARSER_H_
