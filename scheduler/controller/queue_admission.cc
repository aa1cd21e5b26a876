#include "scheduler/controller/queue_admission.h"

#include <utility>

#include "absl/strings/str_cat.h"
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
  for (const auto& [key, held] : qa_.config_) {
    const api::KueueObject& o = held->object;
    if (o.has_local_queue()) {
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
  for (auto& [key, object] : staged_) {
    auto held = qa_.objects_.find(key);
    if (!object.has_value()) {
      if (held != qa_.objects_.end())
        batch.DeleteAt(key, held->second.revision);
      continue;
    }
    // Stored, and then held, without a resourceVersion (as Load reads it).
    api::KueueObject& value = *object;
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
      qa_.Drop(key);
      continue;
    }
    qa_.Hold(key, *std::move(object), *revision);
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

void QueueAdmission::Tally::Add(const queues::FlavorResourceQuantities& u,
                                int sign) {
  workloads += sign;
  for (const auto& [fr, v] : u) {
    auto [it, fresh] = usage.try_emplace(fr, 0, 0);
    it->second.first += sign * v;
    it->second.second += sign;
    if (it->second.second == 0) usage.erase(it);
  }
}

void QueueAdmission::Hold(const std::string& key, api::KueueObject object,
                          int64_t revision) {
  auto [it, fresh] = objects_.try_emplace(key);
  if (!fresh) Unindex(key, it->second);
  it->second = Held();
  it->second.object = std::move(object);
  it->second.revision = revision;
  Index(key, it->second);
}

void QueueAdmission::Drop(const std::string& key) {
  auto it = objects_.find(key);
  if (it == objects_.end()) return;
  Unindex(key, it->second);
  objects_.erase(it);
}

// Decides what the cycles make of a held Workload as Stage::BuildInput
// would read it, and files it.
void QueueAdmission::Index(const std::string& key, Held& held) {
  if (!held.object.has_workload()) {
    config_[key] = &held;
    if (held.object.has_resource_flavor()) ++flavors_changed_;
    if (held.object.has_cluster_queue()) {
      held.cluster_queue =
          std::make_shared<const absl::StatusOr<queues::ClusterQueue>>(
              queues::ClusterQueueFromApi(held.object.cluster_queue()));
    }
    return;
  }
  const api::Workload& wl = held.object.workload();
  auto uid = wl.metadata().labels().find(std::string(queues::kJobUidLabel));
  if (uid != wl.metadata().labels().end()) {
    held.job_uid = uid->second;
    job_uids_[held.job_uid].insert(key);
  }
  if (IsConditionTrue(wl.status().conditions(), kWorkloadFinished)) return;
  const std::string& ns = wl.metadata().namespace_();
  if (wl.status().has_admission()) {
    // Converted here rather than at the next run, which would do it for
    // every admitted Workload it reads: the usage is kept with it.
    const std::string& cq = wl.status().admission().cluster_queue();
    held.model = std::make_shared<const absl::StatusOr<queues::Workload>>(
        queues::WorkloadFromApi(wl, cq));
    if (!held.model->ok()) return;  // left out of the cycles, as it was
    held.role = Role::kAdmitted;
    held.admitted_in = cq;
    held.local_queue = absl::StrCat(ns, "/", wl.spec().queue_name());
    held.usage = queues::AdmittedUsage(**held.model);
    Holding& holding = admitted_[cq];
    holding.workloads[key] = &held;
    holding.tally.Add(held.usage, 1);
    holding.kept = false;
    admitted_by_lq_[held.local_queue].Add(held.usage, 1);
    return;
  }
  if (wl.spec().has_active() && !wl.spec().active()) return;
  if (wl.spec().queue_name().empty()) return;
  held.role = Role::kPending;
  held.local_queue = absl::StrCat(ns, "/", wl.spec().queue_name());
  Waiting& waiting = pending_[held.local_queue];
  waiting.workloads[key] = &held;
  waiting.kept = false;
}

void QueueAdmission::Unindex(const std::string& key, const Held& held) {
  if (!held.object.has_workload()) {
    config_.erase(key);
    statuses_seen_.erase(key);
    if (held.object.has_resource_flavor()) ++flavors_changed_;
    return;
  }
  if (!held.job_uid.empty()) {
    auto it = job_uids_.find(held.job_uid);
    it->second.erase(key);
    if (it->second.empty()) job_uids_.erase(it);
  }
  switch (held.role) {
    case Role::kNone:
      return;
    case Role::kAdmitted: {
      auto it = admitted_.find(held.admitted_in);
      it->second.workloads.erase(key);
      it->second.tally.Add(held.usage, -1);
      it->second.kept = false;
      if (it->second.workloads.empty()) admitted_.erase(it);
      auto lq = admitted_by_lq_.find(held.local_queue);
      lq->second.Add(held.usage, -1);
      if (lq->second.workloads == 0) admitted_by_lq_.erase(lq);
      return;
    }
    case Role::kPending: {
      auto it = pending_.find(held.local_queue);
      it->second.workloads.erase(key);
      it->second.kept = false;
      if (it->second.workloads.empty()) pending_.erase(it);
      return;
    }
  }
}

absl::Status QueueAdmission::Load() {
  objects_.clear();
  config_.clear();
  job_uids_.clear();
  admitted_.clear();
  pending_.clear();
  admitted_by_lq_.clear();
  statuses_seen_.clear();
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
        Hold(kv.key, *std::move(o), kv.mod_revision);
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
    Drop(event.kv.key);
    return;
  }
  absl::StatusOr<api::KueueObject> o =
      store::DecodeValue<api::KueueObject>(event.kv);
  if (!o.ok()) return;  // the API never writes garbage; Load reports it
  Hold(event.kv.key, *std::move(o), event.kv.mod_revision);
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

bool QueueAdmission::Manages(const api::JobSet& jobset) const {
  return queues::IsManaged(jobset, options_.manage_jobs_without_queue_name);
}

void QueueAdmission::Reconciled(const ControllerState& state,
                                const TrackedJobSet& t) {
  if (dirty_ || !Manages(t.jobset)) return;
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
