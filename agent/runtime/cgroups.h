#ifndef JOBSET_AGENT_RUNTIME_CGROUPS_H_
#define JOBSET_AGENT_RUNTIME_CGROUPS_H_

// Pod and container cgroups, on the hybrid v1 layout (memory and pids from
// the v1 hierarchies, tracking and cgroup.kill from the cgroup2 mount at
// /sys/fs/cgroup/unified) and on pure cgroup v2 (/sys/fs/cgroup). See
// agent/runtime/README.md. Thread-compatible.

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace jobset::agent {

// Where the hierarchies are mounted and the calling process's own cgroup in
// each ("" for a hierarchy that is absent).
struct CgroupLayout {
  bool pure_v2 = false;
  std::string unified_mount;  // cgroup2: /sys/fs/cgroup or .../unified
  std::string memory_mount;   // v1 memory (hybrid only)
  std::string pids_mount;     // v1 pids (hybrid only)
  std::string own_unified;    // "/..." relative to the mount
  std::string own_memory;
  std::string own_pids;
  // Every v1 hierarchy: mount point -> own path (runc creates a container's
  // cgroup in each, and leaves the pod-level parents behind).
  std::vector<std::pair<std::string, std::string>> v1_all;
};

// Reads /sys/fs/cgroup and /proc/self/cgroup. kUnavailable when no usable
// hierarchy is mounted.
absl::StatusOr<CgroupLayout> DetectCgroupLayout();

// The cgroups of one pod: a pod-level directory per hierarchy (pids.max
// there) and one child per container (memory limit there). `root` is a
// relative path (nested under the caller's own cgroup, as runc does with a
// relative cgroupsPath) or an absolute one (from each hierarchy's root).
class PodCgroups {
 public:
  PodCgroups(CgroupLayout layout, std::string root, std::string pod_uid);

  // Creates the pod-level directories and sets pids.max (0: no limit).
  // Returns the directories created (for later removal).
  absl::StatusOr<std::vector<std::string>> CreatePod(int64_t pids_max);

  // Creates container `name`'s directories with `memory_limit` bytes (0: no
  // limit). Returns the directories a process must join.
  absl::StatusOr<std::vector<std::string>> CreateContainer(
      const std::string& name, int64_t memory_limit);

  // The number of OOM kills so far in container `name`'s memory cgroup.
  int64_t OomKills(const std::string& name) const;

  // Every pid in the pod's cgroups (all containers).
  std::vector<pid_t> Pids() const;

  // The relative path runc should get as cgroupsPath for container `name`
  // (valid when `root` is relative).
  std::string RuncCgroupsPath(const std::string& name) const;

  // The pod-level directories the shim creates and tracks.
  std::vector<std::string> PodDirs() const;

  // The pod-level directories in every hierarchy (for cleanup after runc).
  std::vector<std::string> AllPodDirs() const;

  const CgroupLayout& layout() const { return layout_; }

 private:
  std::string Dir(const std::string& mount, const std::string& own,
                  const std::string& sub) const;

  CgroupLayout layout_;
  std::string root_;
  std::string pod_uid_;
};

// Writes `pid` into `dir`/cgroup.procs. Uses only async-signal-safe calls.
int JoinCgroupRaw(const char* procs_path, pid_t pid);

// Kills every process in the cgroup directories `dirs` (and below): writes
// cgroup.kill where the kernel offers it, and SIGKILLs every pid listed in
// cgroup.procs until they are empty or `attempts` rounds passed. Returns
// true when the cgroups are empty.
bool KillCgroups(const std::vector<std::string>& dirs, int attempts);

// Signals every pid listed in the cgroup.procs of `dirs` (and below).
void SignalCgroups(const std::vector<std::string>& dirs, int signal);

// Removes `dirs` and their sub-cgroups, deepest first (rmdir; a cgroup with
// processes stays). Returns false when one could not be removed.
bool RemoveCgroups(const std::vector<std::string>& dirs);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_CGROUPS_H_
