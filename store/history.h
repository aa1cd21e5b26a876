#ifndef JOBSET_STORE_HISTORY_H_
#define JOBSET_STORE_HISTORY_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "store/store.h"

namespace jobset::store {

// The bounded, in-memory history of recent events behind Store::WaitForEvents,
// shared by every Store implementation. It starts empty at the revision the
// store opened at: a watcher can resume from any revision since then, minus
// what the bounds have dropped. Both bounds hold: events and bytes (an
// event's key and value, plus EventBytes' fixed overhead), the oldest going
// first, so a burst of large values cannot grow it without end. A watcher
// that falls behind what is held gets kOutOfRange and lists again.
// Thread-safe.
class History {
 public:
  // The default byte bound (jobsetd --watch_history_bytes).
  static constexpr size_t kDefaultMaxBytes = 64 << 20;

  // Keeps at most `max_events` events (at least 1) and `max_bytes` bytes.
  History(int64_t start_revision, size_t max_events,
          size_t max_bytes = kDefaultMaxBytes);

  // Returns the bytes `event` counts for against the byte bound.
  static size_t EventBytes(const Event& event);

  // Records the events of the commit that produced `revision`, which must be
  // larger than every revision appended before, and wakes waiters.
  void Append(int64_t revision, std::vector<Event> events);

  // Drops every event held: the events up to `revision` are lost (a store
  // whose source compacted them), so a watcher resuming from before it gets
  // kOutOfRange and lists again. Appends continue after `revision`. Wakes
  // waiters.
  void Truncate(int64_t revision);

  // The latest revision appended (or the start revision).
  int64_t revision() const;

  // Implements Store::WaitForEvents.
  absl::StatusOr<std::vector<Event>> Wait(absl::string_view prefix,
                                          int64_t after_revision,
                                          absl::Time deadline,
                                          size_t max_events,
                                          int64_t* looked_at = nullptr) const;

 private:
  const size_t max_events_;
  const size_t max_bytes_;
  mutable absl::Mutex mu_;
  std::deque<Event> events_ ABSL_GUARDED_BY(mu_);
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;  // EventBytes of events_.
  // Events with revisions up to and including this one are no longer held.
  int64_t compacted_ ABSL_GUARDED_BY(mu_);
  int64_t revision_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::store

#endif  // JOBSET_STORE_HISTORY_H_
