#include "agent/runtime/process_launcher.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/runtime/oci_bundle.h"
#include "agent/runtime/volumes.h"
#include "common/log.h"
#include "common/quote.h"

namespace jobset::agent {
namespace {

// Null-terminated char* views of `strings` (made before fork: the child must
// not allocate).
std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// In the child, between fork and exec: async-signal-safe calls only (raw
// write(2), no allocation, no JOBSET_LOG).
[[noreturn]] void ReportAndExit(int fd, ExecFailure::Stage stage, int err,
                                int detail = 0) {
  const ExecFailure f = {stage, err, detail};
  (void)!write(fd, &f, sizeof(f));
  _exit(127);
}

// The cgroup2 directory among the cgroup.procs files `procs` (by index),
// opened to clone into; {-1, -1} when there is none.
std::pair<int, int> OpenCgroup2(const std::vector<std::string>& procs) {
  for (size_t i = 0; i < procs.size(); ++i) {
    const std::string dir = procs[i].substr(0, procs[i].rfind('/'));
    struct statfs fs;
    if (statfs(dir.c_str(), &fs) != 0 ||
        static_cast<uint64_t>(fs.f_type) != CGROUP2_SUPER_MAGIC) {
      continue;
    }
    const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) return {fd, static_cast<int>(i)};
  }
  return {-1, -1};
}

// fork(2), with the child born in the cgroup2 directory `cgroup_fd`
// (clone3's CLONE_INTO_CGROUP, Linux 5.7): a write to cgroup.procs instead
// moves a running process, and the first such move after a quiet spell
// waits for an RCU grace period (about 10 ms on our machines, once per pod
// launched on its own). -1 with errno set when the kernel cannot; the
// caller then forks and joins by writing. Like fork without glibc's atfork
// handlers: the child may only do async-signal-safe work, as after fork.
pid_t ForkIntoCgroup(int cgroup_fd) {
  struct clone_args args;
  memset(&args, 0, sizeof(args));
  args.flags = CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = static_cast<uint64_t>(cgroup_fd);
  return static_cast<pid_t>(syscall(SYS_clone3, &args, sizeof(args)));
}

// The namespaces of a running container's process that are not the shim's
// own, open, for an exec probe to enter: setns in the child for those a
// process can enter itself, and the PID namespace (for children only) around
// the fork. Thread-compatible.
class ContainerNamespaces {
 public:
  static absl::StatusOr<ContainerNamespaces> Open(pid_t pid) {
    ContainerNamespaces ns;
    // The mount namespace last: once in it, paths are the container's.
    for (const char* kind : {"ipc", "uts", "net", "cgroup", "mnt"}) {
      absl::StatusOr<int> fd = OpenIfOther(pid, kind);
      if (!fd.ok()) return fd.status();
      if (*fd >= 0) ns.fds_.push_back(*fd);
    }
    absl::StatusOr<int> pid_ns = OpenIfOther(pid, "pid_for_children");
    if (!pid_ns.ok()) return pid_ns.status();
    ns.pid_ns_ = *pid_ns;
    return ns;
  }

  ContainerNamespaces(ContainerNamespaces&& other)
      : fds_(std::move(other.fds_)), pid_ns_(other.pid_ns_) {
    other.fds_.clear();
    other.pid_ns_ = -1;
  }
  ContainerNamespaces& operator=(ContainerNamespaces&&) = delete;
  ~ContainerNamespaces() {
    for (int fd : fds_) close(fd);
    if (pid_ns_ >= 0) close(pid_ns_);
  }

  const std::vector<int>& join() const { return fds_; }

  // While it lives, the caller's new children are born in the container's
  // PID namespace (when it has one of its own); then the caller's own again
  // (setns to one's own active namespace is always allowed).
  class ChildrenIn {
   public:
    explicit ChildrenIn(const ContainerNamespaces& ns) {
      if (ns.pid_ns_ < 0) return;
      own_ = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
      if (own_ >= 0 && setns(ns.pid_ns_, CLONE_NEWPID) != 0) {
        JOBSET_LOG(WARNING)
            << "entering a container's PID namespace: " << strerror(errno);
        close(own_);
        own_ = -1;
      }
    }
    ~ChildrenIn() {
      if (own_ < 0) return;
      if (setns(own_, CLONE_NEWPID) != 0) {
        JOBSET_LOG(ERROR) << "back to the shim's PID namespace: "
                          << strerror(errno);
      }
      close(own_);
    }
    ChildrenIn(const ChildrenIn&) = delete;
    ChildrenIn& operator=(const ChildrenIn&) = delete;

   private:
    int own_ = -1;
  };

 private:
  ContainerNamespaces() = default;

  // An open /proc/<pid>/ns/<kind> when it is not the shim's own; -1 when it
  // is (or the kernel has no such namespace).
  static absl::StatusOr<int> OpenIfOther(pid_t pid, const char* kind) {
    struct stat own;
    if (stat(absl::StrCat("/proc/self/ns/", kind).c_str(), &own) != 0) {
      return -1;
    }
    const std::string path = absl::StrCat("/proc/", pid, "/ns/", kind);
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat theirs;
    if (fd < 0 || fstat(fd, &theirs) != 0) {
      const int err = errno;
      if (fd >= 0) close(fd);
      return absl::FailedPreconditionError(absl::StrCat(
          "the container's process is gone (", path, ": ", strerror(err), ")"));
    }
    if (theirs.st_dev == own.st_dev && theirs.st_ino == own.st_ino) {
      close(fd);
      return -1;
    }
    return fd;
  }

  std::vector<int> fds_;
  int pid_ns_ = -1;
};

// What a child reported it was doing when it failed.
const char* ExecFailureMessage(const ExecFailure& f) {
  switch (f.stage) {
    case ExecFailure::kChdir:
      return "cannot change to the working directory";
    case ExecFailure::kCgroup:
      return "cannot join the container's cgroup";
    case ExecFailure::kMount:
      return "cannot set up mounts";
    case ExecFailure::kCredentials:
      return CredentialStepName(static_cast<CredentialStep>(f.detail));
    case ExecFailure::kNamespace:
      return "cannot enter the container's namespaces";
    default:
      return "cannot execute";
  }
}

}  // namespace

std::vector<std::string> ContainerArgv(const api::Container& spec) {
  std::vector<std::string> argv(spec.command().begin(), spec.command().end());
  argv.insert(argv.end(), spec.args().begin(), spec.args().end());
  return argv;
}

std::vector<std::string> ContainerEnv(const api::Container& spec) {
  std::vector<std::string> env;
  for (const api::EnvVar& e : spec.env()) {
    env.push_back(absl::StrCat(e.name(), "=", e.value()));
  }
  return env;
}

std::string ContainerEnvValue(const api::Container& spec,
                              absl::string_view name) {
  std::string value;
  for (const api::EnvVar& e : spec.env()) {
    if (e.name() == name) value = e.value();
  }
  return value;
}

absl::StatusOr<ChildMount> ChildMountFor(const ContainerMount& mount,
                                         std::vector<ScopedFd>* held) {
  ChildMount child{mount.source, mount.destination, mount.read_only};
  if (!mount.host_path) return child;
  if (mount.host_path_fd == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        "volumeMounts[", mount.index, "]: hostPath ", Quote(mount.source),
        " does not exist (process mode binds only what exists when the "
        "container starts)"));
  }
  child.checked_fd = mount.host_path_fd->get();
  ScopedFd tree(open_tree(
      child.checked_fd, "",
      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
  if (tree.get() < 0) {
    // Before Linux 5.2 the child binds the path and compares what it got
    // with checked_fd.
    if (errno == ENOSYS) return child;
    return absl::InternalError(absl::StrCat("hostPath ", Quote(mount.source),
                                            ": open_tree: ", strerror(errno)));
  }
  child.tree_fd = tree.get();
  held->push_back(std::move(tree));
  return child;
}

pid_t ForkExec(const std::string& path, const std::vector<std::string>& argv,
               const std::vector<std::string>& env, const std::string& cwd,
               int out_fd, const std::vector<std::string>& cgroup_procs,
               ExecFailure* failure, const ChildSetup* setup) {
  std::vector<std::string> argv_copy = argv;
  std::vector<std::string> env_copy = env;
  std::vector<char*> cargv = CStrings(argv_copy);
  std::vector<char*> cenv = CStrings(env_copy);
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    *failure = {ExecFailure::kExec, errno};
    return -1;
  }
  auto [cgroup_fd, born_in] = OpenCgroup2(cgroup_procs);
  pid_t pid = -1;
  if (cgroup_fd >= 0) {
    pid = ForkIntoCgroup(cgroup_fd);
    if (pid < 0) born_in = -1;  // Not supported here: join by writing.
  }
  if (pid < 0) pid = fork();
  const int fork_errno = errno;
  if (pid != 0 && cgroup_fd >= 0) close(cgroup_fd);
  if (pid < 0) {
    *failure = {ExecFailure::kExec, fork_errno};
    close(status_pipe[0]);
    close(status_pipe[1]);
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    for (int i = 0; i < static_cast<int>(cgroup_procs.size()); ++i) {
      if (i == born_in) continue;
      if (JoinCgroupRaw(cgroup_procs[i].c_str(), getpid()) != 0) {
        ReportAndExit(status_pipe[1], ExecFailure::kCgroup, errno);
      }
    }
    // After the cgroups (their files are the shim's paths), before
    // anything else.
    if (setup != nullptr) {
      for (size_t i = 0; i < setup->join_namespaces.size(); ++i) {
        if (setns(setup->join_namespaces[i], 0) != 0) {
          ReportAndExit(status_pipe[1], ExecFailure::kNamespace, errno,
                        static_cast<int>(i));
        }
      }
    }
    // The spare descriptors closed: the program gets its stdio only.
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    if (devnull > 2) close(devnull);
    if (out_fd >= 0) {
      dup2(out_fd, 1);
      dup2(out_fd, 2);
    } else {
      const int null_out = open("/dev/null", O_WRONLY);
      dup2(null_out, 1);
      dup2(null_out, 2);
      if (null_out > 2) close(null_out);
    }
    for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (setup != nullptr && setup->root != nullptr) {
      const RootFailure f = EnterPodRoot(*setup->root, setup->mounts,
                                         setup->read_only_root, status_pipe[1]);
      if (f.err != 0) {
        ReportAndExit(status_pipe[1], ExecFailure::kMount, f.err, f.detail);
      }
    } else if (setup != nullptr &&
               (!setup->mounts.empty() || setup->read_only_root)) {
      if (unshare(CLONE_NEWNS) != 0 ||
          mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        ReportAndExit(status_pipe[1], ExecFailure::kMount, errno, -2);
      }
      for (size_t i = 0; i < setup->mounts.size(); ++i) {
        const ChildMount& m = setup->mounts[i];
        if (const int err = BindChildMount(m, m.destination.c_str());
            err != 0) {
          ReportAndExit(status_pipe[1], ExecFailure::kMount, err,
                        static_cast<int>(i));
        }
        if (m.read_only &&
            mount(nullptr, m.destination.c_str(), nullptr,
                  MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
          ReportAndExit(status_pipe[1], ExecFailure::kMount, errno,
                        static_cast<int>(i));
        }
      }
      if (setup->read_only_root &&
          mount(nullptr, "/", nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY,
                nullptr) != 0) {
        ReportAndExit(status_pipe[1], ExecFailure::kMount, errno, -1);
      }
    }
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) {
      ReportAndExit(status_pipe[1], ExecFailure::kChdir, errno);
    }
    if (setup != nullptr && setup->credentials != nullptr) {
      const CredentialStep step = ApplyCredentials(*setup->credentials);
      if (step != CredentialStep::kNone) {
        ReportAndExit(status_pipe[1], ExecFailure::kCredentials, errno,
                      static_cast<int>(step));
      }
    }
    execve(path.c_str(), cargv.data(), cenv.data());
    ReportAndExit(status_pipe[1], ExecFailure::kExec, errno);
  }
  close(status_pipe[1]);
  ExecFailure f;
  ssize_t n;
  do {
    n = read(status_pipe[0], &f, sizeof(f));
  } while (n < 0 && errno == EINTR);
  close(status_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof(f))) {
    *failure = f;
    int ignored;
    waitpid(pid, &ignored, 0);
    return -1;
  }
  return pid;
}

absl::StatusOr<pid_t> SpawnCommand(const Command& command) {
  if (command.argv.empty()) return absl::InvalidArgumentError("no command");
  absl::StatusOr<std::string> path =
      LookPath("/", command.argv[0], command.search_path);
  if (!path.ok()) return path.status();
  ExecFailure failure;
  const pid_t pid =
      ForkExec(*path, command.argv, command.env, command.cwd, -1, {}, &failure);
  if (pid < 0) {
    return absl::InternalError(absl::StrCat("cannot execute \"", *path,
                                            "\": ", strerror(failure.err)));
  }
  return pid;
}

int RunCommand(const std::vector<std::string>& argv) {
  absl::StatusOr<pid_t> pid = SpawnCommand(
      {argv, {absl::StrCat("PATH=", kDefaultPath)}, "/", kDefaultPath});
  if (!pid.ok()) return -1;
  int status = 0;
  while (waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

ProcessLauncher::ProcessLauncher(std::string pod_dir, const api::Pod* pod,
                                 PodCgroups* cgroups, const PodRoot* root,
                                 std::optional<int64_t> default_uid)
    : pod_dir_(std::move(pod_dir)),
      pod_(pod),
      cgroups_(cgroups),
      root_(root),
      last_cap_(LastCapability()),
      available_caps_(PermittedCapabilities()),
      // Only root can be someone else.
      default_uid_(geteuid() == 0 ? default_uid : std::nullopt) {}

EffectiveSecurity ProcessLauncher::Security(const api::Container& spec) const {
  EffectiveSecurity sc = Effective(pod_->spec(), spec);
  ApplyDefaultUser(default_uid_, &sc);
  return sc;
}

std::string ProcessLauncher::WorkingDir(const api::Container& spec) const {
  return spec.working_dir().empty() ? absl::StrCat(pod_dir_, "/work")
                                    : spec.working_dir();
}

absl::StatusOr<Launched> ProcessLauncher::Launch(const api::Container& spec,
                                                 int64_t memory_limit) {
  std::vector<std::string> argv = ContainerArgv(spec);
  if (argv.empty()) {
    return absl::InvalidArgumentError(
        "no command: process mode runs no image entrypoint; set command");
  }
  const uid_t shim_uid = geteuid();
  const EffectiveSecurity sc = Security(spec);
  if (absl::Status s =
          CheckRunAsNonRoot(sc, pod_->metadata(), spec.name(), shim_uid);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> path =
      LookPath("/", argv[0], ContainerEnvValue(spec, "PATH"));
  if (!path.ok()) return path.status();
  const std::string cwd = WorkingDir(spec);
  const ProcessCredentials credentials =
      CredentialsFor(sc, shim_uid, last_cap_, available_caps_);
  ChildSetup setup;
  setup.credentials = &credentials;
  // The hostPaths' checked objects (in `mounts`) and their detached copies
  // (`held`) stay open until ForkExec returns, which is once the child has
  // mounted them or failed to.
  std::vector<ContainerMount> mounts;
  std::vector<ScopedFd> held;
  if (shim_uid == 0) {
    // Without root there is no mount namespace: volumes are not mounted
    // (agent/runtime/README.md).
    absl::StatusOr<std::vector<ContainerMount>> checked =
        ContainerMounts(pod_dir_, pod_->spec().volumes(), spec);
    if (!checked.ok()) return checked.status();
    mounts = *std::move(checked);
    for (const ContainerMount& m : mounts) {
      if (!m.sub_path.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "volumeMounts[", m.index,
            "].subPath: not supported in process mode (use the oci runtime)"));
      }
      struct stat st;
      const std::string at =
          root_ != nullptr ? root_->Path(m.destination) : m.destination;
      if (stat(at.c_str(), &st) != 0) {
        return absl::NotFoundError(absl::StrCat(
            "volumeMounts[", m.index, "].mountPath: ", m.destination,
            root_ != nullptr
                ? " cannot be made in the pod's root (a symlink, or beneath "
                  "a read-only host directory where it does not exist)"
                : " does not exist on the host (process mode creates nothing "
                  "there)"));
      }
      absl::StatusOr<ChildMount> child = ChildMountFor(m, &held);
      if (!child.ok()) return child.status();
      setup.mounts.push_back(*std::move(child));
    }
    setup.read_only_root = sc.read_only_root_filesystem;
    setup.root = root_;
  } else if (sc.read_only_root_filesystem) {
    return absl::FailedPreconditionError(
        "readOnlyRootFilesystem needs a root agent in process mode (a mount "
        "namespace of the container's own)");
  }
  std::vector<std::string> procs;
  if (cgroups_ != nullptr) {
    absl::StatusOr<std::vector<std::string>> dirs =
        cgroups_->CreateContainer(spec.name(), memory_limit);
    if (!dirs.ok()) {
      // Only a limit nobody can enforce gets here: say so and run on.
      JOBSET_LOG(WARNING) << "container " << spec.name() << ": "
                          << dirs.status().message();
    } else {
      for (const std::string& d : *dirs) {
        procs.push_back(absl::StrCat(d, "/cgroup.procs"));
      }
    }
  }
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  cgroup_procs_[spec.name()] = procs;
  ExecFailure failure;
  const pid_t pid = ForkExec(*path, argv, ContainerEnv(spec), cwd, out[1],
                             procs, &failure, &setup);
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    switch (failure.stage) {
      case ExecFailure::kChdir:
        return absl::NotFoundError(
            absl::StrCat("cannot change to working directory \"", cwd,
                         "\": ", strerror(failure.err)));
      case ExecFailure::kCgroup:
        return absl::InternalError(absl::StrCat(
            "cannot join the container's cgroup: ", strerror(failure.err)));
      case ExecFailure::kMount:
        if (failure.detail >= 0 &&
            failure.detail < static_cast<int>(setup.mounts.size())) {
          const ChildMount& m = setup.mounts[failure.detail];
          if (failure.err == ESTALE && m.checked_fd >= 0) {
            return absl::FailedPreconditionError(absl::StrCat(
                "cannot mount hostPath ", Quote(m.source), " at ",
                Quote(m.destination),
                ": it no longer names the object checked (replaced since)"));
          }
          return absl::InternalError(absl::StrCat("cannot mount ", m.source,
                                                  " at ", m.destination, ": ",
                                                  strerror(failure.err)));
        }
        return absl::InternalError(absl::StrCat(
            failure.detail == -1
                ? "cannot remount / read-only (readOnlyRootFilesystem): "
                : "cannot make the container's mount namespace: ",
            strerror(failure.err)));
      case ExecFailure::kCredentials:
        return absl::InternalError(absl::StrCat(
            "cannot apply the securityContext: ",
            CredentialStepName(static_cast<CredentialStep>(failure.detail)),
            ": ", strerror(failure.err)));
      default:
        return absl::InternalError(absl::StrCat("cannot execute \"", *path,
                                                "\": ", strerror(failure.err)));
    }
  }
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  return Launched{pid, out[0]};
}

void ProcessLauncher::Terminate(const api::Container&, pid_t pid) {
  kill(-pid, SIGTERM);
}

void ProcessLauncher::Kill(const api::Container&, pid_t pid) {
  kill(-pid, SIGKILL);
}

absl::StatusOr<pid_t> ProcessLauncher::StartProbe(
    const api::Container& spec, pid_t container_pid,
    const std::vector<std::string>& command) const {
  if (command.empty()) return absl::InvalidArgumentError("no command");
  absl::StatusOr<std::string> path =
      LookPath("/", command[0], ContainerEnvValue(spec, "PATH"));
  if (!path.ok()) return path.status();
  const ProcessCredentials credentials =
      CredentialsFor(Security(spec), geteuid(), last_cap_, available_caps_);
  ChildSetup setup;
  setup.credentials = &credentials;
  absl::StatusOr<ContainerNamespaces> ns =
      ContainerNamespaces::Open(container_pid);
  if (!ns.ok()) return ns.status();
  setup.join_namespaces = ns->join();
  auto procs = cgroup_procs_.find(spec.name());
  ExecFailure failure;
  pid_t pid = -1;
  {
    // The PID namespace is the one a process cannot enter itself: the shim
    // makes its next child there.
    const ContainerNamespaces::ChildrenIn in_pid_namespace(*ns);
    pid = ForkExec(*path, command, ContainerEnv(spec), WorkingDir(spec), -1,
                   procs == cgroup_procs_.end() ? std::vector<std::string>()
                                                : procs->second,
                   &failure, &setup);
  }
  if (pid < 0) {
    return absl::InternalError(absl::StrCat(
        "exec probe \"", *path, "\" in container ", spec.name(), ": ",
        ExecFailureMessage(failure), ": ", strerror(failure.err)));
  }
  return pid;
}

}  // namespace jobset::agent
