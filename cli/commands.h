#ifndef JOBSET_CLI_COMMANDS_H_
#define JOBSET_CLI_COMMANDS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cli/args.h"
#include "cli/client.h"
#include "cli/cmd/context.h"
#include "common/clock.h"

namespace jobset::cli {

// Runs the parsed command against `client`; returns the exit status. Errors
// are printed to io.err as "error: ..." (with the server's message, field
// paths included), results to io.out.
int RunCommand(const Invocation& invocation, Client& client, const Io& io);
// As above; `default_namespace` (the context's) applies without -n, and
// commands read the time from `clock`.
int RunCommand(const Invocation& invocation, Client& client, const Io& io,
               absl::string_view default_namespace, Clock& clock);

// What jobsetctl reads from its environment (each may be null).
struct Environment {
  const char* server = nullptr;  // $JOBSET_SERVER
  const char* config = nullptr;  // $JOBSETCONFIG
  const char* home = nullptr;    // $HOME
};

// The whole of jobsetctl: parses `args` (without the program name), prints
// help or usage errors, reads the client config (cli/kubeconfig.h), connects
// to the server and runs the command, reading the time from `clock`.
int Main(const std::vector<std::string>& args, const Environment& env,
         const Io& io, Clock& clock);
// As above with RealClock.
int Main(const std::vector<std::string>& args, const Environment& env,
         const Io& io);
// As above with only $JOBSET_SERVER (`server_env`, may be null) and no
// config file unless --config is given.
int Main(const std::vector<std::string>& args, const char* server_env,
         const Io& io);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_COMMANDS_H_
