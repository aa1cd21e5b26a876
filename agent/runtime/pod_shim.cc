#include "agent/runtime/pod_shim.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/runtime/cgroups.h"
#include "agent/runtime/oci_bundle.h"
#include "agent/runtime/pod_files.h"
#include "api/quantity.h"
#include "proto/agent.pb.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {
namespace {

constexpr absl::Duration kBackoffStart = absl::Seconds(1);
constexpr absl::Duration kBackoffCap = absl::Seconds(30);
constexpr absl::Duration kDefaultGrace = absl::Seconds(30);
constexpr absl::Duration kLeftoverKillTimeout = absl::Seconds(10);

void Log(const std::string& line) {
  const std::string text =
      absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(),
                                    absl::UTCTimeZone()),
                   " ", line, "\n");
  (void)!write(2, text.data(), text.size());
}

void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out) {
  const int64_t nanos = absl::ToUnixNanos(t);
  out->set_seconds(nanos / 1000000000);
  out->set_nanos(static_cast<int32_t>(nanos % 1000000000));
}

// A size-capped log: when the next write would pass the cap, the file is
// renamed to <path>.1 (replacing an older one) and started again.
class LogFile {
 public:
  LogFile(std::string path, int64_t cap) : path_(std::move(path)), cap_(cap) {
    Open(false);
  }
  ~LogFile() {
    if (fd_ >= 0) close(fd_);
  }

  void Write(const char* data, size_t n) {
    if (fd_ < 0) return;
    if (cap_ > 0 && static_cast<int64_t>(n) > cap_) {
      data += n - static_cast<size_t>(cap_);
      n = static_cast<size_t>(cap_);
    }
    if (cap_ > 0 && size_ + static_cast<int64_t>(n) > cap_ && size_ > 0) {
      close(fd_);
      (void)rename(path_.c_str(), absl::StrCat(path_, ".1").c_str());
      Open(true);
      if (fd_ < 0) return;
    }
    while (n > 0) {
      const ssize_t w = write(fd_, data, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        return;
      }
      data += w;
      n -= static_cast<size_t>(w);
      size_ += w;
    }
  }

 private:
  void Open(bool truncate) {
    fd_ = open(
        path_.c_str(),
        O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0),
        0644);
    struct stat st;
    size_ = (fd_ >= 0 && fstat(fd_, &st) == 0) ? st.st_size : 0;
  }

  std::string path_;
  int64_t cap_;
  int fd_ = -1;
  int64_t size_ = 0;
};

struct Container {
  api::Container spec;
  bool init = false;
  api::ContainerStatus status;
  bool ever_started = false;
  bool done = false;  // terminated for good
  pid_t pid = 0;      // the process (process mode) or runc run (oci mode)
  int out_fd = -1;
  std::unique_ptr<LogFile> log;
  int64_t memory_limit = 0;
  int64_t oom_before = 0;
  bool signalled_by_us = false;
  absl::Time next_start = absl::InfinitePast();
  absl::Duration backoff = kBackoffStart;
  // Readiness.
  bool ready = false;
  int successes = 0;
  int failures = 0;
  absl::Time next_probe = absl::InfiniteFuture();
  pid_t probe_pid = 0;
  absl::Time probe_deadline = absl::InfiniteFuture();
  // oci.
  std::string runc_id;
  std::string bundle;
};

// What a start attempt learned: OK, or the StartError message.
struct StartResult {
  bool ok = true;
  std::string message;
};

class PodShim {
 public:
  explicit PodShim(PodShimOptions options) : options_(std::move(options)) {}

  int Run();

 private:
  std::string PodPath(absl::string_view name) const {
    return absl::StrCat(options_.pod_dir, "/", name);
  }
  absl::Status Setup();
  absl::Status SetUpNamespaces();
  absl::Status SetUpCgroups();
  void Fail(absl::string_view reason, absl::string_view message);
  void Advance(absl::Time now);
  // Stops the pod if the agent's lease ran out.
  void CheckLease(absl::Time now);
  StartResult StartContainer(Container& c, absl::Time now);
  StartResult StartProcess(Container& c);
  StartResult StartRunc(Container& c);
  void OnExit(Container& c, int wait_status, absl::Time now);
  void OnContainerFailed(Container& c, absl::Time now);
  void BeginStop(absl::Duration grace, absl::Time now);
  void KillEverything();
  void HandleSignals(int sfd, absl::Time now);
  void Reap(absl::Time now);
  void DrainLog(Container& c);
  void Probe(Container& c, absl::Time now);
  void RecordProbe(Container& c, bool ok);
  bool ProbeSocket(Container& c, const std::string& host, int port,
                   const std::string* http_path);
  int ResolvePort(const Container& c, const std::string& port) const;
  void WriteStatus(bool force);
  api::PodStatus BuildStatus() const;
  void FinalCleanup();
  std::vector<pid_t> Descendants() const;
  int RunHelper(const std::vector<std::string>& args);
  bool AnyContainerProcess() const;

  PodShimOptions options_;
  api::PodAssignment assignment_;
  std::string uid_;
  std::string hostname_;
  absl::Duration grace_ = kDefaultGrace;
  std::string restart_policy_ = "Never";
  std::vector<std::unique_ptr<Container>> inits_;
  std::vector<std::unique_ptr<Container>> mains_;
  size_t next_init_ = 0;
  bool main_started_ = false;
  bool is_root_ = false;
  std::unique_ptr<PodCgroups> cgroups_;
  std::vector<std::string> pod_cgroup_dirs_;

  // Lifecycle.
  std::string phase_ = "Pending";
  std::string reason_;
  std::string message_;
  bool finished_ = false;  // phase_ is final; waiting for processes to go
  bool stopping_ = false;
  absl::Time next_lease_check_ = absl::InfinitePast();
  bool kill_sent_ = false;
  absl::Time kill_deadline_ = absl::InfiniteFuture();
  absl::Time start_time_;
  bool ready_ = false;
  absl::Time ready_since_;
  std::string last_written_;
};

// ---------------------------------------------------------------------------
// Setup.

absl::Status PodShim::Setup() {
  absl::Status read = ReadProtoFile(PodPath(kAssignmentFile), &assignment_);
  if (!read.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read the assignment: ", read.message()));
  }
  const api::Pod& pod = assignment_.pod();
  uid_ = pod.metadata().uid();
  if (uid_.empty()) {
    uid_ = std::string(absl::string_view(options_.pod_dir)
                           .substr(options_.pod_dir.rfind('/') + 1));
  }
  hostname_ = pod.spec().hostname().empty() ? pod.metadata().name()
                                            : pod.spec().hostname();
  if (hostname_.empty()) hostname_ = uid_;
  if (pod.spec().has_termination_grace_period_seconds()) {
    grace_ = absl::Seconds(
        std::max<int64_t>(0, pod.spec().termination_grace_period_seconds()));
  }
  if (!pod.spec().restart_policy().empty()) {
    restart_policy_ = pod.spec().restart_policy();
  }
  if (restart_policy_ != "Never" && restart_policy_ != "OnFailure" &&
      restart_policy_ != "Always") {
    return absl::InvalidArgumentError(absl::StrCat(
        "spec.restartPolicy: unsupported value \"", restart_policy_, "\""));
  }
  if (pod.spec().containers().empty()) {
    return absl::InvalidArgumentError("spec.containers: pod has no containers");
  }
  std::map<std::string, bool> names;
  auto add = [&](const api::Container& spec, bool init, int index,
                 std::vector<std::unique_ptr<Container>>* out) -> absl::Status {
    const std::string field = absl::StrCat(
        init ? "spec.initContainers[" : "spec.containers[", index, "]");
    if (!ValidPodUid(spec.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".name: invalid name \"", spec.name(), "\""));
    }
    if (names[spec.name()]) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".name: duplicate name \"", spec.name(), "\""));
    }
    names[spec.name()] = true;
    auto c = std::make_unique<Container>();
    c->spec = spec;
    c->init = init;
    c->status.set_name(spec.name());
    c->status.set_state("waiting");
    c->status.set_reason(init ? "PodInitializing" : "ContainerCreating");
    auto it = spec.resources().limits().find("memory");
    if (it != spec.resources().limits().end()) {
      absl::StatusOr<api::Quantity> q = api::ParseQuantity(it->second);
      if (!q.ok() || q->Value() <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".resources.limits.memory: bad quantity \"",
                         it->second, "\""));
      }
      c->memory_limit = q->Value();
    }
    c->runc_id = absl::StrCat(uid_, "-", spec.name());
    c->bundle = PodPath(absl::StrCat("oci/", spec.name()));
    c->log = std::make_unique<LogFile>(
        absl::StrCat(options_.logs_dir, "/", spec.name(), ".log"),
        options_.log_cap_bytes);
    out->push_back(std::move(c));
    return absl::OkStatus();
  };
  if (mkdir(options_.logs_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InternalError(
        absl::StrCat("mkdir ", options_.logs_dir, ": ", strerror(errno)));
  }
  for (int i = 0; i < pod.spec().init_containers_size(); ++i) {
    absl::Status s = add(pod.spec().init_containers(i), true, i, &inits_);
    if (!s.ok()) return s;
  }
  for (int i = 0; i < pod.spec().containers_size(); ++i) {
    absl::Status s = add(pod.spec().containers(i), false, i, &mains_);
    if (!s.ok()) return s;
  }
  // The pod's /etc/hosts (the agent rewrites it in place as the attempt's
  // host table grows), from the host table as it is now: the agent may have
  // grown it since the assignment was read above.
  absl::Status s = WriteHostsFile(options_.pod_dir, &assignment_);
  if (!s.ok()) return s;
  const std::string work = PodPath("work");
  if (mkdir(work.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InternalError(
        absl::StrCat("mkdir ", work, ": ", strerror(errno)));
  }
  is_root_ = geteuid() == 0;
  if (options_.oci && !is_root_) {
    return absl::FailedPreconditionError("oci mode needs root to run runc");
  }
  if (is_root_ && !options_.oci) {
    absl::Status ns = SetUpNamespaces();
    if (!ns.ok()) return ns;
  }
  if (is_root_) {
    absl::Status cg = SetUpCgroups();
    if (!cg.ok()) return cg;
  }
  return absl::OkStatus();
}

absl::Status PodShim::SetUpNamespaces() {
  if (unshare(CLONE_NEWNS | CLONE_NEWUTS) != 0) {
    // Root without CAP_SYS_ADMIN (an unprivileged container): run on.
    Log(absl::StrCat("unshare: ", strerror(errno),
                     "; running without namespaces"));
    return absl::OkStatus();
  }
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return absl::InternalError(
        absl::StrCat("making mounts private: ", strerror(errno)));
  }
  if (sethostname(hostname_.data(), hostname_.size()) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot set hostname \"", hostname_, "\": ", strerror(errno)));
  }
  const std::string hosts = PodPath(kHostsFile);
  struct stat st;
  if (stat("/etc/hosts", &st) == 0 && S_ISREG(st.st_mode)) {
    if (mount(hosts.c_str(), "/etc/hosts", nullptr, MS_BIND, nullptr) != 0) {
      return absl::InternalError(
          absl::StrCat("bind-mounting ", hosts, ": ", strerror(errno)));
    }
  } else {
    Log("/etc/hosts is not a regular file; the pod sees the host's");
  }
  return absl::OkStatus();
}

absl::Status PodShim::SetUpCgroups() {
  absl::StatusOr<CgroupLayout> layout = DetectCgroupLayout();
  if (!layout.ok()) {
    Log(absl::StrCat("no cgroups: ", layout.status().message()));
    return absl::OkStatus();
  }
  cgroups_ = std::make_unique<PodCgroups>(*layout, options_.cgroup_root, uid_);
  pod_cgroup_dirs_ = cgroups_->PodDirs();
  // Recorded before they exist, so that Remove finds them even if the shim
  // dies half way.
  absl::Status s = WriteFileAtomic(
      PodPath(kCgroupsFile),
      absl::StrCat(absl::StrJoin(cgroups_->AllPodDirs(), "\n"), "\n"));
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<std::string>> created =
      cgroups_->CreatePod(options_.pids_max);
  if (!created.ok()) {
    Log(absl::StrCat("cgroups: ", created.status().message(),
                     "; running without limits"));
    cgroups_.reset();
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Starting containers.

StartResult PodShim::StartContainer(Container& c, absl::Time now) {
  c.signalled_by_us = false;
  if (c.out_fd >= 0) {
    // Output of an earlier attempt's leftovers is not this attempt's.
    DrainLog(c);
    if (c.out_fd >= 0) close(c.out_fd);
    c.out_fd = -1;
  }
  if (cgroups_ != nullptr) c.oom_before = cgroups_->OomKills(c.spec.name());
  StartResult result = options_.oci ? StartRunc(c) : StartProcess(c);
  if (!result.ok) return result;
  c.ever_started = true;
  c.status.set_state("running");
  c.status.clear_reason();
  c.status.clear_message();
  c.status.clear_finished_at();
  SetTimestamp(now, c.status.mutable_started_at());
  c.ready = false;
  c.successes = 0;
  c.failures = 0;
  if (c.spec.has_readiness_probe()) {
    c.next_probe =
        now + absl::Seconds(c.spec.readiness_probe().initial_delay_seconds());
  }
  return result;
}

std::string EnvValue(const api::Container& spec, absl::string_view name) {
  std::string value;
  for (const api::EnvVar& e : spec.env()) {
    if (e.name() == name) value = e.value();
  }
  return value;
}

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

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Forks a child with stdin /dev/null and stdout+stderr into `out_fd`, in its
// own process group, with the signal mask cleared; `in_child` runs in the
// child before exec and returns a (stage, errno) on failure, which the
// parent receives through a close-on-exec pipe.
struct ExecFailure {
  int stage = 0;  // 0: none, 1: chdir, 2: exec, 3: cgroup
  int err = 0;
};

pid_t ForkExec(const char* path, char* const* argv, char* const* envp,
               const char* cwd, int out_fd,
               const std::vector<std::string>& cgroup_procs,
               ExecFailure* failure) {
  int status_pipe[2];
  if (pipe2(status_pipe, O_CLOEXEC) != 0) {
    *failure = {2, errno};
    return -1;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    *failure = {2, errno};
    close(status_pipe[0]);
    close(status_pipe[1]);
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    ExecFailure f;
    for (const std::string& procs : cgroup_procs) {
      if (JoinCgroupRaw(procs.c_str(), getpid()) != 0) {
        f = {3, errno};
        (void)!write(status_pipe[1], &f, sizeof(f));
        _exit(127);
      }
    }
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    if (out_fd >= 0) {
      dup2(out_fd, 1);
      dup2(out_fd, 2);
    } else {
      const int null_out = open("/dev/null", O_WRONLY);
      dup2(null_out, 1);
      dup2(null_out, 2);
    }
    for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (cwd != nullptr && chdir(cwd) != 0) {
      f = {1, errno};
      (void)!write(status_pipe[1], &f, sizeof(f));
      _exit(127);
    }
    execve(path, argv, envp);
    f = {2, errno};
    (void)!write(status_pipe[1], &f, sizeof(f));
    _exit(127);
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

StartResult PodShim::StartProcess(Container& c) {
  std::vector<std::string> argv = ContainerArgv(c.spec);
  if (argv.empty()) {
    return {false,
            "no command: process mode runs no image entrypoint; set "
            "command"};
  }
  absl::StatusOr<std::string> path =
      LookPath("/", argv[0], EnvValue(c.spec, "PATH"));
  if (!path.ok()) return {false, std::string(path.status().message())};
  std::vector<std::string> env = ContainerEnv(c.spec);
  const std::string cwd =
      c.spec.working_dir().empty() ? PodPath("work") : c.spec.working_dir();
  std::vector<std::string> procs;
  if (cgroups_ != nullptr) {
    absl::StatusOr<std::vector<std::string>> dirs =
        cgroups_->CreateContainer(c.spec.name(), c.memory_limit);
    if (!dirs.ok()) {
      // Only a limit nobody can enforce gets here: say so and run on.
      Log(absl::StrCat("container ", c.spec.name(), ": ",
                       dirs.status().message()));
    } else {
      for (const std::string& d : *dirs) {
        procs.push_back(absl::StrCat(d, "/cgroup.procs"));
      }
    }
  }
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    return {false, absl::StrCat("pipe: ", strerror(errno))};
  }
  std::vector<char*> cargv = CStrings(argv);
  std::vector<char*> cenv = CStrings(env);
  ExecFailure failure;
  const pid_t pid = ForkExec(path->c_str(), cargv.data(), cenv.data(),
                             cwd.c_str(), out[1], procs, &failure);
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    switch (failure.stage) {
      case 1:
        return {false, absl::StrCat("cannot change to working directory \"",
                                    cwd, "\": ", strerror(failure.err))};
      case 3:
        return {false, absl::StrCat("cannot join the container's cgroup: ",
                                    strerror(failure.err))};
      default:
        return {false, absl::StrCat("cannot execute \"", *path,
                                    "\": ", strerror(failure.err))};
    }
  }
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  c.pid = pid;
  c.out_fd = out[0];
  return {};
}

StartResult PodShim::StartRunc(Container& c) {
  absl::StatusOr<std::string> rootfs =
      ImageRootfs(options_.image_dir, c.spec.image());
  if (!rootfs.ok()) return {false, std::string(rootfs.status().message())};
  std::vector<std::string> argv = ContainerArgv(c.spec);
  if (argv.empty()) {
    return {false, "no command: images carry no entrypoint here; set command"};
  }
  const std::string path_env = EnvValue(c.spec, "PATH");
  absl::StatusOr<std::string> exe = LookPath(*rootfs, argv[0], path_env);
  if (!exe.ok()) {
    return {false, absl::StrCat(exe.status().message(), " (image ",
                                c.spec.image(), ")")};
  }
  // runc searches the container's own PATH; without one it would not find a
  // bare name, so it gets the path found here.
  if (path_env.empty()) argv[0] = *exe;
  OciSpec spec;
  spec.args = argv;
  spec.env = ContainerEnv(c.spec);
  if (!c.spec.working_dir().empty()) {
    absl::StatusOr<std::string> wd =
        ResolveInRoot(*rootfs, c.spec.working_dir());
    struct stat st;
    if (!wd.ok() || stat(wd->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return {false,
              absl::StrCat("cannot change to working directory \"",
                           c.spec.working_dir(),
                           "\": not a directory in image ", c.spec.image())};
    }
    spec.cwd = c.spec.working_dir();
  }
  spec.rootfs = *rootfs;
  spec.hostname = hostname_;
  spec.hosts_file = PodPath(kHostsFile);
  if (cgroups_ != nullptr) {
    spec.cgroups_path = cgroups_->RuncCgroupsPath(c.spec.name());
  } else {
    spec.cgroups_path =
        absl::StrCat(options_.cgroup_root, "/", uid_, "/", c.spec.name());
  }
  spec.memory_limit = c.memory_limit;
  spec.pids_limit = options_.pids_max;
  // Raising a hard limit needs CAP_SYS_RESOURCE: stay within the shim's.
  struct rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
      nofile.rlim_max != RLIM_INFINITY) {
    spec.nofile =
        std::min<int64_t>(spec.nofile, static_cast<int64_t>(nofile.rlim_max));
  }
  for (const api::VolumeMount& vm : c.spec.volume_mounts()) {
    for (const api::Volume& v : assignment_.pod().spec().volumes()) {
      if (v.name() != vm.name()) continue;
      std::string source;
      if (v.has_host_path()) {
        source = v.host_path().path();
      } else {
        source = PodPath(absl::StrCat("volumes/", v.name()));
        mkdir(PodPath("volumes").c_str(), 0755);
        mkdir(source.c_str(), 0777);
      }
      if (!vm.sub_path().empty()) absl::StrAppend(&source, "/", vm.sub_path());
      spec.mounts.push_back({source, vm.mount_path(), vm.read_only()});
    }
  }
  mkdir(PodPath("oci").c_str(), 0755);
  mkdir(c.bundle.c_str(), 0755);
  absl::Status s = WriteFileAtomic(absl::StrCat(c.bundle, "/config.json"),
                                   OciConfigJson(spec));
  if (!s.ok()) return {false, std::string(s.message())};
  const std::string runc_log = absl::StrCat(c.bundle, "/runc.log");
  (void)unlink(runc_log.c_str());
  // A container of the same id left from an earlier attempt.
  RunHelper(
      {options_.runc, "--root", PodPath("runc"), "delete", "-f", c.runc_id});
  std::vector<std::string> runc_argv = {
      options_.runc, "--root",       PodPath("runc"), "--log",
      runc_log,      "--log-format", "json",          "run",
      "--bundle",    c.bundle,       c.runc_id};
  std::vector<std::string> runc_env = {absl::StrCat("PATH=", kDefaultPath)};
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    return {false, absl::StrCat("pipe: ", strerror(errno))};
  }
  std::vector<char*> cargv = CStrings(runc_argv);
  std::vector<char*> cenv = CStrings(runc_env);
  absl::StatusOr<std::string> runc_path =
      LookPath("/", options_.runc, kDefaultPath);
  if (!runc_path.ok()) {
    close(out[0]);
    close(out[1]);
    return {false, absl::StrCat("runc: ", runc_path.status().message())};
  }
  ExecFailure failure;
  const pid_t pid = ForkExec(runc_path->c_str(), cargv.data(), cenv.data(),
                             c.bundle.c_str(), out[1], {}, &failure);
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    return {false, absl::StrCat("cannot execute ", *runc_path, ": ",
                                strerror(failure.err))};
  }
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  c.pid = pid;
  c.out_fd = out[0];
  return {};
}

// Runs a helper command (runc kill, delete, exec) to completion with its
// output discarded; returns its wait status, or -1.
int PodShim::RunHelper(const std::vector<std::string>& args) {
  std::vector<std::string> argv = args;
  std::vector<std::string> env = {absl::StrCat("PATH=", kDefaultPath)};
  absl::StatusOr<std::string> path = LookPath("/", argv[0], kDefaultPath);
  if (!path.ok()) return -1;
  std::vector<char*> cargv = CStrings(argv);
  std::vector<char*> cenv = CStrings(env);
  ExecFailure failure;
  const pid_t pid =
      ForkExec(path->c_str(), cargv.data(), cenv.data(), "/", -1, {}, &failure);
  if (pid < 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// ---------------------------------------------------------------------------
// The state machine.

void PodShim::Fail(absl::string_view reason, absl::string_view message) {
  if (finished_) return;
  phase_ = "Failed";
  reason_ = std::string(reason);
  message_ = std::string(message);
  finished_ = true;
  Log(absl::StrCat("pod failed: ", reason, ": ", message));
}

void PodShim::Advance(absl::Time now) {
  if (stopping_ && !kill_sent_ && now >= kill_deadline_) KillEverything();
  if (finished_ || stopping_) return;
  if (next_init_ < inits_.size()) {
    Container& c = *inits_[next_init_];
    if (c.pid == 0 && now >= c.next_start) {
      StartResult r = StartContainer(c, now);
      if (!r.ok) {
        c.status.set_state("terminated");
        c.status.set_reason("StartError");
        c.status.set_message(r.message);
        c.status.set_exit_code(128);
        SetTimestamp(now, c.status.mutable_finished_at());
        c.done = true;
        Fail("StartError",
             absl::StrCat("init container ", c.spec.name(), ": ", r.message));
      }
    }
    return;
  }
  if (!main_started_) {
    main_started_ = true;
    for (auto& c : mains_) c->status.set_reason("ContainerCreating");
  }
  bool all_done = true;
  for (auto& cp : mains_) {
    Container& c = *cp;
    if (!c.done) all_done = false;
    if (c.done || c.pid != 0 || now < c.next_start) continue;
    StartResult r = StartContainer(c, now);
    if (!r.ok) {
      c.status.set_state("terminated");
      c.status.set_reason("StartError");
      c.status.set_message(r.message);
      c.status.set_exit_code(128);
      SetTimestamp(now, c.status.mutable_finished_at());
      c.done = true;
      reason_ = "StartError";
      message_ = absl::StrCat("container ", c.spec.name(), ": ", r.message);
      OnContainerFailed(c, now);
      return;
    }
  }
  if (all_done) {
    bool ok = true;
    for (auto& c : mains_) ok = ok && c->status.exit_code() == 0;
    phase_ = ok ? "Succeeded" : "Failed";
    finished_ = true;
  } else if (phase_ == "Pending") {
    bool all_started = true;
    for (auto& c : mains_) all_started = all_started && c->ever_started;
    if (all_started) phase_ = "Running";
  }
}

void PodShim::OnExit(Container& c, int wait_status, absl::Time now) {
  c.pid = 0;
  int exit_code = 0;
  int sig = 0;
  if (WIFSIGNALED(wait_status)) {
    sig = WTERMSIG(wait_status);
    exit_code = 128 + sig;
  } else {
    exit_code = WEXITSTATUS(wait_status);
    // runc exits 128+n when the container's process died of signal n.
    if (options_.oci && exit_code > 128 && exit_code < 128 + 65) {
      sig = exit_code - 128;
    }
  }
  std::string reason = exit_code == 0 ? "Completed" : "Error";
  std::string message;
  if (options_.oci) {
    absl::StatusOr<std::string> runc_log =
        ReadFileToString(absl::StrCat(c.bundle, "/runc.log"));
    if (exit_code != 0 && runc_log.ok() &&
        absl::StrContains(*runc_log, "\"level\":\"error\"")) {
      // runc itself failed: the container never ran.
      reason = "StartError";
      std::string last;
      for (absl::string_view line :
           absl::StrSplit(*runc_log, '\n', absl::SkipEmpty())) {
        if (absl::StrContains(line, "\"level\":\"error\""))
          last = std::string(line);
      }
      message = absl::StrCat("runc: ", last);
    }
  }
  if (sig == SIGKILL && c.memory_limit > 0) {
    if (cgroups_ != nullptr && !options_.oci) {
      if (cgroups_->OomKills(c.spec.name()) > c.oom_before)
        reason = "OOMKilled";
    } else if (!c.signalled_by_us) {
      // runc removes the container's cgroup as it exits, taking the OOM
      // count with it: a SIGKILL nobody here sent, with a limit, is an OOM.
      reason = "OOMKilled";
    }
  }
  c.status.set_state("terminated");
  c.status.set_exit_code(exit_code);
  c.status.set_signal(sig);
  c.status.set_reason(reason);
  c.status.set_message(message);
  SetTimestamp(now, c.status.mutable_finished_at());
  c.ready = false;
  c.next_probe = absl::InfiniteFuture();
  if (options_.oci) {
    RunHelper(
        {options_.runc, "--root", PodPath("runc"), "delete", "-f", c.runc_id});
  }
  Log(absl::StrCat("container ", c.spec.name(), " exited: code ", exit_code,
                   " signal ", sig, " ", reason));
  if (stopping_ || finished_) {
    c.done = true;
    return;
  }
  const bool failed = exit_code != 0;
  const bool restart =
      (failed && restart_policy_ != "Never" && reason != "StartError") ||
      (restart_policy_ == "Always" && !c.init);
  if (restart) {
    c.status.set_restart_count(c.status.restart_count() + 1);
    c.next_start = now + c.backoff;
    c.status.set_state("waiting");
    c.status.set_message(
        absl::StrCat("back-off ", absl::FormatDuration(c.backoff),
                     " restarting container (last exit: ", reason,
                     ", exit code ", exit_code, ")"));
    c.status.set_reason("CrashLoopBackOff");
    c.backoff = std::min(c.backoff * 2, kBackoffCap);
    return;
  }
  c.done = true;
  if (c.init) {
    if (failed) {
      reason_ = "InitContainerFailed";
      message_ = absl::StrCat("init container ", c.spec.name(),
                              " exited with code ", exit_code);
      Fail(reason_, message_);
    } else {
      ++next_init_;
    }
    return;
  }
  if (failed) {
    message_ = absl::StrCat("container ", c.spec.name(), " exited with code ",
                            exit_code, " (", reason, ")");
    OnContainerFailed(c, now);
  }
}

// A container failed for good: the pod fails, its other containers are
// stopped with the pod's grace period first.
void PodShim::OnContainerFailed(Container& c, absl::Time now) {
  (void)c;
  phase_ = "Failed";
  if (AnyContainerProcess()) {
    BeginStop(grace_, now);
    return;
  }
  finished_ = true;
}

bool PodShim::AnyContainerProcess() const {
  for (auto& c : inits_) {
    if (c->pid != 0) return true;
  }
  for (auto& c : mains_) {
    if (c->pid != 0) return true;
  }
  return false;
}

void PodShim::BeginStop(absl::Duration grace, absl::Time now) {
  if (stopping_) {
    if (now + grace < kill_deadline_) kill_deadline_ = now + grace;
    return;
  }
  stopping_ = true;
  kill_deadline_ = now + grace;
  Log(absl::StrCat("stopping, grace ", absl::FormatDuration(grace)));
  for (auto* list : {&inits_, &mains_}) {
    for (auto& cp : *list) {
      Container& c = *cp;
      if (c.pid == 0) {
        c.done = true;
        continue;
      }
      c.signalled_by_us = true;
      if (options_.oci) {
        RunHelper({options_.runc, "--root", PodPath("runc"), "kill", c.runc_id,
                   "TERM"});
      } else {
        kill(-c.pid, SIGTERM);
      }
      if (c.probe_pid > 0) kill(c.probe_pid, SIGKILL);
    }
  }
  if (!pod_cgroup_dirs_.empty()) SignalCgroups(pod_cgroup_dirs_, SIGTERM);
  for (pid_t pid : Descendants()) kill(pid, SIGTERM);
  if (grace <= absl::ZeroDuration()) KillEverything();
}

void PodShim::CheckLease(absl::Time now) {
  if (options_.lease_file.empty() || now < next_lease_check_) return;
  next_lease_check_ = now + absl::Milliseconds(100);
  if (finished_ || stopping_) return;
  struct stat st;
  if (stat(options_.lease_file.c_str(), &st) != 0) return;  // No lease.
  absl::StatusOr<std::string> text = ReadFileToString(options_.lease_file);
  int64_t ms = 0;
  if (!text.ok() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &ms) ||
      ms <= 0) {
    return;
  }
  const absl::Time renewed = absl::TimeFromTimespec(st.st_mtim);
  if (now - renewed <= absl::Milliseconds(ms)) return;
  reason_ = "LeaseExpired";
  message_ = absl::StrCat("the agent has not renewed its lease for ",
                          absl::FormatDuration(now - renewed), " (lease ",
                          absl::FormatDuration(absl::Milliseconds(ms)), ")");
  Log(message_);
  BeginStop(std::min(grace_, absl::Seconds(1)), now);
}

void PodShim::KillEverything() {
  kill_sent_ = true;
  for (auto* list : {&inits_, &mains_}) {
    for (auto& cp : *list) {
      Container& c = *cp;
      if (c.pid == 0) continue;
      c.signalled_by_us = true;
      if (options_.oci) {
        RunHelper({options_.runc, "--root", PodPath("runc"), "kill", "--all",
                   c.runc_id, "KILL"});
      } else {
        kill(-c.pid, SIGKILL);
      }
    }
  }
  if (!pod_cgroup_dirs_.empty()) KillCgroups(pod_cgroup_dirs_, 1);
  for (pid_t pid : Descendants()) kill(pid, SIGKILL);
}

// Every process below the shim (the shim is a child subreaper, so orphans of
// the pod's processes are reparented to it rather than to init).
std::vector<pid_t> PodShim::Descendants() const {
  std::map<pid_t, std::vector<pid_t>> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return {};
  while (struct dirent* entry = readdir(proc)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    absl::StatusOr<std::string> stat =
        ReadFileToString(absl::StrCat("/proc/", pid, "/stat"));
    if (!stat.ok()) continue;
    const size_t paren = stat->rfind(')');
    if (paren == std::string::npos) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(
        absl::string_view(*stat).substr(paren + 1), ' ', absl::SkipEmpty());
    int ppid = 0;
    if (fields.size() < 2 || fields[0] == "Z" ||
        !absl::SimpleAtoi(fields[1], &ppid)) {
      continue;
    }
    children[ppid].push_back(pid);
  }
  closedir(proc);
  std::vector<pid_t> out;
  std::vector<pid_t> todo = {getpid()};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (pid_t child : children[p]) {
      out.push_back(child);
      todo.push_back(child);
    }
  }
  return out;
}

void PodShim::HandleSignals(int sfd, absl::Time now) {
  struct signalfd_siginfo info;
  while (read(sfd, &info, sizeof(info)) == sizeof(info)) {
    if (info.ssi_signo != SIGTERM && info.ssi_signo != SIGINT) continue;
    absl::Duration grace = grace_;
    absl::StatusOr<std::string> text = ReadFileToString(PodPath(kStopFile));
    int64_t ms = 0;
    if (text.ok() && absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &ms) &&
        ms >= 0) {
      grace = absl::Milliseconds(ms);
    }
    if (!finished_) {
      if (reason_.empty()) {
        reason_ = "Stopped";
        message_ = absl::StrCat("stopped by the agent (grace ",
                                absl::FormatDuration(grace), ")");
      }
      BeginStop(grace, now);
    }
  }
}

void PodShim::Reap(absl::Time now) {
  while (true) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (auto* list : {&inits_, &mains_}) {
      for (auto& cp : *list) {
        Container& c = *cp;
        if (c.pid == pid) {
          DrainLog(c);
          OnExit(c, status, now);
        } else if (c.probe_pid == pid) {
          c.probe_pid = 0;
          const bool timed_out = now >= c.probe_deadline;
          RecordProbe(
              c, !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
      }
    }
  }
}

void PodShim::DrainLog(Container& c) {
  if (c.out_fd < 0) return;
  char buf[65536];
  while (true) {
    const ssize_t n = read(c.out_fd, buf, sizeof(buf));
    if (n > 0) {
      c.log->Write(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
      close(c.out_fd);
      c.out_fd = -1;
    }
    return;
  }
}

// ---------------------------------------------------------------------------
// Readiness probes.

int PodShim::ResolvePort(const Container& c, const std::string& port) const {
  int number = 0;
  if (absl::SimpleAtoi(port, &number)) return number;
  for (const api::ContainerPort& p : c.spec.ports()) {
    if (p.name() == port) return p.container_port();
  }
  return -1;
}

void PodShim::RecordProbe(Container& c, bool ok) {
  const api::Probe& p = c.spec.readiness_probe();
  const int success_threshold = std::max(1, p.success_threshold());
  const int failure_threshold =
      p.failure_threshold() > 0 ? p.failure_threshold() : 3;
  if (ok) {
    ++c.successes;
    c.failures = 0;
    if (c.successes >= success_threshold) c.ready = true;
  } else {
    ++c.failures;
    c.successes = 0;
    if (c.failures >= failure_threshold) c.ready = false;
  }
}

bool PodShim::ProbeSocket(Container& c, const std::string& host, int port,
                          const std::string* http_path) {
  const api::Probe& p = c.spec.readiness_probe();
  const absl::Time deadline =
      absl::Now() +
      absl::Seconds(p.timeout_seconds() > 0 ? p.timeout_seconds() : 1);
  if (port <= 0 || port > 65535) return false;
  struct addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  struct addrinfo* addrs = nullptr;
  const std::string h = host.empty() ? "127.0.0.1" : host;
  if (getaddrinfo(h.c_str(), absl::StrCat(port).c_str(), &hints, &addrs) != 0) {
    return false;
  }
  const int fd =
      socket(addrs->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  bool ok = false;
  auto wait_for = [&](short events) {
    const int ms =
        static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (ms <= 0) return false;
    struct pollfd pfd = {fd, events, 0};
    return poll(&pfd, 1, ms) == 1;
  };
  if (fd >= 0) {
    int rc = connect(fd, addrs->ai_addr, addrs->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS && wait_for(POLLOUT)) {
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
    }
    if (rc == 0 && http_path == nullptr) ok = true;
    if (rc == 0 && http_path != nullptr) {
      const std::string request =
          absl::StrCat("GET ", http_path->empty() ? "/" : *http_path,
                       " HTTP/1.0\r\nHost: ", h, ":", port,
                       "\r\nUser-Agent: jobset-pod-shim\r\n\r\n");
      (void)!send(fd, request.data(), request.size(), MSG_NOSIGNAL);
      std::string response;
      char buf[512];
      while (response.find("\r\n") == std::string::npos &&
             response.size() < 4096 && wait_for(POLLIN)) {
        const ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n <= 0) break;
        response.append(buf, static_cast<size_t>(n));
      }
      // "HTTP/1.1 200 OK"
      std::vector<absl::string_view> parts =
          absl::StrSplit(response.substr(0, response.find("\r\n")), ' ');
      int code = 0;
      ok = parts.size() >= 2 && absl::StartsWith(parts[0], "HTTP/") &&
           absl::SimpleAtoi(parts[1], &code) && code >= 200 && code < 400;
    }
    close(fd);
  }
  freeaddrinfo(addrs);
  return ok;
}

void PodShim::Probe(Container& c, absl::Time now) {
  if (c.status.state() != "running" || !c.spec.has_readiness_probe()) return;
  const api::Probe& p = c.spec.readiness_probe();
  if (c.probe_pid > 0) {
    if (now >= c.probe_deadline) kill(c.probe_pid, SIGKILL);
    return;
  }
  if (now < c.next_probe) return;
  c.next_probe =
      now + absl::Seconds(p.period_seconds() > 0 ? p.period_seconds() : 10);
  if (p.has_exec()) {
    std::vector<std::string> argv(p.exec().command().begin(),
                                  p.exec().command().end());
    if (argv.empty()) {
      RecordProbe(c, false);
      return;
    }
    std::string path;
    std::vector<std::string> env;
    std::string cwd = "/";
    if (options_.oci) {
      std::vector<std::string> runc = {options_.runc, "--root", PodPath("runc"),
                                       "exec", c.runc_id};
      argv.insert(argv.begin(), runc.begin(), runc.end());
      absl::StatusOr<std::string> found =
          LookPath("/", options_.runc, kDefaultPath);
      if (!found.ok()) {
        RecordProbe(c, false);
        return;
      }
      path = *found;
      env = {absl::StrCat("PATH=", kDefaultPath)};
    } else {
      absl::StatusOr<std::string> found =
          LookPath("/", argv[0], EnvValue(c.spec, "PATH"));
      if (!found.ok()) {
        RecordProbe(c, false);
        return;
      }
      path = *found;
      env = ContainerEnv(c.spec);
      cwd =
          c.spec.working_dir().empty() ? PodPath("work") : c.spec.working_dir();
    }
    std::vector<char*> cargv = CStrings(argv);
    std::vector<char*> cenv = CStrings(env);
    ExecFailure failure;
    const pid_t pid = ForkExec(path.c_str(), cargv.data(), cenv.data(),
                               cwd.c_str(), -1, {}, &failure);
    if (pid < 0) {
      RecordProbe(c, false);
      return;
    }
    c.probe_pid = pid;
    c.probe_deadline =
        now + absl::Seconds(p.timeout_seconds() > 0 ? p.timeout_seconds() : 1);
    return;
  }
  if (p.has_tcp_socket()) {
    RecordProbe(c, ProbeSocket(c, p.tcp_socket().host(),
                               ResolvePort(c, p.tcp_socket().port()), nullptr));
    return;
  }
  if (p.has_http_get()) {
    RecordProbe(c, ProbeSocket(c, p.http_get().host(),
                               ResolvePort(c, p.http_get().port()),
                               &p.http_get().path()));
    return;
  }
  RecordProbe(c, true);  // A probe with no handler: nothing to check.
}

// ---------------------------------------------------------------------------
// Status.

api::PodStatus PodShim::BuildStatus() const {
  api::PodStatus status;
  status.set_phase(phase_);
  status.set_reason(reason_);
  status.set_message(message_);
  status.set_host_ip(assignment_.pod().status().host_ip());
  status.set_pod_ip(assignment_.pod().status().pod_ip().empty()
                        ? assignment_.pod().status().host_ip()
                        : assignment_.pod().status().pod_ip());
  SetTimestamp(start_time_, status.mutable_start_time());
  for (auto& c : inits_) {
    api::ContainerStatus* s = status.add_init_container_statuses();
    *s = c->status;
    s->set_ready(c->status.state() == "terminated" &&
                 c->status.exit_code() == 0);
  }
  for (auto& c : mains_) {
    api::ContainerStatus* s = status.add_container_statuses();
    *s = c->status;
    s->set_ready(c->status.state() == "running" &&
                 (!c->spec.has_readiness_probe() || c->ready));
  }
  bool ready = !finished_ && !stopping_ && !mains_.empty() &&
               next_init_ >= inits_.size();
  for (const api::ContainerStatus& s : status.container_statuses()) {
    ready = ready && s.ready();
  }
  api::Condition* cond = status.add_conditions();
  cond->set_type("Ready");
  cond->set_status(ready ? "True" : "False");
  if (!ready) {
    cond->set_reason(finished_ ? "PodCompleted" : "ContainersNotReady");
  }
  SetTimestamp(ready_since_, cond->mutable_last_transition_time());
  return status;
}

void PodShim::WriteStatus(bool force) {
  api::PodStatus status = BuildStatus();
  const bool ready = status.conditions(0).status() == "True";
  if (ready != ready_) {
    ready_ = ready;
    ready_since_ = absl::Now();
    status = BuildStatus();
  }
  std::string bytes;
  status.SerializeToString(&bytes);
  if (!force && bytes == last_written_) return;
  absl::Status s = WriteFileAtomic(PodPath(kStatusFile), bytes);
  if (!s.ok()) {
    Log(absl::StrCat("writing status: ", s.message()));
    return;
  }
  last_written_ = std::move(bytes);
}

void PodShim::FinalCleanup() {
  // Whatever the containers left behind (daemonized children) goes with the
  // pod, as it would with its pid namespace.
  const absl::Time deadline = absl::Now() + kLeftoverKillTimeout;
  while (absl::Now() < deadline) {
    std::vector<pid_t> left = Descendants();
    bool cgroups_empty =
        pod_cgroup_dirs_.empty() || KillCgroups(pod_cgroup_dirs_, 1);
    for (pid_t pid : left) kill(pid, SIGKILL);
    int status;
    while (waitpid(-1, &status, WNOHANG) > 0) {
    }
    if (left.empty() && cgroups_empty) break;
    absl::SleepFor(absl::Milliseconds(5));
  }
  if (options_.oci) {
    for (auto* list : {&inits_, &mains_}) {
      for (auto& c : *list) {
        if (c->ever_started) {
          RunHelper({options_.runc, "--root", PodPath("runc"), "delete", "-f",
                     c->runc_id});
        }
      }
    }
  }
  if (cgroups_ != nullptr && !RemoveCgroups(cgroups_->AllPodDirs())) {
    Log("some cgroups could not be removed");
  }
}

int PodShim::Run() {
  const absl::Status pid_written = [&]() -> absl::Status {
    absl::StatusOr<uint64_t> start = ProcStartTime(getpid());
    if (!start.ok()) return start.status();
    return WriteFileAtomic(PodPath(kShimPidFile),
                           FormatProcessId({getpid(), *start}));
  }();
  if (!pid_written.ok()) Log(std::string(pid_written.message()));
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  const int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  start_time_ = absl::Now();
  ready_since_ = start_time_;

  // A final status already there (this pod ran, or was declared lost):
  // never run it again.
  api::PodStatus previous;
  if (ReadProtoFile(PodPath(kStatusFile), &previous).ok() &&
      IsFinalPhase(previous.phase())) {
    Log("final status already recorded; not running the pod again");
    return 0;
  }
  absl::Status setup = Setup();
  if (!setup.ok()) {
    const bool spec_error = setup.code() == absl::StatusCode::kInvalidArgument;
    Fail(spec_error ? "InvalidSpec" : "SetupError", setup.message());
  }
  if (ReadFileToString(PodPath(kStopFile)).ok()) {
    // Stopped before it ran.
    kill(getpid(), SIGTERM);  // handled below through the signalfd
  }
  WriteStatus(true);
  while (true) {
    absl::Time now = absl::Now();
    HandleSignals(sfd, now);
    CheckLease(now);
    Reap(now);
    Advance(now);
    if (finished_ || stopping_) {
      // While stopping, orphans that outlive the containers get the rest of
      // the grace period too.
      const bool waiting_for_orphans =
          stopping_ && !kill_sent_ && !AnyContainerProcess() &&
          (!Descendants().empty() ||
           (cgroups_ != nullptr && !cgroups_->Pids().empty()));
      if (!AnyContainerProcess() && !waiting_for_orphans) {
        if (stopping_ && !finished_) {
          bool ok = true;
          for (auto& c : mains_) {
            ok = ok && c->status.state() == "terminated" &&
                 c->status.exit_code() == 0;
          }
          for (auto& c : inits_) ok = ok && c->done;
          phase_ = ok && next_init_ >= inits_.size() ? "Succeeded" : "Failed";
          if (phase_ == "Succeeded") {
            reason_.clear();
            message_.clear();
          }
          finished_ = true;
        }
        break;
      }
    }
    for (auto& c : mains_) Probe(*c, now);
    WriteStatus(false);
    // Sleep until something happens or the next deadline.
    absl::Time wake = now + absl::Seconds(1);
    if (!options_.lease_file.empty()) wake = std::min(wake, next_lease_check_);
    if (stopping_ && !kill_sent_) wake = std::min(wake, kill_deadline_);
    for (auto* list : {&inits_, &mains_}) {
      for (auto& c : *list) {
        if (!c->done && c->pid == 0) wake = std::min(wake, c->next_start);
        if (c->probe_pid > 0) wake = std::min(wake, c->probe_deadline);
        if (c->next_probe != absl::InfiniteFuture()) {
          wake = std::min(wake, c->next_probe);
        }
      }
    }
    std::vector<struct pollfd> fds;
    std::vector<Container*> owners;
    fds.push_back({sfd, POLLIN, 0});
    owners.push_back(nullptr);
    for (auto* list : {&inits_, &mains_}) {
      for (auto& c : *list) {
        if (c->out_fd >= 0) {
          fds.push_back({c->out_fd, POLLIN, 0});
          owners.push_back(c.get());
        }
      }
    }
    const int64_t ms =
        std::max<int64_t>(0, absl::ToInt64Milliseconds(wake - absl::Now()) + 1);
    if (poll(fds.data(), fds.size(),
             static_cast<int>(std::min<int64_t>(ms, 1000))) > 0) {
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0) DrainLog(*owners[i]);
      }
    }
  }
  for (auto* list : {&inits_, &mains_}) {
    for (auto& c : *list) DrainLog(*c);
  }
  FinalCleanup();
  WriteStatus(true);
  Log(absl::StrCat("pod ", uid_, " ", phase_, " ", reason_));
  return 0;
}

}  // namespace

int RunPodShim(const PodShimOptions& options) {
  PodShim shim(options);
  return shim.Run();
}

}  // namespace jobset::agent
