#include "cli/ordered_pool.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace jobset::cli {

void RunOrdered(int count, int max_in_flight,
                const std::function<void(int)>& work,
                const std::function<void(int)>& done) {
  if (count <= 0) return;
  const int threads = std::clamp(max_in_flight, 1, count);
  if (threads == 1) {
    // No thread to start: the same order, on the caller's thread.
    for (int i = 0; i < count; ++i) {
      work(i);
      done(i);
    }
    return;
  }
  absl::Mutex mu;
  int next = 0;  // The next item a worker takes.
  std::vector<char> finished(count, 0);
  auto take = [&]() -> int {
    absl::MutexLock lock(&mu);
    return next < count ? next++ : -1;
  };
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = take(); i >= 0; i = take()) {
        work(i);
        absl::MutexLock lock(&mu);
        finished[i] = 1;
      }
    });
  }
  for (int i = 0; i < count; ++i) {
    {
      absl::MutexLock lock(&mu);
      mu.Await(absl::Condition(
          +[](char* flag) { return *flag != 0; }, &finished[i]));
    }
    done(i);
  }
  for (std::thread& thread : pool) thread.join();
}

}  // namespace jobset::cli
