#ifndef JOBSET_AGENT_RUNTIME_CRI_POD_EVENT_LOG_H_
#define JOBSET_AGENT_RUNTIME_CRI_POD_EVENT_LOG_H_

// The events of one pod since the agent last took them (kubelet's event
// recorder for the pod): at most Runtime::kMaxEventsPerPod, the oldest
// dropped first. Thread-safe.

#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "proto/agent.pb.h"

namespace jobset::agent::cri {

class PodEventLog {
 public:
  // Records `events`, oldest first.
  void Record(std::vector<api::PodEvent> events);
  // Returns the events recorded since the last call, oldest first.
  std::vector<api::PodEvent> Take();

 private:
  absl::Mutex mu_;
  std::vector<api::PodEvent> events_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_POD_EVENT_LOG_H_
