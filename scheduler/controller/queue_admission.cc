#include "scheduler/controller/queue_admission.h"

#include <utility>

#include "api/kueue_validation.h"
#include "common/log.h"
#include "scheduler/controller/queue_stage.h"
#include "scheduler/queues/api_objects.h"
#include "scheduler/queues/jobset_workload.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"
#include "store/decode.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {

bool JobSetFinished(const api::JobSet& jobset, bool* succeeded) {
  bool ok = IsConditionTrue(jobset.status().conditions(), kConditionCompleted);
  if (succeeded != nullptr) *succeeded = ok;
  return ok || IsConditionTrue(jobset.status().conditions(), kConditionFailed);
}

// ---- Reading ----

void QueueAdmission::Stage::IndexObjects() {
  for (const auto& [key, held] : qa_.objects_) {
    const api::KueueObject& o = held.object;
    if (o.has_workload()) {
      const api::Workload& wl = o.workload();
      auto uid = wl.metadata().labels().find(std::string(queues::kJobUidLabel));
      if (uid != wl.metadata().labels().end()) by_job_uid_[uid->second] = key;
    } else if (o.has_local_queue()) {
      const api::LocalQueue& lq = o.local_queue();
      local_queues_[absl::StrCat(lq.metadata().namespace_(), "/",
                                 lq.metadata().name())] = &lq;
    } else if (o.has_workload_priority_class()) {
      const api::WorkloadPriorityClass& c = o.workload_priority_class();
      if (c.has_value()) priority_classes_[c.metadata().name()] = c.value();
      if (absl::StatusOr<absl::Duration> d = api::MinimumRuntime(c.metadata());
          d.ok() && *d > absl::ZeroDuration()) {
        class_runtimes_[c.metadata().name()] = *d;
      }
    } else if (o.has_cluster_queue()) {
      const api::ClusterQueue& cq = o.cluster_queue();
      cluster_queues_[cq.metadata().name()] = &cq;
      if (absl::StatusOr<absl::Duration> d = api::MinimumRuntime(cq.metadata());
          d.ok() && *d > absl::ZeroDuration()) {
        queue_runtimes_[cq.metadata().name()] = *d;
      }
    }
  }
}

// The Workload at `key` as this stage has it (staged over held), or null.
const api::Workload* QueueAdmission::Stage::Current(
    const std::string& key) const {
  if (auto s = staged_.find(key); s != staged_.end()) {
    return s->second.has_value() ? &s->second->workload() : nullptr;
  }
  auto h = qa_.objects_.find(key);
  if (h == qa_.objects_.end() || !h->second.object.has_workload())
    return nullptr;
  return &h->second.object.workload();
}

// A copy of the Workload at `key` staged for writing.
api::Workload* QueueAdmission::Stage::Edit(const std::string& key) {
  auto s = staged_.find(key);
  if (s == staged_.end()) {
    const api::Workload* wl = Current(key);
    api::KueueObject copy;
    *copy.mutable_workload() = *wl;
    s = staged_.emplace(key, std::move(copy)).first;
  }
  return s->second->mutable_workload();
}

// A copy of JobSet `t` staged for writing.
api::JobSet* QueueAdmission::Stage::EditJobSet(TrackedJobSet& t) {
  auto [it, fresh] = jobsets_.try_emplace(t.key, t.jobset);
  return &it->second;
}

const api::JobSet& QueueAdmission::Stage::JobSetNow(
    const TrackedJobSet& t) const {
  auto it = jobsets_.find(t.key);
  return it == jobsets_.end() ? t.jobset : it->second;
}

void QueueAdmission::Stage::Event(const std::string& jobset_key,
                                  absl::string_view type,
                                  absl::string_view reason,
                                  std::string message) {
  pending_events_.emplace_back(
      jobset_key,
      JobSetEvent{std::string(type), std::string(reason), std::move(message)});
}

// The ClusterQueue a LocalQueue `ns`/`lq` points at; "" when there is no
// such LocalQueue.
std::string QueueAdmission::Stage::ClusterQueueOf(absl::string_view ns,
                                                  absl::string_view lq) const {
  auto it = local_queues_.find(absl::StrCat(ns, "/", lq));
  return it == local_queues_.end() ? "" : it->second->spec().cluster_queue();
}

absl::Status QueueAdmission::Stage::Commit() {
  if (staged_.empty() && jobsets_.empty()) {
    FlushEvents();
    ReportMetrics();
    return absl::OkStatus();
  }
  store::Batch batch;
  for (const auto& [key, object] : staged_) {
    auto held = qa_.objects_.find(key);
    if (!object.has_value()) {
      if (held != qa_.objects_.end())
        batch.DeleteAt(key, held->second.revision);
      continue;
    }
    api::KueueObject value = *object;
    if (value.has_workload())
      value.mutable_workload()->mutable_metadata()->clear_resource_version();
    if (held == qa_.objects_.end()) {
      batch.Create(key, value.SerializeAsString());
    } else {
      batch.Update(key, value.SerializeAsString(), held->second.revision);
    }
  }
  for (const auto& [key, js] : jobsets_) {
    TrackedJobSet* t = state_.Find(key);
    api::JobSet value = js;
    value.mutable_metadata()->clear_resource_version();
    batch.Update(store::keys::JobSetKey(js.metadata().namespace_(),
                                        js.metadata().name()),
                 value.SerializeAsString(), t->revision);
  }
  absl::StatusOr<int64_t> revision = qa_.store_->Commit(batch);
  if (!revision.ok()) {
    if (revision.status().code() == absl::StatusCode::kAborted) {
      // The API changed one of these meanwhile: its event is on the way;
      // decide again then.
      qa_.dirty_ = true;
      return absl::OkStatus();
    }
    return revision.status();
  }
  for (auto& [key, object] : staged_) {
    if (!object.has_value()) {
      qa_.objects_.erase(key);
      continue;
    }
    qa_.objects_[key] =
        Held{*std::move(object), *revision, nullptr, std::nullopt};
  }
  for (auto& [key, js] : jobsets_) {
    TrackedJobSet* t = state_.Find(key);
    t->jobset = std::move(js);
    t->revision = *revision;
    state_.MarkDirty(key);
  }
  FlushEvents();
  ReportMetrics();
  return absl::OkStatus();
}

void QueueAdmission::Stage::FlushEvents() {
  for (auto& [key, e] : pending_events_) events_.Queue(key, std::move(e));
}

std::optional<queues::FairSharing> FairSharingOf(
    const api::FairSharingConfig& config) {
  if (!config.enable) return std::nullopt;
  queues::FairSharing out;
  if (config.preemption_strategies.empty()) return out;
  out.preemption_strategies.clear();
  for (const std::string& s : config.preemption_strategies) {
    out.preemption_strategies.push_back(
        s == "LessThanInitialShare"
            ? queues::FairSharing::Strategy::kLessThanInitialShare
            : queues::FairSharing::Strategy::kLessThanOrEqualToFinalShare);
  }
  return out;
}

QueueAdmission::QueueAdmission(store::Store* store, Options options)
    : store_(store), options_(options) {}

absl::Status QueueAdmission::Load() {
  objects_.clear();
  parked_.clear();
  sticky_.clear();
  dirty_ = true;
  return store::ScanAll(
      *store_, store::keys::kKueue, [&](const store::KeyValue& kv) {
        absl::StatusOr<api::KueueObject> o =
            store::DecodeValue<api::KueueObject>(kv);
        if (!o.ok()) {
          JOBSET_LOG(ERROR)
              << "queues: stored record " << kv.key
              << " does not decode; left out: " << o.status().message();
          return absl::OkStatus();
        }
        objects_[kv.key] =
            Held{*std::move(o), kv.mod_revision, nullptr, std::nullopt};
        return absl::OkStatus();
      });
}

void QueueAdmission::OnEvent(const store::Event& event) {
  auto held = objects_.find(event.kv.key);
  if (held != objects_.end() && event.kv.mod_revision <= held->second.revision)
    return;  // our own write, or older than what is held
  dirty_ = true;
  // Capacity or queues may have changed: parked workloads are offered
  // again (QuotaTree-wide unparking is a refinement of this).
  parked_.clear();
  if (event.type == store::Event::Type::kDelete) {
    objects_.erase(event.kv.key);
    return;
  }
  absl::StatusOr<api::KueueObject> o =
      store::DecodeValue<api::KueueObject>(event.kv);
  if (!o.ok()) return;  // the API never writes garbage; Load reports it
  objects_[event.kv.key] =
      Held{*std::move(o), event.kv.mod_revision, nullptr, std::nullopt};
}

absl::Status QueueAdmission::Run(ControllerState& state, EventLog& events,
                                 absl::Time now) {
  // A minimum runtime ended: a preemption it held back may go ahead now
  // (parked preemptors come back, as on any capacity change).
  if (wake_.has_value() && *wake_ <= now) {
    wake_.reset();
    parked_.clear();
    dirty_ = true;
  }
  if (!dirty_) return absl::OkStatus();
  dirty_ = false;
  Stage stage(*this, state, events, now);
  return stage.Run();
}

void QueueAdmission::Reconciled(const ControllerState& state,
                                const TrackedJobSet& t) {
  if (dirty_ ||
      !queues::IsManaged(t.jobset, options_.manage_jobs_without_queue_name))
    return;
  if (t.jobset.spec().suspend() || JobSetFinished(t.jobset)) {
    dirty_ = true;
    return;
  }
  const api::Workload* wl = WorkloadOf(state, t.jobset.metadata().namespace_(),
                                       t.jobset.metadata().name());
  if (wl == nullptr || !wl->status().has_admission()) return;
  // Jobs that succeeded give their quota back (reclaimablePods).
  if (!SameReclaimable(queues::ReclaimablePods(t.jobset), *wl)) {
    dirty_ = true;
    return;
  }
  if (!options_.wait_for_pods_ready.enable) return;
  const api::Condition* said =
      FindCondition(wl->status().conditions(), kWorkloadPodsReady);
  if (said == nullptr ||
      (said->status() == "True") != JobSetPodsReady(t.jobset)) {
    dirty_ = true;
  }
}

const api::Workload* QueueAdmission::FindWorkload(
    const std::string& ns, const std::string& name) const {
  auto it = objects_.find(WorkloadStoreKey(ns, name));
  if (it == objects_.end() || !it->second.object.has_workload()) return nullptr;
  return &it->second.object.workload();
}

const api::Workload* QueueAdmission::WorkloadOf(const ControllerState& state,
                                                const std::string& ns,
                                                const std::string& name) const {
  const TrackedJobSet* t = state.Find(ControllerState::KeyOf(ns, name));
  if (t == nullptr) return nullptr;
  return FindWorkload(ns, queues::WorkloadName(t->jobset));
}

}  // namespace jobset::scheduler
