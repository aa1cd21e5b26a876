#include "common/parallel.h"

#include <atomic>
#include <thread>

namespace jobset {

void ParallelFor(size_t n, size_t min_parallel,
                 const std::function<void(size_t)>& fn) {
  if (n < min_parallel || n < 2) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  std::thread helper(work);
  work();
  helper.join();
}

}  // namespace jobset
