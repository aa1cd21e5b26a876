#ifndef JOBSET_CLI_COMMANDS_H_
#define JOBSET_CLI_COMMANDS_H_

#include <iostream>

#include "absl/status/status.h"
#include "cli/args.h"
#include "cli/client.h"

namespace jobset::cli {

// jobsetctl's exit statuses (cli/README.md documents them).
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

// Runs the parsed command against `client`; returns the exit status. Errors
// are printed to io.err as "error: ..." (with the server's message, field
// paths included), results to io.out.
int RunCommand(const Invocation& invocation, Client& client, const Io& io);

// The whole of jobsetctl: parses `args` (without the program name), prints
// help or usage errors, connects to the server and runs the command.
// `server_env` is $JOBSET_SERVER (may be null).
int Main(const std::vector<std::string>& args, const char* server_env,
         const Io& io);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_COMMANDS_H_
