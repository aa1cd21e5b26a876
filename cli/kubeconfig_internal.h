#ifndef JOBSET_CLI_KUBECONFIG_INTERNAL_H_
#define JOBSET_CLI_KUBECONFIG_INTERNAL_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

// What reading a client config (kubeconfig.cc) and editing one
// (kubeconfig_edit.cc) share. Internal to the kubeconfig library.
namespace jobset::cli::kubeconfig_internal {

// Reads at most kMaxConfigBytes of `path`; `what` names it in errors.
absl::StatusOr<std::string> ReadBounded(const std::string& path,
                                        absl::string_view what);

// Parses `text` as YAML; an error names `path` and the line.
absl::StatusOr<YAML::Node> LoadYaml(absl::string_view text,
                                    absl::string_view path);

}  // namespace jobset::cli::kubeconfig_internal

#endif  // JOBSET_CLI_KUBECONFIG_INTERNAL_H_
