#ifndef JOBSET_SCHEDULER_CONTROLLER_TEST_UTIL_H_
#define JOBSET_SCHEDULER_CONTROLLER_TEST_UTIL_H_

#include <string>

#include "absl/time/time.h"
#include "proto/cluster.pb.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"

// Helpers that play the Job layer in controller tests, the way upstream's
// integration tests drive child Job status directly.
namespace jobset::scheduler::testing {

// Marks `job` Complete with all its pods succeeded.
inline void CompleteJob(api::Job* job, absl::Time now) {
  const int32_t n =
      job->spec().has_parallelism() ? job->spec().parallelism() : 1;
  job->mutable_status()->set_succeeded(n);
  job->mutable_status()->set_active(0);
  job->mutable_status()->set_ready(0);
  UpdateCondition(job->mutable_status()->mutable_conditions(), kJobComplete,
                  true, "", "", now);
}

// Marks `job` Failed with `reason` and `message` at `now`.
inline void FailJob(api::Job* job, const std::string& reason,
                    const std::string& message, absl::Time now) {
  job->mutable_status()->set_active(0);
  job->mutable_status()->set_ready(0);
  UpdateCondition(job->mutable_status()->mutable_conditions(),
                  kJobFailureTarget, true, reason, message, now);
  UpdateCondition(job->mutable_status()->mutable_conditions(), kJobFailed, true,
                  reason, message, now);
}

// Marks every pod of `job` running and ready.
inline void ReadyJob(api::Job* job) {
  const int32_t n =
      job->spec().has_parallelism() ? job->spec().parallelism() : 1;
  job->mutable_status()->set_active(n);
  job->mutable_status()->set_ready(n);
}

}  // namespace jobset::scheduler::testing

#endif  // JOBSET_SCHEDULER_CONTROLLER_TEST_UTIL_H_
