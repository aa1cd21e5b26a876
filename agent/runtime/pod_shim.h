#ifndef JOBSET_AGENT_RUNTIME_POD_SHIM_H_
#define JOBSET_AGENT_RUNTIME_POD_SHIM_H_

// The per-pod supervisor behind jobset-pod-shim (pod_shim_main.cc). It runs
// one pod from <pod_dir>/assignment.pb and keeps <pod_dir>/status.pb current;
// see agent/runtime/README.md for the files and the semantics. Single
// threaded: one poll loop over a signalfd (SIGCHLD, SIGTERM) and the
// containers' output pipes. The lifecycle rules are pure functions
// (container_lifecycle.h); the loop applies them to what it observes.
// Thread-compatible (and meant to own its process).

#include <cstdint>
#include <string>

#include "agent/runtime/accelerator_devices.h"
#include "agent/runtime/security_context.h"
#include "common/clock.h"

namespace jobset::agent {

struct PodShimOptions {
  std::string pod_dir;
  std::string logs_dir;
  bool oci = false;           // run containers with runc instead of execve
  std::string image_dir;      // oci: <image_dir>/<image>/rootfs
  std::string runc = "runc";  // oci: the runc binary
  // oci: where the pod's accelerators' (PodAssignment.devices) nodes,
  // NVIDIA driver and CDI specs are; tests give stand-ins.
  AcceleratorOptions accelerators;
  std::string cgroup_root = "jobset-pods";
  int64_t log_cap_bytes = 10 << 20;
  int64_t pids_max = 4096;
  // The agent's lease (see ShimRuntime::RenewLease): when this file exists,
  // it holds the lease in milliseconds and its mtime is the last renewal;
  // the shim stops the pod (reason LeaseExpired) once the lease runs out, so
  // a frozen or dead agent's pods stop on time. "" or no file: no lease.
  std::string lease_file;
  // The uid (and, without runAsGroup, gid) of a container that sets no
  // runAsUser, outside privileged namespaces (DefaultUserFor); 0: none,
  // the shim's own user.
  int64_t default_pod_uid = kDefaultPodUid;
  // Process mode: host directories bound read-write into every pod
  // (PodRootSpec::host_mounts; the agent's --pod_host_mounts).
  std::vector<std::string> pod_host_mounts = {};
};

// Runs the pod to its end and returns the process exit status (0 once a final
// status is on disk). Expects SIGTERM and SIGCHLD blocked on entry. Reads
// the time from `clock` (RealClock in jobset-pod-shim), which must outlive
// the call.
int RunPodShim(const PodShimOptions& options, Clock* clock);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_POD_SHIM_H_
