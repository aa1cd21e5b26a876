#ifndef JOBSET_SCHEDULER_CONTROLLER_TTL_H_
#define JOBSET_SCHEDULER_CONTROLLER_TTL_H_

#include <optional>

#include "absl/time/time.h"
#include "proto/jobset.pb.h"

namespace jobset::scheduler {

// Returns when a finished JobSet is to be deleted: the transition time of
// its true Completed or Failed condition plus spec.ttlSecondsAfterFinished;
// nullopt when it has no TTL or has not finished.
std::optional<absl::Time> TtlExpiry(const api::JobSet& jobset);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_TTL_H_
