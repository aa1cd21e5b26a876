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
// As above; `default_namespace` (the context's) applies without -n.
int RunCommand(const Invocation& invocation, Client& client, const Io& io,
               absl::string_view default_namespace);

// What jobsetctl reads from its environment (each may be null).
struct Environment {
  const char* server = nullptr;  // $JOBSET_SERVER
  const char* config = nullptr;  // $JOBSETCONFIG
  const char* home = nullptr;    // $HOME
};

// The whole of jobsetctl: parses `args` (without the program name), prints
// help or usage errors, reads the client config (cli/kubeconfig.h), connects
// to the server and runs the command.
int Main(const std::vector<std::string>& args, const Environment& env,
         const Io& io);
// As above with only $JOBSET_SERVER (`server_env`, may be null) and no
// config file unless --config is given.
int Main(const std::vector<std::string>& args, const char* server_env,
         const Io& io);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_COMMANDS_H_
