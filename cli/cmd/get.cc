// get KIND [NAME]: any kind of the table, by its calls and its GetSupport.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cli/cmd/print.h"
#include "cli/cmd/verbs.h"
#include "cli/jsonpath.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

// Checks -o: kInvalidArgument for a template that does not parse (exit 1,
// as kubectl), a usage message for an unknown format.
int CheckOutput(const Context& ctx) {
  const std::string output = ctx.invocation.Get("output", "");
  if (output == "jsonpath" || output == "jsonpath=") {
    return Fail(ctx, absl::InvalidArgumentError(
                         "template format specified but no template given"));
  }
  if (absl::StartsWith(output, "jsonpath=")) {
    const absl::string_view text = absl::StripPrefix(output, "jsonpath=");
    if (absl::StatusOr<JsonPath> parsed = JsonPath::Parse(text); !parsed.ok()) {
      return Fail(ctx, absl::InvalidArgumentError(
                           absl::StrCat("error parsing jsonpath ", text, ", ",
                                        parsed.status().message())));
    }
  } else if (!output.empty() && output != "json" && output != "yaml" &&
             output != "name" && output != "wide") {
    return Usage(ctx, absl::StrCat("unknown output format ", Quote(output),
                                   " (use json, yaml, name, wide or "
                                   "jsonpath=TEMPLATE)"));
  }
  return kExitOk;
}

// Checks the flags against what the kind supports; returns a usage error's
// exit status, or kExitOk.
int CheckFlags(const Context& ctx, const KindInfo& kind,
               const std::string& name) {
  const Invocation& inv = ctx.invocation;
  const std::string& type = kind.plural;
  for (const char* flag : {"clusterqueue", "localqueue", "limit", "offset"}) {
    if (inv.Has(flag)) {
      return Usage(
          ctx, absl::StrCat("--", flag, " applies to pendingworkloads only"));
    }
  }
  if (inv.Has("watch") && kind.calls.watch == nullptr && !kind.get.poll_watch) {
    return Usage(ctx, absl::StrCat("-w/--watch does not apply to ", type));
  }
  if (!kind.get.selectors &&
      (inv.Has("selector") || inv.Has("field-selector"))) {
    return Usage(
        ctx, absl::StrCat("-l and --field-selector do not apply to ", type));
  }
  if (!name.empty() && inv.Has("selector")) {
    return Usage(ctx, "name cannot be provided when a selector is specified");
  }
  // As kubectl: cluster-scoped kinds ignore -A.
  if (!name.empty() && inv.Has("all-namespaces") && kind.namespaced) {
    return Usage(ctx,
                 "a resource cannot be retrieved by name across all "
                 "namespaces");
  }
  if (!inv.Get("jobset", "").empty() && !kind.get.by_jobset) {
    return Usage(ctx, absl::StrCat("--jobset does not apply to ", type));
  }
  if (kind.get.fields.empty() && inv.Has("field-selector")) {
    return Usage(ctx,
                 absl::StrCat("--field-selector does not apply to ", type));
  }
  if (inv.Has("all-namespaces") && kind.namespaced &&
      !kind.get.all_namespaces) {
    return Usage(ctx, absl::StrCat("-A/--all-namespaces does not apply to ",
                                   type, " (use -n NAMESPACE)"));
  }
  if (!name.empty() && !kind.get.by_name) {
    return Usage(ctx, absl::StrCat("get ", type, " takes no NAME"));
  }
  return kExitOk;
}

// Keeps the object named `name`; kNotFound when there is none.
absl::Status FilterByName(const KindInfo& kind, const std::string& name,
                          std::vector<Object>* objects) {
  if (name.empty()) return absl::OkStatus();
  std::vector<Object> kept;
  for (Object& o : *objects) {
    if (o.name == name) kept.push_back(std::move(o));
  }
  *objects = std::move(kept);
  if (objects->empty()) {
    return absl::NotFoundError(
        absl::StrCat(kind.GroupResource(), " ", Quote(name), " not found"));
  }
  return absl::OkStatus();
}

}  // namespace

int Get(const Context& ctx) {
  if (NamesPendingWorkloads(ctx.invocation.args[0])) {
    if (int code = CheckOutput(ctx); code != kExitOk) return code;
    return GetPendingWorkloads(ctx);
  }
  const KindInfo* kind = FindKind(ctx.invocation.args[0]);
  if (kind == nullptr) {
    return Usage(
        ctx, absl::StrCat("unknown resource type ",
                          Quote(ctx.invocation.args[0]), " (use ",
                          KindList([](const KindInfo&) { return true; }, "or"),
                          ")"));
  }
  if (int code = CheckOutput(ctx); code != kExitOk) return code;
  const std::string name =
      ctx.invocation.args.size() > 1 ? ctx.invocation.args[1] : "";
  if (int code = CheckFlags(ctx, *kind, name); code != kExitOk) return code;
  absl::StatusOr<Selection> selection = ParseSelection(ctx, *kind);
  if (!selection.ok()) return Fail(ctx, selection.status());
  const ListOptions options{
      .namespace_ = ctx.ns,
      .all_namespaces = ctx.invocation.Has("all-namespaces"),
      .label_selector = ctx.invocation.Get("selector", ""),
      .jobset = ctx.invocation.Get("jobset", ""),
  };
  // The object NAME (by the kind's get, else picked from its list) or the
  // list, narrowed to the selectors.
  auto fetch = [&]() -> absl::StatusOr<ListResult> {
    ListResult result;
    if (!name.empty() && kind->calls.get != nullptr) {
      absl::StatusOr<Object> got = kind->calls.get(ctx.client, ctx.ns, name);
      if (!got.ok()) return got.status();
      result.resource_version = got->resource_version;
      result.items.push_back(*std::move(got));
    } else {
      absl::StatusOr<ListResult> listed = kind->calls.list(ctx.client, options);
      if (!listed.ok()) return listed.status();
      result = *std::move(listed);
      if (absl::Status s = FilterByName(*kind, name, &result.items); !s.ok()) {
        return s;
      }
    }
    result.items = Select(*selection, *kind, std::move(result.items));
    return result;
  };
  absl::StatusOr<ListResult> listed = fetch();
  if (!listed.ok()) return Fail(ctx, listed.status());
  const bool watch = ctx.invocation.Has("watch");
  if (watch && kind->calls.watch != nullptr && listed->items.empty() &&
      ctx.invocation.Get("output", "").empty()) {
    // Still print the header, then stream.
    return StreamWatch(ctx, *kind, name, listed->resource_version,
                       /*event_column=*/false, /*header=*/true, listed->items);
  }
  int code = PrintObjects(ctx, *kind, listed->items, !name.empty());
  if (code != kExitOk || !watch) return code;
  if (kind->calls.watch != nullptr) {
    return StreamWatch(ctx, *kind, name, listed->resource_version,
                       /*event_column=*/false, /*header=*/false, listed->items);
  }
  return PollWatch(ctx, *kind, listed->items,
                   [&]() -> absl::StatusOr<std::vector<Object>> {
                     absl::StatusOr<ListResult> again = fetch();
                     if (!again.ok()) return again.status();
                     return std::move(again->items);
                   });
}

}  // namespace jobset::cli
