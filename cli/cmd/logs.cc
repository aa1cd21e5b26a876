// logs POD [-c CONTAINER] [-f] [--attempt N | -p]: a container's output,
// read by jobsetd from the pod's agent; with --attempt or -p/--previous, of
// an earlier restart attempt's pod.
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/cmd/verbs.h"
#include "common/quote.h"

namespace jobset::cli {

int Logs(const Context& ctx) {
  api::GetPodLogsRequest request;
  request.set_namespace_(ctx.ns);
  request.set_pod(ctx.invocation.args[0]);
  request.set_container(ctx.invocation.Get("container", ""));
  request.set_follow(ctx.invocation.Has("follow"));
  if (ctx.invocation.Has("attempt") && ctx.invocation.Has("previous")) {
    return Usage(ctx,
                 "--attempt and -p/--previous are exclusive (previous is the "
                 "attempt before the current one)");
  }
  if (ctx.invocation.Has("attempt")) {
    const std::string text = ctx.invocation.Get("attempt", "");
    int32_t attempt = 0;
    if (!absl::SimpleAtoi(text, &attempt) || attempt < 0) {
      return Usage(ctx, absl::StrCat("--attempt must be a whole number, 0 or "
                                     "more; got ",
                                     Quote(text)));
    }
    request.set_attempt(attempt);
  }
  request.set_previous(ctx.invocation.Has("previous"));
  absl::Status status = ctx.client.Logs(request, [&](const std::string& data) {
    *ctx.io.out << data;
    ctx.io.out->flush();
  });
  if (!status.ok()) return Fail(ctx, status);
  return kExitOk;
}

}  // namespace jobset::cli
