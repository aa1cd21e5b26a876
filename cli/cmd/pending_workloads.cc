// get pendingworkloads: Kueue's visibility API
// (KueueService.ListPendingWorkloads). Not a kind of the table (kinds.cc):
// it is a read-only listing of a ClusterQueue's or a LocalQueue's queue,
// printed as Kueue's PendingWorkloadsSummary and named as the Workloads it
// lists, so get routes it here and the other verbs refuse it.
#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cli/cmd/verbs.h"
#include "cli/jsonpath.h"
#include "cli/kueue_output.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

// Reads --limit or --offset: a whole number, 0 or more (0 when not given).
absl::StatusOr<int64_t> ParseCount(const Context& ctx, absl::string_view flag) {
  const std::string text = ctx.invocation.Get(flag, "0");
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag, " must be a whole number, 0 or more; got ", Quote(text)));
  }
  return value;
}

// Checks get's flags; returns a usage error's exit status, or kExitOk.
int CheckFlags(const Context& ctx) {
  const Invocation& inv = ctx.invocation;
  if (inv.args.size() > 1) {
    return Usage(ctx,
                 "get pendingworkloads takes no NAME (it lists a queue: "
                 "--clusterqueue CQ or --localqueue LQ)");
  }
  for (const auto& [flag, name] :
       {std::pair<const char*, const char*>{"watch", "-w/--watch"},
        {"selector", "-l/--selector"},
        {"field-selector", "--field-selector"},
        {"all-namespaces", "-A/--all-namespaces"},
        {"jobset", "--jobset"}}) {
    if (inv.Has(flag)) {
      return Usage(ctx, absl::StrCat(name,
                                     " does not apply to "
                                     "pendingworkloads"));
    }
  }
  if (inv.Get("clusterqueue", "").empty() ==
      inv.Get("localqueue", "").empty()) {
    return Usage(ctx,
                 "get pendingworkloads needs exactly one of --clusterqueue CQ "
                 "and --localqueue LQ (with -n NAMESPACE)");
  }
  return kExitOk;
}

int Print(const Context& ctx, const api::PendingWorkloadsSummary& summary) {
  const std::string output = ctx.invocation.Get("output", "");
  if (output == "json" || output == "yaml") {
    *ctx.io.out << PendingWorkloadsDocument(summary, output == "yaml");
    return kExitOk;
  }
  if (output == "name") {
    // The objects listed are Workloads.
    const std::string resource = KindNamed("workloads").Resource();
    for (const api::PendingWorkload& w : summary.items()) {
      *ctx.io.out << resource << "/" << w.metadata().name() << "\n";
    }
    return kExitOk;
  }
  if (absl::StartsWith(output, "jsonpath=")) {
    absl::StatusOr<std::string> text =
        RenderJsonPath(absl::StripPrefix(output, "jsonpath="),
                       PendingWorkloadsDocument(summary, /*yaml=*/false));
    if (!text.ok()) return Fail(ctx, text.status());
    *ctx.io.out << *text;
    return kExitOk;
  }
  if (summary.items().empty()) {
    if (!ctx.invocation.Get("clusterqueue", "").empty()) {
      *ctx.io.err << "No resources found\n";
    } else {
      *ctx.io.err << "No resources found in " << ctx.ns << " namespace.\n";
    }
    return kExitOk;
  }
  *ctx.io.out << FormatTable(
      PendingWorkloadRows(summary, ctx.clock.Now(), output == "wide"));
  return kExitOk;
}

}  // namespace

bool NamesPendingWorkloads(absl::string_view word) {
  const std::string lower = absl::AsciiStrToLower(word);
  return lower == "pendingworkloads" || lower == "pendingworkload" ||
         lower == "pendingworkloads.visibility.kueue.x-k8s.io";
}

int PendingWorkloadsReadOnly(const Context& ctx) {
  return Usage(
      ctx,
      absl::StrCat(Quote(ctx.invocation.command->verb),
                   " does not apply to pendingworkloads: Kueue's "
                   "visibility API is a read-only listing (get "
                   "pendingworkloads --clusterqueue CQ | --localqueue LQ)"));
}

int GetPendingWorkloads(const Context& ctx) {
  if (int code = CheckFlags(ctx); code != kExitOk) return code;
  absl::StatusOr<int64_t> limit = ParseCount(ctx, "limit");
  if (!limit.ok()) return Usage(ctx, limit.status().message());
  absl::StatusOr<int64_t> offset = ParseCount(ctx, "offset");
  if (!offset.ok()) return Usage(ctx, offset.status().message());
  api::ListPendingWorkloadsRequest request;
  const std::string cluster_queue = ctx.invocation.Get("clusterqueue", "");
  if (!cluster_queue.empty()) {
    request.set_cluster_queue(cluster_queue);
  } else {
    request.set_local_queue(ctx.invocation.Get("localqueue", ""));
    request.set_namespace_(ctx.ns);
  }
  request.set_limit(*limit);
  request.set_offset(*offset);
  absl::StatusOr<api::PendingWorkloadsSummary> summary =
      ctx.client.ListPendingWorkloads(request);
  if (!summary.ok()) return Fail(ctx, summary.status());
  return Print(ctx, *summary);
}

}  // namespace jobset::cli
