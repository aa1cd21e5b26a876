// logs POD [-c CONTAINER] [-f]: a container's output, read by jobsetd from
// the pod's agent.
#include "cli/cmd/verbs.h"

namespace jobset::cli {

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

}  // namespace jobset::cli
