// waitForPodsReady (kueue-semantics.md §3.6; Kueue's jobframework
// generatePodsReadyCondition and workload controller
// reconcileNotReadyTimeout): an admitted JobSet's PodsReady condition on
// its Workload, the eviction of one whose pods are not all ready in time,
// and the exponential backoff before it queues again.
#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "scheduler/controller/queue_stage.h"
#include "scheduler/queues/api_objects.h"
#include "scheduler/queues/podset_injection.h"
#include "scheduler/records/conditions.h"

namespace jobset::scheduler {
namespace {

constexpr absl::string_view kWaitForRecovery = "WaitForRecovery";
constexpr absl::string_view kPodsReadyTimeout = "PodsReadyTimeout";
constexpr absl::string_view kDeactivatedByLimit =
    "DeactivatedDueToRequeuingLimitExceeded";

// The condition's lastTransitionTime; `fallback` without one.
absl::Time Since(const api::Condition* c, absl::Time fallback) {
  if (c == nullptr || !c->has_last_transition_time()) return fallback;
  return FromTimestamp(c->last_transition_time());
}

}  // namespace

bool JobSetPodsReady(const api::JobSet& js) {
  int64_t jobs = 0, ready = 0;
  for (const api::ReplicatedJob& rj : js.spec().replicated_jobs())
    jobs += rj.replicas();
  for (const api::ReplicatedJobStatus& s : js.status().replicated_jobs_status())
    ready += s.ready() + s.succeeded();
  return ready >= jobs;
}

void QueueAdmission::Stage::WaitForPodsReady(TrackedJobSet& t,
                                             const std::string& wl_key) {
  const api::WaitForPodsReady& config = qa_.options_.wait_for_pods_ready;
  if (!config.enable) return;
  const api::Workload* wl = Current(wl_key);
  if (wl == nullptr) return;
  const api::Condition* cond =
      FindCondition(wl->status().conditions(), kWorkloadPodsReady);
  const bool ready = JobSetPodsReady(JobSetNow(t));
  // Kueue's generatePodsReadyCondition.
  std::string reason, message;
  if (ready) {
    reason = cond != nullptr && (cond->reason() == kWaitForRecovery ||
                                 cond->reason() == "Recovered")
                 ? "Recovered"
                 : "Started";
    message = "All pods reached readiness and the workload is running";
  } else if (cond != nullptr &&
             (cond->status() == "True" || cond->reason() == kWaitForRecovery)) {
    reason = std::string(kWaitForRecovery);
    message = "At least one pod has failed, waiting for recovery";
  } else {
    reason = std::string(kWaitForStart);
    message = std::string(kNotReadyMessage);
  }
  if (cond == nullptr || (cond->status() == "True") != ready ||
      cond->reason() != reason) {
    api::Workload* w = Edit(wl_key);
    SetCondition(w->mutable_status()->mutable_conditions(), kWorkloadPodsReady,
                 ready, reason, message, now_);
    wl = w;
    cond = FindCondition(wl->status().conditions(), kWorkloadPodsReady);
  }
  if (ready) return;
  // The timeout runs from the admission (WaitForStart) or from the pods'
  // failure (WaitForRecovery).
  const bool recovering = reason == kWaitForRecovery;
  const absl::Time since =
      recovering
          ? Since(cond, now_)
          : Since(FindCondition(wl->status().conditions(), kWorkloadAdmitted),
                  now_);
  const absl::Time deadline =
      since + (recovering ? config.recovery_timeout : config.timeout);
  if (deadline > now_) {
    WakeAt(deadline);
    return;
  }
  EvictNotReady(t, wl_key, reason);
}

void QueueAdmission::Stage::EvictNotReady(TrackedJobSet& t,
                                          const std::string& wl_key,
                                          absl::string_view cause) {
  const api::WaitForPodsReady& config = qa_.options_.wait_for_pods_ready;
  api::Workload* w = Edit(wl_key);
  api::RequeueState* requeue = w->mutable_status()->mutable_requeue_state();
  const int32_t count = requeue->count();
  std::string reason(kPodsReadyTimeout);
  std::string message =
      absl::StrCat("Exceeded the PodsReady timeout ",
                   w->metadata().namespace_(), "/", w->metadata().name());
  if (config.backoff_limit_count >= 0 &&
      count + 1 > config.backoff_limit_count) {
    // Kueue's RequeuingLimitExceeded: deactivated, never queued again
    // until someone sets spec.active.
    w->mutable_spec()->set_active(false);
    reason = std::string(kDeactivatedByLimit);
    message =
        "The workload is deactivated due to exceeding the maximum number of "
        "re-queuing retries";
  } else {
    // Kueue's UpdateRequeueState: base * 2^(n-1) seconds, at most max.
    requeue->set_count(count + 1);
    const int64_t backoff = std::min<int64_t>(
        int64_t{config.backoff_base_seconds} << std::min(count, 30),
        config.backoff_max_seconds);
    *requeue->mutable_requeue_at() = ToTimestamp(now_ + absl::Seconds(backoff));
  }
  Stop(t, wl_key, reason, message, cause);
}

absl::Time QueueAdmission::Stage::Backoff(const std::string& wl_key,
                                          const api::Workload& wl) {
  if (!wl.status().requeue_state().has_requeue_at())
    return absl::InfinitePast();
  const absl::Time at = FromTimestamp(wl.status().requeue_state().requeue_at());
  if (at > now_) {
    WakeAt(at);
    return at;
  }
  const api::Condition* requeued =
      FindCondition(wl.status().conditions(), kWorkloadRequeued);
  if (requeued != nullptr && requeued->status() == "False" &&
      requeued->reason() == kPodsReadyTimeout) {
    SetCondition(Edit(wl_key)->mutable_status()->mutable_conditions(),
                 kWorkloadRequeued, true, "BackoffFinished",
                 "The workload backoff was finished", now_);
  }
  return at;
}

}  // namespace jobset::scheduler
