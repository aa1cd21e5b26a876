#ifndef JOBSET_SCHEDULER_CONTROLLER_EVENT_LOG_H_
#define JOBSET_SCHEDULER_CONTROLLER_EVENT_LOG_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/jobset_reconcile.h"
#include "scheduler/controller/pass_writes.h"
#include "store/store.h"

namespace jobset::scheduler {

// How many events each JobSet keeps, and for how long.
struct EventRetention {
  size_t per_jobset = 100;
  absl::Duration max_age = absl::Hours(24);
};

// Each JobSet's most recent events, as stored at
// events/<ns>/<jobset>/<seq> (seq: unique, increasing, about the event's
// Unix nanoseconds), bounded by count and age. Used only from the
// controller thread.
class EventLog {
 public:
  void set_retention(EventRetention retention) { retention_ = retention; }

  // Reads the stored events of every JobSet `state` tracks, replacing what
  // was held; events of other JobSets become orphan keys of `state`.
  absl::Status Load(store::Store& store, ControllerState& state);

  // Keeps an event decided outside a pass (a node lost) for the next one.
  void Queue(const std::string& key, JobSetEvent e);

  // Stages the queued events and `writes`' as store writes, trimming each
  // JobSet's to the retention; once a minute, trims every JobSet's by age.
  void Stage(absl::Time now, const ControllerState& state, PassWrites& writes);

  // Deletes every event of `t` (it is being deleted).
  void Erase(const TrackedJobSet& t, PassWrites& writes);

  // The events of JobSet `key`, oldest first.
  std::vector<JobSetEvent> Events(const std::string& key) const;

 private:
  using HeldEvents = std::deque<std::pair<uint64_t, JobSetEvent>>;
  // Deletes the events of `t` beyond the retention.
  void Trim(const TrackedJobSet& t, absl::Time now, HeldEvents& events,
            PassWrites& writes);

  std::map<std::string, HeldEvents> by_jobset_;  // With their seqs.
  std::map<std::string, std::vector<JobSetEvent>> queued_;
  EventRetention retention_;
  uint64_t last_seq_ = 0;
  absl::Time swept_ = absl::InfinitePast();
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_EVENT_LOG_H_
