#ifndef JOBSET_CLI_CMD_PRINT_H_
#define JOBSET_CLI_CMD_PRINT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/label_selector.h"
#include "cli/cmd/context.h"
#include "cli/cmd/kinds.h"
#include "cli/output.h"
#include "cli/selectors.h"

// How get and the watches select objects and print them (-o, tables, -A's
// NAMESPACE column), for any kind of the table.
namespace jobset::cli {

// What -l/--selector and --field-selector of a get ask for.
struct Selection {
  api::LabelSelector labels;
  FieldSelector fields;
  bool Empty() const { return labels.Empty() && fields.Empty(); }
};

// Parses -l and --field-selector (the kind's fields).
absl::StatusOr<Selection> ParseSelection(const Context& ctx,
                                         const KindInfo& kind);

// Returns the JSON form of one object, as `-o json` prints it.
std::string ObjectJson(const KindInfo& kind, const Object& object);

// Keeps the objects `selection` matches (on their JSON form, so that every
// kind is filtered on the fields and labels it prints).
std::vector<Object> Select(const Selection& selection, const KindInfo& kind,
                           std::vector<Object> objects);

// The kind's table of `objects` (-o wide when asked), with kubectl's
// NAMESPACE column first for -A on a namespaced kind.
std::vector<Row> TableOf(const Context& ctx, const KindInfo& kind,
                         const std::vector<Object>& objects);

// Prints `objects` as -o asks; `single`: one object asked for by name
// (printed alone, not as a List).
int PrintObjects(const Context& ctx, const KindInfo& kind,
                 const std::vector<Object>& objects, bool single);

// Prints one object of a watch as -o asks: a table row (columns are not
// aligned across rows while streaming, as with kubectl get -w), JSON, YAML,
// its name or the JSONPath template.
int PrintWatched(const Context& ctx, const KindInfo& kind,
                 const Object& object);

// The end of a watch: now + --timeout, else never.
absl::StatusOr<absl::Time> WatchDeadline(const Context& ctx);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_CMD_PRINT_H_
