// describe KIND NAME: the kinds of the table with a describe call.
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/cmd/verbs.h"
#include "common/quote.h"

namespace jobset::cli {

int Describe(const Context& ctx) {
  if (NamesPendingWorkloads(ctx.invocation.args[0])) {
    return PendingWorkloadsReadOnly(ctx);
  }
  const KindInfo* kind = FindKind(ctx.invocation.args[0]);
  if (kind == nullptr || kind->calls.describe == nullptr) {
    return Usage(ctx, absl::StrCat("\"describe\" supports ",
                                   KindList([](const KindInfo& k) {
                                     return k.calls.describe != nullptr;
                                   }),
                                   ", got ", Quote(ctx.invocation.args[0])));
  }
  absl::StatusOr<std::string> text = kind->calls.describe(
      ctx.client, ctx.ns, ctx.invocation.args[1], ctx.clock.Now());
  if (!text.ok()) return Fail(ctx, text.status());
  *ctx.io.out << *text;
  return kExitOk;
}

}  // namespace jobset::cli
