#ifndef JOBSET_AGENT_RUNTIME_PROCESS_LAUNCHER_H_
#define JOBSET_AGENT_RUNTIME_PROCESS_LAUNCHER_H_

// fork/exec for jobset-pod-shim: the primitive every process it starts goes
// through (containers, runc, probes), and ProcessLauncher, which runs
// containers on the host. Thread-compatible.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/runtime/cgroups.h"
#include "agent/runtime/container_launcher.h"
#include "agent/runtime/pod_root.h"
#include "agent/runtime/scoped_fd.h"
#include "agent/runtime/security_context.h"
#include "agent/runtime/volumes.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {

// The container's argv (command + args) and environment (exactly its env).
std::vector<std::string> ContainerArgv(const api::Container& spec);
std::vector<std::string> ContainerEnv(const api::Container& spec);
// The value of the container's env variable `name` ("" if unset).
std::string ContainerEnvValue(const api::Container& spec,
                              absl::string_view name);

// Why a child did not get to run its program.
struct ExecFailure {
  enum Stage {
    kNone,
    kChdir,
    kExec,
    kCgroup,
    kMount,
    kCredentials,
    kNamespace
  };
  Stage stage = kNone;
  int err = 0;
  // kMount: the index in ChildSetup::mounts (-1: the read-only root);
  // kCredentials: the CredentialStep; kNamespace: the index in
  // ChildSetup::join_namespaces.
  int detail = 0;
};

// What a child sets up between fork and exec beyond ForkExec's basics: in
// this order, its own mount namespace (unshared from the shim's) with
// `mounts` bound and, with `read_only_root`, "/" remounted read-only (the
// mounts stay as they are); then, after chdir, `credentials`.
struct ChildSetup {
  std::vector<ChildMount> mounts;
  bool read_only_root = false;
  // Set: instead, the child enters this private root (EnterPodRoot, with
  // `mounts` beneath it) in namespaces of its own.
  const PodRoot* root = nullptr;
  const ProcessCredentials* credentials = nullptr;
  // Open namespace files (/proc/<pid>/ns/<kind>) the child joins (setns)
  // once in its cgroups, before anything above: an exec probe entering its
  // container.
  std::vector<int> join_namespaces;
};

// The ChildMount for `mount` (ContainerMounts'): a hostPath is bound from
// the object ContainerMounts opened, via a detached copy of its mount made
// here (open_tree), which is added to `held`: keep it until the child has
// mounted it (ForkExec has returned). Others are bound by path. kNotFound
// for a hostPath that did not exist when checked (type ""): process mode
// binds only an object it checked.
absl::StatusOr<ChildMount> ChildMountFor(const ContainerMount& mount,
                                         std::vector<ScopedFd>* held);

// Forks a child with stdin /dev/null and stdout+stderr into `out_fd` (-1:
// /dev/null), in its own process group, in the cgroups whose cgroup.procs
// files are `cgroup_procs`, with default signal handlers and an empty
// signal mask, in `cwd`, and execs `path`. Returns the pid, or -1 with
// `*failure` set (the child reports it through a close-on-exec pipe). The
// child does only async-signal-safe work between fork and exec.
pid_t ForkExec(const std::string& path, const std::vector<std::string>& argv,
               const std::vector<std::string>& env, const std::string& cwd,
               int out_fd, const std::vector<std::string>& cgroup_procs,
               ExecFailure* failure, const ChildSetup* setup = nullptr);

// Starts `command` with its output discarded; returns its pid.
absl::StatusOr<pid_t> SpawnCommand(const Command& command);

// Runs `argv` (searched in kDefaultPath, environment PATH only, in /) to
// completion with its output discarded; returns its wait status, or -1.
int RunCommand(const std::vector<std::string>& argv);

// Runs containers as host processes (process mode): execve with the
// container's env, in its workingDir (default <pod_dir>/work), in its
// cgroups when there are any, with its effective securityContext (user,
// groups, capabilities, no_new_privs, a read-only root) and, as root, its
// volumes bound in a mount namespace of its own.
class ProcessLauncher final : public ContainerLauncher {
 public:
  // `cgroups` (may be null: none) and `pod` must outlive the launcher.
  // A container that sets no runAsUser runs as `default_uid` (when the shim
  // is root; DefaultUserFor), else as the shim.
  ProcessLauncher(std::string pod_dir, const api::Pod* pod, PodCgroups* cgroups,
                  const PodRoot* root = nullptr,
                  std::optional<int64_t> default_uid = std::nullopt);

  absl::StatusOr<Launched> Launch(const api::Container& spec,
                                  int64_t memory_limit) override;
  void Terminate(const api::Container& spec, pid_t pid) override;
  void Kill(const api::Container& spec, pid_t pid) override;
  std::string Reaped(const api::Container&) override { return ""; }
  void Remove(const api::Container&) override {}
  absl::StatusOr<pid_t> StartProbe(
      const api::Container& spec, pid_t container_pid,
      const std::vector<std::string>& command) const override;
  bool oci() const override { return false; }

 private:
  std::string WorkingDir(const api::Container& spec) const;
  // The container's effective securityContext, the default user applied.
  EffectiveSecurity Security(const api::Container& spec) const;

  const std::string pod_dir_;
  const api::Pod* const pod_;
  PodCgroups* const cgroups_;
  const PodRoot* const root_;  // null: the host's root (not root)
  const int last_cap_;
  const uint64_t available_caps_;  // the shim's permitted set
  // The user of a container that names none (nullopt: the shim's).
  std::optional<int64_t> default_uid_;
  // Container name -> the cgroup.procs files its running attempt joined
  // (its exec probes join them too).
  std::map<std::string, std::vector<std::string>> cgroup_procs_;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_PROCESS_LAUNCHER_H_
