// suspend|resume jobset NAME.
#include "cli/cmd/verbs.h"

namespace jobset::cli {

int SetSuspend(const Context& ctx, bool suspend) {
  if (!NamesJobSets(ctx)) return JobSetsOnly(ctx);
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
  *ctx.io.out << KindNamed("jobsets").Resource() << "/"
              << result->metadata().name()
              << (suspend ? " suspended" : " resumed") << "\n";
  return kExitOk;
}

}  // namespace jobset::cli
