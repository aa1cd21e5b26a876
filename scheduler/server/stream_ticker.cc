#include "scheduler/server/stream_ticker.h"

#include <algorithm>
#include <utility>

namespace jobset::scheduler {

StreamTicker::StreamTicker(store::Store* store, absl::Duration poll,
                           Clock* clock)
    : store_(store), poll_(poll), clock_(clock) {
  waiter_ = std::thread([this] { WaitForCommits(); });
  thread_ = std::thread([this] { Run(); });
}

StreamTicker::~StreamTicker() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
  waiter_.join();
}

void StreamTicker::Add(std::shared_ptr<Stream> stream) {
  absl::MutexLock lock(&mu_);
  streams_.push_back(std::move(stream));
}

void StreamTicker::Remove(const Stream* stream) {
  absl::MutexLock lock(&mu_);
  auto it = std::find_if(
      streams_.begin(), streams_.end(),
      [stream](const std::shared_ptr<Stream>& s) { return s.get() == stream; });
  if (it == streams_.end()) return;
  *it = std::move(streams_.back());
  streams_.pop_back();
}

void StreamTicker::PollNow() { TickAll(false, true); }

int StreamTicker::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(streams_.size());
}

void StreamTicker::TickAll(bool committed, bool poll) {
  // Ticked without the lock: a stream may Remove itself meanwhile (the copy
  // keeps it alive until its tick returns).
  std::vector<std::shared_ptr<Stream>> streams;
  {
    absl::MutexLock lock(&mu_);
    streams = streams_;
  }
  for (const std::shared_ptr<Stream>& stream : streams) {
    stream->Tick(committed, poll);
  }
}

void StreamTicker::Request(std::shared_ptr<Stream> stream) {
  absl::MutexLock lock(&mu_);
  requested_.push_back(std::move(stream));
}

void StreamTicker::Run() {
  absl::Time next_poll = clock_->Now() + poll_;
  while (true) {
    bool committed;
    std::vector<std::shared_ptr<Stream>> requested;
    {
      absl::MutexLock lock(&mu_);
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || committed_ || !requested_.empty();
      };
      mu_.AwaitWithDeadline(absl::Condition(&woken),
                            RealDeadline(next_poll - clock_->Now()));
      if (stopping_) return;
      committed = std::exchange(committed_, false);
      requested.swap(requested_);
    }
    const bool poll = clock_->Now() >= next_poll;
    if (poll) next_poll = clock_->Now() + poll_;
    if (committed || poll) {
      TickAll(committed, poll);
      continue;  // every stream, the requested ones too, looked
    }
    for (const std::shared_ptr<Stream>& stream : requested)
      stream->Tick(/*committed=*/true, /*poll=*/false);
  }
}

void StreamTicker::WaitForCommits() {
  // The last revision the store's history held: the wait is for an event
  // after it. Not the store's current revision: etcd's history holds a
  // commit of this replica only once its watch echoes it.
  int64_t seen = store_->CurrentRevision();
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    // Bounded, so that stopping is noticed within a poll.
    absl::StatusOr<std::vector<store::Event>> events =
        store_->WaitForEvents("", seen, RealDeadline(poll_), kMaxEvents);
    if (events.ok() && events->empty()) continue;
    if (events.ok()) {
      seen = events->back().kv.mod_revision;
    } else {
      // The history moved past `seen` (a truncation): go on from where the
      // store is; the streams look, and find out where they stand.
      seen = store_->CurrentRevision();
    }
    absl::MutexLock lock(&mu_);
    committed_ = true;
    if (!events.ok()) {
      // Not again before a poll's time.
      mu_.AwaitWithTimeout(absl::Condition(&stopping_), poll_);
    }
  }
}

}  // namespace jobset::scheduler
