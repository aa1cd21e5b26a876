// The admission cycles (kueue-semantics.md §3, §4): the cycle's input built
// from the held objects (LocalQueue, ClusterQueue and namespaceSelector
// resolved here, with Kueue's messages when they fail), the cycles run
// until one admits nothing, and each decision applied: admissions,
// evictions, QuotaReserved False reasons, parking and sticky heads.
#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "api/label_selector.h"
#include "common/clock.h"
#include "common/log.h"
#include "scheduler/controller/queue_stage.h"
#include "scheduler/queues/api_objects.h"
#include "scheduler/queues/podset_injection.h"
#include "scheduler/records/conditions.h"
#include "store/decode.h"

namespace jobset::scheduler {
namespace {

// Kubernetes' label on every Namespace.
constexpr absl::string_view kNamespaceNameLabel = "kubernetes.io/metadata.name";
// QuotaReserved's reason for what the cycle never sees (no such LocalQueue
// or ClusterQueue, a namespace the ClusterQueue does not select).
constexpr absl::string_view kReasonInadmissible = "Inadmissible";

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

// When `wl` last started waiting (Kueue's queuedWaitTime): its last
// requeue, else its creation.
absl::Time QueuedSince(const api::Workload& wl) {
  const api::Condition* requeued =
      FindCondition(wl.status().conditions(), kWorkloadRequeued);
  if (requeued != nullptr && requeued->status() == "True")
    return FromTimestamp(requeued->last_transition_time());
  return FromTimestamp(wl.metadata().creation_timestamp());
}

// The store key of Workload "<ns>/<name>", as the admission core names
// it; "" for a malformed name.
std::string StoreKeyOf(absl::string_view workload) {
  std::vector<absl::string_view> parts = absl::StrSplit(workload, '/');
  if (parts.size() != 2) return "";
  return WorkloadStoreKey(parts[0], parts[1]);
}

}  // namespace

queues::FlavorIndex QueueAdmission::Stage::Flavors() const {
  queues::FlavorIndex flavors;
  for (const auto& [key, held] : qa_.config_) {
    if (!held->object.has_resource_flavor()) continue;
    absl::StatusOr<queues::ResourceFlavor> f =
        queues::FlavorFromApi(held->object.resource_flavor());
    if (f.ok()) flavors[f->name] = *std::move(f);
  }
  return flavors;
}

// The labels of Namespace `ns` as a ClusterQueue's namespaceSelector
// reads them (every Namespace carries kubernetes.io/metadata.name).
const google::protobuf::Map<std::string, std::string>&
QueueAdmission::Stage::NamespaceLabels(const std::string& ns) {
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
void QueueAdmission::Stage::Pending(const std::string& wl_key,
                                    absl::string_view reason,
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

// The admission core's model of Workload `wl` in ClusterQueue `cq`; held
// as `held`, unchanged, it is converted once per stored revision and kept
// with it, since pod templates are costly to read.
absl::StatusOr<std::shared_ptr<const queues::Workload>>
QueueAdmission::Stage::Model(Held* held, const api::Workload& wl,
                             const std::string& cq) {
  if (held == nullptr) {
    absl::StatusOr<queues::Workload> model = queues::WorkloadFromApi(wl, cq);
    if (!model.ok()) return model.status();
    return std::make_shared<const queues::Workload>(*std::move(model));
  }
  if (held->model == nullptr ||
      (held->model->ok() && (*held->model)->cluster_queue != cq)) {
    // Converted once per revision; copied again only when its LocalQueue
    // now points at another ClusterQueue.
    absl::StatusOr<queues::Workload> model =
        held->model == nullptr ? queues::WorkloadFromApi(wl, "") : *held->model;
    if (model.ok()) model->cluster_queue = cq;
    held->model = std::make_shared<const absl::StatusOr<queues::Workload>>(
        std::move(model));
  }
  if (!held->model->ok()) return held->model->status();
  // Shares the held model's ownership.
  return std::shared_ptr<const queues::Workload>(held->model, &**held->model);
}

absl::Status QueueAdmission::Stage::BuildInput(queues::CycleInput& in) {
  in.fair_sharing = qa_.options_.fair_sharing;
  for (const auto& [key, held] : qa_.config_) {
    const api::KueueObject& o = held->object;
    if (o.has_resource_flavor()) {
      absl::StatusOr<queues::ResourceFlavor> f =
          queues::FlavorFromApi(o.resource_flavor());
      if (f.ok()) in.flavors.push_back(*std::move(f));
    } else if (o.has_cohort()) {
      absl::StatusOr<queues::Cohort> c = queues::CohortFromApi(o.cohort());
      if (c.ok()) in.cohorts.push_back(*std::move(c));
    } else if (o.has_cluster_queue()) {
      // Converted when it was held (QueueAdmission::Index).
      const absl::StatusOr<queues::ClusterQueue>& cq = *held->cluster_queue;
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
      in.cluster_queues.push_back(*cq);
    }
  }
  // Where a LocalQueue's pending Workloads go, resolved once per run for
  // all of them: its ClusterQueue's pending entry, or why they wait before
  // the cycle (inadmissible).
  struct Route {
    std::string cq_name;
    size_t index = 0;
    std::string inadmissible;  // "" when they reach the cycle
    bool waits_in_cq = false;  // held back in cq_name (the queues' status)
  };
  std::map<std::string, Route> routes;  // by "ns/lq"
  auto route_of = [&](const std::string& lq_key) -> const Route& {
    auto [r, fresh] = routes.try_emplace(lq_key);
    if (!fresh) return r->second;
    Route& to = r->second;
    const size_t slash = lq_key.find('/');
    const std::string ns = lq_key.substr(0, slash);
    const std::string lq = lq_key.substr(slash + 1);
    auto lq_it = local_queues_.find(lq_key);
    if (lq_it == local_queues_.end()) {
      to.inadmissible = absl::StrCat("LocalQueue ", lq, " doesn't exist");
      return to;
    }
    to.cq_name = lq_it->second->spec().cluster_queue();
    auto cq_it = cluster_queues_.find(to.cq_name);
    auto index = pending_index_.find(to.cq_name);
    if (cq_it == cluster_queues_.end() || index == pending_index_.end()) {
      to.inadmissible =
          absl::StrCat("ClusterQueue ", to.cq_name, " doesn't exist");
      return to;
    }
    to.index = index->second;
    // From here on they wait in ClusterQueue cq_name, in the cycle's heap
    // or held back before it (inadmissible).
    to.waits_in_cq = true;
    if (lq_it->second->spec().stop_policy() == "Hold" ||
        lq_it->second->spec().stop_policy() == "HoldAndDrain") {
      to.inadmissible = absl::StrCat("LocalQueue ", lq, " is inactive");
      return to;
    }
    const api::ClusterQueueSpec& spec = cq_it->second->spec();
    if (!spec.has_namespace_selector() ||
        !Selects(spec.namespace_selector(), NamespaceLabels(ns))) {
      to.inadmissible =
          "Workload namespace doesn't match ClusterQueue selector";
    }
    return to;
  };
  // A pending Workload `wl` at `key` (held as `held`, unchanged, or null)
  // of a LocalQueue whose route is `to`: into its ClusterQueue's heap, or
  // held back with why.
  auto add_pending = [&](const std::string& key, Held* held,
                         const api::Workload& wl, const Route& to) {
    if (!to.inadmissible.empty()) {
      if (to.waits_in_cq) ++held_back_[to.cq_name];
      Pending(key, kReasonInadmissible, to.inadmissible);
      return;
    }
    absl::StatusOr<std::shared_ptr<const queues::Workload>> m =
        Model(held, wl, to.cq_name);
    if (!m.ok()) {
      ++held_back_[to.cq_name];
      Pending(key, kReasonInadmissible, m.status().message());
      return;
    }
    queues::PendingWorkload p;
    p.workload = *std::move(m);
    p.parked = !qa_.parked_.empty() && qa_.parked_.contains(ShortKey(wl));
    p.requeue_at = Backoff(key, wl);
    in.pending[to.index].workloads.push_back(std::move(p));
  };
  // The held Workloads, from the index (QueueAdmission::Index decided what
  // each is), but those this stage staged before the cycles: those are read
  // as staged, at the end, with the ones it created. (What the walk itself
  // stages, a QuotaReserved False or a backoff's end, is read as held.)
  const std::string prefix = store::keys::KueuePrefix(kWorkloads, "");
  std::vector<std::string> staged_keys;
  absl::flat_hash_set<const Held*> staged_over;
  std::set<std::string> touched;  // their ClusterQueues and LocalQueues
  for (const auto& [key, object] : staged_) {
    if (!absl::StartsWith(key, prefix)) continue;
    staged_keys.push_back(key);
    auto h = qa_.objects_.find(key);
    if (h == qa_.objects_.end()) continue;
    staged_over.insert(&h->second);
    if (h->second.role == Role::kAdmitted)
      touched.insert(h->second.admitted_in);
    if (h->second.role == Role::kPending) touched.insert(h->second.local_queue);
  }
  // ClusterQueues whose admitted Workloads may get other preemption times
  // than their models': every one with a minimum runtime where a priority
  // class has one, else those with one or with a JobSet that restarted.
  std::set<std::string> timed;
  for (const auto& [uid, at] : restarts_) {
    auto keys = qa_.job_uids_.find(uid);
    if (keys == qa_.job_uids_.end()) continue;
    for (const std::string& key : keys->second) {
      auto h = qa_.objects_.find(key);
      if (h != qa_.objects_.end() && h->second.role == Role::kAdmitted)
        timed.insert(h->second.admitted_in);
    }
  }
  for (auto& [cq, holding] : qa_.admitted_) {
    const size_t begin = in.admitted.size();
    if (touched.contains(cq)) {
      for (const auto& [key, held] : holding.workloads) {
        if (staged_over.contains(held)) {
          admitted_out_.push_back(held);
          continue;
        }
        in.admitted.emplace_back(held->model, &**held->model);
      }
      admitted_groups_.push_back({cq, begin, in.admitted.size(), nullptr});
    } else {
      if (!holding.kept) {
        // Each shares its held model, made for its admission's
        // ClusterQueue (QueueAdmission::Index).
        holding.models.clear();
        holding.usage.clear();
        for (const auto& [key, held] : holding.workloads) {
          holding.models.emplace_back(held->model, &**held->model);
          for (const auto& [fr, v] : held->usage) holding.usage[fr] += v;
        }
        holding.kept = true;
      }
      in.admitted.insert(in.admitted.end(), holding.models.begin(),
                         holding.models.end());
      admitted_groups_.push_back(
          {cq, begin, in.admitted.size(), &holding.usage});
    }
    if (!class_runtimes_.empty() || queue_runtimes_.contains(cq) ||
        timed.contains(cq)) {
      for (size_t i = begin; i < in.admitted.size(); ++i)
        SetPreemptionTimes(in.admitted[i]);
    }
  }
  for (auto& [lq_key, waiting] : qa_.pending_) {
    const Route& to = route_of(lq_key);
    if (!to.inadmissible.empty() || touched.contains(lq_key)) {
      for (const auto& [key, held] : waiting.workloads) {
        if (!staged_over.contains(held))
          add_pending(key, held, held->object.workload(), to);
      }
      continue;
    }
    if (!waiting.kept || waiting.cluster_queue != to.cq_name) {
      waiting.entries.clear();
      waiting.backing_off.clear();
      waiting.failed.clear();
      for (const auto& [key, held] : waiting.workloads) {
        const api::Workload& wl = held->object.workload();
        absl::StatusOr<std::shared_ptr<const queues::Workload>> m =
            Model(held, wl, to.cq_name);
        if (!m.ok()) {
          waiting.failed.emplace_back(key, m.status().message());
          continue;
        }
        if (wl.status().requeue_state().has_requeue_at())
          waiting.backing_off.push_back({waiting.entries.size(), key, held});
        waiting.entries.push_back({.workload = *std::move(m)});
      }
      waiting.cluster_queue = to.cq_name;
      waiting.kept = true;
    }
    for (const auto& [key, message] : waiting.failed) {
      ++held_back_[to.cq_name];
      Pending(key, kReasonInadmissible, message);
    }
    std::vector<queues::PendingWorkload>& heap = in.pending[to.index].workloads;
    const size_t begin = heap.size();
    heap.insert(heap.end(), waiting.entries.begin(), waiting.entries.end());
    for (const Waiting::BackingOff& b : waiting.backing_off) {
      heap[begin + b.index].requeue_at =
          Backoff(b.key, b.held->object.workload());
    }
    if (!qa_.parked_.empty()) {
      for (size_t i = begin; i < heap.size(); ++i)
        heap[i].parked = qa_.parked_.contains(WorkloadKey(*heap[i].workload));
    }
  }
  const size_t begin = in.admitted.size();
  for (const std::string& key : staged_keys) {
    const api::Workload* wl = Current(key);
    if (wl == nullptr) continue;  // deleted
    if (IsConditionTrue(wl->status().conditions(), kWorkloadFinished)) continue;
    if (wl->status().has_admission()) {
      absl::StatusOr<std::shared_ptr<const queues::Workload>> m =
          Model(nullptr, *wl, wl->status().admission().cluster_queue());
      if (m.ok()) {
        SetPreemptionTimes(*m);
        admitted_in_.push_back(*m);
        in.admitted.push_back(*std::move(m));
      }
      continue;
    }
    if (wl->spec().has_active() && !wl->spec().active()) continue;
    if (wl->spec().queue_name().empty()) continue;  // never admitted so
    add_pending(key, nullptr, *wl,
                route_of(absl::StrCat(wl->metadata().namespace_(), "/",
                                      wl->spec().queue_name())));
  }
  admitted_groups_.push_back({"", begin, in.admitted.size(), nullptr});
  return absl::OkStatus();
}

void QueueAdmission::Stage::SetPreemptionTimes(
    std::shared_ptr<const queues::Workload>& m) {
  queues::WorkloadTimes times = m->times;
  if (auto t = restarts_.find(m->job_uid); t != restarts_.end()) {
    times.last_restart = t->second;
  }
  absl::Duration runtime = absl::ZeroDuration();
  if (auto q = queue_runtimes_.find(m->cluster_queue);
      q != queue_runtimes_.end()) {
    runtime = q->second;
  }
  if (auto c = class_runtimes_.find(m->priority_class);
      c != class_runtimes_.end()) {
    runtime = std::max(runtime, c->second);
  }
  if (runtime != absl::ZeroDuration() && times.quota_reserved.has_value()) {
    times.not_preemptible_before = *times.quota_reserved + runtime;
    if (times.not_preemptible_before > now_ &&
        (!protected_until_ || times.not_preemptible_before < *protected_until_))
      protected_until_ = times.not_preemptible_before;
  }
  if (times.last_restart == m->times.last_restart &&
      times.not_preemptible_before == m->times.not_preemptible_before)
    return;
  auto changed = std::make_shared<queues::Workload>(*m);
  changed->times = times;
  m = std::move(changed);
}

absl::Status QueueAdmission::Stage::Cycles() {
  if (capacity_changed_) qa_.parked_.clear();
  queues::CycleInput& in = in_;
  JOBSET_RETURN_IF_ERROR(BuildInput(in));
  // One admission attempt (kueue_admission_attempts_total) is this run's
  // cycles, when they had a head to decide on.
  const Stopwatch took;
  bool attempted = false;
  bool admitted = false;
  // One snapshot for the run's cycles, each admission Apply appends to
  // in.admitted added to it.
  absl::StatusOr<queues::ClusterState> snapshot =
      queues::ClusterState::Build(in.flavors, in.cohorts, in.cluster_queues);
  if (snapshot.ok()) {
    for (const AdmittedGroup& g : admitted_groups_) {
      if (g.usage != nullptr) {
        // A ClusterQueue's held admitted Workloads, unchanged: their usage
        // summed as the index keeps it.
        snapshot->AddAdmitted(
            g.cluster_queue,
            absl::MakeConstSpan(in.admitted).subspan(g.begin, g.end - g.begin),
            *g.usage);
        continue;
      }
      for (size_t i = g.begin; i < g.end; ++i)
        snapshot->AddAdmitted(*in.admitted[i]);
    }
  }
  for (int cycle = 0; snapshot.ok() && cycle < qa_.options_.max_cycles;
       ++cycle) {
    absl::StatusOr<queues::CycleResult> result =
        queues::RunCycle(in, *snapshot, now_);
    if (!result.ok()) {
      snapshot = result.status();
      break;
    }
    const size_t before = in.admitted.size();
    bool progressed = false;
    for (const queues::Decision& d : result->decisions) {
      attempted = true;
      admitted |= d.kind == queues::DecisionKind::kAdmit;
      progressed |= Apply(d, in);
    }
    for (size_t i = before; i < in.admitted.size(); ++i)
      snapshot->AddAdmitted(*in.admitted[i]);
    if (!progressed) break;
  }
  if (!snapshot.ok()) {
    JOBSET_LOG(ERROR) << "queues: cycle refused its input: "
                      << snapshot.status().message();
  }
  if (attempted) {
    Measure([admitted, took = took.Elapsed()](ControllerMetrics& m) {
      m.AdmissionAttempt(admitted, took);
    });
  }
  // While something waits, look again when the first minimum runtime ends.
  for (const queues::PendingQueue& q : in.pending) {
    if (!q.workloads.empty() && protected_until_) WakeAt(*protected_until_);
  }
  return absl::OkStatus();
}

// The pending queue of ClusterQueue `cq` in `in`, or null.
queues::PendingQueue* QueueAdmission::Stage::QueueOf(queues::CycleInput& in,
                                                     const std::string& cq) {
  auto it = pending_index_.find(cq);
  return it == pending_index_.end() ? nullptr : &in.pending[it->second];
}

// The pending entry of the workload with `uid` in ClusterQueue `cq`.
std::vector<queues::PendingWorkload>::iterator
QueueAdmission::Stage::FindPending(queues::PendingQueue& q,
                                   const std::string& uid) {
  return std::find_if(
      q.workloads.begin(), q.workloads.end(),
      [&](const queues::PendingWorkload& p) { return p.workload->uid == uid; });
}

// Applies one decision; returns whether the next cycle may decide
// something new.
bool QueueAdmission::Stage::Apply(const queues::Decision& d,
                                  queues::CycleInput& in) {
  const std::string wl_key = StoreKeyOf(d.workload);
  if (Current(wl_key) == nullptr) return false;
  switch (d.kind) {
    case queues::DecisionKind::kAdmit: {
      queues::PendingQueue* q = QueueOf(in, d.cluster_queue);
      if (q == nullptr || !d.admission.has_value()) return false;
      auto it = FindPending(*q, d.uid);
      if (it == q->workloads.end()) return false;
      auto w = std::make_shared<queues::Workload>(*it->workload);
      q->workloads.erase(it);
      if (q->sticky_uid == d.uid) {
        q->sticky_uid.clear();
        qa_.sticky_.erase(d.cluster_queue);
      }
      Admit(wl_key, *d.admission);
      w->admission = d.admission;
      w->times.quota_reserved = now_;
      admitted_in_.push_back(w);
      in.admitted.push_back(std::move(w));
      return true;
    }
    case queues::DecisionKind::kPreempt: {
      for (const queues::Victim& v : d.victims) {
        if (!v.already_evicted) Evict(v, d.cluster_queue);
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

void QueueAdmission::Stage::Admit(const std::string& wl_key,
                                  const queues::Admission& admission) {
  const api::Workload* before = Current(wl_key);
  Measure([cq = admission.cluster_queue,
           priority_class = before->spec().priority_class_name(),
           waited = now_ - QueuedSince(*before)](ControllerMetrics& m) {
    m.WorkloadQuotaReserved(cq, priority_class, waited);
    m.WorkloadAdmitted(cq, priority_class, waited);
  });
  api::Workload* w = Edit(wl_key);
  *w->mutable_status()->mutable_admission() = queues::AdmissionToApi(admission);
  auto* conditions = w->mutable_status()->mutable_conditions();
  SetCondition(
      conditions, kWorkloadQuotaReserved, true, "QuotaReserved",
      absl::StrCat("Quota reserved in ClusterQueue ", admission.cluster_queue),
      now_);
  SetCondition(conditions, kWorkloadAdmitted, true, "Admitted",
               "The workload is admitted", now_);
  // An eviction and its preemption are history now (Kueue's
  // SetQuotaReservation): False, reason QuotaReserved, "Previously: " and
  // what they said.
  for (absl::string_view type : {kWorkloadEvicted, kWorkloadPreempted}) {
    const api::Condition* c = FindCondition(*conditions, type);
    if (c == nullptr || c->status() != "True") continue;
    const std::string message = absl::StrCat("Previously: ", c->message());
    UpdateCondition(conditions, type, false, "QuotaReserved", message, now_);
  }
  UpdateCondition(conditions, kWorkloadRequeued, false, "QuotaReserved",
                  "Quota reserved", now_);
  // waitForPodsReady's timeout runs from now.
  if (qa_.options_.wait_for_pods_ready.enable)
    WakeAt(now_ + qa_.options_.wait_for_pods_ready.timeout);
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

void QueueAdmission::Stage::Evict(const queues::Victim& v,
                                  const std::string& preempting_cq) {
  const std::string wl_key = StoreKeyOf(v.workload);
  const api::Workload* victim = Current(wl_key);
  if (victim == nullptr) return;
  Measure([cq = MetricQueueOf(*victim), preempting_cq,
           reason = v.reason](ControllerMetrics& m) {
    m.WorkloadEvicted(cq, "Preempted", "");
    m.WorkloadPreempted(preempting_cq, reason);
  });
  api::Workload* w = Edit(wl_key);
  auto* conditions = w->mutable_status()->mutable_conditions();
  SetCondition(conditions, kWorkloadEvicted, true, "Preempted", v.message,
               now_);
  SetCondition(conditions, kWorkloadPreempted, true, v.reason, v.message, now_);
  AccumulateExecution(w);
  UpdateCondition(conditions, kWorkloadAdmitted, false, "Preempted", v.message,
                  now_);
  auto uid = w->metadata().labels().find(std::string(queues::kJobUidLabel));
  if (uid == w->metadata().labels().end()) return;
  for (auto& [key, t] : state_.jobsets()) {
    if (t.deleted || t.jobset.metadata().uid() != uid->second) continue;
    queues::Restore(queues::SavedTemplatesOf(*w), EditJobSet(t));
    Event(key, "Normal", "Stopped", v.message);
    break;
  }
}

}  // namespace jobset::scheduler
