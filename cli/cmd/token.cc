// create token NAME [--groups=a,b] [--ttl=720h]; token rotate-join
// [--ttl=D] (AccessService). Each token is printed once, alone on stdout.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/cmd/verbs.h"
#include "common/quote.h"

namespace jobset::cli {
namespace {

// --ttl (a positive duration), when given, into `request`'s ttl.
template <typename Request>
absl::Status SetTtl(const Context& ctx, Request* request) {
  if (!ctx.invocation.Has("ttl")) return absl::OkStatus();
  absl::StatusOr<absl::Duration> parsed =
      ParseDurationFlag("ttl", ctx.invocation.Get("ttl", ""));
  if (!parsed.ok()) return parsed.status();
  if (*parsed <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--ttl must be positive");
  }
  request->mutable_ttl()->set_seconds(absl::ToInt64Seconds(*parsed));
  return absl::OkStatus();
}

}  // namespace

int CreateToken(const Context& ctx) {
  const std::vector<std::string>& args = ctx.invocation.args;
  if (args.size() > 2) return Usage(ctx, "create token takes one NAME");
  if (args.size() != 2) return Usage(ctx, "create token needs a NAME");
  api::CreateTokenRequest request;
  request.set_name(args[1]);
  for (absl::string_view group : absl::StrSplit(
           ctx.invocation.Get("groups", ""), ',', absl::SkipEmpty())) {
    request.add_groups(std::string(group));
  }
  if (absl::Status ttl = SetTtl(ctx, &request); !ttl.ok()) {
    return Usage(ctx, ttl.message());
  }
  absl::StatusOr<api::CreateTokenResponse> created =
      ctx.client.CreateToken(request);
  if (!created.ok()) return Fail(ctx, created.status());
  *ctx.io.out << created->token() << "\n";
  *ctx.io.err << "token/" << args[1]
              << " created; it cannot be shown again (jobsetd keeps only its "
                 "hash)\n";
  return kExitOk;
}

int Token(const Context& ctx) {
  if (ctx.invocation.args[0] != "rotate-join") {
    return Usage(
        ctx, absl::StrCat("unknown token command ",
                          Quote(ctx.invocation.args[0]), " (use rotate-join)"));
  }
  api::RotateJoinTokenRequest request;
  if (absl::Status ttl = SetTtl(ctx, &request); !ttl.ok()) {
    return Usage(ctx, ttl.message());
  }
  absl::StatusOr<api::RotateJoinTokenResponse> rotated =
      ctx.client.RotateJoinToken(request);
  if (!rotated.ok()) return Fail(ctx, rotated.status());
  *ctx.io.out << rotated->join_token() << "\n";
  *ctx.io.err << "join token rotated; agents joining from now on need this "
                 "one (it cannot be shown again; it expires after "
              << (ctx.invocation.Has("ttl") ? "--ttl"
                                            : "jobsetd's --join_token_ttl")
              << ")\n";
  return kExitOk;
}

}  // namespace jobset::cli
