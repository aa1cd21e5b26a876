#include "agent/progress_watcher.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

#include "agent/runtime/progress_dir.h"
#include "common/log.h"

namespace jobset::agent {
namespace {

// The events of a progress directory that may change what its file says:
// written and closed, renamed over, created (a link, a fifo), appended to by
// a writer that keeps it open; and the directory itself going.
constexpr uint32_t kWatchMask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE |
                                IN_MODIFY | IN_DELETE_SELF | IN_ONLYDIR |
                                IN_DONT_FOLLOW;
// One Read drains at most this many buffers of events (a pod writing in a
// loop must not hold the tick); the kernel queues the rest, or says it
// overflowed.
constexpr int kMaxEventReads = 64;
// A watched pod's file is read at least this often all the same: inotify
// does not tell of the directory itself replaced while the agent holds it
// open (IN_DELETE_SELF waits for the last descriptor to close). A restart in
// place, which makes the pod's directory afresh, is noticed at once (its
// attempt changes).
constexpr absl::Duration kRecheck = absl::Seconds(30);

}  // namespace

ProgressWatcher::ProgressWatcher(Options options)
    : options_(options), inotify_fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
  if (inotify_fd_.get() < 0) {
    JOBSET_LOG(WARNING) << "inotify unavailable (" << strerror(errno)
                        << "): pods' progress files are read every "
                        << absl::FormatDuration(options_.interval);
  }
}

ProgressWatcher::~ProgressWatcher() {
  absl::MutexLock lock(&mu_);
  for (auto& [uid, w] : pods_) CloseDir(w);
}

void ProgressWatcher::CloseDir(Watched& w) {
  if (w.wd >= 0) {
    // The kernel may have dropped it already (the directory went).
    inotify_rm_watch(inotify_fd_.get(), w.wd);
    by_watch_.erase(w.wd);
    w.wd = -1;
  }
  w.dir_fd = ScopedFd();
}

bool ProgressWatcher::OpenDir(const std::string& uid, Watched& w) {
  struct stat st;
  if (lstat(w.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    CloseDir(w);
    return false;
  }
  if (w.dir_fd.get() >= 0 && st.st_dev == w.dev && st.st_ino == w.ino) {
    return true;
  }
  CloseDir(w);
  ScopedFd fd(
      open(w.dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0 || fstat(fd.get(), &st) != 0) return false;
  w.dir_fd = std::move(fd);
  w.dev = st.st_dev;
  w.ino = st.st_ino;
  if (inotify_fd_.get() >= 0) {
    // Watches are per inode: a watch the descriptor already had (the same
    // directory seen again) comes back with the same number.
    w.wd = inotify_add_watch(inotify_fd_.get(), w.dir.c_str(), kWatchMask);
    if (w.wd >= 0) {
      by_watch_[w.wd] = uid;
    } else if (errno == ENOSPC) {
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true)) {
        JOBSET_LOG(WARNING) << "inotify watch limit reached "
                               "(fs.inotify.max_user_watches): some pods' "
                               "progress files are read every "
                            << absl::FormatDuration(options_.interval);
      }
    }
  }
  return true;
}

void ProgressWatcher::DrainEvents() {
  if (inotify_fd_.get() < 0) return;
  alignas(struct inotify_event) char buffer[4096];
  for (int i = 0; i < kMaxEventReads; ++i) {
    const ssize_t n = read(inotify_fd_.get(), buffer, sizeof(buffer));
    if (n <= 0) return;  // EAGAIN: drained.
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      if (event->mask & IN_Q_OVERFLOW) {
        for (auto& [uid, w] : pods_) w.dirty = true;
        continue;
      }
      auto it = by_watch_.find(event->wd);
      if (it == by_watch_.end()) continue;
      auto pod = pods_.find(it->second);
      if (pod == pods_.end()) continue;
      Watched& w = pod->second;
      if (event->mask & IN_IGNORED) {
        // The kernel dropped the watch (the directory went): opened again
        // on the next read, if it is back.
        by_watch_.erase(it);
        w.wd = -1;
        w.dir_fd = ScopedFd();
        w.dirty = true;
        continue;
      }
      if ((event->mask & IN_DELETE_SELF) ||
          (event->len > 0 && strcmp(event->name, kProgressFileName) == 0)) {
        w.dirty = true;
      }
    }
  }
}

void ProgressWatcher::Read(const std::vector<Pod>& pods, absl::Time now) {
  absl::MutexLock lock(&mu_);
  DrainEvents();
  std::set<std::string> current;
  for (const Pod& pod : pods) {
    if (pod.dir.empty()) continue;
    current.insert(pod.uid);
    auto [it, added] = pods_.try_emplace(pod.uid);
    Watched& w = it->second;
    if (added || w.dir != pod.dir) {
      CloseDir(w);
      w.dir = pod.dir;
      w.attempt = pod.attempt;
      w.restarts = pod.restarts;
      w.dirty = true;
    } else if (w.attempt != pod.attempt || w.restarts != pod.restarts) {
      w.attempt = pod.attempt;
      w.restarts = pod.restarts;
      w.tracker.NewInstance();
      w.dirty = true;
    }
  }
  for (auto it = pods_.begin(); it != pods_.end();) {
    if (current.contains(it->first)) {
      ++it;
      continue;
    }
    CloseDir(it->second);
    it = pods_.erase(it);
  }
  for (auto& [uid, w] : pods_) {
    // Without a watch the file is polled; with one, read once it changed
    // (and every kRecheck).
    const absl::Duration since = now - w.read_at;
    const bool due = w.dirty || w.wd < 0 || since >= kRecheck;
    if (!due || since < options_.interval) continue;
    w.read_at = now;
    if (!OpenDir(uid, w)) continue;  // Not made yet, or gone: later.
    w.dirty = false;
    const ProgressReject reject = w.tracker.Observe(
        ReadProgressFile(w.dir_fd.get(), kProgressFileName), now);
    if (reject != ProgressReject::kNone && options_.metrics != nullptr) {
      options_.metrics->progress_rejected
          .Add({{"reason", std::string(ProgressRejectName(reject))}})
          .Increment();
    }
  }
}

void ProgressWatcher::Report(absl::Time now, const Send& send) {
  absl::MutexLock lock(&mu_);
  for (auto& [uid, w] : pods_) {
    const ProgressTracker& t = w.tracker;
    if (t.version() == w.sent_version) continue;
    // Nothing to say yet: no step, nothing refused, nothing said before.
    if (!t.has_step() && t.rejected() == 0 && !w.said) {
      w.sent_version = t.version();
      continue;
    }
    api::AgentMessage msg;
    api::PodReport* report = msg.mutable_pod_update();
    report->set_pod_uid(uid);
    report->set_in_place_restart_attempt(w.attempt);
    *report->mutable_progress() = t.Progress(now);
    if (!send(msg)) return;
    w.sent_version = t.version();
    w.said = true;
    if (options_.metrics != nullptr)
      options_.metrics->progress_reports.Increment();
  }
}

void ProgressWatcher::Resend() {
  absl::MutexLock lock(&mu_);
  for (auto& [uid, w] : pods_) {
    w.sent_version = -1;
    w.said = false;
  }
}

}  // namespace jobset::agent
