// The JobSet integration (kueue-semantics.md §2.4): a Workload for each
// JobSet Kueue manages, Finished when the JobSet ends, deleted with it; the
// JobSet started with its admission's flavors, stopped when it runs
// unadmitted or is evicted, and the evicted Workload's quota released once
// its pods have ended.
#include <utility>

#include "common/uid.h"
#include "scheduler/controller/job_reconcile.h"
#include "scheduler/controller/queue_stage.h"
#include "scheduler/queues/api_objects.h"
#include "scheduler/queues/jobset_workload.h"
#include "scheduler/queues/podset_injection.h"
#include "scheduler/records/conditions.h"

namespace jobset::scheduler {
namespace {

// QuotaReserved's reason once an evicted Workload gave its quota back.
constexpr absl::string_view kReasonPending = "Pending";

// Whether any pod of `t` was placed and has not ended: what an evicted
// Workload's quota waits for.
bool HasLivePods(const TrackedJobSet& t) {
  for (const auto& [name, job] : t.jobs) {
    for (const auto& [pod_name, pod] : job.pods) {
      if (OnNode(pod) && !PodFinished(pod)) return true;
    }
  }
  return false;
}

bool Reserved(const api::Workload& wl) {
  return wl.status().has_admission() &&
         IsConditionTrue(wl.status().conditions(), kWorkloadQuotaReserved);
}

}  // namespace

void QueueAdmission::Stage::Integrate(const std::string& key,
                                      TrackedJobSet& t) {
  if (t.deleted) return;
  const api::JobSet& js = t.jobset;
  live_job_uids_.insert(js.metadata().uid());
  if (t.timing.last_restart)
    restarts_[js.metadata().uid()] = *t.timing.last_restart;
  if (!queues::IsManaged(js, qa_.options_.manage_jobs_without_queue_name))
    return;
  const std::string wl_name = queues::WorkloadName(js);
  const std::string wl_key =
      WorkloadStoreKey(js.metadata().namespace_(), wl_name);
  const api::Workload* wl = Current(wl_key);
  bool succeeded = false;
  const bool finished = JobSetFinished(js, &succeeded);
  if (wl == nullptr) {
    if (finished) return;
    if (!js.spec().suspend()) {
      // Running, not admitted: stopped (JF "Not admitted by cluster
      // queue"); created suspended, this happens only when a JobSet was
      // stored before Kueue managed it.
      EditJobSet(t)->mutable_spec()->set_suspend(true);
      Event(key, "Normal", "Stopped", "Not admitted by cluster queue");
    }
    CreateWorkload(key, t, wl_key);
    return;
  }
  if (IsConditionTrue(wl->status().conditions(), kWorkloadFinished)) return;
  if (finished) {
    Measure([cq = MetricQueueOf(*wl),
             priority_class =
                 wl->spec().priority_class_name()](ControllerMetrics& m) {
      if (!cq.empty()) m.WorkloadFinished(cq, priority_class);
    });
    api::Workload* w = Edit(wl_key);
    UpdateCondition(w->mutable_status()->mutable_conditions(),
                    kWorkloadFinished, true, succeeded ? "Succeeded" : "Failed",
                    succeeded ? "Job finished successfully" : "Job failed",
                    now_);
    capacity_changed_ = true;
    return;
  }
  const bool reserved = Reserved(*wl);
  const bool evicted =
      IsConditionTrue(wl->status().conditions(), kWorkloadEvicted);
  if (reserved && evicted) {
    if (!JobSetNow(t).spec().suspend()) {
      queues::Restore(queues::SavedTemplatesOf(*wl), EditJobSet(t));
    }
    if (!HasLivePods(t)) ReleaseEvicted(wl_key);
    return;
  }
  if (!reserved && !JobSetNow(t).spec().suspend()) {
    queues::Restore(queues::SavedTemplatesOf(*wl), EditJobSet(t));
    Event(key, "Normal", "Stopped", "Not admitted by cluster queue");
    return;
  }
  if (reserved && JobSetNow(t).spec().suspend()) {
    // Admitted but suspended (its start did not land, or someone
    // suspended it): started again, as Kueue's reconciler does.
    Start(t, *wl);
    return;
  }
  if (reserved) {
    if (Drain(t, wl_key, *wl) || MaximumExecutionTime(t, wl_key, *wl)) return;
    Reclaim(t, wl_key, *wl);
    WaitForPodsReady(t, wl_key);
    return;
  }
  if (!reserved) {
    Restarted(wl_key, *wl);
    // Pending: follow the queue-name label (§2.4 step 7).
    const std::string queue = queues::QueueName(js);
    if (wl->spec().queue_name() != queue) {
      Edit(wl_key)->mutable_spec()->set_queue_name(queue);
      qa_.parked_.erase(ShortKey(*wl));
    }
  }
}

void QueueAdmission::Stage::CreateWorkload(const std::string& key,
                                           const TrackedJobSet& t,
                                           const std::string& wl_key) {
  const api::JobSet& js = t.jobset;
  const std::string cq =
      ClusterQueueOf(js.metadata().namespace_(), queues::QueueName(js));
  absl::StatusOr<queues::Workload> model = queues::WorkloadFor(
      js, cq, [&](absl::string_view name) -> std::optional<int32_t> {
        auto it = priority_classes_.find(std::string(name));
        if (it == priority_classes_.end()) return std::nullopt;
        return it->second;
      });
  if (!model.ok()) {
    // Kept suspended; told once (a priority class may appear later).
    if (qa_.warned_.insert(key).second) {
      Event(key, "Warning",
            model.status().code() == absl::StatusCode::kNotFound
                ? queues::kReasonWorkloadPriorityClassNotFound
                : "FailedToCreateWorkload",
            std::string(model.status().message()));
    }
    return;
  }
  qa_.warned_.erase(key);
  absl::StatusOr<api::Workload> wl = queues::WorkloadObjectFor(js, *model);
  if (!wl.ok()) {
    if (qa_.warned_.insert(key).second) {
      Event(key, "Warning", "FailedToCreateWorkload",
            std::string(wl.status().message()));
    }
    return;
  }
  api::ObjectMeta* meta = wl->mutable_metadata();
  meta->set_uid(NewUid());
  meta->set_generation(1);
  *meta->mutable_creation_timestamp() = ToTimestamp(now_);
  api::KueueObject object;
  *object.mutable_workload() = *std::move(wl);
  staged_[wl_key] = std::move(object);
  Event(key, "Normal", "CreatedWorkload",
        absl::StrCat("Created Workload: ", js.metadata().namespace_(), "/",
                     meta->name()));
}

// Injects the admission into the JobSet and unsuspends it.
void QueueAdmission::Stage::Start(TrackedJobSet& t, const api::Workload& wl) {
  queues::FlavorIndex flavors = Flavors();
  absl::StatusOr<queues::Workload> model =
      queues::WorkloadFromApi(wl, wl.status().admission().cluster_queue());
  if (!model.ok() || !model->admission.has_value()) return;
  api::JobSet copy = JobSetNow(t);
  // Templates back to the Workload's copies first: a template holding an
  // earlier admission's selectors would conflict with a new flavor.
  queues::Restore(queues::SavedTemplatesOf(wl), &copy);
  absl::StatusOr<queues::SavedPodTemplates> started =
      queues::Inject(*model->admission, wl.spec().queue_name(), flavors, &copy);
  if (!started.ok()) {
    if (started.status().code() == absl::StatusCode::kFailedPrecondition) {
      Measure([cq = wl.status().admission().cluster_queue(),
               priority_class =
                   wl.spec().priority_class_name()](ControllerMetrics& m) {
        m.WorkloadFinished(cq, priority_class);
      });
      api::Workload* w = Edit(
          WorkloadStoreKey(wl.metadata().namespace_(), wl.metadata().name()));
      UpdateCondition(w->mutable_status()->mutable_conditions(),
                      kWorkloadFinished, true, "FailedToStart",
                      started.status().message(), now_);
      capacity_changed_ = true;
    }
    // kNotFound (a flavor went away): tried again at the next change.
    return;
  }
  *EditJobSet(t) = std::move(copy);
  Event(t.key, "Normal", "Started",
        absl::StrCat("Admitted by clusterQueue ",
                     wl.status().admission().cluster_queue()));
}

// An evicted Workload whose pods are gone gives its quota back and
// queues again (§2.4 step 6).
void QueueAdmission::Stage::ReleaseEvicted(const std::string& wl_key) {
  api::Workload* w = Edit(wl_key);
  auto* conditions = w->mutable_status()->mutable_conditions();
  const api::Condition* evicted = FindCondition(*conditions, kWorkloadEvicted);
  const std::string reason = evicted->reason();
  const std::string message = evicted->message();
  AccumulateExecution(w);
  w->mutable_status()->clear_admission();
  w->mutable_status()->clear_reclaimable_pods();
  UpdateCondition(conditions, kWorkloadQuotaReserved, false, kReasonPending,
                  message, now_);
  UpdateCondition(conditions, kWorkloadAdmitted, false, "NoReservation",
                  "The workload has no reservation", now_);
  // Requeued at once, but not while a backoff runs, once deactivated, or
  // while the queue that drained it is stopped.
  const bool backing_off =
      w->status().requeue_state().has_requeue_at() &&
      FromTimestamp(w->status().requeue_state().requeue_at()) > now_;
  const bool inactive = w->spec().has_active() && !w->spec().active();
  const bool stopped =
      reason == kClusterQueueStopped || reason == kLocalQueueStopped;
  SetCondition(conditions, kWorkloadRequeued,
               !backing_off && !inactive && !stopped, reason, message, now_);
  UpdateCondition(conditions, kWorkloadPodsReady, false, kWaitForStart,
                  kNotReadyMessage, now_);
  capacity_changed_ = true;
}

namespace {

bool Stopped(absl::string_view stop_policy) {
  return stop_policy == "Hold" || stop_policy == "HoldAndDrain";
}

}  // namespace

bool QueueAdmission::Stage::Drain(TrackedJobSet& t, const std::string& wl_key,
                                  const api::Workload& wl) {
  auto cq = cluster_queues_.find(wl.status().admission().cluster_queue());
  if (cq != cluster_queues_.end() &&
      cq->second->spec().stop_policy() == "HoldAndDrain") {
    Stop(t, wl_key, kClusterQueueStopped, "The ClusterQueue is stopped", "");
    return true;
  }
  auto lq = local_queues_.find(
      absl::StrCat(wl.metadata().namespace_(), "/", wl.spec().queue_name()));
  if (lq != local_queues_.end() &&
      lq->second->spec().stop_policy() == "HoldAndDrain") {
    Stop(t, wl_key, kLocalQueueStopped, "The LocalQueue is stopped", "");
    return true;
  }
  return false;
}

void QueueAdmission::Stage::Restarted(const std::string& wl_key,
                                      const api::Workload& wl) {
  const api::Condition* requeued =
      FindCondition(wl.status().conditions(), kWorkloadRequeued);
  if (requeued == nullptr || requeued->status() != "False") return;
  const std::string lq_key =
      absl::StrCat(wl.metadata().namespace_(), "/", wl.spec().queue_name());
  if (requeued->reason() == kClusterQueueStopped) {
    auto cq = cluster_queues_.find(
        ClusterQueueOf(wl.metadata().namespace_(), wl.spec().queue_name()));
    if (cq == cluster_queues_.end() ||
        Stopped(cq->second->spec().stop_policy()))
      return;
    SetCondition(Edit(wl_key)->mutable_status()->mutable_conditions(),
                 kWorkloadRequeued, true, "ClusterQueueRestarted",
                 "The ClusterQueue was restarted after being stopped", now_);
  } else if (requeued->reason() == kLocalQueueStopped) {
    auto lq = local_queues_.find(lq_key);
    if (lq == local_queues_.end() || Stopped(lq->second->spec().stop_policy()))
      return;
    SetCondition(Edit(wl_key)->mutable_status()->mutable_conditions(),
                 kWorkloadRequeued, true, "LocalQueueRestarted",
                 "The LocalQueue was restarted after being stopped", now_);
  }
}

void QueueAdmission::Stage::Reclaim(const TrackedJobSet& t,
                                    const std::string& wl_key,
                                    const api::Workload& wl) {
  const std::vector<api::ReclaimablePod> now =
      queues::ReclaimablePods(JobSetNow(t));
  if (SameReclaimable(now, wl)) return;
  api::Workload* w = Edit(wl_key);
  w->mutable_status()->clear_reclaimable_pods();
  for (const api::ReclaimablePod& pod : now)
    *w->mutable_status()->add_reclaimable_pods() = pod;
  capacity_changed_ = true;
}

void QueueAdmission::Stage::Stop(TrackedJobSet& t, const std::string& wl_key,
                                 absl::string_view reason,
                                 absl::string_view message,
                                 absl::string_view cause) {
  api::Workload* w = Edit(wl_key);
  SetCondition(w->mutable_status()->mutable_conditions(), kWorkloadEvicted,
               true, reason, message, now_);
  Measure([cq = MetricQueueOf(*w), reason = std::string(reason),
           cause = std::string(cause)](ControllerMetrics& m) {
    m.WorkloadEvicted(cq, reason, cause);
  });
  queues::Restore(queues::SavedTemplatesOf(*w), EditJobSet(t));
  Event(t.key, "Normal", "Stopped", std::string(message));
}

// The ClusterQueue a Workload's counters name: its admission's, else its
// LocalQueue's; "" when it has neither.
std::string QueueAdmission::Stage::MetricQueueOf(
    const api::Workload& wl) const {
  if (wl.status().has_admission())
    return wl.status().admission().cluster_queue();
  return ClusterQueueOf(wl.metadata().namespace_(), wl.spec().queue_name());
}

// Workloads of JobSets that are gone (Kueue's owner reference).
void QueueAdmission::Stage::DeleteOrphans() {
  for (const auto& [uid, keys] : qa_.job_uids_) {
    if (live_job_uids_.contains(uid)) continue;
    // One Workload per job uid and run: the last by key.
    const std::string& key = *keys.rbegin();
    if (Current(key) == nullptr) continue;
    staged_[key] = std::nullopt;
    capacity_changed_ = true;
  }
}

}  // namespace jobset::scheduler
