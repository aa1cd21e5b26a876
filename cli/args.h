#ifndef JOBSET_CLI_ARGS_H_
#define JOBSET_CLI_ARGS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace jobset::cli {

// One flag a command accepts. Long names are kubectl's (`--dry-run`); the
// parser also takes them with underscores (`--dry_run`), as absl writes them.
struct FlagSpec {
  std::string name;        // Long name without dashes: "namespace".
  char short_name = '\0';  // 'n' for -n; '\0' for none.
  bool has_value = false;  // --name=VALUE or --name VALUE; else a switch.
  std::string value_name;  // For help: "FILE".
  std::string help;
};

// A verb and what it accepts.
struct CommandSpec {
  std::string verb;   // "get"
  std::string usage;  // "get TYPE [NAME] [flags]"
  std::string summary;
  std::vector<FlagSpec> flags;
  // Positional arguments after the verb.
  int min_args = 0;
  int max_args = 0;
};

// A parsed command line: `jobsetctl [global flags] VERB [ARGS...] [flags]`.
// Flags may appear anywhere after the program name; `--` ends them.
struct Invocation {
  // The command, or null for `jobsetctl` alone / `jobsetctl --help`.
  const CommandSpec* command = nullptr;
  std::vector<std::string> args;
  // Given flags by long name: a switch maps to "true". Global flags are
  // here too.
  std::map<std::string, std::string> flags;
  // Every value of each given flag, in order (--from-literal may repeat;
  // `flags` holds the last).
  std::map<std::string, std::vector<std::string>> values;
  bool help = false;

  bool Has(absl::string_view name) const {
    return flags.find(std::string(name)) != flags.end();
  }
  // Returns the flag's value, or `fallback` when it was not given.
  std::string Get(absl::string_view name, absl::string_view fallback) const;
  // Returns every value the flag was given, in order.
  std::vector<std::string> GetAll(absl::string_view name) const;
};

// The flags every command accepts: --server, --config, --context, --token,
// -n/--namespace, --request-timeout, -h/--help.
const std::vector<FlagSpec>& GlobalFlags();

// Returns jobsetctl's commands (apply, get, describe, ...).
const std::vector<CommandSpec>& Commands();

// Parses `args` (without the program name) against `commands`.
// kInvalidArgument with a usage message for unknown verbs or flags, missing
// flag values and wrong numbers of arguments (unless --help was given).
absl::StatusOr<Invocation> ParseCommandLine(
    const std::vector<std::string>& args,
    const std::vector<CommandSpec>& commands);

// Returns the help text of `command`, or the overview when it is null.
std::string HelpText(const CommandSpec* command,
                     const std::vector<CommandSpec>& commands);

// Parses a duration such as "60s", "2m", "1h30m" or a plain number of
// seconds ("60"). kInvalidArgument naming `flag` otherwise.
absl::StatusOr<absl::Duration> ParseDurationFlag(absl::string_view flag,
                                                 absl::string_view value);

// Resolves the server address: --server, else $JOBSET_SERVER (`env`, may be
// null), else 127.0.0.1:7070.
std::string ServerAddress(const Invocation& invocation, const char* env);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_ARGS_H_
