#include "scheduler/server/stream_ticker.h"

#include <algorithm>
#include <utility>

namespace jobset::scheduler {

StreamTicker::StreamTicker(store::Store* store, absl::Duration poll,
                           Clock* clock)
    : store_(store), poll_(poll), clock_(clock) {
  thread_ = std::thread([this] { Run(); });
}

StreamTicker::~StreamTicker() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
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

void StreamTicker::Run() {
  int64_t seen = store_->CurrentRevision();
  absl::Time next_poll = clock_->Now() + poll_;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    // The revision is read before the streams are ticked, and the wait is
    // for a commit after it: a commit during the ticks wakes the next.
    const int64_t revision = store_->CurrentRevision();
    const bool committed = revision != seen;
    seen = revision;
    const bool poll = clock_->Now() >= next_poll;
    if (poll) next_poll = clock_->Now() + poll_;
    if (committed || poll) TickAll(committed, poll);
    // One waiter for every stream: returns at the first commit after
    // `seen`, or at the next poll.
    absl::StatusOr<std::vector<store::Event>> events =
        store_->WaitForEvents("", seen, next_poll, 1);
    if (!events.ok()) {
      // The history moved past `seen` (a truncation): wait out the poll.
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithDeadline(absl::Condition(&stopping_), next_poll);
    }
  }
}

}  // namespace jobset::scheduler
