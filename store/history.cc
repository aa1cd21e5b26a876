#include "store/history.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/failpoint.h"
#include "common/log.h"

namespace jobset::store {

History::History(int64_t start_revision, size_t max_events, size_t max_bytes)
    : max_events_(std::max<size_t>(max_events, 1)),
      max_bytes_(max_bytes),
      compacted_(start_revision),
      revision_(start_revision) {}

size_t History::EventBytes(const Event& event) {
  return sizeof(Event) + event.kv.key.size() + event.kv.value.size();
}

void History::Append(int64_t revision, std::vector<Event> events) {
  absl::MutexLock lock(&mu_);
  JOBSET_CHECK(revision > revision_) << "History::Append: revision went back";
  revision_ = revision;
  for (Event& e : events) {
    bytes_ += EventBytes(e);
    events_.push_back(std::move(e));
  }
  while (!events_.empty() &&
         (events_.size() > max_events_ || bytes_ > max_bytes_)) {
    // Memory only: the commit is durable already (docs/failpoints.md).
    JOBSET_FAILPOINT_VOID("store.history.trim");
    compacted_ = events_.front().kv.mod_revision;
    bytes_ -= EventBytes(events_.front());
    events_.pop_front();
  }
}

void History::Truncate(int64_t revision) {
  absl::MutexLock lock(&mu_);
  events_.clear();
  bytes_ = 0;
  revision_ = std::max(revision_, revision);
  compacted_ = revision_;
}

int64_t History::revision() const {
  absl::MutexLock lock(&mu_);
  return revision_;
}

absl::StatusOr<std::vector<Event>> History::Wait(absl::string_view prefix,
                                                 int64_t after_revision,
                                                 absl::Time deadline,
                                                 size_t max_events,
                                                 int64_t* looked_at) const {
  absl::MutexLock lock(&mu_);
  int64_t seen = after_revision;  // Every event up to here was looked at.
  auto arrived = [this, &seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return revision_ > seen;
  };
  std::vector<Event> out;
  while (out.empty()) {
    if (seen < compacted_) {
      return absl::OutOfRangeError(absl::StrCat(
          "revision ", seen,
          " is compacted: the oldest revision a watch can resume from is ",
          compacted_, "; list again and watch from the list's revision"));
    }
    if (!mu_.AwaitWithDeadline(absl::Condition(&arrived), deadline)) break;
    if (seen < compacted_) continue;  // Reported above.
    // Events are in revision order: binary search the first one to return.
    auto it = std::partition_point(
        events_.begin(), events_.end(),
        [seen](const Event& e) { return e.kv.mod_revision <= seen; });
    for (; it != events_.end(); ++it) {
      // Never split a commit: a watcher resumes after a whole revision.
      if (out.size() >= max_events && it->kv.mod_revision != seen) break;
      seen = it->kv.mod_revision;
      if (absl::StartsWith(it->kv.key, prefix)) out.push_back(*it);
    }
    // Only other prefixes changed: everything up to revision_ was looked at.
    if (out.empty()) seen = revision_;
  }
  if (looked_at != nullptr) *looked_at = seen;
  return out;
}

}  // namespace jobset::store
