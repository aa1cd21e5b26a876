#include "cli/cmd/context.h"

#include <iterator>

namespace jobset::cli {

int ExitCodeFor(const absl::Status& status) {
  if (status.ok()) return kExitOk;
  if (status.code() == absl::StatusCode::kUnavailable ||
      status.code() == absl::StatusCode::kDeadlineExceeded) {
    return kExitUnreachable;
  }
  return kExitApiError;
}

int Fail(const Context& ctx, const absl::Status& status) {
  *ctx.io.err << "error: " << status.message() << "\n";
  return ExitCodeFor(status);
}

int Usage(const Context& ctx, absl::string_view message) {
  *ctx.io.err << "error: " << message << "\nSee 'jobsetctl "
              << ctx.invocation.command->verb << " --help'.\n";
  return kExitUsage;
}

std::string ReadAll(std::istream& in) {
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

}  // namespace jobset::cli
