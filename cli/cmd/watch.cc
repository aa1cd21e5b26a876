// watch [jobsets] [NAME], and the two ways get -w follows changes: the
// kind's watch call (JobSets) or listing again every second.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/cmd/print.h"
#include "cli/cmd/verbs.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

// How often a client-side watch lists again.
constexpr absl::Duration kPollInterval = absl::Seconds(1);

// How often one `get -w` or `watch` starts over after falling behind.
constexpr int kMaxRelists = 1'000;

std::string KeyOf(const Object& object) {
  return absl::StrCat(object.namespace_, "/", object.name);
}

}  // namespace

bool NamesJobSets(const Context& ctx) {
  return FindKind(ctx.invocation.args[0]) == &KindNamed("jobsets");
}

int JobSetsOnly(const Context& ctx) {
  return Usage(ctx, absl::StrCat(Quote(ctx.invocation.command->verb),
                                 " supports jobsets only, got ",
                                 Quote(ctx.invocation.args[0])));
}

int StreamWatch(const Context& ctx, const KindInfo& kind,
                const std::string& name, const std::string& resource_version,
                bool event_column, bool header,
                const std::vector<Object>& shown_before) {
  absl::StatusOr<absl::Time> deadline = WatchDeadline(ctx);
  if (!deadline.ok()) return Usage(ctx, deadline.status().message());
  const std::string output = ctx.invocation.Get("output", "");
  const bool wide = output == "wide";
  const bool namespaces =
      kind.namespaced && ctx.invocation.Has("all-namespaces");
  if (header) {
    Row head = kind.rows({}, ctx.clock.Now(), wide)[0];
    if (namespaces) head.insert(head.begin(), "NAMESPACE");
    if (event_column) head.insert(head.begin(), "EVENT");
    *ctx.io.out << FormatTable({head}) << std::flush;
  }
  absl::StatusOr<Selection> selection = ParseSelection(ctx, kind);
  if (!selection.ok()) return Fail(ctx, selection.status());
  const ListOptions options{
      .namespace_ = ctx.ns,
      .all_namespaces = ctx.invocation.Has("all-namespaces"),
      .label_selector = ctx.invocation.Get("selector", ""),
  };
  // The resourceVersion each object was last shown at: after a relist, what
  // was shown already is not shown again.
  std::map<std::string, std::string> shown;
  for (const Object& object : shown_before) {
    shown[KeyOf(object)] = object.resource_version;
  }
  auto on_event = [&](const std::string& type, const Object& object) {
    if (!name.empty() && object.name != name) return true;
    if (Select(*selection, kind, {object}).empty()) return true;
    if (type == "DELETED") {
      shown.erase(KeyOf(object));
    } else {
      auto [it, added] =
          shown.try_emplace(KeyOf(object), object.resource_version);
      if (!added && it->second == object.resource_version) {
        return true;  // Relisted.
      }
      it->second = object.resource_version;
    }
    if (!output.empty() && !wide) {
      return PrintWatched(ctx, kind, object) == kExitOk;
    }
    Row row = kind.rows({object}, ctx.clock.Now(), wide)[1];
    if (namespaces) row.insert(row.begin(), object.namespace_);
    if (event_column) row.insert(row.begin(), type);
    // Each row alone: columns are not aligned across rows while
    // streaming, as with kubectl get -w.
    *ctx.io.out << FormatTable({row}) << std::flush;
    return true;
  };
  std::string from = resource_version;
  absl::Status status;
  for (int relists = 0;; ++relists) {
    status = kind.calls.watch(ctx.client, options, from, *deadline, on_event);
    if (status.code() != absl::StatusCode::kOutOfRange ||
        relists >= kMaxRelists) {
      break;
    }
    // The watch fell behind the history jobsetd keeps (Kubernetes' 410
    // Gone): watch again without a resourceVersion, which lists the current
    // state first, and go on from there.
    from.clear();
  }
  if (status.code() == absl::StatusCode::kDeadlineExceeded &&
      *deadline != absl::InfiniteFuture()) {
    return kExitOk;  // --timeout ended the watch as asked.
  }
  if (!status.ok()) return Fail(ctx, status);
  return kExitOk;
}

// Deletions are not shown, as kubectl get -w without
// --output-watch-events. Ends at --timeout (exit 0) or on an error.
int PollWatch(
    const Context& ctx, const KindInfo& kind, const std::vector<Object>& shown,
    const std::function<absl::StatusOr<std::vector<Object>>()>& fetch) {
  absl::StatusOr<absl::Time> deadline = WatchDeadline(ctx);
  if (!deadline.ok()) return Usage(ctx, deadline.status().message());
  std::map<std::string, std::string> last;
  for (const Object& object : shown) {
    last[KeyOf(object)] = ObjectJson(kind, object);
  }
  while (true) {
    const absl::Time now = ctx.clock.Now();
    const absl::Duration left = *deadline - now;
    if (left <= absl::ZeroDuration()) return kExitOk;
    ctx.clock.SleepUntil(now + std::min(left, kPollInterval));
    if (ctx.clock.Now() >= *deadline) return kExitOk;
    absl::StatusOr<std::vector<Object>> objects = fetch();
    if (!objects.ok()) return Fail(ctx, objects.status());
    for (const Object& object : *objects) {
      std::string json = ObjectJson(kind, object);
      auto [it, added] = last.try_emplace(KeyOf(object), json);
      if (!added && it->second == json) continue;
      it->second = std::move(json);
      if (int code = PrintWatched(ctx, kind, object); code != kExitOk) {
        return code;
      }
    }
  }
}

int Watch(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  std::string name;
  if (!args.empty()) {
    if (NamesJobSets(ctx)) {
      if (args.size() > 1) name = args[1];
    } else if (args.size() == 1) {
      name = args[0];  // watch NAME
    } else {
      return JobSetsOnly(ctx);
    }
  }
  return StreamWatch(ctx, KindNamed("jobsets"), name, "",
                     /*event_column=*/true, /*header=*/true,
                     /*shown_before=*/{});
}

}  // namespace jobset::cli
