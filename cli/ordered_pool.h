#ifndef JOBSET_CLI_ORDERED_POOL_H_
#define JOBSET_CLI_ORDERED_POOL_H_

#include <functional>

namespace jobset::cli {

// Runs `work(i)` for every i in [0, count) on at most `max_in_flight` threads
// (at least one; never more threads than items), and calls `done(i)` on the
// calling thread in index order: done(i) runs once work(0..i) have all
// returned, while later items may still be running. Returns after done(count
// - 1). `work` must be safe to call from several threads at once; `done` runs
// on the caller's thread only, so it may write to the caller's streams.
// jobsetctl uses it to keep up to 32 requests of `apply -f` in flight over one
// channel and still print the results in the file's order.
void RunOrdered(int count, int max_in_flight,
                const std::function<void(int)>& work,
                const std::function<void(int)>& done);

}  // namespace jobset::cli

#endif  // JOBSET_CLI_ORDERED_POOL_H_
