#include "cli/commands.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/defaults.h"
#include "api/manifest.h"
#include "cli/describe.h"
#include "cli/output.h"
#include "google/protobuf/util/message_differencer.h"

namespace jobset::cli {
namespace {

// Whether two JobSets agree on what apply owns: labels, annotations and spec
// (the controller may have written status in between).
bool SameApplied(const api::JobSet& a, const api::JobSet& b) {
  auto owned = [](const api::JobSet& js) {
    api::JobSet out;
    *out.mutable_metadata()->mutable_labels() = js.metadata().labels();
    *out.mutable_metadata()->mutable_annotations() =
        js.metadata().annotations();
    *out.mutable_spec() = js.spec();
    return out;
  };
  return google::protobuf::util::MessageDifferencer::Equals(owned(a), owned(b));
}

using ::google::protobuf::util::MessageDifferencer;

constexpr absl::string_view kJobSetResource = "jobset.jobset.x-k8s.io";
constexpr absl::Duration kDefaultRequestTimeout = absl::Seconds(10);
constexpr absl::Duration kDefaultWaitTimeout = absl::Seconds(60);

// A command's context: the invocation, the client and the streams.
struct Context {
  const Invocation& invocation;
  Client& client;
  const Io& io;
  std::string ns;
};

int Fail(const Context& ctx, const absl::Status& status) {
  *ctx.io.err << "error: " << status.message() << "\n";
  return ExitCodeFor(status);
}

int Usage(const Context& ctx, absl::string_view message) {
  *ctx.io.err << "error: " << message << "\nSee 'jobsetctl "
              << ctx.invocation.command->verb << " --help'.\n";
  return kExitUsage;
}

std::string ReadAll(std::istream& in) {
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

// Checks that the first argument names JobSets.
bool IsJobSetType(const Context& ctx) {
  std::optional<std::string> type = CanonicalType(ctx.invocation.args[0]);
  return type.has_value() && *type == "jobsets";
}

int RequireJobSetType(const Context& ctx) {
  return Usage(ctx, absl::StrCat("\"", ctx.invocation.command->verb,
                                 "\" supports jobsets only, got \"",
                                 ctx.invocation.args[0], "\""));
}

// ---- apply ----

// Applies one manifest object; prints what happened. Returns the exit code.
int ApplyOne(const Context& ctx, api::JobSet jobset, bool dry_run) {
  api::ObjectMeta* meta = jobset.mutable_metadata();
  if (meta->namespace_().empty()) {
    meta->set_namespace_(ctx.ns);
  } else if (ctx.invocation.Has("namespace") && meta->namespace_() != ctx.ns) {
    return Fail(
        ctx, absl::InvalidArgumentError(absl::StrCat(
                 "the namespace from the provided object \"",
                 meta->namespace_(), "\" does not match the namespace \"",
                 ctx.ns, "\". You must pass '--namespace=", meta->namespace_(),
                 "' to perform this operation.")));
  }
  const std::string suffix = dry_run ? " (dry run)" : "";
  const std::string display =
      meta->name().empty() ? absl::StrCat(meta->generate_name(), "<generated>")
                           : meta->name();
  auto failed = [&](const absl::Status& status) {
    *ctx.io.err << "error: " << kJobSetResource << "/" << display << ": "
                << status.message() << "\n";
    return ExitCodeFor(status);
  };

  absl::StatusOr<api::JobSet> existing =
      absl::NotFoundError("no name: generateName");
  if (!meta->name().empty()) {
    api::GetJobSetRequest get;
    get.set_namespace_(meta->namespace_());
    get.set_name(meta->name());
    existing = ctx.client.Get(get);
  }
  if (!existing.ok() &&
      existing.status().code() != absl::StatusCode::kNotFound) {
    return failed(existing.status());
  }
  if (!existing.ok()) {
    api::CreateJobSetRequest create;
    *create.mutable_jobset() = std::move(jobset);
    create.set_dry_run(dry_run);
    absl::StatusOr<api::CreateJobSetResponse> created =
        ctx.client.Create(create);
    if (!created.ok()) return failed(created.status());
    *ctx.io.out << kJobSetResource << "/" << created->jobset().metadata().name()
                << (created->created() ? " created" : " unchanged") << suffix
                << "\n";
    return kExitOk;
  }
  // It exists: replace labels, annotations and spec (apply's "configure").
  api::UpdateJobSetRequest update;
  *update.mutable_jobset() = std::move(jobset);
  update.set_dry_run(dry_run);
  absl::StatusOr<api::JobSet> updated = ctx.client.Update(update);
  if (!updated.ok()) return failed(updated.status());
  const bool same = SameApplied(*updated, *existing);
  *ctx.io.out << kJobSetResource << "/" << updated->metadata().name()
              << (same ? " unchanged" : " configured") << suffix << "\n";
  return kExitOk;
}

int Apply(const Context& ctx) {
  if (!ctx.invocation.Has("filename")) {
    return Usage(ctx, "must specify -f FILE (or -f - for standard input)");
  }
  const std::string file = ctx.invocation.Get("filename", "");
  std::string text;
  if (file == "-") {
    text = ReadAll(*ctx.io.in);
  } else {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      return Fail(ctx, absl::NotFoundError(absl::StrCat(
                           "cannot read \"", file, "\": ", strerror(errno))));
    }
    text = ReadAll(in);
  }
  absl::StatusOr<std::vector<api::ManifestObject>> objects =
      api::LoadManifest(text);
  if (!objects.ok()) {
    *ctx.io.err << "error: " << (file == "-" ? "<stdin>" : file) << ": "
                << objects.status().message() << "\n";
    return kExitApiError;
  }
  if (objects->empty()) {
    *ctx.io.err << "error: no objects passed to apply\n";
    return kExitApiError;
  }
  const bool dry_run = ctx.invocation.Has("dry-run");
  int exit_code = kExitOk;
  for (api::ManifestObject& object : *objects) {
    for (const std::string& warning : object.warnings) {
      *ctx.io.err << "Warning: " << kJobSetResource << "/"
                  << object.jobset.metadata().name() << ": " << warning << "\n";
    }
    const int code = ApplyOne(ctx, std::move(object.jobset), dry_run);
    // Unreachable wins: nothing else can have worked either.
    if (code != kExitOk && exit_code != kExitUnreachable) exit_code = code;
  }
  return exit_code;
}

// ---- get ----

struct Kind {
  std::string api_version;
  std::string kind;
  std::string name_prefix;  // For -o name.
};

Kind KindOf(absl::string_view type) {
  if (type == "jobsets")
    return {api::kApiVersion, api::kKind, "jobset.jobset.x-k8s.io/"};
  if (type == "jobs") return {"batch/v1", "Job", "job.batch/"};
  if (type == "pods") return {"v1", "Pod", "pod/"};
  if (type == "events") return {"events.k8s.io/v1", "Event", "event/"};
  return {"", "", "node/"};  // Nodes are jobsetd's own shape.
}

// Prints `items` as asked by -o. `name_of` gives an item's name.
template <typename T, typename NameOf>
int PrintObjects(const Context& ctx, absl::string_view type,
                 const std::vector<T>& items, bool single,
                 const std::vector<Row>& table, NameOf name_of) {
  const std::string output = ctx.invocation.Get("output", "");
  const Kind kind = KindOf(type);
  if (output == "json" || output == "yaml") {
    const bool yaml = output == "yaml";
    if (single) {
      *ctx.io.out << (yaml ? ToYaml(items[0], kind.api_version, kind.kind)
                           : ToJson(items[0], kind.api_version, kind.kind));
    } else {
      std::vector<const google::protobuf::Message*> pointers;
      for (const T& item : items) pointers.push_back(&item);
      *ctx.io.out << ToList(pointers, kind.api_version, kind.kind, yaml);
    }
    return kExitOk;
  }
  if (output == "name") {
    for (const T& item : items) {
      *ctx.io.out << kind.name_prefix << name_of(item) << "\n";
    }
    return kExitOk;
  }
  if (items.empty()) {
    *ctx.io.err << "No resources found in " << ctx.ns << " namespace.\n";
    return kExitOk;
  }
  *ctx.io.out << FormatTable(table);
  return kExitOk;
}

template <typename T>
std::vector<T> Items(const google::protobuf::RepeatedPtrField<T>& field) {
  return std::vector<T>(field.begin(), field.end());
}

// Keeps only the item named `name`; kNotFound when there is none.
template <typename T>
absl::Status FilterByName(std::vector<T>* items, absl::string_view name,
                          absl::string_view resource) {
  if (name.empty()) return absl::OkStatus();
  std::vector<T> kept;
  for (T& item : *items) {
    if (item.metadata().name() == name) kept.push_back(std::move(item));
  }
  *items = std::move(kept);
  if (items->empty()) {
    return absl::NotFoundError(
        absl::StrCat(resource, " \"", name, "\" not found"));
  }
  return absl::OkStatus();
}

// How often one `get -w` or `watch` starts over after falling behind.
constexpr int kMaxRelists = 1'000;

absl::StatusOr<absl::Time> WatchDeadline(const Context& ctx) {
  if (!ctx.invocation.Has("timeout")) return absl::InfiniteFuture();
  absl::StatusOr<absl::Duration> timeout =
      ParseDurationFlag("timeout", ctx.invocation.Get("timeout", ""));
  if (!timeout.ok()) return timeout.status();
  return absl::Now() + *timeout;
}

// Streams JobSet changes as table rows (with an EVENT column when
// `event_column`) or as JSON/YAML objects, from `resource_version`. When the
// watch falls behind jobsetd's history (OUT_OF_RANGE), watches again from
// the current state, showing only what changed since it was last shown
// (`shown_before`: what the caller printed already).
int StreamJobSets(const Context& ctx, absl::string_view name,
                  const std::string& resource_version, bool event_column,
                  bool header, const std::vector<api::JobSet>& shown_before) {
  absl::StatusOr<absl::Time> deadline = WatchDeadline(ctx);
  if (!deadline.ok()) return Usage(ctx, deadline.status().message());
  const std::string output = ctx.invocation.Get("output", "");
  if (header) {
    Row head = JobSetRows({}, absl::Now())[0];
    if (event_column) head.insert(head.begin(), "EVENT");
    *ctx.io.out << FormatTable({head}) << std::flush;
  }
  api::WatchJobSetsRequest request;
  request.set_namespace_(ctx.ns);
  request.set_resource_version(resource_version);
  // The resourceVersion each JobSet was last shown at: after a relist, what
  // was shown already is not shown again.
  std::map<std::string, std::string> shown;
  for (const api::JobSet& jobset : shown_before) {
    shown[jobset.metadata().name()] = jobset.metadata().resource_version();
  }
  auto on_event = [&](const api::WatchEvent& event) {
    if (!name.empty() && event.object().metadata().name() != name) {
      return true;
    }
    const std::string& object_name = event.object().metadata().name();
    const std::string& version = event.object().metadata().resource_version();
    if (event.type() == "DELETED") {
      shown.erase(object_name);
    } else {
      auto [it, added] = shown.try_emplace(object_name, version);
      if (!added && it->second == version) return true;  // Relisted.
      it->second = version;
    }
    if (output == "json" || output == "yaml") {
      *ctx.io.out << (output == "yaml"
                          ? absl::StrCat("---\n", ToYaml(event.object()))
                          : ToJson(event.object()))
                  << std::flush;
      return true;
    }
    Row row = JobSetRows({event.object()}, absl::Now())[1];
    if (event_column) row.insert(row.begin(), event.type());
    // Each row alone: columns are not aligned across rows while
    // streaming, as with kubectl get -w.
    *ctx.io.out << FormatTable({row}) << std::flush;
    return true;
  };
  absl::Status status;
  for (int relists = 0;; ++relists) {
    status = ctx.client.Watch(request, *deadline, on_event);
    if (status.code() != absl::StatusCode::kOutOfRange ||
        relists >= kMaxRelists) {
      break;
    }
    // The watch fell behind the history jobsetd keeps (Kubernetes' 410
    // Gone): watch again without a resourceVersion, which lists the current
    // state first, and go on from there.
    request.clear_resource_version();
  }
  if (status.code() == absl::StatusCode::kDeadlineExceeded &&
      *deadline != absl::InfiniteFuture()) {
    return kExitOk;  // --timeout ended the watch as asked.
  }
  if (!status.ok()) return Fail(ctx, status);
  return kExitOk;
}

int GetJobSets(const Context& ctx, const std::string& name) {
  std::vector<api::JobSet> items;
  std::string resource_version;
  if (!name.empty()) {
    api::GetJobSetRequest request;
    request.set_namespace_(ctx.ns);
    request.set_name(name);
    absl::StatusOr<api::JobSet> got = ctx.client.Get(request);
    if (!got.ok()) return Fail(ctx, got.status());
    resource_version = got->metadata().resource_version();
    items.push_back(*std::move(got));
  } else {
    api::ListJobSetsRequest request;
    request.set_namespace_(ctx.ns);
    absl::StatusOr<api::ListJobSetsResponse> list = ctx.client.List(request);
    if (!list.ok()) return Fail(ctx, list.status());
    resource_version = list->resource_version();
    items = Items(list->items());
  }
  const bool watch = ctx.invocation.Has("watch");
  const std::string output = ctx.invocation.Get("output", "");
  if (watch && items.empty() && output.empty()) {
    // Still print the header, then stream.
    return StreamJobSets(ctx, name, resource_version, false, true, items);
  }
  int code = PrintObjects(
      ctx, "jobsets", items, !name.empty(), JobSetRows(items, absl::Now()),
      [](const api::JobSet& js) { return js.metadata().name(); });
  if (code != kExitOk || !watch) return code;
  return StreamJobSets(ctx, name, resource_version, false, false, items);
}

int Get(const Context& ctx) {
  std::optional<std::string> type = CanonicalType(ctx.invocation.args[0]);
  if (!type.has_value()) {
    return Usage(
        ctx, absl::StrCat("unknown resource type \"", ctx.invocation.args[0],
                          "\" (use jobsets, jobs, pods, nodes or "
                          "events)"));
  }
  const std::string output = ctx.invocation.Get("output", "");
  if (!output.empty() && output != "json" && output != "yaml" &&
      output != "name" && output != "wide") {
    return Usage(ctx, absl::StrCat("unknown output format \"", output,
                                   "\" (use json, yaml, name or wide)"));
  }
  const std::string name =
      ctx.invocation.args.size() > 1 ? ctx.invocation.args[1] : "";
  if (ctx.invocation.Has("watch") && *type != "jobsets") {
    return Usage(ctx, "-w/--watch is supported for jobsets only");
  }
  const std::string jobset = ctx.invocation.Get("jobset", "");
  if (!jobset.empty() && (*type == "jobsets" || *type == "nodes")) {
    return Usage(ctx, absl::StrCat("--jobset does not apply to ", *type));
  }
  auto name_of = [](const auto& item) { return item.metadata().name(); };
  if (*type == "jobsets") return GetJobSets(ctx, name);
  if (*type == "jobs") {
    api::ListJobsRequest request;
    request.set_namespace_(ctx.ns);
    request.set_jobset(jobset);
    absl::StatusOr<api::ListJobsResponse> list = ctx.client.ListJobs(request);
    if (!list.ok()) return Fail(ctx, list.status());
    std::vector<api::Job> items = Items(list->items());
    if (absl::Status s = FilterByName(&items, name, "jobs.batch"); !s.ok()) {
      return Fail(ctx, s);
    }
    return PrintObjects(ctx, *type, items, !name.empty(),
                        JobRows(items, absl::Now()), name_of);
  }
  if (*type == "pods") {
    api::ListPodsRequest request;
    request.set_namespace_(ctx.ns);
    request.set_jobset(jobset);
    absl::StatusOr<api::ListPodsResponse> list = ctx.client.ListPods(request);
    if (!list.ok()) return Fail(ctx, list.status());
    std::vector<api::Pod> items = Items(list->items());
    if (absl::Status s = FilterByName(&items, name, "pods"); !s.ok()) {
      return Fail(ctx, s);
    }
    return PrintObjects(ctx, *type, items, !name.empty(),
                        PodRows(items, absl::Now()), name_of);
  }
  if (*type == "events") {
    if (!name.empty()) return Usage(ctx, "get events takes no NAME");
    api::ListEventsRequest request;
    request.set_namespace_(ctx.ns);
    request.set_jobset(jobset);
    absl::StatusOr<api::ListEventsResponse> list =
        ctx.client.ListEvents(request);
    if (!list.ok()) return Fail(ctx, list.status());
    std::vector<api::Event> items = Items(list->items());
    return PrintObjects(ctx, *type, items, false, EventRows(items, absl::Now()),
                        name_of);
  }
  // Nodes.
  std::vector<api::Node> items;
  if (!name.empty()) {
    absl::StatusOr<api::Node> node = ctx.client.GetNode(name);
    if (!node.ok()) return Fail(ctx, node.status());
    items.push_back(*std::move(node));
  } else {
    absl::StatusOr<api::ListNodesResponse> list = ctx.client.ListNodes();
    if (!list.ok()) return Fail(ctx, list.status());
    items = Items(list->nodes());
  }
  if (items.empty() && output.empty()) {
    *ctx.io.err << "No nodes registered.\n";
    return kExitOk;
  }
  return PrintObjects(
      ctx, *type, items, !name.empty(), NodeRows(items, absl::Now()),
      [](const api::Node& node) { return node.registration().name(); });
}

// ---- the JobSet verbs ----

int Describe(const Context& ctx) {
  if (!IsJobSetType(ctx)) return RequireJobSetType(ctx);
  const std::string& name = ctx.invocation.args[1];
  api::GetJobSetRequest get;
  get.set_namespace_(ctx.ns);
  get.set_name(name);
  absl::StatusOr<api::JobSet> jobset = ctx.client.Get(get);
  if (!jobset.ok()) return Fail(ctx, jobset.status());
  api::ListPodsRequest pods_request;
  pods_request.set_namespace_(ctx.ns);
  pods_request.set_jobset(name);
  absl::StatusOr<api::ListPodsResponse> pods =
      ctx.client.ListPods(pods_request);
  if (!pods.ok()) return Fail(ctx, pods.status());
  api::ListEventsRequest events_request;
  events_request.set_namespace_(ctx.ns);
  events_request.set_jobset(name);
  absl::StatusOr<api::ListEventsResponse> events =
      ctx.client.ListEvents(events_request);
  if (!events.ok()) return Fail(ctx, events.status());
  *ctx.io.out << DescribeJobSet(*jobset, Items(pods->items()),
                                Items(events->items()), absl::Now());
  return kExitOk;
}

int Delete(const Context& ctx) {
  if (!IsJobSetType(ctx)) return RequireJobSetType(ctx);
  api::DeleteJobSetRequest request;
  request.set_namespace_(ctx.ns);
  request.set_name(ctx.invocation.args[1]);
  absl::StatusOr<api::JobSet> deleted = ctx.client.Delete(request);
  if (!deleted.ok()) return Fail(ctx, deleted.status());
  *ctx.io.out << kJobSetResource << " \"" << request.name() << "\" deleted\n";
  return kExitOk;
}

int SetSuspend(const Context& ctx, bool suspend) {
  if (!IsJobSetType(ctx)) return RequireJobSetType(ctx);
  absl::StatusOr<api::JobSet> result;
  if (suspend) {
    api::SuspendJobSetRequest request;
    request.set_namespace_(ctx.ns);
    request.set_name(ctx.invocation.args[1]);
    result = ctx.client.Suspend(request);
  } else {
    api::ResumeJobSetRequest request;
    request.set_namespace_(ctx.ns);
    request.set_name(ctx.invocation.args[1]);
    result = ctx.client.Resume(request);
  }
  if (!result.ok()) return Fail(ctx, result.status());
  *ctx.io.out << kJobSetResource << "/" << result->metadata().name()
              << (suspend ? " suspended" : " resumed") << "\n";
  return kExitOk;
}

int Watch(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  std::string name;
  if (!args.empty()) {
    std::optional<std::string> type = CanonicalType(args[0]);
    if (type.has_value() && *type == "jobsets") {
      if (args.size() > 1) name = args[1];
    } else if (args.size() == 1) {
      name = args[0];  // watch NAME
    } else {
      return RequireJobSetType(ctx);
    }
  }
  return StreamJobSets(ctx, name, "", /*event_column=*/true, /*header=*/true,
                       /*shown_before=*/{});
}

// What a JobSet's state means for `wait`.
enum class WaitState { kMet, kCannotBeMet, kNotYet };

WaitState Evaluate(const api::JobSet& jobset, absl::string_view type,
                   absl::string_view value, std::string* why) {
  for (const api::Condition& c : jobset.status().conditions()) {
    if (absl::EqualsIgnoreCase(c.type(), type) &&
        absl::EqualsIgnoreCase(c.status(), value)) {
      return WaitState::kMet;
    }
  }
  for (const api::Condition& c : jobset.status().conditions()) {
    if ((c.type() == "Completed" || c.type() == "Failed") &&
        c.status() == "True") {
      *why = absl::StrCat("jobset ", jobset.metadata().name(), " is ", c.type(),
                          " (", c.reason(), c.message().empty() ? "" : ": ",
                          c.message(), ")");
      return WaitState::kCannotBeMet;
    }
  }
  return WaitState::kNotYet;
}

int Wait(const Context& ctx) {
  if (!IsJobSetType(ctx)) return RequireJobSetType(ctx);
  const std::string& name = ctx.invocation.args[1];
  const std::string for_flag = ctx.invocation.Get("for", "");
  absl::string_view condition = for_flag;
  // --for=condition=TYPE[=VALUE], VALUE defaulting to True.
  if (!absl::ConsumePrefix(&condition, "condition=") || condition.empty()) {
    return Usage(
        ctx, "--for must be condition=TYPE (e.g. --for=condition=Completed)");
  }
  std::vector<std::string> parts = absl::StrSplit(condition, '=');
  if (parts.size() > 2 || parts[0].empty()) {
    return Usage(ctx, absl::StrCat("bad --for condition \"", condition, "\""));
  }
  const std::string type = parts[0];
  const std::string value = parts.size() == 2 ? parts[1] : "True";
  absl::Duration timeout = kDefaultWaitTimeout;
  if (ctx.invocation.Has("timeout")) {
    absl::StatusOr<absl::Duration> parsed =
        ParseDurationFlag("timeout", ctx.invocation.Get("timeout", ""));
    if (!parsed.ok()) return Usage(ctx, parsed.status().message());
    timeout = *parsed;
  }
  const absl::Time deadline = absl::Now() + timeout;
  auto met = [&] {
    *ctx.io.out << kJobSetResource << "/" << name << " condition met\n";
    return kExitOk;
  };
  auto cannot = [&](const std::string& why) {
    *ctx.io.err << "error: condition " << type << "=" << value
                << " cannot be met: " << why << "\n";
    return kExitWaitFailed;
  };
  auto timed_out = [&] {
    *ctx.io.err << "error: timed out after " << absl::FormatDuration(timeout)
                << " waiting for the condition " << type << "=" << value
                << " on " << kJobSetResource << "/" << name << "\n";
    return kExitWaitTimeout;
  };

  api::GetJobSetRequest get;
  get.set_namespace_(ctx.ns);
  get.set_name(name);
  absl::StatusOr<api::JobSet> jobset = ctx.client.Get(get);
  if (!jobset.ok()) return Fail(ctx, jobset.status());
  std::string why;
  switch (Evaluate(*jobset, type, value, &why)) {
    case WaitState::kMet:
      return met();
    case WaitState::kCannotBeMet:
      return cannot(why);
    case WaitState::kNotYet:
      break;
  }
  std::string resource_version = jobset->metadata().resource_version();
  while (true) {
    WaitState state = WaitState::kNotYet;
    bool deleted = false;
    api::WatchJobSetsRequest request;
    request.set_namespace_(ctx.ns);
    request.set_resource_version(resource_version);
    absl::Status status =
        ctx.client.Watch(request, deadline, [&](const api::WatchEvent& event) {
          if (event.object().metadata().name() != name) return true;
          if (event.type() == "DELETED") {
            deleted = true;
            return false;
          }
          state = Evaluate(event.object(), type, value, &why);
          return state == WaitState::kNotYet;
        });
    if (deleted) return cannot(absl::StrCat("jobset ", name, " was deleted"));
    if (state == WaitState::kMet) return met();
    if (state == WaitState::kCannotBeMet) return cannot(why);
    if (status.code() == absl::StatusCode::kDeadlineExceeded ||
        absl::Now() >= deadline) {
      return timed_out();
    }
    if (status.code() == absl::StatusCode::kOutOfRange) {
      // The history was compacted: start over from the current state (the
      // watch lists it first).
      resource_version.clear();
      continue;
    }
    if (!status.ok()) return Fail(ctx, status);
    // The server ended the stream: it is shutting down.
    return Fail(ctx, absl::UnavailableError(
                         absl::StrCat("jobsetd at ", ctx.client.address(),
                                      " ended the watch (shutting down?)")));
  }
}

int NodeVerb(const Context& ctx) {
  const std::string& verb = ctx.invocation.command->verb;
  const std::string& node = ctx.invocation.args[0];
  absl::StatusOr<api::Node> result =
      verb == "cordon"     ? ctx.client.CordonNode(node)
      : verb == "uncordon" ? ctx.client.UncordonNode(node)
                           : ctx.client.DrainNode(node);
  if (!result.ok()) return Fail(ctx, result.status());
  *ctx.io.out << "node/" << node << " "
              << (verb == "cordon"     ? "cordoned"
                  : verb == "uncordon" ? "uncordoned"
                                       : "drained")
              << "\n";
  return kExitOk;
}

int Logs(const Context& ctx) {
  api::GetPodLogsRequest request;
  request.set_namespace_(ctx.ns);
  request.set_pod(ctx.invocation.args[0]);
  request.set_container(ctx.invocation.Get("container", ""));
  request.set_follow(ctx.invocation.Has("follow"));
  absl::Status status = ctx.client.Logs(request, [&](const std::string& data) {
    *ctx.io.out << data;
    ctx.io.out->flush();
  });
  if (!status.ok()) return Fail(ctx, status);
  return kExitOk;
}

}  // namespace

int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  if (status.code() == absl::StatusCode::kUnavailable ||
      status.code() == absl::StatusCode::kDeadlineExceeded) {
    return kExitUnreachable;
  }
  return kExitApiError;
}

int RunCommand(const Invocation& invocation, Client& client, const Io& io) {
  Context ctx{invocation, client, io,
              invocation.Get("namespace", api::kDefaultNamespace)};
  const std::string& verb = invocation.command->verb;
  if (verb == "apply") return Apply(ctx);
  if (verb == "get") return Get(ctx);
  if (verb == "describe") return Describe(ctx);
  if (verb == "delete") return Delete(ctx);
  if (verb == "suspend") return SetSuspend(ctx, true);
  if (verb == "resume") return SetSuspend(ctx, false);
  if (verb == "wait") return Wait(ctx);
  if (verb == "watch") return Watch(ctx);
  if (verb == "cordon" || verb == "uncordon" || verb == "drain") {
    return NodeVerb(ctx);
  }
  if (verb == "logs") return Logs(ctx);
  return Usage(ctx, absl::StrCat("no such command \"", verb, "\""));
}

int Main(const std::vector<std::string>& args, const char* server_env,
         const Io& io) {
  absl::StatusOr<Invocation> invocation = ParseCommandLine(args, Commands());
  if (!invocation.ok()) {
    *io.err << "error: " << invocation.status().message() << "\n";
    return kExitUsage;
  }
  if (invocation->help) {
    *io.out << HelpText(invocation->command, Commands());
    return kExitOk;
  }
  if (invocation->command == nullptr) {
    *io.err << HelpText(nullptr, Commands());
    return kExitUsage;
  }
  absl::Duration timeout = kDefaultRequestTimeout;
  if (invocation->Has("request-timeout")) {
    absl::StatusOr<absl::Duration> parsed = ParseDurationFlag(
        "request-timeout", invocation->Get("request-timeout", ""));
    if (!parsed.ok() || *parsed <= absl::ZeroDuration()) {
      *io.err << "error: "
              << (parsed.ok() ? "--request-timeout must be positive"
                              : parsed.status().message())
              << "\n";
      return kExitUsage;
    }
    timeout = *parsed;
  }
  Client client(ServerAddress(*invocation, server_env), timeout);
  return RunCommand(*invocation, client, io);
}

}  // namespace jobset::cli
