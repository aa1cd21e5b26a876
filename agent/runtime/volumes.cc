#include "agent/runtime/volumes.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "agent/runtime/security_context.h"
#include "api/quantity.h"

namespace jobset::agent {
namespace {

// The container's memory limit in bytes; nullopt without one or when it
// does not parse (SetUpPod refuses those before any volume is made).
std::optional<int64_t> MemoryLimit(const api::Container& c) {
  auto it = c.resources().limits().find("memory");
  if (it == c.resources().limits().end()) return std::nullopt;
  absl::StatusOr<api::Quantity> q = api::ParseQuantity(it->second);
  if (!q.ok() || q->Value() <= 0) return std::nullopt;
  return q->Value();
}

// kubelet's resource.PodLimits for memory: nullopt when any container has
// no limit.
std::optional<int64_t> PodMemoryLimit(const api::PodSpec& pod) {
  int64_t sum = 0;
  for (const api::Container& c : pod.containers()) {
    std::optional<int64_t> limit = MemoryLimit(c);
    if (!limit.has_value()) return std::nullopt;
    if (sum > INT64_MAX - *limit) return std::nullopt;
    sum += *limit;
  }
  for (const api::Container& c : pod.init_containers()) {
    std::optional<int64_t> limit = MemoryLimit(c);
    if (!limit.has_value()) return std::nullopt;
    sum = std::max(sum, *limit);
  }
  if (pod.containers().empty()) return std::nullopt;
  return sum;
}

// Whether some container of `pod` runs as a user other than root.
bool RunsAsOtherThanRoot(const api::PodSpec& pod) {
  auto other = [&pod](const api::Container& c) {
    const EffectiveSecurity sc = Effective(pod, c);
    return sc.run_as_user.has_value() && *sc.run_as_user != 0;
  };
  return std::any_of(pod.containers().begin(), pod.containers().end(), other) ||
         std::any_of(pod.init_containers().begin(), pod.init_containers().end(),
                     other);
}

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat(what, " ", path, ": ", strerror(errno)));
}

absl::Status TypeCheckFailed(const std::string& path, absl::string_view what) {
  return absl::NotFoundError(
      absl::StrCat("hostPath type check failed: ", path, " is not a ", what));
}

// mkdir -p with mode 0755 (os.MkdirAll).
absl::Status MakeDirAll(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i != path.size() && path[i] != '/') continue;
    const std::string prefix = path.substr(0, i);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return Errno("hostPath: mkdir", prefix);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<int64_t>> MemoryVolumeSize(
    const api::PodSpec& pod, const api::EmptyDirVolumeSource& empty_dir,
    const std::string& field) {
  std::optional<int64_t> size = PodMemoryLimit(pod);
  if (!empty_dir.size_limit().empty()) {
    absl::StatusOr<api::Quantity> q =
        api::ParseQuantity(empty_dir.size_limit());
    if (!q.ok() || q->Value() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".sizeLimit: bad quantity \"", empty_dir.size_limit(), "\""));
    }
    // Zero is "unset" to kubelet.
    if (q->Value() > 0) {
      size = size.has_value() ? std::min(*size, q->Value()) : q->Value();
    }
  }
  return size;
}

std::string EmptyDirPath(const std::string& pod_dir, const std::string& name) {
  return absl::StrCat(pod_dir, "/volumes/", name);
}

bool HasMemoryVolume(const api::PodSpec& pod) {
  return std::any_of(
      pod.volumes().begin(), pod.volumes().end(), [](const api::Volume& v) {
        return v.has_empty_dir() && v.empty_dir().medium() == "Memory";
      });
}

absl::Status PrepareEmptyDirs(const std::string& pod_dir,
                              const api::PodSpec& pod) {
  const std::string root = absl::StrCat(pod_dir, "/volumes");
  const bool others = RunsAsOtherThanRoot(pod);
  const bool has_fs_group = pod.security_context().has_fs_group();
  for (int i = 0; i < pod.volumes_size(); ++i) {
    const api::Volume& v = pod.volumes(i);
    if (!v.has_empty_dir()) continue;
    if (mkdir(root.c_str(), 0700) != 0 && errno != EEXIST) {
      return Errno("mkdir", root);
    }
    // Volume names were checked (CheckAssignment): DNS labels.
    const std::string path = EmptyDirPath(pod_dir, v.name());
    if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
      return Errno("mkdir", path);
    }
    if (v.empty_dir().medium() == "Memory") {
      const std::string field = absl::StrCat("spec.volumes[", i, "].emptyDir");
      absl::StatusOr<std::optional<int64_t>> size =
          MemoryVolumeSize(pod, v.empty_dir(), field);
      if (!size.ok()) return size.status();
      std::string options = "mode=0700";
      if (size->has_value()) absl::StrAppend(&options, ",size=", **size);
      // A restarted shim (none yet) or a retried setup: mount once.
      (void)umount2(path.c_str(), MNT_DETACH);
      if (mount("tmpfs", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                options.c_str()) != 0) {
        return absl::InternalError(absl::StrCat(field, ": mounting a tmpfs (",
                                                options, ") at ", path, ": ",
                                                strerror(errno)));
      }
    }
    mode_t mode = 0700;
    if (has_fs_group) {
      const gid_t gid = static_cast<gid_t>(pod.security_context().fs_group());
      if (chown(path.c_str(), 0, gid) != 0) return Errno("chown", path);
      mode = 02770;
    } else if (others) {
      mode = 0777;
    }
    if (chmod(path.c_str(), mode) != 0) return Errno("chmod", path);
  }
  return absl::OkStatus();
}

absl::Status CheckHostPathType(const api::HostPathVolumeSource& source) {
  const std::string& path = source.path();
  const std::string& type = source.type();
  if (type.empty()) return absl::OkStatus();
  struct stat st;
  const bool exists = stat(path.c_str(), &st) == 0;
  if (type == "DirectoryOrCreate" && !exists) return MakeDirAll(path);
  if (type == "FileOrCreate" && !exists) {
    const int fd = open(path.c_str(), O_CREAT | O_RDONLY | O_CLOEXEC, 0644);
    if (fd < 0) return Errno("hostPath: creating", path);
    close(fd);
    return absl::OkStatus();
  }
  if (type == "DirectoryOrCreate" || type == "Directory") {
    if (!exists || !S_ISDIR(st.st_mode))
      return TypeCheckFailed(path, "directory");
  } else if (type == "FileOrCreate" || type == "File") {
    if (!exists || !S_ISREG(st.st_mode)) return TypeCheckFailed(path, "file");
  } else if (type == "Socket") {
    if (!exists || !S_ISSOCK(st.st_mode)) {
      return TypeCheckFailed(path, "socket file");
    }
  } else if (type == "CharDevice") {
    if (!exists || !S_ISCHR(st.st_mode)) {
      return TypeCheckFailed(path, "character device");
    }
  } else if (type == "BlockDevice") {
    if (!exists || !S_ISBLK(st.st_mode)) {
      return TypeCheckFailed(path, "block device");
    }
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(type, " is an invalid volume type"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ContainerMount>> ContainerMounts(
    const std::string& pod_dir,
    const google::protobuf::RepeatedPtrField<api::Volume>& volumes,
    const api::Container& spec) {
  std::vector<ContainerMount> mounts;
  for (int i = 0; i < spec.volume_mounts_size(); ++i) {
    const api::VolumeMount& vm = spec.volume_mounts(i);
    for (const api::Volume& v : volumes) {
      if (v.name() != vm.name()) continue;
      ContainerMount m;
      if (v.has_host_path()) {
        if (absl::Status s = CheckHostPathType(v.host_path()); !s.ok()) {
          return s;
        }
        m.source = v.host_path().path();
      } else {
        m.source = EmptyDirPath(pod_dir, v.name());
      }
      m.destination = vm.mount_path();
      m.sub_path = vm.sub_path();
      m.read_only = vm.read_only();
      m.index = i;
      mounts.push_back(std::move(m));
    }
  }
  return mounts;
}

}  // namespace jobset::agent
