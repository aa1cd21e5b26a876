// wait jobset NAME --for=condition=TYPE[=VALUE] [--timeout=60s]: Get, then
// watch until the condition holds, cannot hold any more, or the time is up.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "cli/cmd/verbs.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

constexpr absl::Duration kDefaultWaitTimeout = absl::Seconds(60);

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

}  // namespace

int Wait(const Context& ctx) {
  if (!NamesJobSets(ctx)) return JobSetsOnly(ctx);
  const std::string& name = ctx.invocation.args[1];
  const std::string resource = KindNamed("jobsets").Resource();
  const std::string for_flag = ctx.invocation.Get("for", "");
  absl::string_view condition = for_flag;
  // --for=condition=TYPE[=VALUE], VALUE defaulting to True.
  if (!absl::ConsumePrefix(&condition, "condition=") || condition.empty()) {
    return Usage(
        ctx, "--for must be condition=TYPE (e.g. --for=condition=Completed)");
  }
  std::vector<std::string> parts = absl::StrSplit(condition, '=');
  if (parts.size() > 2 || parts[0].empty()) {
    return Usage(ctx, absl::StrCat("bad --for condition ", Quote(condition)));
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
  const absl::Time deadline = ctx.clock.Now() + timeout;
  auto met = [&] {
    *ctx.io.out << resource << "/" << name << " condition met\n";
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
                << " on " << resource << "/" << name << "\n";
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
        ctx.clock.Now() >= deadline) {
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

}  // namespace jobset::cli
