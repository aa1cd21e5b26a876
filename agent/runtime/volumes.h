#ifndef JOBSET_AGENT_RUNTIME_VOLUMES_H_
#define JOBSET_AGENT_RUNTIME_VOLUMES_H_

// A pod's volumes on the host, as kubelet prepares them: emptyDir
// directories under <pod_dir>/volumes/ (a sized tmpfs for medium: Memory),
// secret and configMap volumes' files (a tmpfs for secrets), owned as
// fsGroup says, and hostPath `type` checks. Thread-compatible.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/runtime/scoped_fd.h"
#include "proto/agent.pb.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {

// The size of a Memory emptyDir's tmpfs (kubelet's
// calculateEmptyDirMemorySize): the smaller of sizeLimit and the pod's
// memory limit (every container's limit summed, or the largest init
// container's if that is more; none when a container has no limit);
// nullopt when neither is known (the kernel's default: half the RAM).
// InvalidArgument naming the field for a bad quantity.
absl::StatusOr<std::optional<int64_t>> MemoryVolumeSize(
    const api::PodSpec& pod, const api::EmptyDirVolumeSource& empty_dir,
    const std::string& field);

// The host directory of emptyDir `name`: <pod_dir>/volumes/<name>.
std::string EmptyDirPath(const std::string& pod_dir, const std::string& name);

// Gives directory `path`, which the pod's containers write (an emptyDir,
// the pod's work dir), kubelet's emptyDir owner and mode (below).
absl::Status OwnPodWritableDir(const std::string& path,
                               const api::PodSpec& pod);

// Makes every emptyDir of `pod` under <pod_dir>/volumes/, mounting a tmpfs
// (nosuid, nodev, size as MemoryVolumeSize) for medium Memory, in the
// caller's mount namespace (which must be the shim's private one). Owner and
// mode: fsGroup set: root:fsGroup, 02770 (setgid, group-writable, as kubelet's
// SetVolumeOwnership); else, when some container may run as another user
// than root (one without runAsUser may: --default_pod_uid), 0777 (kubelet's
// emptyDir mode); else (every container explicitly root) root's 0700.
absl::Status PrepareEmptyDirs(const std::string& pod_dir,
                              const api::PodSpec& pod);

// Whether `pod` has an emptyDir with medium Memory.
bool HasMemoryVolume(const api::PodSpec& pod);

// Whether preparing `pod`'s volumes as root mounts a tmpfs: a Memory
// emptyDir or a secret volume. The caller must be in a mount namespace of
// its own then (the shim) or unmount them (UnmountVolumes).
bool HasTmpfsVolume(const api::PodSpec& pod);

// The size of a secret volume's tmpfs holding `volume`'s files: every file
// rounded up to whole pages, plus 1 MiB, rounded up to a MiB.
int64_t SecretVolumeSize(const api::ConfigVolume& volume);

// Makes every secret and configMap volume of `pod` at <pod_dir>/volumes/<name>
// with the files of its entry in `config_volumes` (checked by
// CheckConfigVolumes; a volume without one is empty: an optional object that
// is missing). As root, a secret volume is a tmpfs (nosuid, nodev, noexec,
// SecretVolumeSize), mounted afresh each time, in the caller's mount
// namespace, so its bytes never reach a disk. Files are written beneath the
// volume without following a symlink, with exactly their mode; directories
// (the volume's too) are 0755. With fsGroup, as kubelet's SetVolumeOwnership
// of a read-only volume: everything root:fsGroup, files mode|0440,
// directories 02755. Preparing again gives the same result. Errors name the
// volume and the file, never the data.
absl::Status PrepareConfigVolumes(
    const std::string& pod_dir, const api::PodSpec& pod,
    const google::protobuf::RepeatedPtrField<api::ConfigVolume>&
        config_volumes);

// Detaches every tmpfs PrepareEmptyDirs and PrepareConfigVolumes may have
// mounted for `pod` (Memory emptyDirs, secret volumes) in the caller's mount
// namespace; what is not mounted is left alone.
void UnmountVolumes(const std::string& pod_dir, const api::PodSpec& pod);

// kubelet's hostPath type check for `source`: "" checks nothing;
// DirectoryOrCreate makes the directory (0755, parents too), FileOrCreate
// the file (0644); Directory, File, Socket, CharDevice, BlockDevice (and the
// OrCreate kinds once they exist) must be that: else NotFound with kubelet's
// message (`hostPath type check failed: /x is not a directory`).
absl::Status CheckHostPathType(const api::HostPathVolumeSource& source);

// One volume mount of a container on the host side.
struct ContainerMount {
  // Host path: the volume's, before any subPath. For a hostPath, the text
  // jobsetd admitted: what errors name, and what the oci and cri runtimes
  // are given (runc and containerd are processes of their own: they open it
  // again, which this fd does not guard).
  std::string source;
  std::string destination;  // mountPath
  std::string sub_path;
  bool read_only = false;
  int index = 0;  // in the container's volumeMounts
  bool host_path = false;
  // A hostPath's last component, opened (OpenHostPath) after its checks:
  // what process mode binds (ChildMount::checked_fd). Null when the path
  // does not exist (type "" checks nothing). Shared: copies of the mount
  // keep it open.
  std::shared_ptr<const ScopedFd> host_path_fd;
};

// The container's mounts with their host sources, hostPath types checked
// (an error is the container's StartError message). A hostPath is walked
// without following a link (CheckHostPathHasNoSymlinks), type-checked
// (which may create it), then opened by the same walk (OpenHostPath) and
// its type checked again on what was opened, so that a component replaced
// with a link meanwhile is refused. Secret and configMap volumes are always
// read-only, as kubelet mounts them.
absl::StatusOr<std::vector<ContainerMount>> ContainerMounts(
    const std::string& pod_dir,
    const google::protobuf::RepeatedPtrField<api::Volume>& volumes,
    const api::Container& spec);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_VOLUMES_H_
