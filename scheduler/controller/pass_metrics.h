#ifndef JOBSET_SCHEDULER_CONTROLLER_PASS_METRICS_H_
#define JOBSET_SCHEDULER_CONTROLLER_PASS_METRICS_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "proto/jobset.pb.h"
#include "scheduler/controller/controller_metrics.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/jobset_reconcile.h"

namespace jobset::scheduler {

// Records what one reconcile of `t` reached: terminal states and restarts
// (from `before`), the attempt's pods all running.
void RecordReconcile(ControllerMetrics& metrics, TrackedJobSet& t,
                     const api::JobSetStatus& before,
                     const std::vector<JobSetEvent>& events, absl::Time now);

// Counts the gauges of `state` (goodput as of `now`) and records them.
void RecordGauges(ControllerMetrics& metrics, const ControllerState& state,
                  int64_t pending, absl::Time now);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_PASS_METRICS_H_
