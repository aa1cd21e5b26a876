#ifndef JOBSET_SCHEDULER_CONTROLLER_POD_EVENTS_H_
#define JOBSET_SCHEDULER_CONTROLLER_POD_EVENTS_H_

// The events agents report for pods (kubelet's: Pulling, Pulled, Failed,
// BackOff, ...), turned into their JobSet's events. A JobSet of 1,000 pods
// pulling one image must not write 1,000 events a pass: identical events of
// different pods between two passes become one, naming the first pod and
// how many more. Thread-compatible.

#include <cstddef>
#include <string>
#include <vector>

#include "proto/agent.pb.h"
#include "scheduler/controller/jobset_reconcile.h"

namespace jobset::scheduler {

// The pod events of one JobSet between two passes.
class PendingPodEvents {
 public:
  // Beyond this many, later events are counted and dropped until Take.
  static constexpr size_t kMaxHeld = 256;

  // Holds `event` of the pod named `pod`.
  void Hold(const std::string& pod, const api::PodEvent& event);

  // The JobSet events for what was held, in the order of each one's first
  // report: "pod <name>: <message>", with " (and N more pods)" where N
  // other pods reported the same type, reason and message; events dropped
  // make one Warning (reason EventsDropped). Holds nothing after.
  std::vector<JobSetEvent> Take();

  bool empty() const { return held_.empty() && dropped_ == 0; }

 private:
  struct Held {
    std::string pod;
    api::PodEvent event;
  };
  std::vector<Held> held_;
  size_t dropped_ = 0;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_POD_EVENTS_H_
