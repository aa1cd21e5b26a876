#ifndef JOBSET_COMMON_PARALLEL_H_
#define JOBSET_COMMON_PARALLEL_H_

#include <cstddef>
#include <functional>

namespace jobset {

// Calls `fn(i)` once for every i in [0, n): on the calling thread alone when
// n < min_parallel (a thread costs more than a little work), otherwise on the
// calling thread and one more, each taking the next index not yet taken.
// Returns once every call has returned. The calls must be independent: `fn`
// may run concurrently with itself. jobsetd runs on small machines; two
// threads is what a pass can use while the API and agent threads run.
//
// Every parallel site of the controller goes through here, so that its
// threads are all in one place (scheduler/controller/README.md, "Threads").
void ParallelFor(size_t n, size_t min_parallel,
                 const std::function<void(size_t)>& fn);

}  // namespace jobset

#endif  // JOBSET_COMMON_PARALLEL_H_
