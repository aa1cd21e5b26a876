// Kueue's maximum execution time (kueue-semantics.md §6 scenario 37; the
// workload controller's reconcileMaxExecutionTime): a Workload whose
// JobSet is labelled kueue.x-k8s.io/max-exec-time-seconds is deactivated
// once it has been admitted that long in total (this admission and the
// earlier ones, status.accumulatedPastExexcutionTimeSeconds), its JobSet
// suspended until someone sets spec.active again.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "scheduler/controller/queue_stage.h"
#include "scheduler/records/conditions.h"

namespace jobset::scheduler {
namespace {

constexpr absl::string_view kMaxExecutionTimeExceeded =
    "DeactivatedDueToMaximumExecutionTimeExceeded";

int64_t Accumulated(const api::WorkloadStatus& status) {
  if (status.has_accumulated_past_execution_time_seconds())
    return status.accumulated_past_execution_time_seconds();
  return status.accumulated_past_exexcution_time_seconds();
}

}  // namespace

bool QueueAdmission::Stage::MaximumExecutionTime(TrackedJobSet& t,
                                                 const std::string& wl_key,
                                                 const api::Workload& wl) {
  if (!wl.spec().has_maximum_execution_time_seconds()) return false;
  const api::Condition* admitted =
      FindCondition(wl.status().conditions(), kWorkloadAdmitted);
  if (admitted == nullptr || admitted->status() != "True") return false;
  const absl::Time deadline =
      FromTimestamp(admitted->last_transition_time()) +
      absl::Seconds(wl.spec().maximum_execution_time_seconds() -
                    Accumulated(wl.status()));
  if (deadline > now_) {
    WakeAt(deadline);
    return false;
  }
  Edit(wl_key)->mutable_spec()->set_active(false);
  Event(
      t.key, "Normal", "MaximumExecutionTimeExceeded",
      absl::StrCat("The maximum execution time (",
                   wl.spec().maximum_execution_time_seconds(), "s) exceeded"));
  Stop(t, wl_key, kMaxExecutionTimeExceeded,
       "The workload is deactivated due to exceeding the maximum execution "
       "time",
       "");
  return true;
}

void QueueAdmission::Stage::AccumulateExecution(api::Workload* w) {
  const api::Condition* admitted =
      FindCondition(w->status().conditions(), kWorkloadAdmitted);
  if (admitted == nullptr || admitted->status() != "True") return;
  const int64_t ran = std::max<int64_t>(
      0, absl::ToInt64Seconds(now_ -
                              FromTimestamp(admitted->last_transition_time())));
  const int64_t total = std::min<int64_t>(Accumulated(w->status()) + ran,
                                          std::numeric_limits<int32_t>::max());
  w->mutable_status()->clear_accumulated_past_execution_time_seconds();
  w->mutable_status()->set_accumulated_past_exexcution_time_seconds(
      static_cast<int32_t>(total));
}

}  // namespace jobset::scheduler
