// Hang detection (jobsetd.io/progress-timeout; our addition, docs/
// resilience.md): a running attempt whose pods' steps stopped advancing for
// the timeout fails one of its Jobs with reason ProgressStalled, and the
// JobSet's failure policy decides as for any failed Job (restart-all by
// default, counted against maxRestarts; onJobFailureReasons may name it).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "api/resilience_annotations.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/job_reconcile.h"
#include "scheduler/controller/reconcile_pass.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"
#include "scheduler/resilience/hang_detector.h"

namespace jobset::scheduler {
namespace {

// Until a pod reports its first step nothing wakes the controller for it:
// look again this often (or sooner, for a shorter timeout).
constexpr absl::Duration kUnarmedRecheck = absl::Seconds(10);

bool Running(const api::JobSet& jobset) {
  return jobset.status().terminal_state().empty() && !jobset.spec().suspend() &&
         !jobset.metadata().has_deletion_timestamp();
}

}  // namespace

void ReconcilePass::CheckProgress(TrackedJobSet& t) {
  if (parts_.progress == nullptr || !Running(t.jobset)) return;
  const auto& annotations = t.jobset.metadata().annotations();
  if (!annotations.contains(std::string(api::kProgressTimeoutAnnotation)))
    return;
  absl::StatusOr<api::ResilienceSpec> spec =
      api::ParseResilienceSpec(annotations);
  if (!spec.ok() || !spec->progress_timeout.has_value()) return;

  // The current attempt's pods on nodes, with their Jobs.
  std::vector<resilience::PodProgress> pods;
  std::vector<JobState*> owners;
  for (auto& [name, job] : t.jobs) {
    if (job.deleting() || JobFinished(job.job)) continue;
    for (const auto& [pod_name, pod] : job.pods) {
      if (!OnNode(pod) || pod.has_deletion_timestamp() || PodFinished(pod))
        continue;
      resilience::PodProgress p =
          parts_.progress->Of(pod.uid()).value_or(resilience::PodProgress{});
      p.pod = pod_name;
      pods.push_back(std::move(p));
      owners.push_back(&job);
    }
  }
  if (pods.empty()) return;
  const resilience::HangVerdict verdict =
      resilience::DetectHang(pods, *spec->progress_timeout, now_);
  if (!verdict.stalled) {
    const absl::Time next =
        verdict.armed
            ? verdict.next_check
            : now_ + std::min(kUnarmedRecheck, *spec->progress_timeout);
    if (!t.wake || next < *t.wake) t.wake = next;
    return;
  }
  // The Job of the pod that stopped first (the verdict lists it first).
  JobState* job = owners.front();
  for (size_t i = 0; i < pods.size(); ++i) {
    if (!verdict.pods.empty() && pods[i].pod == verdict.pods.front().pod) {
      job = owners[i];
      break;
    }
  }
  api::JobStatus* status = job->job.mutable_status();
  UpdateCondition(status->mutable_conditions(), kJobFailureTarget, true,
                  resilience::kProgressStalledReason, verdict.message, now_);
  UpdateCondition(status->mutable_conditions(), kJobFailed, true,
                  resilience::kProgressStalledReason, verdict.message, now_);
  writes_.JobChanged(t, *job);
  t.MarkJobDirty(*job);
  writes_.Event(t.key,
                {"Warning", std::string(resilience::kProgressStalledReason),
                 verdict.message});
}

}  // namespace jobset::scheduler
