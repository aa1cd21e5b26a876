#ifndef JOBSET_AGENT_RUNTIME_VOLUMES_H_
#define JOBSET_AGENT_RUNTIME_VOLUMES_H_

// A pod's volumes on the host, as kubelet prepares them: emptyDir
// directories under <pod_dir>/volumes/ (a sized tmpfs for medium: Memory),
// owned as fsGroup says, and hostPath `type` checks. Thread-compatible.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
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

// Makes every emptyDir of `pod` under <pod_dir>/volumes/, mounting a tmpfs
// (nosuid, nodev, size as MemoryVolumeSize) for medium Memory, in the
// caller's mount namespace (which must be the shim's private one). Owner and
// mode: fsGroup set: root:fsGroup, 02770 (setgid, group-writable, as kubelet's
// SetVolumeOwnership); else, when some container runs as another user than
// root, 0777 (kubelet's emptyDir mode); else root's 0700.
absl::Status PrepareEmptyDirs(const std::string& pod_dir,
                              const api::PodSpec& pod);

// Whether `pod` has an emptyDir with medium Memory.
bool HasMemoryVolume(const api::PodSpec& pod);

// kubelet's hostPath type check for `source`: "" checks nothing;
// DirectoryOrCreate makes the directory (0755, parents too), FileOrCreate
// the file (0644); Directory, File, Socket, CharDevice, BlockDevice (and the
// OrCreate kinds once they exist) must be that: else NotFound with kubelet's
// message (`hostPath type check failed: /x is not a directory`).
absl::Status CheckHostPathType(const api::HostPathVolumeSource& source);

// One volume mount of a container on the host side.
struct ContainerMount {
  std::string source;       // host path: the volume's, before any subPath
  std::string destination;  // mountPath
  std::string sub_path;
  bool read_only = false;
  int index = 0;  // in the container's volumeMounts
};

// The container's mounts with their host sources, hostPath types checked
// (an error is the container's StartError message).
absl::StatusOr<std::vector<ContainerMount>> ContainerMounts(
    const std::string& pod_dir,
    const google::protobuf::RepeatedPtrField<api::Volume>& volumes,
    const api::Container& spec);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_VOLUMES_H_
