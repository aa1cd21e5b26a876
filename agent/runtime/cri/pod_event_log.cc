#include "agent/runtime/cri/pod_event_log.h"

#include <utility>
#include <vector>

#include "agent/runtime/runtime.h"

namespace jobset::agent::cri {

void PodEventLog::Record(std::vector<api::PodEvent> events) {
  absl::MutexLock lock(&mu_);
  for (api::PodEvent& e : events) {
    if (events_.size() >= Runtime::kMaxEventsPerPod) {
      events_.erase(events_.begin());
    }
    events_.push_back(std::move(e));
  }
}

std::vector<api::PodEvent> PodEventLog::Take() {
  absl::MutexLock lock(&mu_);
  return std::exchange(events_, {});
}

}  // namespace jobset::agent::cri
