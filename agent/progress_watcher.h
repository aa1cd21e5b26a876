#ifndef JOBSET_AGENT_PROGRESS_WATCHER_H_
#define JOBSET_AGENT_PROGRESS_WATCHER_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/metrics.h"
#include "agent/progress_tracker.h"
#include "agent/runtime/scoped_fd.h"
#include "proto/agent.pb.h"

namespace jobset::agent {

// Reads the progress heartbeats of the runtime's pods (docs/agent.md,
// "Progress heartbeats"; our addition) and reports them to jobsetd.
//
// - Each pod's progress directory (Runtime::ProgressDir) is opened once,
//   O_DIRECTORY|O_NOFOLLOW, from its runtime's path (whose parents are the
//   agent's, never the pod's), and watched with inotify; its file is read
//   relative to that descriptor (ReadProgressFile) after a change, at most
//   once per `interval` per pod, or every `interval` without inotify (and
//   every 30 s in any case). A directory replaced (a restart in place makes
//   the pod's afresh) is opened again. No read blocks: a pod's file is a
//   regular file or nothing.
// - A pod's inputs go through its own ProgressTracker: what one pod writes
//   touches only its own progress. Each ignored input is counted in its
//   report and in jobset_agent_progress_rejected_total{reason}.
// - A report (a PodReport with the pod's uid, restart in place attempt and
//   PodProgress, no status) is sent when the pod's progress changed since
//   it was last sent; after a new stream's Hello, once more.
// Thread-safe (the tick thread reads and sends; the stream's thread calls
// Resend).
class ProgressWatcher {
 public:
  struct Options {
    // --progress_report_interval: the least time between two reads (and so
    // two reports) of one pod's progress.
    absl::Duration interval = absl::Seconds(1);
    AgentMetrics* metrics = nullptr;  // Null: none.
  };

  // One pod of the runtime's, as a tick sees it.
  struct Pod {
    std::string uid;
    std::string dir;       // Runtime::ProgressDir; "": the pod has none
    int32_t attempt = 0;   // its restart in place attempt
    int64_t restarts = 0;  // its containers' restart counts, summed
  };

  // Sends on the stream; false when it is gone.
  using Send = std::function<bool(const api::AgentMessage&)>;

  explicit ProgressWatcher(Options options);
  ~ProgressWatcher();
  ProgressWatcher(const ProgressWatcher&) = delete;
  ProgressWatcher& operator=(const ProgressWatcher&) = delete;

  // Reads, at `now` (a monotonic clock's), the files of `pods` that are
  // due; forgets the pods not in `pods`. A pod whose attempt or restarts
  // changed runs anew (ProgressTracker::NewInstance).
  void Read(const std::vector<Pod>& pods, absl::Time now);

  // Sends a report for each pod whose progress changed since it was last
  // sent, as of `now`, until a send fails (the rest go next time).
  void Report(absl::Time now, const Send& send);

  // A new stream: each pod's progress is news again.
  void Resend();

  // Whether inotify could be set up (otherwise files are polled).
  bool notified() const { return inotify_fd_.get() >= 0; }

 private:
  struct Watched {
    std::string dir;
    ScopedFd dir_fd;
    dev_t dev = 0;
    ino_t ino = 0;
    int wd = -1;  // the inotify watch; -1: none (polled)
    int32_t attempt = 0;
    int64_t restarts = 0;
    ProgressTracker tracker;
    absl::Time read_at = absl::InfinitePast();
    bool dirty = true;
    int64_t sent_version = 0;
    bool said = false;  // something was sent on this stream
  };

  // Marks the pods whose files changed (inotify), without blocking.
  void DrainEvents() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Opens `w`'s directory unless the one open is still what its path names.
  bool OpenDir(const std::string& uid, Watched& w)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CloseDir(Watched& w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const ScopedFd inotify_fd_;

  absl::Mutex mu_;
  std::map<std::string, Watched> pods_ ABSL_GUARDED_BY(mu_);  // by uid
  std::map<int, std::string> by_watch_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_PROGRESS_WATCHER_H_
