// cordon|uncordon|drain NODE, label|taint node NAME ... (NodeService).
#include "absl/strings/str_cat.h"
#include "cli/cmd/node_edits.h"
#include "cli/cmd/verbs.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

// Reads `TYPE NAME SPEC...` or `TYPE/NAME SPEC...`; TYPE must name nodes
// (jobsetd labels and taints nothing else). Returns false after printing
// why not.
bool NodeAndSpecs(const Context& ctx, std::string* node,
                  std::vector<std::string>* specs, int* status) {
  const std::vector<std::string>& args = ctx.invocation.args;
  std::string type = args[0];
  size_t first_spec = 2;
  if (const size_t slash = type.find('/'); slash != std::string::npos) {
    *node = type.substr(slash + 1);
    type = type.substr(0, slash);
    first_spec = 1;
  } else if (args.size() > 1) {
    *node = args[1];
  }
  const KindInfo* kind = FindKind(type);
  if (kind == nullptr || kind->plural != "nodes") {
    *status =
        Usage(ctx, absl::StrCat("resource type ", Quote(type), " cannot be ",
                                ctx.invocation.command->verb, "ed: jobsetctl ",
                                ctx.invocation.command->verb, "s nodes only"));
    return false;
  }
  if (node->empty()) {
    *status = Usage(ctx, "a node name is required");
    return false;
  }
  specs->assign(args.begin() + std::min(first_spec, args.size()), args.end());
  return true;
}

int LabelNode(const Context& ctx) {
  std::string node;
  std::vector<std::string> specs;
  int status = kExitOk;
  if (!NodeAndSpecs(ctx, &node, &specs, &status)) return status;
  const bool overwrite = ctx.invocation.Has("overwrite");
  absl::StatusOr<api::LabelNodeRequest> request =
      ParseLabelArgs(node, specs, overwrite);
  if (!request.ok()) return Usage(ctx, request.status().message());
  // As kubectl: read the node, then change it, and say what changed.
  absl::StatusOr<api::Node> before = ctx.client.GetNode(node);
  if (!before.ok()) return Fail(ctx, before.status());
  for (const std::string& key : request->remove()) {
    if (!before->metadata().labels().contains(key))
      *ctx.io.out << "label " << Quote(key) << " not found.\n";
  }
  absl::StatusOr<api::Node> after = ctx.client.LabelNode(*request);
  if (!after.ok()) return Fail(ctx, after.status());
  *ctx.io.out << "node/" << node << " "
              << LabelOutcome(*before, *after, overwrite) << "\n";
  return kExitOk;
}

int TaintNode(const Context& ctx) {
  std::string node;
  std::vector<std::string> specs;
  int status = kExitOk;
  if (!NodeAndSpecs(ctx, &node, &specs, &status)) return status;
  absl::StatusOr<api::TaintNodeRequest> request =
      ParseTaintArgs(node, specs, ctx.invocation.Has("overwrite"));
  if (!request.ok()) return Usage(ctx, request.status().message());
  absl::StatusOr<api::Node> result = ctx.client.TaintNode(*request);
  if (!result.ok()) return Fail(ctx, result.status());
  *ctx.io.out << "node/" << node << " " << TaintOutcome(*request) << "\n";
  return kExitOk;
}

}  // namespace

int NodeVerb(const Context& ctx) {
  const std::string& verb = ctx.invocation.command->verb;
  if (verb == "label") return LabelNode(ctx);
  if (verb == "taint") return TaintNode(ctx);
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
