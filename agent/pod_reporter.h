#ifndef JOBSET_AGENT_POD_REPORTER_H_
#define JOBSET_AGENT_POD_REPORTER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/metrics.h"
#include "agent/runtime/runtime.h"
#include "proto/agent.pb.h"

namespace jobset::agent {

// What jobsetd has been told of each pod, as kubelet's status manager keeps
// it: the Hello's pods, a report for each status change (with the pod's
// events), the launch timings of a pod's first report past Pending, and the
// pod metrics. Thread-safe.
class PodReporter {
 public:
  // The restart in place attempt the runtime's pod `uid` is of.
  using AttemptOf = std::function<int32_t(const std::string& uid)>;
  // Sends on the stream; false when it is gone.
  using Send = std::function<bool(const api::AgentMessage&)>;

  // `metrics` may be null; it must outlive the reporter.
  explicit PodReporter(AgentMetrics* metrics) : metrics_(metrics) {}

  // A Hello naming `node` and every pod of `pods`.
  static api::AgentMessage Hello(const api::NodeRegistration& node,
                                 std::vector<PodState> pods,
                                 const AttemptOf& attempt);
  // `hello` was sent on a new stream: what it says is what jobsetd knows.
  void HelloSent(const api::AgentMessage& hello);

  // Pod `uid` was handed to the runtime at `ordered` (its launch timings
  // start there).
  void Launched(const std::string& uid, absl::Time ordered);
  // Pod `uid` starts over (a restart in place): its next status is news.
  void Restarted(const std::string& uid);
  // Pod `uid` was released: forgotten.
  void Forget(const std::string& uid);

  // Sends a report for each pod of `pods` whose status changed since it was
  // last sent or that has events in `events` (at most
  // Runtime::kMaxEventsPerPod, the latest), until a send fails.
  void Report(std::vector<PodState> pods,
              const std::map<std::string, std::vector<api::PodEvent>>& events,
              absl::Time now, const AttemptOf& attempt, const Send& send);

  // Updates the metrics from the runtime's `pods` (no-op without metrics).
  void Record(const std::vector<PodState>& pods);

 private:
  // The first report of pod `uid` past Pending (with `status`, at `now`)
  // ends its launch: when it is Running, the launch's timings go into
  // `report` (and the launch metric).
  void TakeLaunch(const std::string& uid, const api::PodStatus& status,
                  absl::Time now, api::PodReport* report);

  AgentMetrics* const metrics_;

  absl::Mutex mu_;
  // What was last reported (serialized status), per pod uid.
  std::map<std::string, std::string> sent_ ABSL_GUARDED_BY(mu_);
  // Pods ordered to run but not yet reported past Pending (uid -> ordered:
  // their launch timings), and pods whose exit was counted.
  std::map<std::string, absl::Time> launching_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> exited_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_POD_REPORTER_H_
