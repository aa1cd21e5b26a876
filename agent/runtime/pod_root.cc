#include "agent/runtime/pod_root.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/quote.h"

namespace jobset::agent {
namespace {

// The /proc entries a pod sees read-only and those it sees empty (runc's
// defaults, less the directories it covers with a tmpfs).
constexpr const char* kReadOnlyProc[] = {"bus", "fs", "irq", "sys",
                                         "sysrq-trigger"};
constexpr const char* kMaskedProc[] = {"kcore", "keys", "timer_list",
                                       "sched_debug", "latency_stats"};
// The host device nodes every pod gets (the OCI runtime spec's defaults).
constexpr const char* kDevNodes[] = {"null",   "zero",    "full",
                                     "random", "urandom", "tty"};

absl::Status MountError(absl::string_view what, const std::string& path,
                        int err) {
  return absl::InternalError(
      absl::StrCat("the pod's root: ", what, " ", path, ": ", strerror(err)));
}

absl::Status Mount(const std::string& source, const std::string& target,
                   const char* type, unsigned long flags, const char* data,
                   absl::string_view what) {
  if (mount(source.empty() ? nullptr : source.c_str(), target.c_str(), type,
            flags, data) != 0) {
    return MountError(what, target, errno);
  }
  return absl::OkStatus();
}

// Binds `source` at `target` with `attrs` (MOUNT_ATTR_*) on it and on every
// mount beneath it.
absl::Status BindWithAttrs(const std::string& source, const std::string& target,
                           uint64_t attrs) {
  if (absl::Status s =
          Mount(source, target, nullptr, MS_BIND | MS_REC, nullptr, "binding");
      !s.ok()) {
    return s;
  }
  struct mount_attr attr;
  memset(&attr, 0, sizeof(attr));
  attr.attr_set = attrs;
  if (mount_setattr(AT_FDCWD, target.c_str(), AT_RECURSIVE, &attr,
                    sizeof(attr)) == 0) {
    return absl::OkStatus();
  }
  // Before Linux 5.12: the top mount only.
  unsigned long flags = MS_BIND | MS_REMOUNT;
  if (attrs & MOUNT_ATTR_RDONLY) flags |= MS_RDONLY;
  if (attrs & MOUNT_ATTR_NOSUID) flags |= MS_NOSUID;
  if (attrs & MOUNT_ATTR_NODEV) flags |= MS_NODEV;
  return Mount("", target, nullptr, flags, nullptr, "remounting");
}

constexpr uint64_t kReadOnlyHost =
    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

// Makes `inside` (absolute) beneath the directory `root`: missing
// directories 0755 and, with `file`, an empty file last. No component may
// be a symlink (ELOOP, ENOTDIR): what is made is beneath the root.
absl::Status MakeBeneath(const std::string& root, const std::string& inside,
                         bool file) {
  std::vector<std::string> parts =
      absl::StrSplit(inside, '/', absl::SkipEmpty());
  int dir = open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return MountError("open", root, errno);
  absl::Status status;
  for (size_t i = 0; i < parts.size(); ++i) {
    const char* name = parts[i].c_str();
    if (parts[i] == "." || parts[i] == "..") {
      status = MountError("mount point", inside, EINVAL);
      break;
    }
    const bool last = i + 1 == parts.size();
    if (last && file) {
      const int fd =
          openat(dir, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0)
        status = MountError("creating", absl::StrCat(root, inside), errno);
      if (fd >= 0) close(fd);
      break;
    }
    if (mkdirat(dir, name, 0755) != 0 && errno != EEXIST) {
      status = MountError("mkdir", absl::StrCat(root, inside), errno);
      break;
    }
    const int next =
        openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      status = MountError("open", absl::StrCat(root, inside), errno);
      break;
    }
    close(dir);
    dir = next;
  }
  close(dir);
  return status;
}

// `path` resolved; "" when it cannot be.
std::string Resolved(const std::string& path) {
  char real[PATH_MAX];
  return realpath(path.c_str(), real) == nullptr ? "" : real;
}

// Whether the resolved path `real` is `dir` or beneath it.
bool Beneath(const std::string& real, const std::string& dir) {
  const std::string d = Resolved(dir);
  if (real.empty() || d.empty()) return false;
  return real == d ||
         absl::StartsWith(real, d == "/" ? d : absl::StrCat(d, "/"));
}

}  // namespace

absl::Status CheckPodHostMounts(const std::vector<std::string>& dirs,
                                const std::string& work_dir) {
  const std::string work = Resolved(work_dir);
  for (const std::string& dir : dirs) {
    auto refuse = [&dir](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("--pod_host_mounts: ", Quote(dir), ": ", why));
    };
    if (dir.empty() || dir[0] != '/') return refuse("not an absolute path");
    if (dir == "/") return refuse("the whole host cannot be bound");
    for (absl::string_view part : absl::StrSplit(dir, '/')) {
      if (part == "." || part == "..") return refuse("not a clean path");
    }
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return refuse("not an existing directory");
    }
    if (Beneath(Resolved(dir), work_dir)) {
      return refuse(absl::StrCat("is the agent's --work_dir ", Quote(work_dir),
                                 " or inside it (its keys and every pod's "
                                 "state)"));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> MaskedEtcFiles(const std::string& etc) {
  std::vector<std::string> files;
  for (const char* f :
       {"shadow", "gshadow", "shadow-", "gshadow-", "security/opasswd"}) {
    struct stat st;
    const std::string path = absl::StrCat(etc, "/", f);
    if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      files.push_back(f);
    }
  }
  if (DIR* ssh = opendir(absl::StrCat(etc, "/ssh").c_str())) {
    while (struct dirent* e = readdir(ssh)) {
      const std::string name = e->d_name;
      if (absl::StartsWith(name, "ssh_host_") && absl::EndsWith(name, "_key")) {
        files.push_back(absl::StrCat("ssh/", name));
      }
    }
    closedir(ssh);
  }
  return files;
}

std::string PodRoot::Path(absl::string_view inside) const {
  return absl::StrCat(path_, inside);
}

absl::StatusOr<std::unique_ptr<PodRoot>> PodRoot::Build(
    const PodRootSpec& spec) {
  std::unique_ptr<PodRoot> root(new PodRoot());
  root->path_ = absl::StrCat(spec.pod_dir, "/root");
  root->pod_dir_prefix_ = absl::StrCat(spec.pod_dir, "/");
  root->proc_ = root->Path("/proc");
  root->tmp_ = root->Path("/tmp");
  root->dev_null_ = root->Path("/dev/null");
  const std::string& r = root->path_;
  if (mkdir(r.c_str(), 0700) != 0 && errno != EEXIST) {
    return MountError("mkdir", r, errno);
  }
  // A retried setup starts from nothing.
  (void)umount2(r.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
  // 0755: a pod of any user walks it. Never on a disk.
  if (absl::Status s = Mount("tmpfs", r, "tmpfs", MS_NOSUID | MS_NODEV,
                             "mode=0755,size=16m", "mounting a tmpfs at");
      !s.ok()) {
    return s;
  }
  const std::string work_dir = Resolved(spec.work_dir);
  // Binds the host's `dir` at its own path with `attrs`; the agent's state
  // beneath it (--work_dir=/opt/...) is covered with an empty tmpfs.
  auto bind_host_dir = [&](const std::string& dir,
                           uint64_t attrs) -> absl::Status {
    if (absl::Status s = MakeBeneath(r, dir, false); !s.ok()) return s;
    if (absl::Status s = BindWithAttrs(dir, root->Path(dir), attrs); !s.ok()) {
      return s;
    }
    if (!Beneath(work_dir, dir)) return absl::OkStatus();
    return Mount("tmpfs", root->Path(work_dir), "tmpfs", MS_NOSUID | MS_NODEV,
                 "mode=0755,size=1m", "covering the agent's work dir at");
  };
  for (const std::string& dir : spec.system_dirs) {
    struct stat st;
    if (lstat(dir.c_str(), &st) != 0) continue;
    const std::string at = root->Path(dir);
    if (S_ISLNK(st.st_mode)) {
      char target[PATH_MAX];
      const ssize_t n = readlink(dir.c_str(), target, sizeof(target) - 1);
      if (n < 0) return MountError("readlink", dir, errno);
      target[n] = '\0';
      if (absl::Status s = MakeBeneath(r, dir.substr(0, dir.rfind('/')), false);
          !s.ok()) {
        return s;
      }
      if (symlink(target, at.c_str()) != 0 && errno != EEXIST) {
        return MountError("symlink", at, errno);
      }
      continue;
    }
    if (!S_ISDIR(st.st_mode)) continue;
    if (absl::Status s = bind_host_dir(dir, kReadOnlyHost); !s.ok()) return s;
  }
  // Password hashes and the host's SSH keys: an empty file over each.
  const std::string empty = root->Path("/.masked");
  if (absl::Status s = MakeBeneath(r, "/.masked", true); !s.ok()) return s;
  chmod(empty.c_str(), 0);
  struct stat etc;
  if (lstat(root->Path("/etc").c_str(), &etc) == 0 && S_ISDIR(etc.st_mode)) {
    for (const std::string& f : MaskedEtcFiles()) {
      struct stat st;
      const std::string at = root->Path(absl::StrCat("/etc/", f));
      if (lstat(at.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (absl::Status s =
              Mount(empty, at, nullptr, MS_BIND, nullptr, "masking");
          !s.ok()) {
        return s;
      }
    }
  }
  // The pod's /etc/hosts (rewritten in place by the agent), and the host's
  // resolv.conf where it is a symlink out of /etc (systemd-resolved's).
  struct stat st;
  const std::string hosts = root->Path("/etc/hosts");
  if (!spec.hosts_file.empty() && lstat(hosts.c_str(), &st) == 0 &&
      S_ISREG(st.st_mode)) {
    if (absl::Status s = BindWithAttrs(spec.hosts_file, hosts, kReadOnlyHost);
        !s.ok()) {
      return s;
    }
  }
  if (lstat("/etc/resolv.conf", &st) == 0 && S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    if (realpath("/etc/resolv.conf", target) != nullptr &&
        stat(target, &st) == 0 && S_ISREG(st.st_mode) &&
        MakeBeneath(r, target, true).ok()) {
      if (absl::Status s =
              BindWithAttrs(target, root->Path(target), kReadOnlyHost);
          !s.ok()) {
        return s;
      }
    }
  }
  // /dev: a tmpfs with the standard nodes and the pod's accelerators only;
  // what a pod makes there with mknod cannot be opened (nodev).
  const std::string dev = root->Path("/dev");
  if (absl::Status s = MakeBeneath(r, "/dev", false); !s.ok()) return s;
  if (absl::Status s = Mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NODEV,
                             "mode=0755,size=1m", "mounting /dev at");
      !s.ok()) {
    return s;
  }
  for (const char* node : kDevNodes) {
    const std::string host = absl::StrCat("/dev/", node);
    if (stat(host.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) continue;
    if (absl::Status s = MakeBeneath(r, host, true); !s.ok()) return s;
    if (absl::Status s =
            Mount(host, root->Path(host), nullptr, MS_BIND, nullptr, "binding");
        !s.ok()) {
      return s;
    }
  }
  for (const AcceleratorDevice& d : spec.devices) {
    if (absl::Status s = MakeBeneath(r, d.container_path, true); !s.ok()) {
      return s;
    }
    if (absl::Status s = Mount(d.host_path, root->Path(d.container_path),
                               nullptr, MS_BIND, nullptr, "binding");
        !s.ok()) {
      return s;
    }
  }
  for (const auto& [name, target] :
       std::vector<std::pair<std::string, std::string>>{
           {"fd", "/proc/self/fd"},
           {"stdin", "/proc/self/fd/0"},
           {"stdout", "/proc/self/fd/1"},
           {"stderr", "/proc/self/fd/2"},
           {"ptmx", "pts/ptmx"}}) {
    const std::string at = absl::StrCat(dev, "/", name);
    if (symlink(target.c_str(), at.c_str()) != 0 && errno != EEXIST) {
      return MountError("symlink", at, errno);
    }
  }
  for (const char* d : {"/dev/pts", "/dev/shm", "/proc", "/sys", "/tmp"}) {
    if (absl::Status s = MakeBeneath(r, d, false); !s.ok()) return s;
  }
  if (absl::Status s = Mount(
          "devpts", root->Path("/dev/pts"), "devpts", MS_NOSUID | MS_NOEXEC,
          "newinstance,ptmxmode=0666,mode=0620", "mounting devpts at");
      !s.ok()) {
    return s;
  }
  // The pod's own /dev/shm and /tmp, shared by its containers.
  if (absl::Status s =
          Mount("shm", root->Path("/dev/shm"), "tmpfs", MS_NOSUID | MS_NODEV,
                "mode=1777", "mounting /dev/shm at");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Mount("tmpfs", root->tmp_, "tmpfs", MS_NOSUID | MS_NODEV,
                             "mode=1777", "mounting /tmp at");
      !s.ok()) {
    return s;
  }
  // /sys read-only, without the mounts beneath it (cgroups: the pod's
  // limits are not its to change). Where the agent itself runs in a user
  // namespace (a sandbox, a container), /sys's submounts are locked to it
  // and only a recursive bind is allowed (EINVAL otherwise): then all of it,
  // every mount read-only.
  if (mount("/sys", root->Path("/sys").c_str(), nullptr, MS_BIND, nullptr) !=
      0) {
    if (errno != EINVAL)
      return MountError("binding", root->Path("/sys"), errno);
    if (absl::Status s =
            BindWithAttrs("/sys", root->Path("/sys"),
                          MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                              MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        !s.ok()) {
      return s;
    }
  } else if (absl::Status s = Mount("", root->Path("/sys"), nullptr,
                                    MS_BIND | MS_REMOUNT | MS_RDONLY |
                                        MS_NOSUID | MS_NODEV | MS_NOEXEC,
                                    nullptr, "remounting");
             !s.ok()) {
    return s;
  }
  // The operator's host directories, read-write (over the pod's /tmp for
  // /tmp); the agent's work dir beneath one is covered with an empty tmpfs,
  // as beneath a system directory.
  for (const std::string& dir : spec.host_mounts) {
    if (absl::Status s =
            bind_host_dir(dir, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        !s.ok()) {
      return s;
    }
  }
  // The pod's work dir, at the same path (a container's default
  // workingDir); the directories above it are the root's, empty.
  const std::string work = absl::StrCat(spec.pod_dir, "/work");
  if (absl::Status s = MakeBeneath(r, work, false); !s.ok()) return s;
  if (absl::Status s = BindWithAttrs(work, root->Path(work),
                                     MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
      !s.ok()) {
    return s;
  }
  // The progress directory, at its own path ($JOBSET_PROGRESS_FILE's);
  // nothing there runs.
  if (struct stat progress; !spec.progress_dir.empty() &&
                            lstat(spec.progress_dir.c_str(), &progress) == 0 &&
                            S_ISDIR(progress.st_mode)) {
    if (absl::Status s = MakeBeneath(r, spec.progress_dir, false); !s.ok())
      return s;
    if (absl::Status s = BindWithAttrs(
            spec.progress_dir, root->Path(spec.progress_dir),
            MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        !s.ok()) {
      return s;
    }
  }
  for (const auto& [inside, file] : spec.mount_points) {
    (void)MakeBeneath(r, inside, file);  // else the container fails
  }
  for (const char* p : kReadOnlyProc) {
    root->read_only_proc_.push_back(absl::StrCat(root->proc_, "/", p));
  }
  for (const char* p : kMaskedProc) {
    root->masked_proc_.push_back(absl::StrCat(root->proc_, "/", p));
  }
  return root;
}

namespace {

// Closes every descriptor from 3 up but `keep` (-1: none).
void CloseFrom3Except(int keep) {
  if (keep < 3) {
    syscall(SYS_close_range, 3u, ~0u, 0u);
    return;
  }
  if (keep > 3)
    syscall(SYS_close_range, 3u, static_cast<unsigned>(keep - 1), 0u);
  syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0u, 0u);
}

// The relay: ends as the init says the container ended.
[[noreturn]] void Relay(pid_t init, int from_init) {
  for (int fd = 0; fd < 3; ++fd) close(fd);
  CloseFrom3Except(from_init);
  int status = 0;
  while (waitpid(init, &status, 0) < 0 && errno == EINTR) {
  }
  int container = 0;
  ssize_t n;
  do {
    n = read(from_init, &container, sizeof(container));
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof(container))) container = status;
  if (WIFSIGNALED(container)) {
    const int sig = WTERMSIG(container);
    const struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    kill(getpid(), sig);
    sigprocmask(SIG_UNBLOCK, &one, nullptr);
    _exit(128 + sig);
  }
  _exit(WIFEXITED(container) ? WEXITSTATUS(container) : 127);
}

// The PID namespace's init once the container's process runs: reaps until
// that process ends, then reports how and goes (taking the namespace).
[[noreturn]] void Init(pid_t container, int to_relay) {
  for (int fd = 0; fd < 3; ++fd) close(fd);
  CloseFrom3Except(to_relay);
  int container_status = 0;
  while (true) {
    int status;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid == container) {
      container_status = status;
      break;
    }
    if (pid < 0 && errno != EINTR) break;
  }
  (void)!write(to_relay, &container_status, sizeof(container_status));
  _exit(0);
}

// `root` + `inside` into `out` (PATH_MAX); false when too long.
bool Join(const char* root, const char* inside, char* out) {
  const size_t a = strlen(root), b = strlen(inside);
  if (a + b + 1 > PATH_MAX) return false;
  memcpy(out, root, a);
  memcpy(out + a, inside, b + 1);
  return true;
}

bool StartsWith(const char* s, const std::string& prefix) {
  return strncmp(s, prefix.c_str(), prefix.size()) == 0;
}

}  // namespace

int BindChildMount(const ChildMount& m, const char* at) {
  const int moved =
      m.tree_fd >= 0
          ? move_mount(m.tree_fd, "", AT_FDCWD, at, MOVE_MOUNT_F_EMPTY_PATH)
          : mount(m.source.c_str(), at, nullptr, MS_BIND | MS_REC, nullptr);
  if (moved != 0) return errno;
  if (m.checked_fd < 0) return 0;
  struct stat checked, mounted;
  if (fstat(m.checked_fd, &checked) != 0 || stat(at, &mounted) != 0) {
    const int err = errno;
    umount2(at, MNT_DETACH);
    return err;
  }
  if (checked.st_dev != mounted.st_dev || checked.st_ino != mounted.st_ino) {
    umount2(at, MNT_DETACH);
    return ESTALE;
  }
  return 0;
}

RootFailure EnterPodRoot(const PodRoot& root,
                         const std::vector<ChildMount>& mounts,
                         bool read_only_root, int status_fd) {
  if (unshare(CLONE_NEWNS | CLONE_NEWPID) != 0) {
    return {errno, RootFailure::kNamespaces};
  }
  int relay[2];
  if (pipe2(relay, O_CLOEXEC) != 0) return {errno, RootFailure::kRoot};
  // The relay and the init outlive any signal the container's process group
  // gets but SIGKILL; the container's process gets them itself.
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  const pid_t init = fork();
  if (init < 0) return {errno, RootFailure::kRoot};
  if (init > 0) {
    close(relay[1]);
    close(status_fd);
    Relay(init, relay[0]);
  }
  close(relay[0]);
  // PID 1 of the new namespace: mounts in it, then pivots.
  const char* r = root.path_.c_str();
  if (mount("proc", root.proc_.c_str(), "proc",
            MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
    return {errno, RootFailure::kRoot};
  }
  struct stat st;
  for (const std::string& p : root.read_only_proc_) {
    if (stat(p.c_str(), &st) != 0) continue;
    if (mount(p.c_str(), p.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0 ||
        mount(
            nullptr, p.c_str(), nullptr,
            MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
            nullptr) != 0) {
      return {errno, RootFailure::kRoot};
    }
  }
  for (const std::string& p : root.masked_proc_) {
    if (stat(p.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) continue;
    if (mount(root.dev_null_.c_str(), p.c_str(), nullptr, MS_BIND, nullptr) !=
        0) {
      return {errno, RootFailure::kRoot};
    }
  }
  char at[PATH_MAX];
  for (size_t i = 0; i < mounts.size(); ++i) {
    const ChildMount& m = mounts[i];
    const int index = static_cast<int>(i);
    if (!Join(r, m.destination.c_str(), at)) return {ENAMETOOLONG, index};
    // A hostPath may hold devices (an operator allowed it); the pod's own
    // volumes may not.
    unsigned long flags = MS_BIND | MS_REMOUNT | MS_NOSUID;
    if (StartsWith(m.source.c_str(), root.pod_dir_prefix_)) flags |= MS_NODEV;
    if (m.read_only) flags |= MS_RDONLY;
    if (const int err = BindChildMount(m, at); err != 0) return {err, index};
    if (mount(nullptr, at, nullptr, flags, nullptr) != 0) {
      return {errno, index};
    }
  }
  // Mounted: the container's process is never to hold a host object open,
  // not even until its exec closes them.
  for (const ChildMount& m : mounts) {
    if (m.tree_fd >= 0) close(m.tree_fd);
    if (m.checked_fd >= 0) close(m.checked_fd);
  }
  if (read_only_root) {
    const unsigned long flags =
        MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV;
    if (mount(nullptr, r, nullptr, flags, nullptr) != 0 ||
        mount(nullptr, root.tmp_.c_str(), nullptr, flags, nullptr) != 0) {
      return {errno, RootFailure::kReadOnlyRoot};
    }
  }
  // pivot_root(".", "."): the old root stacks beneath the new one, and goes.
  if (chdir(r) != 0 || syscall(SYS_pivot_root, ".", ".") != 0 ||
      umount2(".", MNT_DETACH) != 0 || chdir("/") != 0) {
    return {errno, RootFailure::kRoot};
  }
  const pid_t container = fork();
  if (container < 0) return {errno, RootFailure::kRoot};
  if (container == 0) {
    close(relay[1]);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    return {};
  }
  close(status_fd);
  Init(container, relay[1]);
}

}  // namespace jobset::agent
