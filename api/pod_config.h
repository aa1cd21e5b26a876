#ifndef JOBSET_API_POD_CONFIG_H_
#define JOBSET_API_POD_CONFIG_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/agent.pb.h"
#include "proto/jobset_service.pb.h"
#include "proto/k8s.pb.h"

// What a pod takes from the Secrets and ConfigMaps of its namespace, resolved
// as kubelet resolves them before it creates a container: env valueFrom
// secretKeyRef/configMapKeyRef, envFrom, secret and configMap volumes, and
// imagePullSecrets. Pure functions: the caller reads the objects (only the
// pod's own namespace's) and hands them in.
namespace jobset::api {

// The reason a container waits when what it refers to cannot be resolved
// (kubelet's).
inline constexpr char kReasonCreateContainerConfigError[] =
    "CreateContainerConfigError";

// jobsetd's bound on what one pod takes from its Secrets and ConfigMaps
// (env values, files and credentials together), so that its assignment fits
// the agent's stream: a pod over it waits, its message naming both numbers.
inline constexpr int64_t kMaxPodConfigBytes = 2 << 20;

// The Secrets and ConfigMaps `spec` refers to, by name (each once).
struct ConfigReferences {
  std::set<std::string> secrets;
  std::set<std::string> config_maps;
  bool empty() const { return secrets.empty() && config_maps.empty(); }
};
ConfigReferences ReferencedConfigObjects(const PodSpec& spec);

// The objects of the pod's namespace that were found, by name; a name
// missing here does not exist.
struct ConfigObjects {
  std::map<std::string, std::shared_ptr<const Secret>> secrets;
  std::map<std::string, std::shared_ptr<const ConfigMap>> config_maps;
};

// One container's variables from its Secrets and ConfigMaps.
struct ContainerConfigEnv {
  // envFrom's variables (prefix + key), in name order, each once (a later
  // envFrom source replaces an earlier one's variable of the same name).
  std::vector<std::pair<std::string, std::string>> from;
  // The values of its env entries with a secretKeyRef or configMapKeyRef,
  // by their index in env; nullopt for an optional one that is missing
  // (the variable is left out).
  std::map<int, std::optional<std::string>> values;
};

// Everything a pod takes from its Secrets and ConfigMaps. It holds secret
// values: it is given only to the pod's agent, never logged or shown.
struct PodConfig {
  // By container name (init and app containers; names are unique).
  std::map<std::string, ContainerConfigEnv> env;
  // Its secret and configMap volumes, in the spec's order.
  std::vector<ConfigVolume> volumes;
  // Its imagePullSecrets' credentials, secret by secret, each secret's
  // registries by server.
  std::vector<RegistryCredential> pull_credentials;
  // What kubelet would report as warning events (an imagePullSecret that
  // is missing or of another type is skipped, not an error). Names only.
  std::vector<std::string> warnings;
};

// Resolves what `spec` (of a pod in namespace `ns`) takes from `objects`.
// Errors, in kubelet's words, are the first problem in kubelet's order
// (volumes, then each init and app container's envFrom and env):
//   secret "<n>" not found / configmap "<n>" not found
//   couldn't find key <k> in Secret <ns>/<n> (ConfigMap likewise)
//   MountVolume.SetUp failed for volume "<v>" : secret "<n>" not found, or
//     : references non-existent secret key: <k> (configmap: configmap
//     references non-existent config key: <k>)
// `optional: true` makes a missing object or key no error (the variable is
// left out; a volume is empty or lacks the item). An imagePullSecret whose
// JSON does not parse is an error that names the Secret and its key, never
// its bytes. With `best_effort`, everything missing counts as optional and
// a bad imagePullSecret is skipped (for pods already running, resent after
// a restart of jobsetd). kFailedPrecondition for all of them.
absl::StatusOr<PodConfig> ResolvePodConfig(absl::string_view ns,
                                           const PodSpec& spec,
                                           const ConfigObjects& objects,
                                           bool best_effort = false);

// Reads the registry credentials of a kubernetes.io/dockerconfigjson
// (`.dockerconfigjson`, {"auths": {server: entry}}) or kubernetes.io/dockercfg
// (`.dockercfg`, {server: entry}) Secret: each entry's username and password,
// or those in its `auth` (base64 of "user:pass", padded or not), which wins.
// Sorted by server. Other types have none (kubelet skips them).
// kInvalidArgument naming the Secret and key, never quoting its data, when
// the key is missing or does not hold such JSON.
absl::StatusOr<std::vector<RegistryCredential>> ParseDockerConfigSecret(
    const Secret& secret);

// Returns the bytes `config` holds (values, files, credentials).
int64_t PodConfigBytes(const PodConfig& config);

}  // namespace jobset::api

#endif  // JOBSET_API_POD_CONFIG_H_
