#ifndef JOBSET_SCHEDULER_CONTROLLER_PROGRESS_SOURCE_H_
#define JOBSET_SCHEDULER_CONTROLLER_PROGRESS_SOURCE_H_

#include <optional>
#include <string>

#include "scheduler/resilience/progress.h"

namespace jobset::scheduler {

// Where the controller reads the training progress pods report through
// their agents (JOBSET_PROGRESS_FILE; the hub's PodProgressTable), for hang
// and straggler detection (progress_checks.cc). In memory only.
class ProgressSource {
 public:
  virtual ~ProgressSource() = default;
  // The latest progress of pod `pod_uid` (its `pod` field left empty), on
  // jobsetd's clock; nullopt when the pod reported none. Thread-safe.
  virtual std::optional<resilience::PodProgress> Of(
      const std::string& pod_uid) const = 0;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_PROGRESS_SOURCE_H_
