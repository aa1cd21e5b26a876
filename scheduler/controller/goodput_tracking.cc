// Goodput accounting (our addition, docs/resilience.md): each JobSet's
// GoodputLedger (scheduler/resilience/goodput_ledger.h), fed with what a
// reconcile saw change (admitted, all pods running, restarted, suspended,
// finished; progress from progress_checks.cc), kept in status.goodput.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/job_reconcile.h"
#include "scheduler/controller/queue_admission.h"
#include "scheduler/controller/reconcile_pass.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"
#include "scheduler/resilience/goodput_ledger.h"

namespace jobset::scheduler {
namespace {

using resilience::GoodputEvent;
using resilience::GoodputPhase;
using resilience::GoodputTransition;

// Why the attempt ended: the first failed Job's reason, its first failed
// pod (by name), that pod's node and its containers' nonzero exit codes.
void DescribeFailure(const TrackedJobSet& t, GoodputTransition& out) {
  for (const auto& [name, job] : t.jobs) {
    const api::Condition* failed =
        FindCondition(job.job.status().conditions(), kJobFailed);
    if (failed == nullptr || failed->status() != "True") continue;
    out.reason = failed->reason();
    for (const auto& [pod_name, pod] : job.pods) {
      if (pod.status().phase() != api::kPodFailed) continue;
      out.pod = pod_name;
      out.node = pod.node_name();
      for (const api::ContainerStatus& c : pod.status().container_statuses()) {
        if (c.exit_code() != 0) out.exit_codes.push_back(c.exit_code());
      }
      break;
    }
    return;
  }
}

// A restart in place: no Job failed; the attempt ends at its first failed
// pod (by Job, then pod name).
void DescribeInPlaceFailure(const TrackedJobSet& t, GoodputTransition& out) {
  out.reason = "InPlaceRestart";
  for (const auto& [name, job] : t.jobs) {
    for (const auto& [pod_name, pod] : job.pods) {
      if (pod.status().phase() != api::kPodFailed) continue;
      out.pod = pod_name;
      out.node = pod.node_name();
      for (const api::ContainerStatus& c : pod.status().container_statuses()) {
        if (c.exit_code() != 0) out.exit_codes.push_back(c.exit_code());
      }
      return;
    }
  }
}

// The attempt a JobSet runs, counting restarts in place too: status.restarts
// plus the in-place attempt (T + 1 from when attempt T's pods are told to
// stop, docs/controller.md).
int32_t GoodputAttempt(const api::JobSetStatus& s) {
  int32_t in_place = s.current_in_place_restart_attempt();
  if (s.has_previous_in_place_restart_attempt()) {
    in_place = std::max(in_place, s.previous_in_place_restart_attempt() + 1);
  }
  return s.restarts() + in_place;
}

// A restart in place began in this reconcile: previousInPlaceRestartAttempt
// rose from `previous`.
bool InPlaceRestartBegan(std::optional<int32_t> previous,
                         const api::JobSetStatus& now) {
  return now.has_previous_in_place_restart_attempt() &&
         (!previous.has_value() ||
          now.previous_in_place_restart_attempt() > *previous);
}

absl::Time SubmittedAt(const api::JobSet& jobset) {
  return absl::FromUnixSeconds(
      jobset.metadata().creation_timestamp().seconds());
}

}  // namespace

resilience::GoodputLedger& ReconcilePass::Goodput(TrackedJobSet& t) {
  if (!t.goodput.has_value() && t.jobset.status().has_goodput()) {
    absl::StatusOr<resilience::GoodputLedger> stored =
        resilience::GoodputLedger::FromProto(t.jobset.status().goodput(),
                                             parts_.features.attempt_history);
    if (stored.ok()) t.goodput = *std::move(stored);
  }
  if (!t.goodput.has_value()) {
    t.goodput.emplace(SubmittedAt(t.jobset), parts_.features.attempt_history);
  }
  return *t.goodput;
}

void ReconcilePass::TrackGoodput(TrackedJobSet& t,
                                 const api::JobSetStatus& before,
                                 std::optional<int32_t> in_place_previous) {
  resilience::GoodputLedger& ledger = Goodput(t);
  const api::JobSetStatus& status = t.jobset.status();
  GoodputTransition tr;
  tr.time = now_;
  tr.attempt = GoodputAttempt(status);
  // A new ledger is stored once; after that only what a transition changed.
  bool changed = !status.has_goodput();
  if (!status.terminal_state().empty()) {
    if (ledger.phase() != GoodputPhase::kFinished) {
      tr.event = GoodputEvent::kFinished;
      tr.reason = status.terminal_state();
      DescribeFailure(t, tr);
      changed |= ledger.Apply(tr);
    }
  } else if (t.jobset.spec().suspend()) {
    if (ledger.phase() != GoodputPhase::kQueued) {
      tr.event = GoodputEvent::kSuspended;
      tr.reason = "Suspended";
      changed |= ledger.Apply(tr);
    }
  } else {
    if (ledger.phase() == GoodputPhase::kQueued) {
      tr.event = GoodputEvent::kAdmitted;
      changed |= ledger.Apply(tr);
    }
    if (status.restarts() > before.restarts()) {
      GoodputTransition failed = tr;
      failed.event = GoodputEvent::kAttemptFailed;
      DescribeFailure(t, failed);
      changed |= ledger.Apply(failed);
    } else if (InPlaceRestartBegan(in_place_previous, status)) {
      GoodputTransition failed = tr;
      failed.event = GoodputEvent::kAttemptFailed;
      DescribeInPlaceFailure(t, failed);
      changed |= ledger.Apply(failed);
    }
    if (JobSetPodsReady(t.jobset)) {
      GoodputTransition running = tr;
      running.event = GoodputEvent::kAllRunning;
      // Ignored where it does not fit the phase.
      changed |= ledger.Apply(running);
    }
  }
  if (changed) StoreGoodput(t);
}

void ReconcilePass::FeedGoodput(TrackedJobSet& t,
                                const resilience::GoodputTransition& tr) {
  if (Goodput(t).Apply(tr)) StoreGoodput(t);
}

void ReconcilePass::StoreGoodput(TrackedJobSet& t) {
  api::GoodputStatus stored = t.goodput->ToProto();
  if (google::protobuf::util::MessageDifferencer::Equals(
          stored, t.jobset.status().goodput())) {
    return;
  }
  *t.jobset.mutable_status()->mutable_goodput() = std::move(stored);
  writes_.JobSetChanged(t.key);
}

}  // namespace jobset::scheduler
