#ifndef JOBSET_CLI_COMPLETION_H_
#define JOBSET_CLI_COMPLETION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cli/args.h"

namespace jobset::cli {

// Returns the shell completion script of `jobsetctl completion SHELL`
// ("bash" or "zsh"; zsh runs the bash function through bashcompinit). It
// completes the verbs, the resource types after get, describe, delete,
// wait and the other verbs that take one (`types`: the kinds' plural
// names), each verb's flags and the global ones, -o's formats, and resource
// names, read at completion time with `jobsetctl get TYPE -o name` (with
// the -n given so far). kInvalidArgument for another shell. Pure.
absl::StatusOr<std::string> CompletionScript(
    absl::string_view shell, const std::vector<CommandSpec>& commands,
    const std::vector<std::string>& types);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_COMPLETION_H_
