#ifndef JOBSET_AGENT_RUNTIME_PROCESS_TREE_H_
#define JOBSET_AGENT_RUNTIME_PROCESS_TREE_H_

// Every process a pod may have left: the shim's descendants (it is a child
// subreaper, so double-forked orphans are its children) and whatever is in
// the pod's cgroups. Thread-compatible.

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/clock.h"

namespace jobset::agent {

// Returns every live (not zombie) process below `root`: a walk down the
// kernel's children lists (/proc/PID/task/TID/children), reading only the
// processes below `root`; where the kernel has no such lists,
// DescendantsByScan.
std::vector<pid_t> Descendants(pid_t root);
// The same from every process's /proc/PID/stat: one read per process on the
// host.
std::vector<pid_t> DescendantsByScan(pid_t root);

// The processes of the pod the calling process supervises.
class PodProcessTree {
 public:
  // `cgroup_dirs`: the pod-level cgroup directories (none: empty).
  explicit PodProcessTree(std::vector<std::string> cgroup_dirs = {});

  // Sends `signal` to every pid in the pod's cgroups and every descendant;
  // SIGKILL also writes cgroup.kill.
  void SignalAll(int signal) const;
  // Returns whether the calling process has any descendant left.
  bool HasDescendants() const;
  // Kills and reaps whatever is left (as a pid namespace would), until
  // nothing is or `timeout` has passed by `clock`.
  void KillLeftovers(Clock& clock, absl::Duration timeout) const;

 private:
  std::vector<std::string> cgroup_dirs_;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_PROCESS_TREE_H_
