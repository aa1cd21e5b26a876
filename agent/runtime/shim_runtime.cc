#include "agent/runtime/shim_runtime.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "agent/runtime/cgroups.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/pod_input.h"
#include "agent/runtime/progress_dir.h"
#include "api/pod_phase.h"
#include "common/log.h"
#include "common/status_macros.h"

namespace jobset::agent {
namespace {

// Returns true when the shim of the pod in `pod_dir` is alive: it holds the
// flock on shim.lock for as long as it runs (even a kill -9 releases it).
bool ShimAlive(const std::string& pod_dir) {
  const std::string path = absl::StrCat(pod_dir, "/", kShimLockFile);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool alive = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);  // Releases the lock if this call took it.
  return alive;
}

absl::StatusOr<ProcessId> ReadShimPid(const std::string& pod_dir) {
  JOBSET_ASSIGN_OR_RETURN(std::string text, ReadFileToString(absl::StrCat(
                                                pod_dir, "/", kShimPidFile)));
  return ParseProcessId(text);
}

void SetTime(absl::Time now, google::protobuf::Timestamp* t) {
  const int64_t nanos = absl::ToUnixNanos(now);
  t->set_seconds(nanos / 1000000000);
  t->set_nanos(static_cast<int32_t>(nanos % 1000000000));
}

}  // namespace

ShimRuntime::ShimRuntime(Options options)
    : options_(std::move(options)),
      changes_fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
  if (changes_fd_ < 0) {
    JOBSET_LOG(WARNING) << "inotify unavailable (" << strerror(errno)
                        << "): pod status changes are found by polling";
  }
}

ShimRuntime::~ShimRuntime() {
  if (changes_fd_ >= 0) close(changes_fd_);
  absl::MutexLock lock(&mu_);
  ReapShims();  // Those still running are init's once this process ends.
}

void ShimRuntime::WatchPod(const std::string& uid) {
  if (changes_fd_ < 0) return;
  // A status (and every other file of the shim) is replaced by rename.
  if (inotify_add_watch(changes_fd_, PodDir(uid).c_str(),
                        IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR) < 0 &&
      errno == ENOSPC) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      JOBSET_LOG(WARNING) << "inotify watch limit reached "
                             "(fs.inotify.max_user_watches): some pods' "
                             "changes are found by polling";
    }
  }
}

bool ShimRuntime::WaitForChange(absl::Duration timeout) {
  if (changes_fd_ < 0) return false;
  struct pollfd fd = {changes_fd_, POLLIN, 0};
  const int ms = static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(timeout), 0, 60'000));
  if (poll(&fd, 1, ms) > 0) {
    // Drain: one wake-up for however many events came.
    alignas(struct inotify_event) char buffer[4096];
    while (read(changes_fd_, buffer, sizeof(buffer)) > 0) {
    }
  }
  return true;
}

absl::Status ShimRuntime::UpdateHosts(
    const std::string& uid,
    const google::protobuf::RepeatedPtrField<api::HostEntry>& hosts) {
  // The same uid check as every other call, before a path is built of it;
  // the table is checked before anything is written.
  if (!ValidPodUid(uid)) {
    return absl::NotFoundError(absl::StrCat("pod ", uid, " is not known"));
  }
  JOBSET_RETURN_IF_ERROR(CheckHostEntries("hosts", hosts));
  absl::MutexLock lock(&mu_);
  absl::Status updated = UpdateHostsFile(PodDir(uid), hosts);
  if (absl::IsNotFound(updated)) {
    return absl::NotFoundError(absl::StrCat("pod ", uid, " is not known"));
  }
  return updated;
}

std::string ShimRuntime::LeasePath() const {
  return absl::StrCat(options_.work_dir, "/lease");
}

absl::Status ShimRuntime::SetLease(absl::Duration lease) {
  if (lease <= absl::ZeroDuration()) {
    if (unlink(LeasePath().c_str()) != 0 && errno != ENOENT) {
      return absl::InternalError(
          absl::StrCat("removing ", LeasePath(), ": ", strerror(errno)));
    }
    return absl::OkStatus();
  }
  return WriteFileAtomic(LeasePath(),
                         absl::StrCat(absl::ToInt64Milliseconds(lease)), 0600,
                         Durability::kProcessCrash);
}

absl::Status ShimRuntime::RenewLease() {
  if (utimensat(AT_FDCWD, LeasePath().c_str(), nullptr, 0) != 0 &&
      errno != ENOENT) {
    return absl::InternalError(
        absl::StrCat("renewing ", LeasePath(), ": ", strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> ShimRuntime::PruneLogs(absl::Time now,
                                           const LogRetention& retention) {
  struct Logs {
    std::string uid;
    absl::Time written;
    int64_t bytes = 0;
    bool known = false;
  };
  absl::MutexLock lock(&mu_);
  const std::string logs_dir = absl::StrCat(options_.work_dir, "/logs");
  DIR* dir = opendir(logs_dir.c_str());
  if (dir == nullptr) return 0;
  std::vector<Logs> all;
  while (struct dirent* entry = readdir(dir)) {
    if (static_cast<int>(all.size()) >= retention.max_scanned) break;
    if (!ValidPodUid(entry->d_name)) continue;
    Logs logs;
    logs.uid = entry->d_name;
    const std::string path = LogsDir(logs.uid);
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    logs.written = absl::FromTimeT(st.st_mtime);
    if (DIR* files = opendir(path.c_str())) {
      while (struct dirent* f = readdir(files)) {
        if (lstat(absl::StrCat(path, "/", f->d_name).c_str(), &st) != 0 ||
            !S_ISREG(st.st_mode)) {
          continue;
        }
        logs.bytes += st.st_size;
        logs.written = std::max(logs.written, absl::FromTimeT(st.st_mtime));
      }
      closedir(files);
    }
    logs.known = stat(PodDir(logs.uid).c_str(), &st) == 0;
    all.push_back(std::move(logs));
  }
  closedir(dir);
  // Oldest first; a known pod's logs only count.
  std::sort(all.begin(), all.end(),
            [](const Logs& a, const Logs& b) { return a.written < b.written; });
  int64_t total = 0;
  for (const Logs& logs : all) total += logs.bytes;
  int removed = 0;
  for (const Logs& logs : all) {
    if (removed >= retention.max_removed) break;
    if (logs.known) continue;
    const bool expired = now - logs.written >= retention.retention;
    const bool over = retention.max_bytes > 0 && total > retention.max_bytes;
    if (!expired && !over) continue;
    if (absl::Status s = RemoveTree(LogsDir(logs.uid)); !s.ok()) {
      JOBSET_LOG(WARNING) << "removing the logs of pod " << logs.uid << ": "
                          << s.message();
      continue;
    }
    total -= logs.bytes;
    ++removed;
  }
  return removed;
}

absl::StatusOr<std::unique_ptr<ShimRuntime>> ShimRuntime::Create(
    const Options& options) {
  if (options.work_dir.empty()) {
    return absl::InvalidArgumentError("ShimRuntime: work_dir is empty");
  }
  if (options.shim_path.empty()) {
    return absl::InvalidArgumentError("ShimRuntime: shim_path is empty");
  }
  if (access(options.shim_path.c_str(), X_OK) != 0) {
    return absl::NotFoundError(
        absl::StrCat("jobset-pod-shim not executable: ", options.shim_path));
  }
  JOBSET_RETURN_IF_ERROR(MakeDirIfMissing(options.work_dir));
  JOBSET_RETURN_IF_ERROR(
      MakeDirIfMissing(absl::StrCat(options.work_dir, "/pods")));
  JOBSET_RETURN_IF_ERROR(
      MakeDirIfMissing(absl::StrCat(options.work_dir, "/logs")));
  return std::unique_ptr<ShimRuntime>(new ShimRuntime(options));
}

std::string ShimRuntime::PodDir(const std::string& uid) const {
  return absl::StrCat(options_.work_dir, "/pods/", uid);
}

std::string ShimRuntime::LogsDir(const std::string& uid) const {
  return absl::StrCat(options_.work_dir, "/logs/", uid);
}

std::string ShimRuntime::LogPath(const std::string& uid,
                                 const std::string& container) const {
  if (!ValidPodUid(uid) || !CheckDnsLabel("container", container).ok()) {
    return "";
  }
  // While the pod is here, only its own containers have logs; once it is
  // released, only what its log directory holds.
  api::PodAssignment assignment;
  if (ReadProtoFile(absl::StrCat(PodDir(uid), "/", kAssignmentFile),
                    &assignment)
          .ok()) {
    bool known = false;
    const api::PodSpec& spec = assignment.pod().spec();
    for (const auto* list : {&spec.init_containers(), &spec.containers()}) {
      for (const api::Container& c : *list) known |= c.name() == container;
    }
    if (!known) return "";
  }
  const std::string path = absl::StrCat(LogsDir(uid), "/", container, ".log");
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  return path;
}

std::string ShimRuntime::ProgressDir(const std::string& uid) const {
  if (!ValidPodUid(uid)) return "";
  return ProgressDirOf(PodDir(uid));
}

absl::Status ShimRuntime::Start(const api::PodAssignment& assignment) {
  const std::string& uid = assignment.pod().metadata().uid();
  // Before any path is built or file written from it.
  JOBSET_RETURN_IF_ERROR(CheckAssignment(assignment));
  absl::MutexLock lock(&mu_);
  const std::string dir = PodDir(uid);
  // Private: assignment.pb holds the resolved environment (tokens, keys).
  if (mkdir(dir.c_str(), 0700) != 0) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(absl::StrCat("pod ", uid, " exists"));
    }
    return absl::InternalError(
        absl::StrCat("mkdir ", dir, ": ", strerror(errno)));
  }
  WatchPod(uid);
  JOBSET_RETURN_IF_ERROR(FsyncDir(absl::StrCat(options_.work_dir, "/pods")));
  JOBSET_RETURN_IF_ERROR(MakeDirIfMissing(LogsDir(uid)));
  // The progress directory, made here (by the agent, not the pod's shim):
  // the agent reads it, and every container is told where it sees it.
  JOBSET_RETURN_IF_ERROR(MakeProgressDir(dir, assignment.pod().spec()));
  api::PodAssignment recorded = assignment;
  SetProgressEnv(ProgressFileInPod(dir, options_.mode == Mode::kOci),
                 recorded.mutable_pod()->mutable_spec());
  // The lock is taken before the intent is written and handed to the shim:
  // from now on "lock free and no final status" means the pod's supervisor is
  // gone, whether it ever started or not.
  const std::string lock_path = absl::StrCat(dir, "/", kShimLockFile);
  const int lock_fd =
      open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) {
    return absl::InternalError(
        absl::StrCat("open ", lock_path, ": ", strerror(errno)));
  }
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    close(lock_fd);
    return absl::InternalError(absl::StrCat("flock ", lock_path));
  }
  absl::Status s =
      WriteProtoAtomic(absl::StrCat(dir, "/", kAssignmentFile), recorded);
  if (s.ok()) s = SpawnShim(uid, lock_fd);
  close(lock_fd);
  return s;
}

absl::Status ShimRuntime::SpawnShim(const std::string& uid, int lock_fd) {
  const std::string dir = PodDir(uid);
  std::vector<std::string> args = {
      options_.shim_path,
      absl::StrCat("--pod_dir=", dir),
      absl::StrCat("--logs_dir=", LogsDir(uid)),
      absl::StrCat("--mode=", options_.mode == Mode::kOci ? "oci" : "process"),
      absl::StrCat("--image_dir=", options_.image_dir),
      absl::StrCat("--runc=", options_.runc_path),
      absl::StrCat("--device_root=", options_.accelerators.dev_root),
      absl::StrCat("--driver_root=", options_.accelerators.driver_root),
      absl::StrCat("--cdi_dirs=",
                   absl::StrJoin(options_.accelerators.cdi_dirs, ",")),
      absl::StrCat("--cgroup_root=", options_.cgroup_root),
      absl::StrCat("--log_cap_bytes=", options_.log_cap_bytes),
      absl::StrCat("--pids_max=", options_.pids_max),
      absl::StrCat("--default_pod_uid=", options_.default_pod_uid),
      absl::StrCat("--pod_host_mounts=",
                   absl::StrJoin(options_.pod_host_mounts, ",")),
      absl::StrCat("--lease_file=", LeasePath()),
  };
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  char* envp[] = {nullptr};
  const std::string log_path = absl::StrCat(dir, "/", kShimLogFile);
  // posix_spawn (a vfork-style clone): the agent's page tables are not
  // copied, as a fork of it (tens of MiB, many threads) would, twice, per
  // pod. The shim is the agent's child in a session of its own; the agent
  // reaps it (ReapShims), and when the agent goes it is init's.
  int shim_lock = lock_fd;
  if (lock_fd == 3) {
    // It must become the shim's fd 3 without close-on-exec: a dup2 onto
    // itself would not clear the flag everywhere.
    shim_lock = fcntl(lock_fd, F_DUPFD_CLOEXEC, 4);
    if (shim_lock < 0) {
      return absl::InternalError(absl::StrCat("dup: ", strerror(errno)));
    }
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDWR, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_adddup2(&actions, shim_lock, 3);
  posix_spawn_file_actions_addclosefrom_np(&actions, 4);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGCHLD);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigset_t defaults;
  sigfillset(&defaults);
  sigdelset(&defaults, SIGKILL);
  sigdelset(&defaults, SIGSTOP);
  posix_spawnattr_setsigmask(&attr, &block);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  pid_t shim = -1;
  const int err =
      posix_spawn(&shim, argv[0], &actions, &attr, argv.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (shim_lock != lock_fd) close(shim_lock);
  if (err != 0) {
    return absl::InternalError(absl::StrCat("cannot start jobset-pod-shim ",
                                            argv[0], ": ", strerror(err)));
  }
  shims_.push_back(shim);
  return absl::OkStatus();
}

void ShimRuntime::ReapShims() {
  shims_.erase(std::remove_if(shims_.begin(), shims_.end(),
                              [](pid_t pid) {
                                int status = 0;
                                const pid_t r = waitpid(pid, &status, WNOHANG);
                                return r == pid || (r < 0 && errno == ECHILD);
                              }),
               shims_.end());
}

absl::StatusOr<api::PodStatus> ShimRuntime::ReadStatus(const std::string& uid) {
  const std::string dir = PodDir(uid);
  const std::string status_path = absl::StrCat(dir, "/", kStatusFile);
  api::PodStatus status;
  absl::Status read = ReadProtoFile(status_path, &status);
  if (read.ok() && IsFinalPhase(status.phase())) return status;
  if (ShimAlive(dir)) {
    if (!read.ok()) status.set_phase(api::kPodPending);
    return status;
  }
  // The shim may have written its final status and exited in between.
  status.Clear();
  read = ReadProtoFile(status_path, &status);
  if (read.ok() && IsFinalPhase(status.phase())) return status;
  if (!read.ok() && read.code() != absl::StatusCode::kNotFound) {
    status.Clear();
  }
  // Never launched, or its supervisor died: the pod is not run again.
  status.set_phase(api::kPodFailed);
  status.set_reason("SupervisorLost");
  status.set_message(
      "the pod's jobset-pod-shim is gone and recorded no final status");
  for (auto* list : {status.mutable_init_container_statuses(),
                     status.mutable_container_statuses()}) {
    for (api::ContainerStatus& c : *list) {
      c.set_ready(false);
      if (c.flat_state() != "terminated") {
        c.set_flat_state("terminated");
        c.set_reason("Unknown");
        c.set_exit_code(137);
        SetTime(options_.clock->Now(), c.mutable_finished_at());
      }
    }
  }
  for (api::Condition& c : *status.mutable_conditions()) {
    if (c.type() == "Ready" || c.type() == "ContainersReady")
      c.set_status("False");
  }
  absl::Status w = WriteProtoAtomic(status_path, status);
  if (!w.ok()) {
    JOBSET_LOG(ERROR) << "ShimRuntime: recording SupervisorLost for " << uid
                      << ": " << w.message();
  }
  return status;
}

std::vector<PodState> ShimRuntime::List() {
  absl::MutexLock lock(&mu_);
  ReapShims();
  std::vector<PodState> pods;
  const std::string pods_dir = absl::StrCat(options_.work_dir, "/pods");
  DIR* dir = opendir(pods_dir.c_str());
  if (dir == nullptr) return pods;
  std::vector<std::string> uids;
  while (struct dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (!ValidPodUid(name)) continue;
    uids.push_back(name);
  }
  closedir(dir);
  std::sort(uids.begin(), uids.end());
  for (const std::string& uid : uids) {
    WatchPod(uid);  // Pods found again after an agent restart.
    absl::StatusOr<api::PodStatus> status = ReadStatus(uid);
    if (!status.ok()) continue;
    pods.push_back({uid, *std::move(status)});
  }
  return pods;
}

absl::Status ShimRuntime::Stop(const std::string& uid, absl::Duration grace) {
  if (!ValidPodUid(uid)) {
    return absl::NotFoundError(absl::StrCat("no pod ", uid));
  }
  absl::MutexLock lock(&mu_);
  const std::string dir = PodDir(uid);
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("no pod ", uid));
  }
  JOBSET_ASSIGN_OR_RETURN(api::PodStatus status, ReadStatus(uid));
  if (IsFinalPhase(status.phase())) return absl::OkStatus();
  // The stop file first: a shim not yet reading signals reads it at start.
  JOBSET_RETURN_IF_ERROR(WriteFileAtomic(
      absl::StrCat(dir, "/", kStopFile),
      absl::StrCat(
          absl::ToInt64Milliseconds(std::max(grace, absl::ZeroDuration())),
          "\n"),
      0600, Durability::kProcessCrash));
  absl::StatusOr<ProcessId> shim = ReadShimPid(dir);
  if (shim.ok() && ProcessAlive(*shim)) kill(shim->pid, SIGTERM);
  return absl::OkStatus();
}

absl::Status ShimRuntime::Remove(const std::string& uid) {
  if (!ValidPodUid(uid)) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  const std::string dir = PodDir(uid);
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return absl::OkStatus();
  if (ShimAlive(dir)) {
    (void)WriteFileAtomic(absl::StrCat(dir, "/", kStopFile), "0\n", 0600,
                          Durability::kProcessCrash);
    absl::StatusOr<ProcessId> shim = ReadShimPid(dir);
    if (shim.ok() && ProcessAlive(*shim)) kill(shim->pid, SIGTERM);
    // A real process: wait for it in real time, whatever the Clock says.
    const Stopwatch waited;
    while (ShimAlive(dir) && waited.Elapsed() < absl::Seconds(5)) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    if (ShimAlive(dir) && shim.ok() && ProcessAlive(*shim)) {
      kill(shim->pid, SIGKILL);
    }
  }
  // Whatever the shim could not clean up (it died, or was killed above).
  absl::StatusOr<std::string> cgroups =
      ReadFileToString(absl::StrCat(dir, "/", kCgroupsFile));
  if (cgroups.ok()) {
    std::vector<std::string> dirs =
        absl::StrSplit(*cgroups, '\n', absl::SkipEmpty());
    if (!KillCgroups(dirs, 200)) {
      return absl::UnavailableError(
          absl::StrCat("pod ", uid, ": processes survive SIGKILL in ",
                       dirs.empty() ? "" : dirs[0]));
    }
    RemoveCgroups(dirs);
  }
  JOBSET_RETURN_IF_ERROR(RemoveTree(dir));
  return FsyncDir(absl::StrCat(options_.work_dir, "/pods"));
}

}  // namespace jobset::agent
