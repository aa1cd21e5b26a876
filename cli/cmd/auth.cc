// auth can-i VERB RESOURCE [NAME] [-A]; auth whoami (AccessService).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/cmd/verbs.h"
#include "cli/output.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

// Splits what `auth can-i` is given ("jobsets", "jobsets.jobset.x-k8s.io",
// "pods/log", "js") into resource and API group.
void AccessResource(absl::string_view given, api::AccessReview* review) {
  std::string resource(given);
  std::string subresource;
  if (const size_t slash = resource.find('/'); slash != resource.npos) {
    subresource = resource.substr(slash);
    resource.resize(slash);
  }
  if (const size_t dot = resource.find('.'); dot != resource.npos) {
    review->set_api_group(resource.substr(dot + 1));
    resource.resize(dot);
  }
  if (const KindInfo* kind = FindKind(resource)) resource = kind->plural;
  review->set_resource(absl::StrCat(resource, subresource));
}

}  // namespace

int Auth(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  if (args[0] == "whoami") {
    if (args.size() != 1) return Usage(ctx, "auth whoami takes no arguments");
    api::AccessReview review;
    review.set_verb("get");
    review.set_resource("jobsets");
    review.set_namespace_(ctx.ns);
    absl::StatusOr<api::AccessReviewResult> result =
        ctx.client.ReviewAccess(review);
    if (!result.ok()) return Fail(ctx, result.status());
    *ctx.io.out << FormatTable(
        {{"ATTRIBUTE", "VALUE"},
         {"Username", result->user()},
         {"Groups",
          absl::StrCat("[", absl::StrJoin(result->groups(), " "), "]")}});
    return kExitOk;
  }
  if (args[0] != "can-i") {
    return Usage(ctx, absl::StrCat("unknown auth command ", Quote(args[0]),
                                   " (use can-i or whoami)"));
  }
  if (args.size() < 3) {
    return Usage(ctx, "usage: jobsetctl auth can-i VERB RESOURCE [NAME]");
  }
  api::AccessReview review;
  review.set_verb(args[1]);
  AccessResource(args[2], &review);
  if (args.size() == 4) review.set_name(args[3]);
  if (!ctx.invocation.Has("all-namespaces")) review.set_namespace_(ctx.ns);
  absl::StatusOr<api::AccessReviewResult> result =
      ctx.client.ReviewAccess(review);
  if (!result.ok()) return Fail(ctx, result.status());
  *ctx.io.out << (result->allowed() ? "yes" : "no") << "\n";
  if (!result->allowed() && !result->reason().empty()) {
    *ctx.io.err << result->reason() << "\n";
  }
  return result->allowed() ? kExitOk : kExitApiError;
}

}  // namespace jobset::cli
