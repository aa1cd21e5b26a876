#ifndef JOBSET_AGENT_RUNTIME_POD_ROOT_H_
#define JOBSET_AGENT_RUNTIME_POD_ROOT_H_

// A process-mode pod's private root file system, as bubblewrap and Slurm's
// container plugins build one: a tmpfs holding read-only binds of the host's
// system directories (/usr, /bin, /lib*, /etc, /opt, ...; no set-id, no
// devices), with the pod's own directories on top, and nothing of the
// agent's state: no work dir, no other pod, no node key. See
// docs/agent-runtime.md ("What a process-mode pod sees").
//
// The shim builds it once per pod in its private mount namespace
// (PodRoot::Build); each container enters it (EnterPodRoot, between fork and
// exec) in mount and PID namespaces of its own (IPC and UTS are the pod's,
// the shim's), with a fresh /proc, and
// pivot_root. Thread-compatible.

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/runtime/accelerator_devices.h"

namespace jobset::agent {

// A bind mount a child makes in its own mount namespace before exec.
struct ChildMount {
  std::string source;  // the host path, bound by name when tree_fd is -1
  std::string destination;
  bool read_only = false;
  // A hostPath's object as checked (ContainerMount::host_path_fd), open
  // O_PATH: the root of what is mounted must be it (same device and inode),
  // else the mount is undone and fails with ESTALE. -1: none.
  int checked_fd = -1;
  // A detached copy of that object's mount (open_tree OPEN_TREE_CLONE,
  // close-on-exec), moved into place (move_mount) instead of binding
  // `source` by name: the object checked, whatever the path names by then.
  // Not mount(2) of /proc/self/fd/N: in the child's own mount namespace
  // that fails (EINVAL), a bind's source having to be a mount of the
  // caller's namespace, which the fd's is not (the shim's); a detached copy
  // belongs to none and may be moved into any. -1: none (before Linux 5.2:
  // `source` is bound and compared with checked_fd).
  int tree_fd = -1;
};

// In a child between fork and exec, in a mount namespace of its own (raw
// syscalls only): mounts `m` at `at` (with what is beneath it) and returns
// 0, or an errno with nothing left mounted there; ESTALE: what the path
// named was not the object checked (it was replaced after the check).
int BindChildMount(const ChildMount& m, const char* at);

// What the root of a pod holds beyond the host's system directories.
struct PodRootSpec {
  std::string pod_dir;     // <work_dir>/pods/<uid>: its work/ is bound in
  std::string work_dir;    // the agent's: hidden even where a bind covers it
  std::string hosts_file;  // bound at /etc/hosts
  // The pod's progress directory (progress_dir.h), bound read-write at its
  // own path as the work dir is, where it exists; "": none.
  std::string progress_dir;
  // The pod's accelerators' device nodes (AcceleratorDevices): the only
  // device nodes in its /dev beside null, zero, full, random, urandom, tty.
  std::vector<AcceleratorDevice> devices;
  // Where the pod's containers mount volumes (mountPath; true: a file), made
  // as empty directories or files in the root; one that cannot be made
  // (beneath a read-only host directory where nothing is) is left out, and
  // the container that mounts there fails to start, naming it.
  std::vector<std::pair<std::string, bool>> mount_points;
  // The host directories bound read-only at the same path (a symlink, such
  // as a merged-/usr /bin, is copied as one); those missing are skipped.
  std::vector<std::string> system_dirs = {"/usr",    "/bin",   "/sbin",
                                          "/lib",    "/lib32", "/lib64",
                                          "/libx32", "/etc",   "/opt"};
  // The operator's host directories bound read-write at the same path in
  // every pod (the agent's --pod_host_mounts: shared homes, datasets, a
  // scratch folder; Apptainer's "bind path"), over the pod's own /tmp if
  // one is /tmp. Checked by CheckPodHostMounts.
  std::vector<std::string> host_mounts = {};
};

// The agent's --pod_host_mounts, checked: each an absolute, clean path of an
// existing directory other than "/", not the agent's `work_dir` nor inside
// it (its keys and every pod's state; a work dir beneath one is covered in
// the pod); kInvalidArgument naming the flag and the path otherwise.
absl::Status CheckPodHostMounts(const std::vector<std::string>& dirs,
                                const std::string& work_dir);

// The files under the host's /etc a pod sees empty: password hashes and
// the host's SSH keys. Relative to /etc.
std::vector<std::string> MaskedEtcFiles(const std::string& etc = "/etc");

// Why EnterPodRoot failed: an errno and what it was doing (ChildMount's
// index, or a negative step).
struct RootFailure {
  static constexpr int kNamespaces = -2;  // as ExecFailure's kMount detail
  static constexpr int kReadOnlyRoot = -1;
  static constexpr int kRoot = -3;  // /proc, masks, pivot_root, fork
  int err = 0;
  int detail = 0;
};

class PodRoot;
RootFailure EnterPodRoot(const PodRoot& root,
                         const std::vector<ChildMount>& mounts,
                         bool read_only_root, int status_fd);

class PodRoot {
 public:
  // Builds the root at <pod_dir>/root in the caller's mount namespace, which
  // must be private (the shim's): its mounts are never seen on the host.
  // Internal naming the step that failed.
  static absl::StatusOr<std::unique_ptr<PodRoot>> Build(
      const PodRootSpec& spec);

  // The root's directory in the shim's view.
  const std::string& path() const { return path_; }
  // Returns where `inside` (an absolute path in the pod) is in the shim's
  // view: path() + inside.
  std::string Path(absl::string_view inside) const;

 private:
  friend RootFailure EnterPodRoot(const PodRoot& root,
                                  const std::vector<ChildMount>& mounts,
                                  bool read_only_root, int status_fd);
  PodRoot() = default;

  std::string path_;
  std::string pod_dir_prefix_;  // "<pod_dir>/": the pod's own volumes
  std::string proc_;            // path_ + "/proc"
  std::string tmp_;             // path_ + "/tmp"
  std::string dev_null_;        // path_ + "/dev/null"
  std::vector<std::string> read_only_proc_;  // made read-only after /proc
  std::vector<std::string> masked_proc_;     // /dev/null bound over these
};

// In a child between fork and exec (raw syscalls only, no allocation):
// unshares mount and PID namespaces, and forks twice. The first
// process (the one the shim watches, in the shim's PID namespace) relays:
// it waits for the second and ends as the container does (its exit code,
// or killed by its signal). The second is the PID namespace's init: it
// mounts /proc (/proc/sys and kin read-only, kcore and kin masked), binds
// `mounts` beneath the root (no set-id; no devices unless a hostPath's),
// makes / and /tmp read-only with `read_only_root`, pivots into the root,
// then forks the container's process (PID 2) and reaps until it ends,
// which ends the namespace. Returns (err 0) only in that last process, with
// the caller's signal mask emptied; on failure returns in the init, with
// the relay set to mirror its exit. `status_fd` (the caller's
// close-on-exec report pipe) is closed in the relay and the init once they
// no longer report.
RootFailure EnterPodRoot(const PodRoot& root,
                         const std::vector<ChildMount>& mounts,
                         bool read_only_root, int status_fd);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_POD_ROOT_H_
