#ifndef JOBSET_CLI_CMD_CONTEXT_H_
#define JOBSET_CLI_CMD_CONTEXT_H_

#include <iostream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cli/args.h"
#include "cli/client.h"
#include "common/clock.h"

// What every jobsetctl verb (cli/cmd/*.cc) is given, and how it ends.
namespace jobset::cli {

// jobsetctl's exit statuses (docs/jobsetctl.md documents them).
enum ExitCode : int {
  kExitOk = 0,
  kExitApiError = 1,     // jobsetd refused or failed the request.
  kExitUsage = 2,        // Bad command line.
  kExitUnreachable = 3,  // jobsetd could not be reached or timed out.
  kExitWaitTimeout = 4,  // wait: the condition did not arrive in time.
  kExitWaitFailed = 5,   // wait: the JobSet ended otherwise, or was deleted.
};

// Where a command reads and writes.
struct Io {
  std::istream* in = &std::cin;
  std::ostream* out = &std::cout;
  std::ostream* err = &std::cerr;
};

// Returns the exit status for a failed request: kExitUnreachable for
// kUnavailable and kDeadlineExceeded, kExitApiError otherwise.
int ExitCodeFor(const absl::Status& status);

// A command's context: the parsed command line, the client, the streams, the
// clock (commands read the time only here) and the namespace (-n, else the
// context's). Thread-compatible: apply -f gives each worker thread a copy
// with its own Io; the Client and Clock are thread-safe.
struct Context {
  const Invocation& invocation;
  Client& client;
  const Io& io;
  Clock& clock;
  std::string ns;
};

// Prints "error: MESSAGE" and returns ExitCodeFor(status).
int Fail(const Context& ctx, const absl::Status& status);

// Prints "error: MESSAGE" and where to read the verb's help; returns
// kExitUsage.
int Usage(const Context& ctx, absl::string_view message);

// Returns what is left in `in`.
std::string ReadAll(std::istream& in);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_CMD_CONTEXT_H_
