#include "scheduler/controller/jobset_reconcile.h"

#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "api/names.h"
#include "common/status_macros.h"
#include "google/protobuf/util/message_differencer.h"
#include "scheduler/controller/child_jobs.h"
#include "scheduler/controller/failure_policy.h"
#include "scheduler/controller/replicated_job_status.h"
#include "scheduler/controller/startup_policy.h"
#include "scheduler/controller/success_policy.h"
#include "scheduler/controller/ttl.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"

namespace jobset::scheduler {
namespace {

using ::google::protobuf::util::MessageDifferencer;

bool BeingDeleted(const api::Job& job) {
  return job.metadata().has_deletion_timestamp();
}

// Accumulates one reconcile's decisions; each step below is a member so
// that the sequence reads as upstream's Reconcile.
class Reconciler {
 public:
  Reconciler(const api::JobSet& jobset, const std::vector<ChildJob>& jobs,
             absl::Time now, const api::Features& features)
      : jobset_(jobset), jobs_(jobs), now_(now), features_(features) {
    out_.status = jobset.status();
  }

  absl::StatusOr<JobSetActions> Run();

 private:
  void SetCondition(const char* type, bool status, absl::string_view reason,
                    absl::string_view message, const char* event_type) {
    if (UpdateCondition(out_.status.mutable_conditions(), type, status, reason,
                        message, now_) &&
        event_type != nullptr) {
      out_.events.push_back(
          {event_type, std::string(reason), std::string(message)});
    }
  }
  // Transitions RestartingJobSet to False (only if it exists).
  void StopRestarting(absl::string_view reason, absl::string_view message) {
    UpdateCondition(out_.status.mutable_conditions(),
                    kConditionRestartingJobSet, false, reason, message, now_);
  }
  void SetFailed(const FailureDecision& decision);
  void SetCompleted();
  void ApplyFailurePolicy();
  void CreateJobs(const std::vector<api::ReplicatedJobStatus>& statuses);
  void SuspendJobs();
  void ResumeJobs(const std::vector<api::ReplicatedJobStatus>& statuses);
  void Finish();

  const api::JobSet& jobset_;
  const std::vector<ChildJob>& jobs_;
  const absl::Time now_;
  const api::Features features_;
  ChildJobs children_;
  JobSetActions out_;
};

void Reconciler::SetFailed(const FailureDecision& decision) {
  SetCondition(kConditionFailed, true, decision.reason, decision.message,
               "Warning");
  out_.status.set_terminal_state(kTerminalFailed);
  StopRestarting("JobSetFailed", "jobset failed");
}

void Reconciler::SetCompleted() {
  SetCondition(kConditionCompleted, true, "AllJobsCompleted",
               "jobset completed successfully", "Normal");
  out_.status.set_terminal_state(kTerminalCompleted);
  StopRestarting("JobSetCompleted", "jobset completed successfully");
}

void Reconciler::ApplyFailurePolicy() {
  const FailureDecision d =
      DecideFailurePolicy(jobset_, JobsOf(children_.failed), features_);
  switch (d.kind) {
    case FailureDecision::Kind::kFailJobSet:
      SetFailed(d);
      return;
    case FailureDecision::Kind::kRestartJobSet:
      out_.status.set_restarts(out_.status.restarts() + 1);
      if (d.counts_towards_max) {
        out_.status.set_restarts_count_towards_max(
            out_.status.restarts_count_towards_max() + 1);
      }
      UpdateCondition(out_.status.mutable_conditions(),
                      kConditionRestartingJobSet, true, d.reason, d.message,
                      now_);
      out_.events.push_back({"Warning", d.event_reason, d.message});
      return;
    case FailureDecision::Kind::kRestartJob: {
      const int rjob = ReplicatedJobIndex(jobset_, *d.job);
      const int index = JobIndex(*d.job);
      const int replicas = jobset_.spec().replicated_jobs(rjob).replicas();
      if (index < 0 || index >= replicas) return;
      api::ReplicatedJobStatus& s =
          *out_.status.mutable_replicated_jobs_status(rjob);
      if (s.job_restarts_size() == 0)
        s.mutable_job_restarts()->Resize(replicas, 0);
      s.set_job_restarts(index, s.job_restarts(index) + 1);
      if (d.counts_towards_max) {
        if (s.job_restarts_count_towards_max_size() == 0) {
          s.mutable_job_restarts_count_towards_max()->Resize(replicas, 0);
        }
        s.set_job_restarts_count_towards_max(
            index, s.job_restarts_count_towards_max(index) + 1);
      }
      out_.events.push_back({"Warning", d.event_reason, d.message});
      return;
    }
  }
}

void Reconciler::CreateJobs(
    const std::vector<api::ReplicatedJobStatus>& statuses) {
  const bool blocking =
      jobset_.spec().failure_policy().restart_strategy() == "BlockingRecreate";
  if (blocking && !children_.previous.empty()) return;
  absl::flat_hash_set<absl::string_view> existing;
  existing.reserve(jobs_.size());
  for (const ChildJob& c : jobs_) existing.insert(c.job->metadata().name());

  const StartupPlan plan = PlanCreation(jobset_, statuses);
  // Jobs are built from the status as it stands after this pass's changes
  // (restart counters included).
  api::JobSet current = jobset_;
  *current.mutable_status() = out_.status;
  const auto& rjobs = jobset_.spec().replicated_jobs();
  for (int i = 0; i < rjobs.size(); ++i) {
    if (!plan.allowed[i]) continue;
    std::optional<ChildJobFactory> factory;  // Built for a first missing Job.
    for (int j = 0; j < rjobs[i].replicas(); ++j) {
      if (existing.contains(
              api::JobName(jobset_.metadata().name(), rjobs[i].name(), j))) {
        continue;
      }
      if (!factory.has_value()) factory.emplace(current, i, features_);
      out_.create.push_back(factory->Make(j));
    }
  }
  if (InOrderStartup(jobset_) && !jobset_.spec().suspend()) {
    if (plan.in_progress) {
      SetCondition(kConditionStartupPolicyInProgress, true,
                   "InOrderStartupPolicyInProgress",
                   "in order startup policy is in progress", "Normal");
      UpdateCondition(out_.status.mutable_conditions(),
                      kConditionStartupPolicyCompleted, false,
                      "InOrderStartupPolicyCompleted",
                      "in order startup policy has completed", now_);
    } else {
      SetCondition(kConditionStartupPolicyCompleted, true,
                   "InOrderStartupPolicyCompleted",
                   "in order startup policy has completed", "Normal");
      UpdateCondition(out_.status.mutable_conditions(),
                      kConditionStartupPolicyInProgress, false,
                      "InOrderStartupPolicyInProgress",
                      "in order startup policy is in progress", now_);
    }
  }
}

void Reconciler::SuspendJobs() {
  for (const ChildJob& c : children_.active) {
    if (c.job->spec().suspend()) continue;
    api::Job suspended = *c.job;
    suspended.mutable_spec()->set_suspend(true);
    out_.update.push_back(std::move(suspended));
  }
  SetCondition(kConditionSuspended, true, "SuspendedJobs",
               "jobset is suspended", "Normal");
  StopRestarting("JobSetSuspended", "jobset is suspended");
}

void Reconciler::ResumeJobs(
    const std::vector<api::ReplicatedJobStatus>& statuses) {
  const StartupPlan plan = PlanResume(jobset_, statuses);
  for (const ChildJob& c : children_.active) {
    const int rjob = ReplicatedJobIndex(jobset_, c);
    if (!c.job->spec().suspend() || !plan.allowed[rjob]) continue;
    api::Job resumed = *c.job;
    resumed.mutable_status()->clear_start_time();
    // Merge (not replace) the template's scheduling fields, as upstream.
    const api::PodTemplateSpec& tmpl =
        jobset_.spec().replicated_jobs(rjob).template_().spec().template_();
    api::PodTemplateSpec* pod = resumed.mutable_spec()->mutable_template_();
    for (const auto& [k, v] : tmpl.metadata().labels()) {
      (*pod->mutable_metadata()->mutable_labels())[k] = v;
    }
    for (const auto& [k, v] : tmpl.metadata().annotations()) {
      (*pod->mutable_metadata()->mutable_annotations())[k] = v;
    }
    for (const auto& [k, v] : tmpl.spec().node_selector()) {
      (*pod->mutable_spec()->mutable_node_selector())[k] = v;
    }
    for (const api::Toleration& t : tmpl.spec().tolerations()) {
      bool present = false;
      for (const api::Toleration& have : pod->spec().tolerations()) {
        present = present || MessageDifferencer::Equals(have, t);
      }
      if (!present) *pod->mutable_spec()->add_tolerations() = t;
    }
    resumed.mutable_spec()->set_suspend(false);
    out_.update.push_back(std::move(resumed));
  }
  if (plan.in_progress) {
    SetCondition(kConditionStartupPolicyInProgress, true,
                 "InOrderStartupPolicyInProgress",
                 "in order startup policy is in progress", "Normal");
    return;
  }
  SetCondition(kConditionSuspended, false, "ResumeJobs", "jobset is resumed",
               "Normal");
}

void Reconciler::Finish() {
  out_.status_changed =
      !MessageDifferencer::Equals(out_.status, jobset_.status());
}

absl::StatusOr<JobSetActions> Reconciler::Run() {
  // 1-2. Deleted or managed elsewhere: nothing to do.
  if (jobset_.metadata().has_deletion_timestamp()) return out_;
  if (jobset_.spec().has_managed_by() &&
      jobset_.spec().managed_by() != kJobSetControllerName) {
    return out_;
  }
  // 3. Classify the child Jobs.
  JOBSET_ASSIGN_OR_RETURN(children_, ClassifyJobs(jobset_, jobs_, features_));
  // 4. Recompute the ReplicatedJob statuses.
  const std::vector<api::ReplicatedJobStatus> statuses =
      ComputeReplicatedJobsStatus(jobset_, children_);
  out_.status.clear_replicated_jobs_status();
  for (const api::ReplicatedJobStatus& s : statuses) {
    *out_.status.add_replicated_jobs_status() = s;
  }

  // 5. Finished: tear down what still runs, then the TTL.
  if (IsConditionTrue(out_.status.conditions(), kConditionCompleted) ||
      IsConditionTrue(out_.status.conditions(), kConditionFailed)) {
    for (const ChildJob& c : children_.active) {
      if (!BeingDeleted(*c.job))
        out_.remove.push_back(c.job->metadata().name());
    }
    if (std::optional<absl::Time> expiry = TtlExpiry(jobset_)) {
      if (now_ >= *expiry) {
        out_.delete_jobset = true;
      } else {
        out_.requeue_at = *expiry;
      }
    }
    Finish();
    return std::move(out_);
  }

  // 6. Delete the previous attempt's Jobs.
  for (const ChildJob& c : children_.previous) {
    if (!BeingDeleted(*c.job)) out_.remove.push_back(c.job->metadata().name());
  }

  // 7. All Jobs ready: the restart (if any) is over.
  if (!jobset_.spec().suspend()) {
    int64_t ready = 0, replicas = 0;
    for (int i = 0; i < jobset_.spec().replicated_jobs_size(); ++i) {
      ready += statuses[i].ready() + statuses[i].succeeded();
      replicas += jobset_.spec().replicated_jobs(i).replicas();
    }
    if (ready == replicas) StopRestarting("JobsReady", "all jobs are ready");
  }

  // 8. Failures first: one failure-policy action, nothing else this pass.
  if (!children_.failed.empty()) {
    ApplyFailurePolicy();
    Finish();
    return std::move(out_);
  }

  // 9. The success policy.
  if (!children_.successful.empty() &&
      SuccessPolicySatisfied(jobset_, JobsOf(children_.successful))) {
    SetCompleted();
    Finish();
    return std::move(out_);
  }

  // 10-11. The headless Service and PVCs have no counterpart here: peer
  // discovery is the host table the controller hands agents, and
  // volumeClaimPolicies are refused at admission.
  // 13. Create missing Jobs (startup order and dependsOn).
  CreateJobs(statuses);
  // 14. Suspend or resume.
  if (jobset_.spec().suspend()) {
    SuspendJobs();
  } else {
    ResumeJobs(statuses);
  }
  Finish();
  return std::move(out_);
}

}  // namespace

absl::StatusOr<JobSetActions> ReconcileJobSet(const api::JobSet& jobset,
                                              const std::vector<ChildJob>& jobs,
                                              absl::Time now,
                                              const api::Features& features) {
  return Reconciler(jobset, jobs, now, features).Run();
}

absl::StatusOr<JobSetActions> ReconcileJobSet(
    const api::JobSet& jobset, const std::vector<const api::Job*>& jobs,
    absl::Time now, const api::Features& features) {
  return ReconcileJobSet(jobset, ParseChildJobs(jobs), now, features);
}

}  // namespace jobset::scheduler
