#include "scheduler/controller/queue_admission.h"

#include <algorithm>
#include <type_traits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/label_selector.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "common/uid.h"
#include "scheduler/controller/job_reconcile.h"
#include "scheduler/queues/api_objects.h"
#include "scheduler/queues/cycle.h"
#include "scheduler/queues/jobset_workload.h"
#include "scheduler/queues/podset_injection.h"
#include "scheduler/queues/quota.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"
#include "store/decode.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {
namespace {

constexpr absl::string_view kWorkloads = "workloads";
// Kubernetes' label on every Namespace.
constexpr absl::string_view kNamespaceNameLabel = "kubernetes.io/metadata.name";
// QuotaReserved False reasons the integration writes itself.
constexpr absl::string_view kReasonInadmissible = "Inadmissible";
constexpr absl::string_view kReasonPending = "Pending";

std::string WorkloadKey(absl::string_view ns, absl::string_view name) {
  return store::keys::KueueKey(kWorkloads, ns, name);
}

// "<ns>/<name>" of a Workload.
std::string ShortKey(const api::Workload& wl) {
  return absl::StrCat(wl.metadata().namespace_(), "/", wl.metadata().name());
}

google::protobuf::Timestamp ToTimestamp(absl::Time t) {
  google::protobuf::Timestamp ts;
  ts.set_seconds(absl::ToUnixSeconds(t));
  return ts;
}

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

// A LabelSelectorSpec over `labels` (matchLabels and matchExpressions,
// ANDed); an empty one selects everything.
bool Selects(const api::LabelSelectorSpec& selector,
             const google::protobuf::Map<std::string, std::string>& labels) {
  for (const auto& [key, value] : selector.match_labels()) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const api::LabelSelectorRequirement& r : selector.match_expressions()) {
    api::LabelSelector::Requirement req;
    req.key = r.key();
    req.values.assign(r.values().begin(), r.values().end());
    std::sort(req.values.begin(), req.values.end());
    if (r.operator_() == "In") {
      req.op = api::LabelSelector::Operator::kIn;
    } else if (r.operator_() == "NotIn") {
      req.op = api::LabelSelector::Operator::kNotIn;
    } else if (r.operator_() == "Exists") {
      req.op = api::LabelSelector::Operator::kExists;
    } else if (r.operator_() == "DoesNotExist") {
      req.op = api::LabelSelector::Operator::kDoesNotExist;
    } else {
      return false;  // validation refuses it; a stored one selects nothing
    }
    if (!req.Matches(labels)) return false;
  }
  return true;
}

}  // namespace

bool JobSetFinished(const api::JobSet& jobset, bool* succeeded) {
  bool ok = IsConditionTrue(jobset.status().conditions(), kConditionCompleted);
  if (succeeded != nullptr) *succeeded = ok;
  return ok || IsConditionTrue(jobset.status().conditions(), kConditionFailed);
}

// One Run: what it read, what it decided, and the commit.
class QueueAdmission::Stage {
 public:
  Stage(QueueAdmission& qa, ControllerState& state, EventLog& events,
        absl::Time now)
      : qa_(qa), state_(state), events_(events), now_(now) {}

  absl::Status Run() {
    IndexObjects();
    for (auto& [key, t] : state_.jobsets()) Integrate(key, t);
    DeleteOrphans();
    JOBSET_RETURN_IF_ERROR(Cycles());
    QueueStatuses();
    return Commit();
  }

 private:
  // ---- Reading ----

  void IndexObjects() {
    for (const auto& [key, held] : qa_.objects_) {
      const api::KueueObject& o = held.object;
      if (o.has_workload()) {
        const api::Workload& wl = o.workload();
        auto uid =
            wl.metadata().labels().find(std::string(queues::kJobUidLabel));
        if (uid != wl.metadata().labels().end()) by_job_uid_[uid->second] = key;
      } else if (o.has_local_queue()) {
        const api::LocalQueue& lq = o.local_queue();
        local_queues_[absl::StrCat(lq.metadata().namespace_(), "/",
                                   lq.metadata().name())] = &lq;
      } else if (o.has_workload_priority_class()) {
        const api::WorkloadPriorityClass& c = o.workload_priority_class();
        if (c.has_value()) priority_classes_[c.metadata().name()] = c.value();
      } else if (o.has_cluster_queue()) {
        cluster_queues_[o.cluster_queue().metadata().name()] =
            &o.cluster_queue();
      }
    }
  }

  // The Workload at `key` as this stage has it (staged over held), or null.
  const api::Workload* Current(const std::string& key) const {
    if (auto s = staged_.find(key); s != staged_.end()) {
      return s->second.has_value() ? &s->second->workload() : nullptr;
    }
    auto h = qa_.objects_.find(key);
    if (h == qa_.objects_.end() || !h->second.object.has_workload())
      return nullptr;
    return &h->second.object.workload();
  }

  // A copy of the Workload at `key` staged for writing.
  api::Workload* Edit(const std::string& key) {
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
  api::JobSet* EditJobSet(TrackedJobSet& t) {
    auto [it, fresh] = jobsets_.try_emplace(t.key, t.jobset);
    return &it->second;
  }
  const api::JobSet& JobSetNow(const TrackedJobSet& t) const {
    auto it = jobsets_.find(t.key);
    return it == jobsets_.end() ? t.jobset : it->second;
  }

  void Event(const std::string& jobset_key, absl::string_view type,
             absl::string_view reason, std::string message) {
    pending_events_.emplace_back(
        jobset_key, JobSetEvent{std::string(type), std::string(reason),
                                std::move(message)});
  }

  // The ClusterQueue a LocalQueue `ns`/`lq` points at; "" when there is no
  // such LocalQueue.
  std::string ClusterQueueOf(absl::string_view ns, absl::string_view lq) const {
    auto it = local_queues_.find(absl::StrCat(ns, "/", lq));
    return it == local_queues_.end() ? "" : it->second->spec().cluster_queue();
  }

  // ---- The JobSet integration (§2.4) ----

  void Integrate(const std::string& key, TrackedJobSet& t) {
    if (t.deleted) return;
    const api::JobSet& js = t.jobset;
    live_job_uids_.insert(js.metadata().uid());
    if (!queues::IsManaged(js, qa_.options_.manage_jobs_without_queue_name))
      return;
    const std::string wl_name = queues::WorkloadName(js);
    const std::string wl_key = WorkloadKey(js.metadata().namespace_(), wl_name);
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
      api::Workload* w = Edit(wl_key);
      UpdateCondition(
          w->mutable_status()->mutable_conditions(), kWorkloadFinished, true,
          succeeded ? "Succeeded" : "Failed",
          succeeded ? "Job finished successfully" : "Job failed", now_);
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
    if (!reserved) {
      // Pending: follow the queue-name label (§2.4 step 7).
      const std::string queue = queues::QueueName(js);
      if (wl->spec().queue_name() != queue) {
        Edit(wl_key)->mutable_spec()->set_queue_name(queue);
        qa_.parked_.erase(ShortKey(*wl));
      }
    }
  }

  void CreateWorkload(const std::string& key, const TrackedJobSet& t,
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
    created_.insert(wl_key);
    Event(key, "Normal", "CreatedWorkload",
          absl::StrCat("Created Workload: ", js.metadata().namespace_(), "/",
                       meta->name()));
  }

  // Injects the admission into the JobSet and unsuspends it.
  void Start(TrackedJobSet& t, const api::Workload& wl) {
    queues::FlavorIndex flavors = Flavors();
    absl::StatusOr<queues::Workload> model =
        queues::WorkloadFromApi(wl, wl.status().admission().cluster_queue());
    if (!model.ok() || !model->admission.has_value()) return;
    api::JobSet copy = JobSetNow(t);
    // Templates back to the Workload's copies first: a template holding an
    // earlier admission's selectors would conflict with a new flavor.
    queues::Restore(queues::SavedTemplatesOf(wl), &copy);
    absl::StatusOr<queues::SavedPodTemplates> started = queues::Inject(
        *model->admission, wl.spec().queue_name(), flavors, &copy);
    if (!started.ok()) {
      if (started.status().code() == absl::StatusCode::kFailedPrecondition) {
        api::Workload* w =
            Edit(WorkloadKey(wl.metadata().namespace_(), wl.metadata().name()));
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
  void ReleaseEvicted(const std::string& wl_key) {
    api::Workload* w = Edit(wl_key);
    auto* conditions = w->mutable_status()->mutable_conditions();
    const api::Condition* evicted =
        FindCondition(*conditions, kWorkloadEvicted);
    const std::string reason = evicted->reason();
    const std::string message = evicted->message();
    w->mutable_status()->clear_admission();
    UpdateCondition(conditions, kWorkloadQuotaReserved, false, kReasonPending,
                    message, now_);
    UpdateCondition(conditions, kWorkloadAdmitted, false, "NoReservation",
                    "The workload has no reservation", now_);
    SetCondition(conditions, kWorkloadRequeued, true, reason, message, now_);
    capacity_changed_ = true;
  }

  // Workloads of JobSets that are gone (Kueue's owner reference).
  void DeleteOrphans() {
    for (const auto& [uid, key] : by_job_uid_) {
      if (live_job_uids_.contains(uid)) continue;
      if (Current(key) == nullptr) continue;
      staged_[key] = std::nullopt;
      capacity_changed_ = true;
    }
  }

  // ---- The cycles (§3) ----

  queues::FlavorIndex Flavors() const {
    queues::FlavorIndex flavors;
    for (const auto& [key, held] : qa_.objects_) {
      if (!held.object.has_resource_flavor()) continue;
      absl::StatusOr<queues::ResourceFlavor> f =
          queues::FlavorFromApi(held.object.resource_flavor());
      if (f.ok()) flavors[f->name] = *std::move(f);
    }
    return flavors;
  }

  // The labels of Namespace `ns` as a ClusterQueue's namespaceSelector
  // reads them (every Namespace carries kubernetes.io/metadata.name).
  const google::protobuf::Map<std::string, std::string>& NamespaceLabels(
      const std::string& ns) {
    auto [it, fresh] = namespace_labels_.try_emplace(ns);
    if (fresh) {
      absl::StatusOr<std::optional<store::KeyValue>> kv =
          qa_.store_->Get(store::keys::NamespaceKey(ns));
      if (kv.ok() && kv->has_value()) {
        absl::StatusOr<api::Namespace> object =
            store::DecodeValue<api::Namespace>(**kv);
        if (object.ok()) it->second = object->metadata().labels();
      }
      it->second[std::string(kNamespaceNameLabel)] = ns;
    }
    return it->second;
  }

  // Writes a pending Workload's QuotaReserved False, when it differs.
  void Pending(const std::string& wl_key, absl::string_view reason,
               absl::string_view message) {
    const api::Workload* wl = Current(wl_key);
    const api::Condition* c =
        FindCondition(wl->status().conditions(), kWorkloadQuotaReserved);
    if (c != nullptr && c->status() == "False" && c->reason() == reason &&
        c->message() == message) {
      return;
    }
    SetCondition(Edit(wl_key)->mutable_status()->mutable_conditions(),
                 kWorkloadQuotaReserved, false, reason, message, now_);
  }

  // The admission core's model of Workload `wl` (at `key`) in ClusterQueue
  // `cq`; converted once per stored revision (a held, unchanged Workload's
  // is kept with it), since pod templates are costly to read.
  absl::StatusOr<queues::Workload> Model(const std::string& key,
                                         const api::Workload& wl,
                                         const std::string& cq) {
    auto held = qa_.objects_.find(key);
    const bool cacheable = !staged_.contains(key) && held != qa_.objects_.end();
    if (!cacheable) return queues::WorkloadFromApi(wl, cq);
    if (held->second.model == nullptr) {
      held->second.model =
          std::make_shared<const absl::StatusOr<queues::Workload>>(
              queues::WorkloadFromApi(wl, ""));
    }
    absl::StatusOr<queues::Workload> model = *held->second.model;
    if (model.ok()) model->cluster_queue = cq;
    return model;
  }

  absl::Status BuildInput(queues::CycleInput& in) {
    for (const auto& [key, held] : qa_.objects_) {
      const api::KueueObject& o = held.object;
      if (o.has_resource_flavor()) {
        absl::StatusOr<queues::ResourceFlavor> f =
            queues::FlavorFromApi(o.resource_flavor());
        if (f.ok()) in.flavors.push_back(*std::move(f));
      } else if (o.has_cohort()) {
        absl::StatusOr<queues::Cohort> c = queues::CohortFromApi(o.cohort());
        if (c.ok()) in.cohorts.push_back(*std::move(c));
      } else if (o.has_cluster_queue()) {
        absl::StatusOr<queues::ClusterQueue> cq =
            queues::ClusterQueueFromApi(o.cluster_queue());
        if (!cq.ok()) {
          JOBSET_LOG(WARNING)
              << "queues: " << key << " set aside: " << cq.status().message();
          continue;
        }
        queues::PendingQueue queue;
        queue.cluster_queue = cq->name;
        if (auto s = qa_.sticky_.find(cq->name); s != qa_.sticky_.end())
          queue.sticky_uid = s->second;
        in.pending.push_back(std::move(queue));
        pending_index_[cq->name] = in.pending.size() - 1;
        in.cluster_queues.push_back(*std::move(cq));
      }
    }
    // Workloads: the held ones (those staged for deletion are skipped by
    // Current), then those created by this stage.
    auto add = [&](const std::string& key) {
      const api::Workload* wl = Current(key);
      if (wl == nullptr) return;
      if (IsConditionTrue(wl->status().conditions(), kWorkloadFinished)) return;
      if (wl->status().has_admission()) {
        absl::StatusOr<queues::Workload> m =
            Model(key, *wl, wl->status().admission().cluster_queue());
        if (m.ok()) in.admitted.push_back(*std::move(m));
        return;
      }
      if (wl->spec().has_active() && !wl->spec().active()) return;
      const std::string& ns = wl->metadata().namespace_();
      const std::string& lq = wl->spec().queue_name();
      if (lq.empty()) return;  // never admitted until a queue is set
      auto lq_it = local_queues_.find(absl::StrCat(ns, "/", lq));
      if (lq_it == local_queues_.end()) {
        Pending(key, kReasonInadmissible,
                absl::StrCat("LocalQueue ", lq, " doesn't exist"));
        return;
      }
      const std::string& cq_name = lq_it->second->spec().cluster_queue();
      auto cq_it = cluster_queues_.find(cq_name);
      auto index = pending_index_.find(cq_name);
      if (cq_it == cluster_queues_.end() || index == pending_index_.end()) {
        Pending(key, kReasonInadmissible,
                absl::StrCat("ClusterQueue ", cq_name, " doesn't exist"));
        return;
      }
      if (lq_it->second->spec().stop_policy() == "Hold" ||
          lq_it->second->spec().stop_policy() == "HoldAndDrain") {
        Pending(key, kReasonInadmissible,
                absl::StrCat("LocalQueue ", lq, " is inactive"));
        return;
      }
      const api::ClusterQueueSpec& spec = cq_it->second->spec();
      if (!spec.has_namespace_selector() ||
          !Selects(spec.namespace_selector(), NamespaceLabels(ns))) {
        Pending(key, kReasonInadmissible,
                "Workload namespace doesn't match ClusterQueue selector");
        return;
      }
      absl::StatusOr<queues::Workload> m = Model(key, *wl, cq_name);
      if (!m.ok()) {
        Pending(key, kReasonInadmissible, m.status().message());
        return;
      }
      queues::PendingWorkload p;
      p.workload = *std::move(m);
      p.parked = qa_.parked_.contains(ShortKey(*wl));
      in.pending[index->second].workloads.push_back(std::move(p));
      store_keys_[ShortKey(*wl)] = key;
    };
    const std::string prefix = store::keys::KueuePrefix(kWorkloads, "");
    for (auto it = qa_.objects_.lower_bound(prefix);
         it != qa_.objects_.end() && absl::StartsWith(it->first, prefix); ++it)
      add(it->first);
    for (const auto& [key, object] : staged_) {
      if (absl::StartsWith(key, prefix) && !qa_.objects_.contains(key))
        add(key);
    }
    return absl::OkStatus();
  }

  absl::Status Cycles() {
    if (capacity_changed_) qa_.parked_.clear();
    queues::CycleInput& in = in_;
    JOBSET_RETURN_IF_ERROR(BuildInput(in));
    for (int cycle = 0; cycle < qa_.options_.max_cycles; ++cycle) {
      absl::StatusOr<queues::CycleResult> result = queues::RunCycle(in, now_);
      if (!result.ok()) {
        JOBSET_LOG(ERROR) << "queues: cycle refused its input: "
                          << result.status().message();
        return absl::OkStatus();
      }
      bool progressed = false;
      for (const queues::Decision& d : result->decisions) {
        progressed |= Apply(d, in);
      }
      if (!progressed) break;
    }
    return absl::OkStatus();
  }

  // The pending queue of ClusterQueue `cq` in `in`, or null.
  queues::PendingQueue* QueueOf(queues::CycleInput& in, const std::string& cq) {
    auto it = pending_index_.find(cq);
    return it == pending_index_.end() ? nullptr : &in.pending[it->second];
  }

  // The pending entry of the workload with `uid` in ClusterQueue `cq`.
  std::vector<queues::PendingWorkload>::iterator FindPending(
      queues::PendingQueue& q, const std::string& uid) {
    return std::find_if(q.workloads.begin(), q.workloads.end(),
                        [&](const queues::PendingWorkload& p) {
                          return p.workload.uid == uid;
                        });
  }

  // Applies one decision; returns whether the next cycle may decide
  // something new.
  bool Apply(const queues::Decision& d, queues::CycleInput& in) {
    auto key_it = store_keys_.find(d.workload);
    if (key_it == store_keys_.end()) return false;
    const std::string& wl_key = key_it->second;
    switch (d.kind) {
      case queues::DecisionKind::kAdmit: {
        queues::PendingQueue* q = QueueOf(in, d.cluster_queue);
        if (q == nullptr || !d.admission.has_value()) return false;
        auto it = FindPending(*q, d.uid);
        if (it == q->workloads.end()) return false;
        queues::Workload w = std::move(it->workload);
        q->workloads.erase(it);
        if (q->sticky_uid == d.uid) {
          q->sticky_uid.clear();
          qa_.sticky_.erase(d.cluster_queue);
        }
        Admit(wl_key, *d.admission);
        w.admission = d.admission;
        w.times.quota_reserved = now_;
        in.admitted.push_back(std::move(w));
        return true;
      }
      case queues::DecisionKind::kPreempt: {
        for (const queues::Victim& v : d.victims) {
          if (!v.already_evicted) Evict(v);
        }
        Pending(wl_key, d.outcome.reason, d.outcome.message);
        if (d.outcome.sticky) {
          qa_.sticky_[d.cluster_queue] = d.uid;
          if (queues::PendingQueue* q = QueueOf(in, d.cluster_queue))
            q->sticky_uid = d.uid;
        }
        // Stays pending; the victims' quota counts until their pods end.
        return false;
      }
      case queues::DecisionKind::kPending:
        Pending(wl_key, d.outcome.reason, d.outcome.message);
        if (d.outcome.requeue == queues::Requeue::kPark) {
          qa_.parked_.insert(d.workload);
          if (queues::PendingQueue* q = QueueOf(in, d.cluster_queue)) {
            if (auto it = FindPending(*q, d.uid); it != q->workloads.end())
              it->parked = true;
          }
        }
        return false;
    }
    return false;
  }

  void Admit(const std::string& wl_key, const queues::Admission& admission) {
    api::Workload* w = Edit(wl_key);
    *w->mutable_status()->mutable_admission() =
        queues::AdmissionToApi(admission);
    auto* conditions = w->mutable_status()->mutable_conditions();
    SetCondition(conditions, kWorkloadQuotaReserved, true, "QuotaReserved",
                 absl::StrCat("Quota reserved in ClusterQueue ",
                              admission.cluster_queue),
                 now_);
    SetCondition(conditions, kWorkloadAdmitted, true, "Admitted",
                 "The workload is admitted", now_);
    UpdateCondition(conditions, kWorkloadEvicted, false, "QuotaReserved",
                    "Previously: evicted", now_);
    UpdateCondition(conditions, kWorkloadRequeued, false, "QuotaReserved",
                    "Quota reserved", now_);
    // Its JobSet starts in the same commit.
    const std::string job_uid =
        w->metadata().labels().contains(std::string(queues::kJobUidLabel))
            ? w->metadata().labels().at(std::string(queues::kJobUidLabel))
            : "";
    for (auto& [key, t] : state_.jobsets()) {
      if (!t.deleted && t.jobset.metadata().uid() == job_uid &&
          !job_uid.empty()) {
        Start(t, *w);
        break;
      }
    }
  }

  void Evict(const queues::Victim& v) {
    auto key_it = store_keys_.find(v.workload);
    std::string wl_key;
    if (key_it != store_keys_.end()) {
      wl_key = key_it->second;
    } else {
      std::vector<std::string> parts = absl::StrSplit(v.workload, '/');
      if (parts.size() != 2) return;
      wl_key = WorkloadKey(parts[0], parts[1]);
    }
    if (Current(wl_key) == nullptr) return;
    api::Workload* w = Edit(wl_key);
    auto* conditions = w->mutable_status()->mutable_conditions();
    SetCondition(conditions, kWorkloadEvicted, true, "Preempted", v.message,
                 now_);
    SetCondition(conditions, kWorkloadPreempted, true, v.reason, v.message,
                 now_);
    UpdateCondition(conditions, kWorkloadAdmitted, false, "Preempted",
                    v.message, now_);
    auto uid = w->metadata().labels().find(std::string(queues::kJobUidLabel));
    if (uid == w->metadata().labels().end()) return;
    for (auto& [key, t] : state_.jobsets()) {
      if (t.deleted || t.jobset.metadata().uid() != uid->second) continue;
      queues::Restore(queues::SavedTemplatesOf(*w), EditJobSet(t));
      Event(key, "Normal", "Stopped", v.message);
      break;
    }
  }

  // ---- ClusterQueue and LocalQueue status (§5) ----

  // Counts and usage of one queue.
  struct QueueTally {
    int32_t pending = 0;
    int32_t reserving = 0;
    queues::FlavorResourceQuantities usage;
  };

  // Writes each ClusterQueue's and LocalQueue's status where it changed:
  // pendingWorkloads (queued and inadmissible), reservingWorkloads and
  // admittedWorkloads (the same here: jobsetd has no admission checks),
  // what they hold by flavor and resource, and the Active condition.
  void QueueStatuses() {
    std::map<std::string, QueueTally> by_cq;
    std::map<std::string, QueueTally> by_lq;  // "ns/name"
    for (const queues::PendingQueue& q : in_.pending) {
      for (const queues::PendingWorkload& p : q.workloads) {
        ++by_cq[q.cluster_queue].pending;
        ++by_lq[absl::StrCat(p.workload.namespace_name, "/",
                             p.workload.queue_name)]
              .pending;
      }
    }
    for (const queues::Workload& w : in_.admitted) {
      const queues::FlavorResourceQuantities usage = queues::AdmittedUsage(w);
      for (QueueTally* t :
           {&by_cq[w.admission->cluster_queue],
            &by_lq[absl::StrCat(w.namespace_name, "/", w.queue_name)]}) {
        ++t->reserving;
        for (const auto& [fr, v] : usage) t->usage[fr] += v;
      }
    }
    const queues::FlavorIndex flavors = Flavors();
    for (const queues::ClusterQueue& cq : in_.cluster_queues) {
      const std::string key =
          store::keys::KueueKey("clusterqueues", "", cq.name);
      auto held = qa_.objects_.find(key);
      if (held == qa_.objects_.end()) continue;
      const QueueTally& tally = by_cq[cq.name];
      api::ClusterQueueStatus status =
          held->second.object.cluster_queue().status();
      status.set_pending_workloads(tally.pending);
      status.set_reserving_workloads(tally.reserving);
      status.set_admitted_workloads(tally.reserving);
      status.clear_flavors_reservation();
      for (const queues::ResourceGroup& group : cq.resource_groups) {
        for (const queues::FlavorQuotas& fq : group.flavors) {
          api::FlavorUsage* fu = status.add_flavors_reservation();
          fu->set_name(fq.name);
          for (const queues::ResourceQuota& rq : fq.resources) {
            auto it = tally.usage.find({fq.name, rq.name});
            const int64_t total = it == tally.usage.end() ? 0 : it->second;
            api::ResourceUsage* ru = fu->add_resources();
            ru->set_name(rq.name);
            ru->set_total(queues::FormatQuantity(rq.name, total));
            ru->set_borrowed(queues::FormatQuantity(
                rq.name, std::max<int64_t>(0, total - rq.nominal_quota)));
          }
        }
      }
      *status.mutable_flavors_usage() = status.flavors_reservation();
      const queues::ActiveCondition active =
          queues::ClusterQueueActive(cq, flavors, /*in_cohort_cycle=*/false);
      SetCondition(status.mutable_conditions(), "Active", active.active,
                   active.reason, active.message, now_);
      StageStatus(key, held->second.object, status);
    }
    for (const auto& [lq_key, lq] : local_queues_) {
      const std::string key = store::keys::KueueKey(
          "localqueues", lq->metadata().namespace_(), lq->metadata().name());
      auto held = qa_.objects_.find(key);
      if (held == qa_.objects_.end()) continue;
      const QueueTally& tally = by_lq[lq_key];
      api::LocalQueueStatus status = lq->status();
      status.set_pending_workloads(tally.pending);
      status.set_reserving_workloads(tally.reserving);
      status.set_admitted_workloads(tally.reserving);
      status.clear_flavors_reservation();
      std::map<std::string, api::LocalQueueFlavorUsage*> by_flavor;
      for (const auto& [fr, v] : tally.usage) {
        api::LocalQueueFlavorUsage*& fu = by_flavor[fr.flavor];
        if (fu == nullptr) {
          fu = status.add_flavors_reservation();
          fu->set_name(fr.flavor);
        }
        api::LocalQueueResourceUsage* ru = fu->add_resources();
        ru->set_name(fr.resource);
        ru->set_total(queues::FormatQuantity(fr.resource, v));
      }
      *status.mutable_flavor_usage() = status.flavors_reservation();
      const bool stopped = lq->spec().stop_policy() == "Hold" ||
                           lq->spec().stop_policy() == "HoldAndDrain";
      const bool cq_exists =
          cluster_queues_.contains(lq->spec().cluster_queue());
      SetCondition(status.mutable_conditions(), "Active", cq_exists && !stopped,
                   stopped     ? "Stopped"
                   : cq_exists ? "Ready"
                               : "ClusterQueueDoesNotExist",
                   stopped     ? "LocalQueue is stopped"
                   : cq_exists ? "Can submit new workloads to localQueue"
                               : "Can't submit new workloads to clusterQueue",
                   now_);
      StageStatus(key, held->second.object, status);
    }
  }

  // Stages `object` with `status` when it differs from the held one.
  template <typename Status>
  void StageStatus(const std::string& key, const api::KueueObject& object,
                   const Status& status) {
    api::KueueObject copy = object;
    if (copy.has_cluster_queue()) {
      if constexpr (std::is_same_v<Status, api::ClusterQueueStatus>) {
        if (copy.cluster_queue().status().SerializeAsString() ==
            status.SerializeAsString())
          return;
        *copy.mutable_cluster_queue()->mutable_status() = status;
      }
    } else if (copy.has_local_queue()) {
      if constexpr (std::is_same_v<Status, api::LocalQueueStatus>) {
        if (copy.local_queue().status().SerializeAsString() ==
            status.SerializeAsString())
          return;
        *copy.mutable_local_queue()->mutable_status() = status;
      }
    }
    staged_[key] = std::move(copy);
  }

  // ---- The commit ----

  absl::Status Commit() {
    if (staged_.empty() && jobsets_.empty()) {
      FlushEvents();
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
      qa_.objects_[key] = Held{*std::move(object), *revision, nullptr};
    }
    for (auto& [key, js] : jobsets_) {
      TrackedJobSet* t = state_.Find(key);
      t->jobset = std::move(js);
      t->revision = *revision;
      state_.MarkDirty(key);
    }
    FlushEvents();
    return absl::OkStatus();
  }

  void FlushEvents() {
    for (auto& [key, e] : pending_events_) events_.Queue(key, std::move(e));
  }

  QueueAdmission& qa_;
  ControllerState& state_;
  EventLog& events_;
  const absl::Time now_;
  // Read from the held objects.
  std::map<std::string, std::string> by_job_uid_;               // -> store key
  std::map<std::string, const api::LocalQueue*> local_queues_;  // "ns/name"
  std::map<std::string, const api::ClusterQueue*> cluster_queues_;
  std::map<std::string, int32_t> priority_classes_;
  std::map<std::string, google::protobuf::Map<std::string, std::string>>
      namespace_labels_;
  std::set<std::string> live_job_uids_;
  // The cycle's: pending entry per ClusterQueue, store key per "ns/name".
  std::map<std::string, size_t> pending_index_;
  std::map<std::string, std::string> store_keys_;
  // The last cycle's input, as the cycles left it.
  queues::CycleInput in_;
  // Decided: Kueue objects (nullopt: delete) and JobSets to write.
  std::map<std::string, std::optional<api::KueueObject>> staged_;
  std::set<std::string> created_;
  std::map<std::string, api::JobSet> jobsets_;
  std::vector<std::pair<std::string, JobSetEvent>> pending_events_;
  bool capacity_changed_ = false;
};

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
        objects_[kv.key] = Held{*std::move(o), kv.mod_revision, nullptr};
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
  objects_[event.kv.key] = Held{*std::move(o), event.kv.mod_revision, nullptr};
}

absl::Status QueueAdmission::Run(ControllerState& state, EventLog& events,
                                 absl::Time now) {
  if (!dirty_) return absl::OkStatus();
  dirty_ = false;
  Stage stage(*this, state, events, now);
  return stage.Run();
}

const api::Workload* QueueAdmission::FindWorkload(
    const std::string& ns, const std::string& name) const {
  auto it = objects_.find(WorkloadKey(ns, name));
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
