#ifndef JOBSET_AGENT_RUNTIME_RUNC_LAUNCHER_H_
#define JOBSET_AGENT_RUNTIME_RUNC_LAUNCHER_H_

// RuncLauncher: runs a pod's containers with `runc run` from a generated
// bundle (oci mode). Thread-compatible.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/runtime/accelerator_devices.h"
#include "agent/runtime/cgroups.h"
#include "agent/runtime/container_launcher.h"
#include "proto/agent.pb.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {

class RuncLauncher final : public ContainerLauncher {
 public:
  struct Options {
    std::string runc = "runc";  // the binary
    std::string pod_dir;        // bundles in oci/<c>/, runc's --root in runc/
    std::string image_dir;      // <image_dir>/<image>/rootfs
    std::string uid;            // container ids are <uid>-<name>
    std::string hostname;
    std::string cgroup_root;  // when the pod has no cgroups of its own
    int64_t pids_max = 0;
    // The pod (its volumes, its securityContext); must outlive the
    // launcher.
    const api::Pod* pod = nullptr;
    // The accelerators the agent gave the pod (may be null: none), and
    // where their nodes, driver and CDI specs are; must outlive the launcher.
    const api::PodDevices* devices = nullptr;
    AcceleratorOptions accelerators;
    // The user of a container that sets no runAsUser (DefaultUserFor);
    // nullopt: 0, as the images here name no user.
    std::optional<int64_t> default_uid;
  };

  // `cgroups` (may be null: none) must outlive the launcher.
  RuncLauncher(Options options, PodCgroups* cgroups);
  ~RuncLauncher() override;

  absl::StatusOr<Launched> Launch(const api::Container& spec,
                                  int64_t memory_limit) override;
  void Terminate(const api::Container& spec, pid_t pid) override;
  void Kill(const api::Container& spec, pid_t pid) override;
  std::string Reaped(const api::Container& spec) override;
  void Remove(const api::Container& spec) override;
  // `runc exec`: the process gets the container's process spec (user,
  // groups, capabilities, no_new_privs), namespaces and cgroup.
  absl::StatusOr<pid_t> StartProbe(
      const api::Container& spec, pid_t container_pid,
      const std::vector<std::string>& command) const override;
  bool oci() const override { return true; }

 private:
  std::string Id(const api::Container& spec) const;
  std::string Bundle(const api::Container& spec) const;
  // Runs `runc --root <pod_dir>/runc <args...>` to completion.
  void Runc(std::vector<std::string> args) const;
  // Writes the bundle's config.json; an error is the StartError message.
  absl::Status WriteBundle(const api::Container& spec, int64_t memory_limit);
  // Resolves `sub_path` beneath `volume` (OpenBeneath) and bind-mounts the
  // resolved fd (/proc/self/fd/<n>, never the path again) at a staging
  // point under <pod_dir>/mounts/, which no container can reach; runc binds
  // that. The staging mounts live in the shim's own mount namespace
  // (unshared, private, on first use), so they vanish with the shim.
  absl::StatusOr<std::string> StageSubPath(const std::string& volume,
                                           const std::string& sub_path,
                                           const std::string& field,
                                           const std::string& staging);
  // Unmounts the staging points of container `name`.
  void Unstage(const std::string& name);

  const Options options_;
  PodCgroups* const cgroups_;
  bool own_mount_namespace_ = false;
  const int last_cap_;
  const uint64_t available_caps_;  // the shim's permitted set
  // Container name -> the staging points its bundle names; mounted until
  // the container is reaped or launched again.
  std::map<std::string, std::vector<std::string>> staged_;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_RUNC_LAUNCHER_H_
