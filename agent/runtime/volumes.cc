#include "agent/runtime/volumes.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/runtime/host_path.h"
#include "agent/runtime/scoped_fd.h"
#include "agent/runtime/security_context.h"
#include "api/quantity.h"
#include "common/quote.h"

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

// Whether some container of `pod` may run as a user other than root: one
// that sets no runAsUser runs as the agent's --default_pod_uid outside
// privileged namespaces (DefaultUserFor).
bool RunsAsOtherThanRoot(const api::PodSpec& pod) {
  auto other = [&pod](const api::Container& c) {
    const EffectiveSecurity sc = Effective(pod, c);
    return !sc.run_as_user.has_value() || *sc.run_as_user != 0;
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

// What a hostPath type (but "") asks the object to be, named as kubelet's
// type check failure names it.
struct HostPathKind {
  const char* what;
  bool (*is)(mode_t mode);
};

std::optional<HostPathKind> KindOf(const std::string& type) {
  if (type == "Directory" || type == "DirectoryOrCreate") {
    return HostPathKind{"directory", [](mode_t m) { return S_ISDIR(m); }};
  }
  if (type == "File" || type == "FileOrCreate") {
    return HostPathKind{"file", [](mode_t m) { return S_ISREG(m); }};
  }
  if (type == "Socket") {
    return HostPathKind{"socket file", [](mode_t m) { return S_ISSOCK(m); }};
  }
  if (type == "CharDevice") {
    return HostPathKind{"character device",
                        [](mode_t m) { return S_ISCHR(m); }};
  }
  if (type == "BlockDevice") {
    return HostPathKind{"block device", [](mode_t m) { return S_ISBLK(m); }};
  }
  return std::nullopt;
}

// A hostPath's checks in order, then the object itself, open: no link in the
// path (before DirectoryOrCreate makes anything through one); kubelet's type
// check (which may create it); the path opened by the same walk, so that
// what is bound is what was checked even if a component becomes a link
// later; and its type again, on what was opened. Null when the path does
// not exist and its type ("") asks nothing.
absl::StatusOr<std::shared_ptr<const ScopedFd>> CheckAndOpenHostPath(
    const api::HostPathVolumeSource& source) {
  const std::string& path = source.path();
  if (absl::Status s = CheckHostPathHasNoSymlinks(path); !s.ok()) return s;
  if (absl::Status s = CheckHostPathType(source); !s.ok()) return s;
  absl::StatusOr<ScopedFd> fd = OpenHostPath(path);
  if (!fd.ok()) {
    if (fd.status().code() == absl::StatusCode::kNotFound &&
        source.type().empty()) {
      return nullptr;
    }
    return fd.status();
  }
  if (!source.type().empty()) {
    struct stat st;
    if (fstat(fd->get(), &st) != 0) return Errno("hostPath: stat", path);
    const std::optional<HostPathKind> kind = KindOf(source.type());
    if (!kind->is(st.st_mode)) return TypeCheckFailed(path, kind->what);
  }
  return std::make_shared<const ScopedFd>(*std::move(fd));
}

// A secret or configMap volume being written: names it in errors (never
// quoting data) and applies the ownership fsGroup asks.
struct ConfigVolumeWriter {
  std::string field;  // "spec.volumes[i]"
  std::string name;
  bool secret = false;
  std::optional<gid_t> fs_group;

  absl::Status Error(absl::string_view what, absl::string_view path,
                     int err) const {
    return absl::InternalError(absl::StrCat(
        field, " (", secret ? "secret" : "configMap", " volume ", Quote(name),
        "): ", what, " ", Quote(path), ": ", strerror(err)));
  }

  // Owner and mode as kubelet's SetVolumeOwnership of a read-only volume:
  // with fsGroup, group fsGroup, files +0440, directories setgid +0550
  // (chown first: it may clear set-id bits).
  absl::Status Own(int fd, mode_t mode, bool dir,
                   absl::string_view path) const {
    if (fs_group.has_value()) {
      if (fchown(fd, static_cast<uid_t>(-1), *fs_group) != 0) {
        return Error("chown", path, errno);
      }
      mode |= dir ? (S_ISGID | 0550) : 0440;
    }
    if (fchmod(fd, mode) != 0) return Error("chmod", path, errno);
    return absl::OkStatus();
  }

  // Opens directory `name` beneath `dir_fd`, making it (0755) if missing,
  // on the way to file `path`. A symlink or anything but a directory is
  // refused (ELOOP, ENOTDIR).
  absl::StatusOr<int> OpenDir(int dir_fd, const std::string& name,
                              absl::string_view path) const {
    if (mkdirat(dir_fd, name.c_str(), 0700) != 0 && errno != EEXIST) {
      return Error("mkdir", path, errno);
    }
    const int fd = openat(dir_fd, name.c_str(),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return Error("open", path, errno);
    if (absl::Status s = Own(fd, 0755, /*dir=*/true, path); !s.ok()) {
      close(fd);
      return s;
    }
    return fd;
  }

  // Writes `file` beneath the volume's directory `root_fd`, every component
  // opened without following a symlink.
  absl::Status Write(int root_fd, const api::ConfigFile& file) const {
    const std::vector<std::string> parts = absl::StrSplit(file.path(), '/');
    // Checked (CheckConfigVolumes): no empty, "." or ".." component.
    std::optional<ScopedFd> parent;
    int dir_fd = root_fd;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      absl::StatusOr<int> fd = OpenDir(dir_fd, parts[i], file.path());
      if (!fd.ok()) return fd.status();
      parent.emplace(*fd);
      dir_fd = *fd;
    }
    // Created private, then given its mode: a umask cannot change it.
    // O_NONBLOCK: a FIFO planted there fails instead of blocking.
    const ScopedFd fd(openat(
        dir_fd, parts.back().c_str(),
        O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
        0600));
    if (fd.get() < 0) return Error("create", file.path(), errno);
    struct stat st;
    if (fstat(fd.get(), &st) != 0) return Error("stat", file.path(), errno);
    if (!S_ISREG(st.st_mode)) {
      return Error("create", file.path(), EEXIST);
    }
    const std::string& data = file.data();
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = write(fd.get(), data.data() + done, data.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Error("write", file.path(), errno);
      }
      done += static_cast<size_t>(n);
    }
    return Own(fd.get(), static_cast<mode_t>(file.mode()), /*dir=*/false,
               file.path());
  }
};

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

absl::Status OwnPodWritableDir(const std::string& path,
                               const api::PodSpec& pod) {
  mode_t mode = 0700;
  if (pod.security_context().has_fs_group()) {
    const gid_t gid = static_cast<gid_t>(pod.security_context().fs_group());
    if (chown(path.c_str(), 0, gid) != 0) return Errno("chown", path);
    mode = 02770;
  } else if (RunsAsOtherThanRoot(pod)) {
    mode = 0777;
  }
  if (chmod(path.c_str(), mode) != 0) return Errno("chmod", path);
  return absl::OkStatus();
}

absl::Status PrepareEmptyDirs(const std::string& pod_dir,
                              const api::PodSpec& pod) {
  const std::string root = absl::StrCat(pod_dir, "/volumes");
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
    if (absl::Status s = OwnPodWritableDir(path, pod); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool HasTmpfsVolume(const api::PodSpec& pod) {
  return HasMemoryVolume(pod) ||
         std::any_of(pod.volumes().begin(), pod.volumes().end(),
                     [](const api::Volume& v) { return v.has_secret(); });
}

int64_t SecretVolumeSize(const api::ConfigVolume& volume) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  const int64_t page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
  int64_t size = kMiB;
  for (const api::ConfigFile& f : volume.files()) {
    const int64_t bytes = static_cast<int64_t>(f.data().size());
    size += (bytes + page - 1) / page * page;
  }
  return (size + kMiB - 1) / kMiB * kMiB;
}

absl::Status PrepareConfigVolumes(
    const std::string& pod_dir, const api::PodSpec& pod,
    const google::protobuf::RepeatedPtrField<api::ConfigVolume>&
        config_volumes) {
  std::map<std::string, const api::ConfigVolume*> files;
  for (const api::ConfigVolume& v : config_volumes) files[v.name()] = &v;
  const api::ConfigVolume no_files;
  const std::string root = absl::StrCat(pod_dir, "/volumes");
  const bool tmpfs = geteuid() == 0;
  for (int i = 0; i < pod.volumes_size(); ++i) {
    const api::Volume& v = pod.volumes(i);
    if (!v.has_secret() && !v.has_config_map()) continue;
    ConfigVolumeWriter writer;
    writer.field = absl::StrCat("spec.volumes[", i, "]");
    writer.name = v.name();
    writer.secret = v.has_secret();
    if (pod.security_context().has_fs_group()) {
      writer.fs_group = static_cast<gid_t>(pod.security_context().fs_group());
    }
    auto it = files.find(v.name());
    const api::ConfigVolume& volume =
        it == files.end() ? no_files : *it->second;
    if (mkdir(root.c_str(), 0700) != 0 && errno != EEXIST) {
      return Errno("mkdir", root);
    }
    // Volume names were checked (CheckAssignment): DNS labels.
    const std::string path = EmptyDirPath(pod_dir, v.name());
    if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      return Errno("mkdir", path);
    }
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) return Errno("stat", path);
    if (!S_ISDIR(st.st_mode)) {
      return absl::InternalError(
          absl::StrCat(writer.field, ": ", path, " is not a directory"));
    }
    if (writer.secret && tmpfs) {
      // Mounted afresh (a retried setup): only these files are there.
      (void)umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
      const std::string options =
          absl::StrCat("mode=0755,size=", SecretVolumeSize(volume));
      if (mount("tmpfs", path.c_str(), "tmpfs",
                MS_NOSUID | MS_NODEV | MS_NOEXEC, options.c_str()) != 0) {
        return absl::InternalError(
            absl::StrCat(writer.field, " (secret volume \"", v.name(),
                         "\"): mounting a tmpfs (", options, ") at ", path,
                         ": ", strerror(errno)));
      }
    }
    const ScopedFd root_fd(
        open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (root_fd.get() < 0) return Errno("open", path);
    if (absl::Status s = writer.Own(root_fd.get(), 0755, /*dir=*/true, ".");
        !s.ok()) {
      return s;
    }
    for (const api::ConfigFile& f : volume.files()) {
      if (absl::Status s = writer.Write(root_fd.get(), f); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

void UnmountVolumes(const std::string& pod_dir, const api::PodSpec& pod) {
  for (const api::Volume& v : pod.volumes()) {
    if (v.has_empty_dir() || v.has_secret()) {
      (void)umount2(EmptyDirPath(pod_dir, v.name()).c_str(),
                    MNT_DETACH | UMOUNT_NOFOLLOW);
    }
  }
}

absl::Status CheckHostPathType(const api::HostPathVolumeSource& source) {
  const std::string& path = source.path();
  const std::string& type = source.type();
  if (type.empty()) return absl::OkStatus();
  const std::optional<HostPathKind> kind = KindOf(type);
  if (!kind.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(type, " is an invalid volume type"));
  }
  struct stat st;
  const bool exists = stat(path.c_str(), &st) == 0;
  // Made through the no-link walk: a component another pod swaps for a
  // link meanwhile is refused, never followed.
  if (type == "DirectoryOrCreate" && !exists) {
    return OpenOrCreateHostPath(path, HostPathCreate::kDirectories).status();
  }
  if (type == "FileOrCreate" && !exists) {
    return OpenOrCreateHostPath(path, HostPathCreate::kFile).status();
  }
  if (!exists || !kind->is(st.st_mode)) {
    return TypeCheckFailed(path, kind->what);
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
        absl::StatusOr<std::shared_ptr<const ScopedFd>> fd =
            CheckAndOpenHostPath(v.host_path());
        if (!fd.ok()) return fd.status();
        m.source = v.host_path().path();
        m.host_path = true;
        m.host_path_fd = *std::move(fd);
      } else {
        m.source = EmptyDirPath(pod_dir, v.name());
      }
      m.destination = vm.mount_path();
      m.sub_path = vm.sub_path();
      // As kubelet: secret and configMap volumes are read-only, always.
      m.read_only = vm.read_only() || v.has_secret() || v.has_config_map();
      m.index = i;
      mounts.push_back(std::move(m));
    }
  }
  return mounts;
}

}  // namespace jobset::agent
