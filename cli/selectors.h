#ifndef JOBSET_CLI_SELECTORS_H_
#define JOBSET_CLI_SELECTORS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "google/protobuf/struct.pb.h"

// kubectl's --field-selector, and labels, over an object's JSON form (what
// `-o json` prints). Pure.
namespace jobset::cli {

// A field selector: "status.phase=Running,spec.nodeName!=n1" (`=`, `==`,
// `!=`; `\,` and `\=` escape). A field the object lacks reads as "", as in
// Kubernetes (so `spec.nodeName=` selects unbound pods). Thread-compatible;
// immutable after Parse.
class FieldSelector {
 public:
  struct Requirement {
    std::string field;  // "status.phase"
    bool equals = true;
    std::string value;
  };

  // Selects everything.
  FieldSelector() = default;

  // Parses `selector`, allowing only the fields in `supported`.
  // kInvalidArgument in Kubernetes' words: "invalid selector: 'S'; can't
  // understand 'TERM'" or "field label not supported: FIELD".
  static absl::StatusOr<FieldSelector> Parse(
      absl::string_view selector, const std::vector<std::string>& supported);

  // Returns whether `object` meets every requirement.
  bool Matches(const google::protobuf::Value& object) const;

  bool Empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_;
};

// Returns the field at a dotted `path` of `object` as text: a string as it
// is, a number or bool as JSON writes it, "" when absent or null.
std::string FieldText(const google::protobuf::Value& object,
                      absl::string_view path);

// Returns `metadata.labels` of an object's JSON form (empty when it has
// none).
google::protobuf::Map<std::string, std::string> LabelsOf(
    const google::protobuf::Value& object);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_SELECTORS_H_
