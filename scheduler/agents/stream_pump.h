#ifndef JOBSET_SCHEDULER_AGENTS_STREAM_PUMP_H_
#define JOBSET_SCHEDULER_AGENTS_STREAM_PUMP_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace jobset::scheduler {

// A few threads that run what the agents' streams post (agent_stream.h):
// building and starting the next write of a stream its hub woke, and ending
// a stream the hub closed. So no stream holds a thread of its own, and
// neither the hub nor the controller thread ever builds a message or calls
// into gRPC. Tasks run in the order posted on one of `threads` threads.
// Thread-safe; the destructor runs what was posted, then joins.
class StreamPump {
 public:
  explicit StreamPump(int threads = 2);
  ~StreamPump();
  StreamPump(const StreamPump&) = delete;
  StreamPump& operator=(const StreamPump&) = delete;

  void Post(std::function<void()> task);

 private:
  void Run();

  absl::Mutex mu_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_STREAM_PUMP_H_
