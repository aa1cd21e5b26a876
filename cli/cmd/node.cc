// cordon|uncordon|drain NODE (NodeService).
#include "cli/cmd/verbs.h"

namespace jobset::cli {

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

}  // namespace jobset::cli
