#ifndef JOBSET_AGENT_RUNTIME_CRI_CRI_CONFIG_H_
#define JOBSET_AGENT_RUNTIME_CRI_CRI_CONFIG_H_

// What jobset-agent's cri runtime asks the CRI runtime for, as pure
// functions of the pod's assignment (kubelet's generatePodSandboxConfig and
// generateContainerConfig, shared/reference/containers-cri.md §1, §3, §6):
// the sandbox, each container's config with its security context and
// resources, and the labels by which the agent finds its objects again after
// a restart. No I/O. Thread-compatible.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/runtime/accelerator_devices.h"
#include "agent/runtime/cri/api.pb.h"
#include "proto/agent.pb.h"
#include "proto/cluster.pb.h"

namespace jobset::agent::cri {

// Labels on every sandbox and container the agent creates (label selectors
// match them exactly).
inline constexpr char kPodUidLabel[] = "jobset-agent.io/pod-uid";
inline constexpr char kContainerLabel[] = "jobset-agent.io/container";
// "true" on init containers.
inline constexpr char kInitLabel[] = "jobset-agent.io/init";

// What ImageStatus said of the image a container runs.
struct ImageFacts {
  std::string id;  // "sha256:...": what CreateContainer is given
  std::optional<int64_t> uid;
  std::string username;  // non-numeric USER; "" with a uid or none
};

// The sandbox of `assignment`'s pod: host network (every jobsetd pod), its
// metadata and labels, logs under `log_directory`, the pod-level security
// context (run_as_user/group, supplemental groups, privileged when any
// container is).
runtime::v1::PodSandboxConfig SandboxConfig(
    const api::PodAssignment& assignment, const std::string& log_directory);

// One host path mounted into a container.
struct HostMount {
  std::string host_path;
  std::string container_path;
  bool read_only = false;
};

// The config of container `spec` (an init container if `init`), attempt
// `attempt` (its restart count), from `image`: command and args as given
// (the runtime merges them with ENTRYPOINT/CMD), the resolved env, the user
// (below), capabilities, no_new_privs, read-only root,
// resources from its limits and requests, `mounts`, and `accelerators` (the
// pod's: each device node at its container path, permissions "rwm"; the
// driver's files mounted; their env after the container's, so that it
// wins), log path "<name>.log" (every attempt appends to it).
// The user: runAsUser (container, else pod) if set; else the image's user
// when it is not root (a uid other than 0, a name other than "root" and
// "0": kubelet's choice, the image's group unused); else, for an image that
// names no user or root, `default_pod_uid` (the agent's --default_pod_uid)
// and, without runAsGroup, its gid, as in the process and oci runtimes
// (DefaultUserFor: not in a privileged namespace, nor when it is 0); else
// root.
// FailedPrecondition with kubelet's message when runAsNonRoot refuses that
// user (the container's CreateContainerConfigError); InvalidArgument naming
// the field for a bad quantity.
absl::StatusOr<runtime::v1::ContainerConfig> ContainerConfigFor(
    const api::PodAssignment& assignment, const api::Container& spec, bool init,
    int attempt, const ImageFacts& image, int64_t default_pod_uid,
    const std::vector<HostMount>& mounts,
    const AcceleratorSetup& accelerators = {});

// The log file of container `name` under the pod's log directory.
std::string ContainerLogName(const std::string& name);

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_CRI_CONFIG_H_
