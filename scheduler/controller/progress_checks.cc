// Hang and straggler detection from the progress pods report (our
// addition, docs/resilience.md):
//   - jobsetd.io/progress-timeout: a running attempt whose pods' steps
//     stopped advancing for the timeout fails one of its Jobs with reason
//     ProgressStalled, and the JobSet's failure policy decides as for any
//     failed Job (restart-all by default, counted against maxRestarts;
//     onJobFailureReasons may name it).
//   - jobsetd.io/straggler-threshold (and -window): a pod slower than the
//     threshold times its gang's median for the window gets the condition
//     Straggler and an event; with jobsetd.io/straggler-action: Replace its
//     node is excluded for the JobSet and its Job fails with reason
//     Straggler, so the gang restarts without that node.
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
#include "scheduler/resilience/straggler_detector.h"

namespace jobset::scheduler {
namespace {

// Progress reports do not wake the controller: while an attempt runs it
// looks at least this often (or sooner, for a shorter timeout).
constexpr absl::Duration kRecheck = absl::Seconds(10);
// Straggler detection looks this many times per window while it runs.
constexpr int kStragglerLooksPerWindow = 4;

bool Running(const api::JobSet& jobset) {
  return jobset.status().terminal_state().empty() && !jobset.spec().suspend() &&
         !jobset.metadata().has_deletion_timestamp();
}

bool HasAnnotation(const api::JobSet& jobset, absl::string_view key) {
  return jobset.metadata().annotations().contains(std::string(key));
}

}  // namespace

void ReconcilePass::CheckProgress(TrackedJobSet& t) {
  if (parts_.progress == nullptr || !Running(t.jobset)) return;
  if (!HasAnnotation(t.jobset, api::kProgressTimeoutAnnotation) &&
      !HasAnnotation(t.jobset, api::kStragglerThresholdAnnotation)) {
    return;
  }
  absl::StatusOr<api::ResilienceSpec> spec =
      api::ParseResilienceSpec(t.jobset.metadata().annotations());
  if (!spec.ok()) return;  // validated at the API; a stored bad one is inert

  // The current attempt's pods on nodes, with their Jobs.
  AttemptPods attempt;
  for (auto& [name, job] : t.jobs) {
    if (job.deleting() || JobFinished(job.job)) continue;
    for (auto& [pod_name, pod] : job.pods) {
      if (!OnNode(pod) || pod.has_deletion_timestamp() || PodFinished(pod))
        continue;
      resilience::PodProgress p =
          parts_.progress->Of(pod.uid()).value_or(resilience::PodProgress{});
      p.pod = pod_name;
      attempt.progress.push_back(std::move(p));
      attempt.pods.push_back(&pod);
      attempt.jobs.push_back(&job);
    }
  }
  if (attempt.pods.empty()) return;
  if (spec->progress_timeout.has_value() &&
      CheckHang(t, attempt, *spec->progress_timeout)) {
    return;
  }
  if (spec->straggler_threshold.has_value()) {
    CheckStragglers(t, attempt, *spec);
  }
}

bool ReconcilePass::CheckHang(TrackedJobSet& t, const AttemptPods& attempt,
                              absl::Duration timeout) {
  const resilience::HangVerdict verdict =
      resilience::DetectHang(attempt.progress, timeout, now_);
  if (verdict.armed) FeedProgress(t, attempt, verdict.last_progress);
  if (verdict.stalled) {
    resilience::GoodputTransition stalled;
    stalled.event = resilience::GoodputEvent::kProgressStalled;
    stalled.time = now_;
    stalled.last_progress = verdict.last_progress;
    FeedGoodput(t, stalled);
  }
  if (!verdict.stalled) {
    // At least every kRecheck: the goodput ledger learns of progress, and
    // a first step arms the detector, only when the controller looks.
    Wake(t, std::min(verdict.next_check, now_ + std::min(kRecheck, timeout)));
    return false;
  }
  // The Job of the pod that stopped first (the verdict lists it first).
  size_t first = 0;
  for (size_t i = 0; i < attempt.pods.size(); ++i) {
    if (!verdict.pods.empty() &&
        attempt.progress[i].pod == verdict.pods.front().pod) {
      first = i;
      break;
    }
  }
  FailJobFor(t, *attempt.jobs[first], resilience::kProgressStalledReason,
             verdict.message);
  return true;
}

void ReconcilePass::FeedProgress(TrackedJobSet& t, const AttemptPods& attempt,
                                 absl::Time last_progress) {
  resilience::GoodputTransition advanced;
  advanced.event = resilience::GoodputEvent::kProgressAdvanced;
  advanced.time = last_progress;
  for (const resilience::PodProgress& p : attempt.progress) {
    advanced.step = std::max(advanced.step, p.step.value_or(0));
    if (p.checkpoint_step.has_value()) {
      advanced.checkpoint_step =
          std::max(advanced.checkpoint_step.value_or(0), *p.checkpoint_step);
    }
  }
  FeedGoodput(t, advanced);
}

void ReconcilePass::CheckStragglers(TrackedJobSet& t,
                                    const AttemptPods& attempt,
                                    const api::ResilienceSpec& spec) {
  const resilience::StragglerConfig config{*spec.straggler_threshold,
                                           spec.straggler_window};
  resilience::StragglerPass pass = resilience::DetectStragglers(
      t.stragglers, attempt.progress, config, now_);
  t.stragglers = std::move(pass.state);
  Wake(t, std::min(pass.verdict.next_check,
                   now_ + spec.straggler_window / kStragglerLooksPerWindow));
  bool newly = false;
  for (const resilience::StragglerFinding& f : pass.verdict.flagged) {
    if (!f.newly_flagged) continue;
    newly = true;
    for (size_t i = 0; i < attempt.pods.size(); ++i) {
      if (attempt.progress[i].pod != f.pod) continue;
      api::PodRecord& pod = *attempt.pods[i];
      UpdateCondition(
          pod.mutable_status()->mutable_conditions(),
          resilience::kStragglerReason, true, resilience::kStragglerReason,
          absl::StrCat("step rate ", resilience::FormatRate(f.steps_per_second),
                       " below ", *spec.straggler_threshold,
                       " x the gang's median ",
                       resilience::FormatRate(pass.verdict.median)),
          now_);
      writes_.PodsChanged(t, *attempt.jobs[i]);
      if (parts_.metrics != nullptr) parts_.metrics->StragglerFlagged();
      RecordFault(t, pod.node_name(), resilience::FaultKind::kStraggler, f.pod,
                  absl::StrCat("step rate ",
                               resilience::FormatRate(f.steps_per_second)));
      if (spec.straggler_action == api::StragglerAction::kReplace) {
        t.excluded_nodes.insert(pod.node_name());
      }
    }
  }
  if (!newly) return;
  writes_.Event(t.key, {"Warning", std::string(resilience::kStragglerReason),
                        pass.verdict.message});
  if (spec.straggler_action != api::StragglerAction::kReplace) return;
  for (size_t i = 0; i < attempt.pods.size(); ++i) {
    if (attempt.progress[i].pod != pass.verdict.flagged.front().pod) continue;
    FailJobFor(t, *attempt.jobs[i], resilience::kStragglerReason,
               absl::StrCat(pass.verdict.message, "; replacing node ",
                            attempt.pods[i]->node_name()));
    t.stragglers = {};
    return;
  }
}

void ReconcilePass::FailJobFor(TrackedJobSet& t, JobState& job,
                               absl::string_view reason,
                               const std::string& message) {
  api::JobStatus* status = job.job.mutable_status();
  UpdateCondition(status->mutable_conditions(), kJobFailureTarget, true, reason,
                  message, now_);
  UpdateCondition(status->mutable_conditions(), kJobFailed, true, reason,
                  message, now_);
  writes_.JobChanged(t, job);
  t.MarkJobDirty(job);
  writes_.Event(t.key, {"Warning", std::string(reason), message});
}

void ReconcilePass::Wake(TrackedJobSet& t, absl::Time at) {
  if (at == absl::InfiniteFuture()) return;
  parts_.state.WakeAt(t, at);
}

}  // namespace jobset::scheduler
