#ifndef JOBSET_AGENT_RUNTIME_POD_SETUP_H_
#define JOBSET_AGENT_RUNTIME_POD_SETUP_H_

// What jobset-pod-shim does before the first container starts: read and
// check the assignment, make the pod's containers, and set up the host side
// (logs and work dirs, /etc/hosts, namespaces, cgroups). Thread-compatible.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/runtime/capped_log.h"
#include "agent/runtime/cgroups.h"
#include "agent/runtime/container_launcher.h"
#include "agent/runtime/container_lifecycle.h"
#include "agent/runtime/pod_root.h"
#include "agent/runtime/pod_shim.h"
#include "agent/runtime/readiness_probe.h"
#include "proto/agent.pb.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {

inline constexpr absl::Duration kDefaultGrace = absl::Seconds(30);

// One container of the pod as the shim runs it: its spec, its lifecycle,
// its output and its readiness probe, and the attempt now running.
struct ShimContainer {
  ShimContainer(const api::Container& container_spec, bool init,
                const std::string& log_path, int64_t log_cap);

  const api::Container spec;
  int64_t memory_limit = 0;  // bytes; 0: none
  ContainerRecord record;
  ContainerOutput output;
  ReadinessProbe probe;
  // The running attempt: its process (the container's, or `runc run`; 0:
  // none), the cgroup's OOM count when it started, whether the shim has
  // signalled it.
  pid_t pid = 0;
  int64_t oom_before = 0;
  bool signalled_by_us = false;
};

// The pod: its assignment, what the shim made of it, and its cgroups.
struct PodSetup {
  api::PodAssignment assignment;
  std::string uid;
  std::string hostname;
  absl::Duration grace = kDefaultGrace;
  RestartPolicy restart_policy = RestartPolicy::kNever;
  std::vector<std::unique_ptr<ShimContainer>> inits;
  std::vector<std::unique_ptr<ShimContainer>> mains;
  // Null without cgroups (not root, none usable).
  std::unique_ptr<PodCgroups> cgroups;
  // The pod-level cgroup dirs to signal; kept even when creating them
  // failed half way.
  std::vector<std::string> cgroup_dirs;
  // Process mode as root: the private root its containers run in (null:
  // they see the host's, as an agent that is not root runs them).
  std::unique_ptr<PodRoot> root;
};

// Sets `pod` up from <pod_dir>/assignment.pb. InvalidArgument: the spec is
// bad (the message names the field); other errors: the host could not be
// prepared. On an error, `pod` holds what was set up before it.
absl::Status SetUpPod(const PodShimOptions& options, PodSetup* pod);

// Returns the launcher for `pod`'s containers in the mode `options` names;
// it keeps pointers into `pod`, which must outlive it.
std::unique_ptr<ContainerLauncher> MakeLauncher(const PodShimOptions& options,
                                                const PodSetup& pod);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_POD_SETUP_H_
