#ifndef JOBSET_SCHEDULER_AGENTS_LIVENESS_H_
#define JOBSET_SCHEDULER_AGENTS_LIVENESS_H_

#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace jobset::scheduler {

// When a node is lost.
struct LivenessRules {
  // A node silent this long is lost.
  absl::Duration node_lost_timeout = absl::Seconds(10);
  // After `started`, how long the nodes known before (from the store) have
  // to reconnect, so that a scheduler outage is not a node failure.
  absl::Duration restart_grace = absl::Seconds(30);
  // When this jobsetd started (or began to lead).
  absl::Time started = absl::InfinitePast();
};

// Decides whether a node is lost at `now`: returns how long it has been
// silent if so, nullopt if not. `ready`: not declared lost already (a lost
// node is lost once). `last_seen`: its agent's last message to this
// jobsetd, InfinitePast when it has not connected to this one. A node that
// connected here is under node_lost_timeout at once; a node only known from
// the store is measured from `started` and never lost within the
// restart_grace. A pure function.
std::optional<absl::Duration> SilentTooLong(const LivenessRules& rules,
                                            bool ready, absl::Time last_seen,
                                            absl::Time now);

// Returns the message of node `name`'s loss after `silent` (LoseNode's).
std::string NodeLostMessage(const std::string& name, absl::Duration silent,
                            absl::Duration timeout);

// Returns how often the liveness of nodes is checked for `timeout`.
absl::Duration LivenessTick(absl::Duration node_lost_timeout);

// A thread that calls `check` every `tick` until stopped (the hub's
// liveness monitor). Thread-safe.
class LivenessMonitor {
 public:
  LivenessMonitor() = default;
  LivenessMonitor(const LivenessMonitor&) = delete;
  LivenessMonitor& operator=(const LivenessMonitor&) = delete;
  ~LivenessMonitor() { Stop(); }

  // Starts the thread. Call at most once.
  void Start(absl::Duration tick, std::function<void()> check);
  // Stops the thread and waits for it (a check in progress finishes).
  void Stop();

 private:
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // Started and joined by the owner's thread.
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_LIVENESS_H_
