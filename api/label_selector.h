#ifndef JOBSET_API_LABEL_SELECTOR_H_
#define JOBSET_API_LABEL_SELECTOR_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"

namespace jobset::api {

// A parsed Kubernetes label selector in its string form, as kubectl's `-l`
// and the API's `labelSelector` parameter accept it
// (k8s.io/apimachinery/pkg/labels):
//
//   app=x,tier!=db,env in (a,b),stage notin (dev),gpu,!legacy
//
// A selector is a comma-separated list of requirements; a set of labels
// matches when it meets every one of them. Whitespace may surround any token.
//   key=value, key==value   the key is present with exactly that value
//   key!=value              the key is absent or has another value
//   key in (v1,v2)          the key is present with one of the values
//   key notin (v1,v2)       the key is absent or has none of the values
//   key                     the key is present, with any value
//   !key                    the key is absent
// Keys are qualified names and values label values (names.h). A value may be
// empty ("key=" selects an empty value; an empty entry between commas in a
// list is the empty value), but `in` and `notin` need at least one entry.
// `in` and `notin` are operators only where an operator may stand, so
// "env=in" selects the value "in". The set-based `>` and `<` are not
// supported.
//
// LabelSelector selector = LabelSelector::Parse("app=web,!legacy").value();
// if (selector.Matches(pod.metadata().labels())) { ... }
//
// Thread-compatible; immutable after Parse.
class LabelSelector {
 public:
  enum class Operator {
    kEquals,        // key=value (also written key==value)
    kNotEquals,     // key!=value
    kIn,            // key in (v1,v2)
    kNotIn,         // key notin (v1,v2)
    kExists,        // key
    kDoesNotExist,  // !key
  };

  // One requirement of a selector.
  struct Requirement {
    std::string key;
    Operator op;
    // Sorted and without duplicates: one value for kEquals and kNotEquals,
    // at least one for kIn and kNotIn, none for kExists and kDoesNotExist.
    std::vector<std::string> values;

    // Returns whether `labels` meet this requirement.
    bool Matches(
        const google::protobuf::Map<std::string, std::string>& labels) const;
    // Returns the canonical form: "key=v", "key!=v", "key in (a,b)",
    // "key notin (a,b)", "key" or "!key". A list of only the empty value is
    // written "(,)", since Parse rejects "()".
    std::string ToString() const;

    bool operator==(const Requirement&) const = default;
  };

  // Constructs the empty selector, which selects everything.
  LabelSelector() = default;

  // Parses the string form. An empty (or all-whitespace) string is the empty
  // selector. Errors are INVALID_ARGUMENT and quote the selector, say what is
  // wrong and where (a byte offset), e.g.
  //   label selector "a in (b": missing ")" at offset 7
  static absl::StatusOr<LabelSelector> Parse(absl::string_view selector);

  // Returns whether `labels` meet every requirement. The empty selector
  // matches every set of labels, including the empty one.
  bool Matches(
      const google::protobuf::Map<std::string, std::string>& labels) const;

  // Returns whether this selector has no requirements (selects everything).
  bool Empty() const { return requirements_.empty(); }

  // Returns the requirements, ordered by key (stably: requirements on the
  // same key keep their order in the string form).
  const std::vector<Requirement>& requirements() const { return requirements_; }

  // Returns the canonical string form: the requirements in key order, joined
  // by "," without spaces, "==" written as "=", list values sorted and
  // without duplicates, e.g. "app=x,env in (a,b),!legacy". Parse accepts it
  // and yields an equal selector; the empty selector is "".
  std::string ToString() const;

  bool operator==(const LabelSelector&) const = default;

 private:
  explicit LabelSelector(std::vector<Requirement> requirements)
      : requirements_(std::move(requirements)) {}

  std::vector<Requirement> requirements_;
};

}  // namespace jobset::api

#endif  // JOBSET_API_LABEL_SELECTOR_H_
