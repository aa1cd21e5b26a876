#include "common/parallel.h"

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace jobset {
namespace {

TEST(ParallelForTest, CallsEveryIndexOnce) {
  for (size_t n : {0, 1, 2, 3, 1000}) {
    std::vector<std::atomic<int>> calls(n);
    ParallelFor(n, 2, [&](size_t i) { ++calls[i]; });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(calls[i], 1) << n << " " << i;
  }
}

TEST(ParallelForTest, BelowTheThresholdStaysOnTheCallingThread) {
  const std::thread::id caller = std::this_thread::get_id();
  absl::Mutex mu;
  std::set<std::thread::id> threads;
  ParallelFor(63, 64, [&](size_t) {
    absl::MutexLock lock(&mu);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(threads, std::set<std::thread::id>{caller});
}

}  // namespace
}  // namespace jobset
