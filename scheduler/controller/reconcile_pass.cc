#include "scheduler/controller/reconcile_pass.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/uid.h"
#include "scheduler/controller/attempt_pods.h"
#include "scheduler/controller/child_jobs.h"
#include "scheduler/controller/in_place_restart.h"
#include "scheduler/controller/job_reconcile.h"
#include "scheduler/controller/limits.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"
#include "scheduler/records/records.h"
#include "store/keys.h"

namespace jobset::scheduler {
namespace {

constexpr int kMaxReconcileRounds = 10;

}  // namespace

ReconcilePass::ReconcilePass(PassParts parts, PassWrites& writes,
                             absl::Time now)
    : parts_(parts), writes_(writes), now_(now) {
  parts_.deferred.retired().Record(parts_.state,
                                   parts_.features.attempt_history, writes_);
}

void ReconcilePass::Reconcile(const std::string& key) {
  TrackedJobSet* t = parts_.state.Find(key);
  if (t == nullptr) return;
  if (t->deleted) {
    DeleteJobSet(*t);
    return;
  }
  ReconcileOne(*t);
}

bool ReconcilePass::InPlace(const TrackedJobSet& t) const {
  return parts_.features.in_place_restart &&
         t.jobset.spec().failure_policy().restart_strategy() ==
             "InPlaceRestart" &&
         t.jobset.status().terminal_state().empty() &&
         !t.jobset.metadata().has_deletion_timestamp();
}

void ReconcilePass::RestartInPlace(TrackedJobSet& t) {
  std::vector<InPlacePod> pods;
  std::vector<JobState*> owners;
  for (auto& [name, job] : t.jobs) {
    if (job.deleting()) continue;
    for (auto& [pod_name, pod] : job.pods) {
      pods.push_back({&pod, t.reported.contains(&pod)});
      owners.push_back(&job);
    }
  }
  InPlaceStep step = StepInPlaceRestart(t.jobset, pods);
  if (step.fail.has_value()) {
    t.fail = TrackedJobSet::Failure{step.fail->first, step.fail->second};
    return;
  }
  if (step.status_changed) writes_.JobSetChanged(t.key);
  for (size_t i : step.changed) {
    writes_.PodsChanged(t, *owners[i]);
    t.MarkJobDirty(*owners[i]);
  }
  for (size_t i : step.stop) writes_.Stop(*pods[i].pod);
  if (step.launch) writes_.Launched(t.key);
  for (JobSetEvent& e : step.events) writes_.Event(t.key, std::move(e));
}

void ReconcilePass::ReconcileOne(TrackedJobSet& t) {
  // A restart in place looks at the reports first: a pod stopping for it is
  // not finished, and a failure restarts the JobSet instead of one pod.
  const api::JobSetStatus& status = t.jobset.status();
  const std::optional<int32_t> in_place_previous =
      status.has_previous_in_place_restart_attempt()
          ? std::optional(status.previous_in_place_restart_attempt())
          : std::nullopt;
  if (InPlace(t)) RestartInPlace(t);
  for (JobSetEvent& e : t.pod_events.Take()) writes_.Event(t.key, std::move(e));
  // Agents' reports: persist them, and let stopped pods go.
  for (const auto& [pod, job] : std::exchange(t.reported, {})) {
    if (pod->has_deletion_timestamp() && PodFinished(*pod)) {
      // Foreground: a Job being deleted goes with all its pods at once,
      // when the last one has stopped (the Job layer looks at it again).
      if (job->deleting()) {
        t.MarkJobDirty(*job);
      } else {
        ErasePod(t, *job, std::string(pod->name()));
      }
      continue;
    }
    writes_.PodsChanged(t, *job);
    if (PodFinished(*pod)) writes_.Release(*pod);
    if (pod->status().phase() == api::kPodFailed)
      AttributeFailure(t, *job, *pod);
  }
  t.wake.reset();

  const api::JobSetStatus before = t.jobset.status();
  FailIfUnrunnable(t);
  CheckProgress(t);
  std::vector<JobSetEvent> decided;  // This reconcile's events (metrics).
  for (int round = 0; round < kMaxReconcileRounds; ++round) {
    ReconcileJobs(t);
    // Whether the JobSet layer changed anything; the Job layer ran first, so
    // when it did not and no Job waits, another round would see the same.
    bool changed = false;
    std::vector<ChildJob> jobs;
    jobs.reserve(t.jobs.size());
    for (const auto& [name, job] : t.jobs) jobs.push_back(job.child);
    absl::StatusOr<JobSetActions> actions =
        ReconcileJobSet(t.jobset, jobs, now_, parts_.features);
    if (!actions.ok()) {
      writes_.Event(t.key, {"Warning", "ReconcileError",
                            std::string(actions.status().message())});
      break;
    }
    if (actions->status_changed) {
      *t.jobset.mutable_status() = actions->status;
      writes_.JobSetChanged(t.key);
      changed = true;
    }
    for (api::Job& job : actions->create) {
      job.mutable_metadata()->set_uid(NewUid());
      job.mutable_metadata()->mutable_creation_timestamp()->set_seconds(
          absl::ToUnixSeconds(now_));
      t.dirty_jobs.insert(job.metadata().name());
      writes_.JobChanged(t, ControllerState::AddJob(t, std::move(job)));
      changed = true;
    }
    for (const std::string& name : actions->remove) {
      auto it = t.jobs.find(name);
      if (it == t.jobs.end() || it->second.deleting()) continue;
      it->second.job.mutable_metadata()
          ->mutable_deletion_timestamp()
          ->set_seconds(absl::ToUnixSeconds(now_));
      // Stored by the next pass (unless this one writes the Job anyway).
      parts_.deferred.Add(t.key, name);
      t.dirty_jobs.insert(name);
      changed = true;
    }
    for (api::Job& job : actions->update) {
      t.dirty_jobs.insert(job.metadata().name());
      auto it = t.jobs.find(job.metadata().name());
      if (it == t.jobs.end()) {
        writes_.JobChanged(t, ControllerState::AddJob(t, std::move(job)));
      } else {
        it->second.SetJob(std::move(job));
        writes_.JobChanged(t, it->second);
      }
      changed = true;
    }
    for (JobSetEvent& e : actions->events) {
      if (parts_.metrics != nullptr) decided.push_back(e);
      writes_.Event(t.key, std::move(e));
    }
    if (actions->delete_jobset) {  // TTL.
      DeleteJobSet(t);
      return;
    }
    if (actions->requeue_at) parts_.state.WakeAt(t, *actions->requeue_at);
    if (!changed && t.dirty_jobs.empty()) break;
  }
  if (t.jobset.status().restarts() > before.restarts())
    writes_.RestartDecided();
  TrackGoodput(t, before, in_place_previous);
  if (parts_.metrics != nullptr) {
    RecordReconcile(*parts_.metrics, t, before, decided, now_);
  }
}

bool ReconcilePass::FailIfUnrunnable(TrackedJobSet& t) {
  std::optional<TrackedJobSet::Failure> why = std::exchange(t.fail, {});
  api::JobSetStatus* status = t.jobset.mutable_status();
  if (!status->terminal_state().empty() ||
      t.jobset.metadata().has_deletion_timestamp()) {
    return false;
  }
  if (!why.has_value()) {
    const int64_t pods = PodsPerAttempt(t.jobset);
    if (pods <= parts_.max_pods_per_attempt) return false;
    why = TrackedJobSet::Failure{
        kReasonTooManyPods,
        absl::StrCat("spec.replicatedJobs: ", pods,
                     " pods per attempt (replicas x parallelism) exceed the "
                     "limit of ",
                     parts_.max_pods_per_attempt,
                     "; the JobSet is not expanded")};
  }
  // As the failure policy fails a JobSet: the JobSet layer then removes
  // whatever of it still runs.
  UpdateCondition(status->mutable_conditions(), kConditionFailed, true,
                  why->reason, why->message, now_);
  UpdateCondition(status->mutable_conditions(), kConditionRestartingJobSet,
                  false, "JobSetFailed", "jobset failed", now_);
  status->set_terminal_state(kTerminalFailed);
  writes_.JobSetChanged(t.key);
  writes_.Event(t.key, {"Warning", why->reason, why->message});
  return true;
}

void ReconcilePass::ReconcileJobs(TrackedJobSet& t) {
  const std::set<std::string> names = std::exchange(t.dirty_jobs, {});
  for (const std::string& name : names) {
    auto job_it = t.jobs.find(name);
    if (job_it == t.jobs.end()) continue;
    JobState& state = job_it->second;
    state.dirty = false;
    api::Job& job = state.job;
    if (state.deleting()) {
      // Foreground deletion: the Job goes, with its pods, once none of them
      // runs any more.
      bool running = false;
      for (auto& [pod_name, pod] : state.pods) {
        // A pod waiting for its Secrets and ConfigMaps never ran.
        if (!OnNode(pod) || pod.waiting_for_config()) continue;
        running = true;
        RemovePod(t, state, pod);
      }
      if (!running) EraseJob(t, name);
      continue;
    }
    std::vector<const api::PodRecord*> pods;
    pods.reserve(state.pods.size());
    for (const auto& [pod_name, pod] : state.pods) pods.push_back(&pod);
    JobActions a = ReconcileJob(job, pods, now_);
    if (a.status_changed) {
      *job.mutable_status() = a.status;
      writes_.JobChanged(t, state);
    }
    for (const std::string& p : a.remove) {
      if (auto it = state.pods.find(p); it != state.pods.end())
        RemovePod(t, state, it->second);
    }
    AddPods(t, state, a.create);
    // A finished Job with no pod on a node sends nothing more: its shape
    // (a copy of the Job, a few KB) goes; Shape() builds it again if a pod
    // is sent after all.
    if (state.shape != nullptr && JobFinished(job) &&
        std::none_of(state.pods.begin(), state.pods.end(),
                     [](const auto& pod) { return OnNode(pod.second); })) {
      state.shape.reset();
    }
    if (job.spec().has_active_deadline_seconds() &&
        job.status().has_start_time() && !JobFinished(job)) {
      const absl::Time deadline =
          absl::FromUnixSeconds(job.status().start_time().seconds()) +
          absl::Seconds(job.spec().active_deadline_seconds());
      parts_.state.WakeAt(t, deadline);
    }
  }
}

void ReconcilePass::AddPods(TrackedJobSet& t, JobState& job,
                            const std::vector<int>& indexes) {
  if (indexes.empty()) return;
  const std::string& job_name = job.job.metadata().name();
  for (int index : indexes) {
    std::string uid = NewUid();
    auto [it, added] = job.pods.try_emplace(PodName(job_name, index, uid));
    it->second = NewPodRecord(it->first, std::move(uid), index, now_);
    // A pod created while a JobSet restarts in place runs its current
    // attempt.
    if (InPlace(t)) {
      it->second.set_in_place_restart_attempt(
          t.jobset.status().current_in_place_restart_attempt());
    }
    parts_.state.IndexPod(t, job, it->second);
  }
  // The Job's status counts them already: the Job layer need not look again.
  writes_.PodsChanged(t, job);
  parts_.gangs.Add(t.key);
  t.gang.priority = job.job.spec().template_().spec().priority();
}

void ReconcilePass::RemovePod(TrackedJobSet& t, JobState& job,
                              api::PodRecord& pod) {
  // A pod waiting for its Secrets and ConfigMaps never reached its agent:
  // nothing is to stop.
  if (!OnNode(pod) || pod.waiting_for_config()) {
    ErasePod(t, job, pod.name());
    return;
  }
  if (pod.has_deletion_timestamp()) return;  // Already stopping.
  pod.mutable_deletion_timestamp()->set_seconds(absl::ToUnixSeconds(now_));
  // Foreground: the pods of a Job being deleted are stopping because it is
  // (the store shows them with its deletionTimestamp, and Load stops them
  // again), so a restart does not rewrite every pod record to say so.
  if (!job.deleting()) {
    writes_.PodsChanged(t, job);
  }
  writes_.Stop(pod);
}

void ReconcilePass::ErasePod(TrackedJobSet& t, JobState& job,
                             const std::string& name) {
  auto it = job.pods.find(name);
  if (it == job.pods.end()) return;
  const api::PodRecord& pod = it->second;
  parts_.state.UnindexPod(pod);
  t.MarkJobDirty(job);
  if (Placed(pod)) {
    parts_.gangs.CapacityGrew();
    writes_.Release(pod);
  }
  // Kept for its log (a suspension's, or a finished Job's leftovers).
  parts_.deferred.retired().KeepPod(t, job, job.pods.extract(it), writes_);
  writes_.PodsChanged(t, job);
}

void ReconcilePass::EraseJob(TrackedJobSet& t, const std::string& name) {
  auto it = t.jobs.find(name);
  if (it == t.jobs.end()) return;
  for (auto& [pod_name, pod] : it->second.pods) {
    parts_.state.UnindexPod(pod);
    if (Placed(pod)) {
      parts_.gangs.CapacityGrew();
      writes_.Release(pod);
    }
  }
  // The new attempt's pods wait for every old Job to go (gang_placement.cc).
  parts_.gangs.Retry(t.key);
  const std::string& ns = t.jobset.metadata().namespace_();
  const std::string& jobset = t.jobset.metadata().name();
  writes_.Delete(store::keys::JobKey(ns, jobset, name));
  for (int i = 0; i < std::max(1, it->second.stored_chunks); ++i)
    writes_.Delete(JobPodsChunkKey(ns, jobset, name, i));
  parts_.requirements.Erase(it->second.job.metadata().uid());
  parts_.deferred.Done(t.key, name);
  // Kept for its pods' logs (a restart's previous attempt, mostly).
  parts_.deferred.retired().KeepJob(t, std::move(it->second), writes_);
  t.jobs.erase(it);
}

void ReconcilePass::DeleteJobSet(TrackedJobSet& t) {
  const std::string key = t.key;
  std::vector<std::string> jobs;
  for (const auto& [name, job] : t.jobs) {
    jobs.push_back(name);
    for (const auto& [pod_name, pod] : job.pods) {
      if (OnNode(pod) && !pod.has_deletion_timestamp()) writes_.Stop(pod);
    }
  }
  for (const std::string& name : jobs) EraseJob(t, name);
  parts_.deferred.retired().Forget(key, writes_);
  EraseAttemptPods(t, writes_);
  parts_.events.Erase(t, writes_);
  writes_.ForgetJobSet(key);
  // Deleted through the API the JobSet is gone already; by its TTL, it goes
  // now.
  if (!t.deleted) {
    writes_.Delete(store::keys::JobSetKey(t.jobset.metadata().namespace_(),
                                          t.jobset.metadata().name()));
  }
  parts_.gangs.Remove(key);
  parts_.state.Untrack(key);
}

}  // namespace jobset::scheduler
