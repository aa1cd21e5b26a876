// delete KIND NAME, delete -f FILE, delete jobsets --all|-l SELECTOR.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/cmd/verbs.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

// delete jobsets --all | -l SELECTOR [-A]: lists what matches, then
// deletes each (one already gone meanwhile is passed over).
int DeleteSelected(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  const bool all = ctx.invocation.Has("all");
  if (all && ctx.invocation.Has("selector")) {
    return Usage(ctx, "setting 'all' parameter but found a non empty selector");
  }
  if (args.size() > 1) {
    return Usage(ctx, all ? "name cannot be provided when --all is specified"
                          : "name cannot be provided when a selector is "
                            "specified");
  }
  if (args.empty() || !NamesJobSets(ctx)) {
    return Usage(ctx,
                 "--all and -l apply to jobsets only (delete jobsets "
                 "--all)");
  }
  api::ListJobSetsRequest request;
  request.set_namespace_(ctx.ns);
  request.set_all_namespaces(ctx.invocation.Has("all-namespaces"));
  request.set_label_selector(ctx.invocation.Get("selector", ""));
  absl::StatusOr<api::ListJobSetsResponse> list = ctx.client.List(request);
  if (!list.ok()) return Fail(ctx, list.status());
  if (list->items().empty()) {
    *ctx.io.err << "No resources found\n";
    return kExitOk;
  }
  int exit_code = kExitOk;
  for (const api::JobSet& jobset : list->items()) {
    api::DeleteJobSetRequest del;
    del.set_namespace_(jobset.metadata().namespace_());
    del.set_name(jobset.metadata().name());
    absl::StatusOr<api::JobSet> deleted = ctx.client.Delete(del);
    if (!deleted.ok()) {
      if (deleted.status().code() == absl::StatusCode::kNotFound) continue;
      exit_code = Fail(ctx, deleted.status());
      if (exit_code == kExitUnreachable) return exit_code;
      continue;
    }
    *ctx.io.out << KindNamed("jobsets").Resource() << " " << Quote(del.name())
                << " deleted\n";
  }
  return exit_code;
}

}  // namespace

int Delete(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  if (ctx.invocation.Has("filename")) {
    if (!args.empty()) return Usage(ctx, "delete -f takes no arguments");
    return ApplyFile(ctx, FileMode::kDelete);
  }
  if (ctx.invocation.Has("all") || ctx.invocation.Has("selector")) {
    return DeleteSelected(ctx);
  }
  if (!args.empty() && NamesPendingWorkloads(args[0])) {
    return PendingWorkloadsReadOnly(ctx);
  }
  if (args.size() == 1 && FindKind(args[0]) != nullptr) {
    return Usage(ctx, "resource(s) were provided, but no name was specified");
  }
  if (args.size() != 2) {
    return Usage(
        ctx, absl::StrCat("usage: jobsetctl ", ctx.invocation.command->usage));
  }
  const KindInfo* kind = FindKind(args[0]);
  if (kind == nullptr || kind->calls.remove == nullptr) {
    return Usage(ctx, absl::StrCat("\"delete\" supports ",
                                   KindList([](const KindInfo& k) {
                                     return k.calls.remove != nullptr;
                                   }),
                                   " (or -f FILE), got ", Quote(args[0])));
  }
  if (absl::Status s = kind->calls.remove(ctx.client, ctx.ns, args[1]);
      !s.ok()) {
    return Fail(ctx, s);
  }
  *ctx.io.out << kind->Resource() << " " << Quote(args[1]) << " deleted\n";
  return kExitOk;
}

}  // namespace jobset::cli
