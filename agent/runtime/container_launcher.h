#ifndef JOBSET_AGENT_RUNTIME_CONTAINER_LAUNCHER_H_
#define JOBSET_AGENT_RUNTIME_CONTAINER_LAUNCHER_H_

// How jobset-pod-shim starts and signals a container's process: on the host
// (ProcessLauncher, process_launcher.h) or through runc (RuncLauncher,
// runc_launcher.h). Implementations are thread-compatible.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {

// A command line to run on the host: argv[0] is searched in `search_path`
// (a PATH value; kDefaultPath when empty) unless it holds a '/'.
struct Command {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string cwd = "/";
  std::string search_path;
};

// A started container: its process (the container's own, or `runc run`) and
// the non-blocking read end of its stdout+stderr pipe.
struct Launched {
  pid_t pid = 0;
  int out_fd = -1;
};

class ContainerLauncher {
 public:
  virtual ~ContainerLauncher() = default;

  // Starts container `spec` in its own process group. An error's message is
  // the container's StartError message (it names what was missing);
  // FailedPrecondition means its config could not be made
  // (CreateContainerConfigError: runAsNonRoot refused its user).
  virtual absl::StatusOr<Launched> Launch(const api::Container& spec,
                                          int64_t memory_limit) = 0;
  // Asks container `spec` (started as `pid`) to stop: SIGTERM.
  virtual void Terminate(const api::Container& spec, pid_t pid) = 0;
  // Kills every process of container `spec`: SIGKILL.
  virtual void Kill(const api::Container& spec, pid_t pid) = 0;
  // Called once the container's process has been reaped: cleans up after it
  // and returns the runtime's own error if it failed before the container
  // ran ("" when it did not).
  virtual std::string Reaped(const api::Container& spec) = 0;
  // The pod has ended: removes what is left of container `spec` (it ran).
  virtual void Remove(const api::Container& spec) = 0;
  // Starts an exec probe's `command` (non-empty) in container `spec`,
  // whose process is `container_pid`, with exactly the container's identity:
  // its user and groups, capabilities, no_new_privs, namespaces, cgroups,
  // env and working directory (kubelet's ExecSync). Output is discarded.
  // Returns the pid the shim reaps.
  virtual absl::StatusOr<pid_t> StartProbe(
      const api::Container& spec, pid_t container_pid,
      const std::vector<std::string>& command) const = 0;
  // Whether containers run through runc (whose exit codes and OOM kills read
  // differently).
  virtual bool oci() const = 0;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_CONTAINER_LAUNCHER_H_
