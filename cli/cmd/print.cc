#include "cli/cmd/print.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "cli/jsonpath.h"

namespace jobset::cli {
namespace {

std::string ListText(const KindInfo& kind, const std::vector<Object>& objects,
                     bool yaml) {
  std::vector<const google::protobuf::Message*> pointers;
  pointers.reserve(objects.size());
  for (const Object& o : objects) pointers.push_back(o.message.get());
  return ToList(pointers, kind.api_version, kind.kind, yaml);
}

}  // namespace

absl::StatusOr<Selection> ParseSelection(const Context& ctx,
                                         const KindInfo& kind) {
  Selection selection;
  absl::StatusOr<api::LabelSelector> labels =
      api::LabelSelector::Parse(ctx.invocation.Get("selector", ""));
  if (!labels.ok()) return labels.status();
  selection.labels = *std::move(labels);
  absl::StatusOr<FieldSelector> fields = FieldSelector::Parse(
      ctx.invocation.Get("field-selector", ""), kind.get.fields);
  if (!fields.ok()) return fields.status();
  selection.fields = *std::move(fields);
  return selection;
}

std::string ObjectJson(const KindInfo& kind, const Object& object) {
  return ToJson(*object.message, kind.api_version, kind.kind);
}

std::vector<Object> Select(const Selection& selection, const KindInfo& kind,
                           std::vector<Object> objects) {
  if (selection.Empty()) return objects;
  std::vector<Object> kept;
  for (Object& object : objects) {
    absl::StatusOr<google::protobuf::Value> json =
        ParseJsonValue(ObjectJson(kind, object));
    if (!json.ok()) continue;  // ToJson always writes JSON; never here.
    if (selection.labels.Matches(LabelsOf(*json)) &&
        selection.fields.Matches(*json)) {
      kept.push_back(std::move(object));
    }
  }
  return kept;
}

std::vector<Row> TableOf(const Context& ctx, const KindInfo& kind,
                         const std::vector<Object>& objects) {
  std::vector<Row> rows = kind.rows(objects, ctx.clock.Now(),
                                    ctx.invocation.Get("output", "") == "wide");
  if (!kind.namespaced || !ctx.invocation.Has("all-namespaces") ||
      rows.size() != objects.size() + 1) {
    return rows;
  }
  rows[0].insert(rows[0].begin(), "NAMESPACE");
  for (size_t i = 0; i < objects.size(); ++i) {
    rows[i + 1].insert(rows[i + 1].begin(), objects[i].namespace_);
  }
  return rows;
}

int PrintObjects(const Context& ctx, const KindInfo& kind,
                 const std::vector<Object>& objects, bool single) {
  // A named object the selectors filtered out prints as an empty list.
  if (objects.empty()) single = false;
  const std::string output = ctx.invocation.Get("output", "");
  if (output == "json" || output == "yaml") {
    const bool yaml = output == "yaml";
    if (single) {
      const google::protobuf::Message& item = *objects[0].message;
      *ctx.io.out << (yaml ? ToYaml(item, kind.api_version, kind.kind)
                           : ToJson(item, kind.api_version, kind.kind));
    } else {
      *ctx.io.out << ListText(kind, objects, yaml);
    }
    return kExitOk;
  }
  if (output == "name") {
    const std::string resource = kind.Resource();
    for (const Object& o : objects) {
      *ctx.io.out << resource << "/" << o.name << "\n";
    }
    return kExitOk;
  }
  if (absl::StartsWith(output, "jsonpath=")) {
    const std::string json = single ? ObjectJson(kind, objects[0])
                                    : ListText(kind, objects, /*yaml=*/false);
    absl::StatusOr<std::string> text =
        RenderJsonPath(absl::StripPrefix(output, "jsonpath="), json);
    if (!text.ok()) return Fail(ctx, text.status());
    *ctx.io.out << *text;
    return kExitOk;
  }
  if (objects.empty()) {
    if (ctx.invocation.Has("all-namespaces") || !kind.namespaced) {
      *ctx.io.err << "No resources found\n";
    } else {
      *ctx.io.err << "No resources found in " << ctx.ns << " namespace.\n";
    }
    return kExitOk;
  }
  *ctx.io.out << FormatTable(TableOf(ctx, kind, objects));
  return kExitOk;
}

int PrintWatched(const Context& ctx, const KindInfo& kind,
                 const Object& object) {
  const std::string output = ctx.invocation.Get("output", "");
  if (output == "json") {
    *ctx.io.out << ObjectJson(kind, object);
  } else if (output == "yaml") {
    *ctx.io.out << "---\n"
                << ToYaml(*object.message, kind.api_version, kind.kind);
  } else if (output == "name") {
    *ctx.io.out << kind.Resource() << "/" << object.name << "\n";
  } else if (absl::StartsWith(output, "jsonpath=")) {
    absl::StatusOr<std::string> text = RenderJsonPath(
        absl::StripPrefix(output, "jsonpath="), ObjectJson(kind, object));
    if (!text.ok()) return Fail(ctx, text.status());
    *ctx.io.out << *text;
  } else {
    std::vector<Row> rows = TableOf(ctx, kind, {object});
    if (rows.size() > 1) *ctx.io.out << FormatTable({rows[1]});
  }
  ctx.io.out->flush();
  return kExitOk;
}

absl::StatusOr<absl::Time> WatchDeadline(const Context& ctx) {
  if (!ctx.invocation.Has("timeout")) return absl::InfiniteFuture();
  absl::StatusOr<absl::Duration> timeout =
      ParseDurationFlag("timeout", ctx.invocation.Get("timeout", ""));
  if (!timeout.ok()) return timeout.status();
  return ctx.clock.Now() + *timeout;
}

}  // namespace jobset::cli
