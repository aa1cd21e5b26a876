#include "scheduler/controller/limits.h"

#include <algorithm>
#include <limits>

namespace jobset::scheduler {

int64_t PodsPerAttempt(const api::JobSet& jobset) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t pods = 0;
  for (const api::ReplicatedJob& r : jobset.spec().replicated_jobs()) {
    const api::JobSpec& job = r.template_().spec();
    // A Job runs at most parallelism pods at once, and never more than it
    // needs completions.
    int64_t per_job = job.has_parallelism() ? job.parallelism() : 1;
    if (job.has_completions())
      per_job = std::min<int64_t>(per_job, job.completions());
    const int64_t replicas = r.has_replicas() ? r.replicas() : 1;
    if (per_job <= 0 || replicas <= 0) continue;
    // Both are int32: the product fits, the sum may not.
    const int64_t n = replicas * per_job;
    if (pods > kMax - n) return kMax;
    pods += n;
  }
  return pods;
}

}  // namespace jobset::scheduler
