#include "scheduler/controller/in_place_restart.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/pod_phase.h"
#include "scheduler/controller/job_reconcile.h"
#include "scheduler/records/conditions.h"

namespace jobset::scheduler {
namespace {

// A pod of a node that was lost: it cannot restart where it was.
bool Disrupted(const api::PodRecord& pod) {
  return IsConditionTrue(pod.status().conditions(), "DisruptionTarget");
}

// The pod stopped its previous attempt: it waits at the barrier.
void MarkStopped(api::PodRecord* pod) {
  pod->set_in_place_stopped(true);
  api::PodStatus* status = pod->mutable_status();
  status->set_phase(api::kPodPending);
  status->clear_reason();
  status->clear_message();
  for (auto* statuses : {status->mutable_init_container_statuses(),
                         status->mutable_container_statuses()}) {
    for (api::ContainerStatus& c : *statuses) {
      // exit_code, signal and finished_at stay: the last termination.
      c.set_flat_state("waiting");
      c.set_reason(kReasonInPlaceRestarting);
      c.set_ready(false);
      c.set_restart_count(c.restart_count() + 1);
    }
  }
  for (api::Condition& c : *status->mutable_conditions()) {
    if (c.type() == "Ready" || c.type() == "ContainersReady") {
      c.set_status("False");
      c.set_reason(kReasonInPlaceRestarting);
    }
  }
}

std::string FailureOf(const api::PodRecord& pod) {
  const api::PodStatus& s = pod.status();
  for (const api::ContainerStatus& c : s.container_statuses()) {
    if (c.flat_state() == "terminated" &&
        (c.exit_code() != 0 || c.signal() != 0)) {
      return absl::StrCat(
          "container ", c.name(), " exited with code ", c.exit_code(),
          c.reason().empty() ? "" : absl::StrCat(" (", c.reason(), ")"));
    }
  }
  if (!s.reason().empty()) return s.reason();
  return "pod failed";
}

}  // namespace

bool InPlaceRestartWaits(const api::JobSetStatus& status) {
  return status.has_previous_in_place_restart_attempt() &&
         status.previous_in_place_restart_attempt() ==
             status.current_in_place_restart_attempt();
}

InPlaceStep StepInPlaceRestart(api::JobSet& jobset,
                               const std::vector<InPlacePod>& pods) {
  InPlaceStep step;
  api::JobSetStatus* status = jobset.mutable_status();
  if (!status->has_current_in_place_restart_attempt()) {
    status->set_current_in_place_restart_attempt(0);
    step.status_changed = true;
  }
  const int32_t current = status->current_in_place_restart_attempt();
  int32_t target = current;
  for (const InPlacePod& p : pods) {
    target = std::max(target, p.pod->in_place_restart_attempt());
  }
  std::vector<bool> marked(pods.size(), false);
  auto changed = [&](size_t i) {  // Each index once.
    if (!marked[i]) step.changed.push_back(i);
    marked[i] = true;
  };

  // Stop confirmations of a restart under way; the first failure of the
  // current attempt otherwise.
  std::optional<size_t> failed;
  for (size_t i = 0; i < pods.size(); ++i) {
    api::PodRecord* pod = pods[i].pod;
    if (!pods[i].reported || pod->node_name().empty()) continue;
    if (pod->in_place_restart_attempt() > current && !pod->in_place_stopped() &&
        PodFinished(*pod) && !Disrupted(*pod)) {
      MarkStopped(pod);
      changed(i);
    } else if (target == current && !failed.has_value() &&
               pod->in_place_restart_attempt() == current &&
               pod->status().phase() == api::kPodFailed) {
      failed = i;
    }
  }

  if (failed.has_value() && target == current) {
    const api::PodRecord& trigger = *pods[*failed].pod;
    const int64_t counted =
        int64_t{current} + 1 + status->restarts_count_towards_max();
    if (counted > jobset.spec().failure_policy().max_restarts()) {
      step.fail.emplace("ReachedMaxRestarts",
                        "jobset failed due to reaching max number of restarts");
      return step;
    }
    target = current + 1;
    status->set_previous_in_place_restart_attempt(current);
    step.status_changed = true;
    for (size_t i = 0; i < pods.size(); ++i) {
      api::PodRecord* pod = pods[i].pod;
      if (pod->status().phase() == api::kPodSucceeded ||
          pod->has_deletion_timestamp() ||
          pod->in_place_restart_attempt() != current) {
        continue;
      }
      // Without a node: a replacement not placed yet takes the new attempt.
      // A pod of a lost node is left to the Job layer, which replaces it.
      if (!pod->node_name().empty() && Disrupted(*pod)) continue;
      pod->set_in_place_restart_attempt(target);
      changed(i);
      if (pod->node_name().empty()) continue;
      // A pod waiting for its Secrets and ConfigMaps was never sent: it
      // stops at once (and keeps waiting when sent again).
      if (PodFinished(*pod) || pod->waiting_for_config()) {
        MarkStopped(pod);
      } else {
        step.stop.push_back(i);
      }
    }
    step.events.push_back(
        {"Warning", "InPlaceRestart",
         absl::StrCat("restarting every pod in place (attempt ", target,
                      "): pod ", trigger.name(),
                      " failed: ", FailureOf(trigger))});
  }

  if (target == current) return step;
  // The barrier: every bound pod of the new attempt has stopped its old one.
  for (const InPlacePod& p : pods) {
    const api::PodRecord& pod = *p.pod;
    if (pod.node_name().empty() || pod.status().phase() == api::kPodSucceeded ||
        pod.has_deletion_timestamp() || Disrupted(pod)) {
      continue;
    }
    if (pod.in_place_restart_attempt() != target || !pod.in_place_stopped())
      return step;
  }
  status->set_current_in_place_restart_attempt(target);
  step.status_changed = true;
  step.launch = true;
  for (size_t i = 0; i < pods.size(); ++i) {
    api::PodRecord* pod = pods[i].pod;
    if (pod->in_place_stopped()) {
      pod->set_in_place_stopped(false);
      changed(i);
    } else if (pod->node_name().empty() &&
               pod->status().phase() != api::kPodSucceeded &&
               pod->in_place_restart_attempt() < target) {
      pod->set_in_place_restart_attempt(target);
      changed(i);
    }
  }
  step.events.push_back(
      {"Normal", "InPlaceRestarted",
       absl::StrCat("every pod stopped attempt ", target - 1,
                    "; starting attempt ", target, " in place")});
  return step;
}

}  // namespace jobset::scheduler
