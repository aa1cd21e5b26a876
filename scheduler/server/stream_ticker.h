#ifndef JOBSET_SCHEDULER_SERVER_STREAM_TICKER_H_
#define JOBSET_SCHEDULER_SERVER_STREAM_TICKER_H_

#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "store/store.h"

namespace jobset::scheduler {

// How often a long-lived stream looks up to notice the server stopping, a
// credential that no longer stands, or a reader that stalled.
inline constexpr absl::Duration kWatchPoll = absl::Milliseconds(200);

// The two threads that keep jobsetd's callback streams going (watches, see
// watch_stream.h), so that an idle stream holds memory and no thread: one
// waits for the store's history to take in a commit (one WaitForEvents over
// the whole store, for all streams); the other then ticks every registered
// stream so that it takes the events that are ready, ticks a stream that
// asked (Request), and every `poll` ticks them all as a poll. A tick may
// wait for the store (etcd's read-your-writes), never for a client.
// Thread-safe; the destructor joins the threads (every stream must be
// removed by then).
class StreamTicker {
 public:
  // A registered stream. Tick may be called from the ticker's thread and
  // from PollNow's caller at once.
  class Stream {
   public:
    virtual ~Stream() = default;
    // `committed`: the store has committed since the last tick; `poll`:
    // a poll is due (or PollNow).
    virtual void Tick(bool committed, bool poll) = 0;
  };

  // Watches `store` (which must outlive the ticker). The store's waits are
  // in real time: `clock` is a RealClock but in tests.
  explicit StreamTicker(store::Store* store, absl::Duration poll = kWatchPoll,
                        Clock* clock = RealClock::Get());
  ~StreamTicker();
  StreamTicker(const StreamTicker&) = delete;
  StreamTicker& operator=(const StreamTicker&) = delete;

  // Ticks `stream` from now on, until Remove.
  void Add(std::shared_ptr<Stream> stream);
  // Stops ticking `stream` (a tick in progress may still finish).
  void Remove(const Stream* stream);
  // Ticks `stream` (as after a commit) on the ticker's thread soon: a
  // stream's pull that must not run on the caller's thread.
  void Request(std::shared_ptr<Stream> stream);
  // Polls every stream now, on the caller's thread (the server stopping).
  void PollNow();

  // The streams registered.
  int size() const;
  store::Store* store() const { return store_; }
  absl::Duration poll() const { return poll_; }
  Clock* clock() const { return clock_; }

 private:
  // Events the ticker's wait takes at most at once (it needs only the last
  // revision; more are taken by the next wait).
  static constexpr size_t kMaxEvents = 1024;

  // The ticker's thread: ticks after a commit, a request or a poll.
  void Run();
  // The waiter's thread: notes each event the store's history takes in.
  void WaitForCommits();
  void TickAll(bool committed, bool poll);

  store::Store* const store_;
  const absl::Duration poll_;
  Clock* const clock_;
  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<Stream>> streams_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<Stream>> requested_ ABSL_GUARDED_BY(mu_);
  bool committed_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread waiter_;
  std::thread thread_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_SERVER_STREAM_TICKER_H_
