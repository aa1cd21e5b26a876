#ifndef JOBSET_SCHEDULER_AGENTS_LAUNCH_STAGES_H_
#define JOBSET_SCHEDULER_AGENTS_LAUNCH_STAGES_H_

#include <cstddef>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/agent.pb.h"

namespace jobset::scheduler {

class AgentHub;           // agent_hub.h
struct SchedulerMetrics;  // scheduler/metrics.h

// The pod startup stages the hub sees (controller_metrics.h kStage*): a
// launch order's sending (bound_to_sent), then the agent's first report of
// the pod Running with its LaunchTimings (sent_to_received,
// received_to_started, started_to_reported). The agent's timings are
// durations on its own clock, and sent_to_received is the time from sending
// to the report's arrival less the agent's own time, so no clock skew
// between hosts enters any stage. At most kMaxInFlight launches are followed
// at once (past that, new ones go unmeasured). Thread-safe.
class LaunchStages {
 public:
  static constexpr size_t kMaxInFlight = size_t{1} << 16;

  // Null `metrics`: nothing is measured.
  explicit LaunchStages(SchedulerMetrics* metrics) : metrics_(metrics) {}

  // The launch order of pod `uid`, bound at `bound` (InfinitePast: not a
  // launch), went out at `now`. Only its first sending counts.
  void Sent(const std::string& uid, absl::Time bound, absl::Time now);
  // A report of pod `uid` Running with `launch` (checked by
  // CheckPodReport) arrived at `now`. Returns whether it ended a launch
  // followed here: the controller then times its commit from `now`.
  bool Reported(const std::string& uid, const api::LaunchTimings& launch,
                absl::Time now);
  // Pod `uid` is released (or its node gone): no report will end it.
  void Forget(const std::string& uid);

  size_t in_flight() {
    absl::MutexLock lock(&mu_);
    return sent_.size();
  }

 private:
  friend class AgentHub;  // Names mu_ in its lock order.
  SchedulerMetrics* const metrics_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, absl::Time> sent_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_LAUNCH_STAGES_H_
