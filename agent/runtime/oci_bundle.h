#ifndef JOBSET_AGENT_RUNTIME_OCI_BUNDLE_H_
#define JOBSET_AGENT_RUNTIME_OCI_BUNDLE_H_

// What the shim needs to run a container: executable lookup (on the host or
// inside an image's rootfs), image directories, and the runc bundle's
// config.json. Pure functions over the file system; thread-compatible.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/runtime/accelerator_devices.h"

namespace jobset::agent {

// PATH used to find a bare command name when the container sets no PATH.
inline constexpr char kDefaultPath[] =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// Finds `command` as execve would after a shell-style PATH search, inside
// `root` ("/" for the host): a name with a '/' is taken as it is, a bare
// name is searched in `path_env` (kDefaultPath when empty). Symlinks are
// followed inside `root` (an absolute link target is relative to `root`).
// Returns the path as seen from inside `root`; kNotFound naming `command`.
absl::StatusOr<std::string> LookPath(const std::string& root,
                                     const std::string& command,
                                     const std::string& path_env);

// Returns `root` + `path` with symlinks resolved inside `root`, or kNotFound.
absl::StatusOr<std::string> ResolveInRoot(const std::string& root,
                                          const std::string& path);

// Maps a container's image to its rootfs: `<image_dir>/<image>/rootfs`, or,
// when that does not exist, the same without the tag or digest
// (`busybox:1` -> `<image_dir>/busybox/rootfs`). kNotFound naming both paths;
// kInvalidArgument for an empty image or one with ".." components.
absl::StatusOr<std::string> ImageRootfs(const std::string& image_dir,
                                        const std::string& image);

struct OciMount {
  std::string source;
  std::string destination;
  bool read_only = false;
};

// A device node for linux.devices.
struct OciDevice {
  std::string path;
  char type = 'c';  // 'c' or 'b'
  int64_t major = 0;
  int64_t minor = 0;
  uint32_t file_mode = 0;  // permission bits
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// The host's device nodes under /dev (what runc and containerd give a
// privileged container), skipping /dev/pts, /dev/shm, /dev/mqueue and
// symlinks.
std::vector<OciDevice> HostDevices();

// The linux.devices entries of a pod's accelerators (AcceleratorDevices):
// each at its container path, with its host node's numbers, mode and owner.
std::vector<OciDevice> OciAcceleratorDevices(
    const std::vector<AcceleratorDevice>& devices);

// The parts of a runc bundle's config.json jobsetd sets.
struct OciSpec {
  std::vector<std::string> args;
  std::vector<std::string> env;
  std::string cwd = "/";
  std::string rootfs;
  std::string hostname;
  std::string hosts_file;    // bind-mounted read-only at /etc/hosts
  std::string cgroups_path;  // relative: nests under runc's own cgroup
  int64_t memory_limit = 0;  // bytes; 0: none
  int64_t pids_limit = 0;    // 0: none
  int64_t nofile = 65536;    // RLIMIT_NOFILE soft and hard
  std::vector<OciMount> mounts;
  // process.user.
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> additional_gids;
  // "CAP_*" names: bounding; effective = permitted = inheritable; ambient.
  std::vector<std::string> bounding_caps;
  std::vector<std::string> caps;
  std::vector<std::string> ambient_caps;
  bool no_new_privileges = false;
  // Every device allowed in the device cgroup, no masked or read-only /proc
  // paths, /sys writable.
  bool privileged = false;
  // Created in the container (linux.devices) and allowed (rwm) in its
  // device cgroup: what privileged gets, or a pod's accelerators.
  std::vector<OciDevice> devices;
};

// Returns config.json text: namespaces pid, ipc, uts, mount (the host's
// network), terminal false, read-only root (images are shared, whatever
// readOnlyRootFilesystem says) with a tmpfs /tmp, the spec's user and
// capabilities, and runc's masked paths unless privileged.
std::string OciConfigJson(const OciSpec& spec);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_OCI_BUNDLE_H_
