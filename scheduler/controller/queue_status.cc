// ClusterQueue and LocalQueue status (kueue-semantics.md §5), from the
// cycle's input as the cycles left it, written where it changed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/controller/queue_stage.h"
#include "scheduler/records/conditions.h"

namespace jobset::scheduler {
namespace {

// `value` of `resource` (queues' units) in Kubernetes' base unit, as Kueue's
// gauges report it: cpu in cores, everything else as it is.
double BaseUnits(absl::string_view resource, int64_t value) {
  return resource == queues::kCpu ? static_cast<double>(value) / 1000
                                  : static_cast<double>(value);
}

double LimitOrInf(absl::string_view resource,
                  const std::optional<int64_t>& limit) {
  return limit.has_value() ? BaseUnits(resource, *limit)
                           : std::numeric_limits<double>::infinity();
}

// Sets status.fairSharing from the node's share (cleared without fair
// sharing, as Kueue does) and returns the gauge's value: the precise share,
// NaN for +Inf.
template <typename Status>
std::optional<double> SetShare(const std::optional<queues::QuotaTree>& tree,
                               queues::QuotaTree::NodeId node, Status& status) {
  if (!tree.has_value() || node == queues::QuotaTree::kNoNode) {
    status.clear_fair_sharing();
    return std::nullopt;
  }
  const queues::Drs share = queues::DominantResourceShare(*tree, node);
  status.mutable_fair_sharing()->set_weighted_share(
      share.RoundedWeightedShare());
  const double precise = share.PreciseWeightedShare();
  return std::isinf(precise) ? std::numeric_limits<double>::quiet_NaN()
                             : precise;
}
}  // namespace

std::optional<queues::QuotaTree> QueueAdmission::Stage::SharesTree(
    const std::map<std::string, QueueTally>& by_cq) const {
  if (!in_.fair_sharing.has_value()) return std::nullopt;
  absl::StatusOr<queues::QuotaTree> tree =
      queues::QuotaTree::Build(in_.cohorts, in_.cluster_queues);
  if (!tree.ok()) return std::nullopt;
  // A ClusterQueue's admitted usage added at once: the tree ends as it
  // would with each Workload's added in turn (what a node keeps and what it
  // passes to its parent depend only on the sum).
  for (const auto& [cq, tally] : by_cq) {
    const queues::QuotaTree::NodeId node = tree->ClusterQueueNode(cq);
    if (node != queues::QuotaTree::kNoNode && tally.reserving > 0)
      tree->AddUsage(node, tally.usage);
  }
  return *std::move(tree);
}

void QueueAdmission::Stage::CohortStatuses(
    const std::optional<queues::QuotaTree>& tree) {
  for (const queues::Cohort& cohort : in_.cohorts) {
    const std::string key = store::keys::KueueKey("cohorts", "", cohort.name);
    auto held = qa_.objects_.find(key);
    if (held == qa_.objects_.end()) continue;
    api::CohortStatus status = held->second.object.cohort().status();
    const std::optional<double> share = SetShare(
        tree, tree ? tree->CohortNode(cohort.name) : queues::QuotaTree::kNoNode,
        status);
    StageStatus(key, held->second.object, status);
    if (share.has_value()) cohort_gauges_.push_back({cohort.name, *share});
  }
}

// Writes each ClusterQueue's and LocalQueue's status where it changed:
// pendingWorkloads (queued and inadmissible), reservingWorkloads and
// admittedWorkloads (the same here: jobsetd has no admission checks),
// what they hold by flavor and resource, and the Active condition.
void QueueAdmission::Stage::QueueStatuses() {
  std::map<std::string, QueueTally> by_cq;
  std::map<std::string, QueueTally> by_lq;  // "ns/name"
  // The LocalQueue of `w` in by_lq, its key built in one buffer (this
  // runs for every Workload); looked up again only when it is not the
  // previous Workload's (a ClusterQueue's pending ones mostly share one).
  std::string lq_key;
  QueueTally* last = nullptr;
  const queues::Workload* last_of = nullptr;
  auto lq_tally = [&](const queues::Workload& w) -> QueueTally& {
    if (last == nullptr || w.queue_name != last_of->queue_name ||
        w.namespace_name != last_of->namespace_name) {
      lq_key.assign(w.namespace_name).append("/").append(w.queue_name);
      last = &by_lq[lq_key];
    }
    last_of = &w;
    return *last;
  };
  for (const queues::PendingQueue& q : in_.pending) {
    if (q.workloads.empty()) continue;
    QueueTally& t = by_cq[q.cluster_queue];
    for (const queues::PendingWorkload& p : q.workloads) {
      ++t.pending;
      if (p.parked) ++t.parked;
      ++lq_tally(*p.workload).pending;
    }
  }
  // What the admitted hold: the held tallies, kept as Workloads are held
  // (QueueAdmission::Index), with what this run changed of in_.admitted.
  std::map<std::string, Tally> run_cq;
  std::map<std::string, Tally> run_lq;  // "ns/name"
  for (const Held* held : admitted_out_) {
    run_cq[held->admitted_in].Add(held->usage, -1);
    run_lq[held->local_queue].Add(held->usage, -1);
  }
  for (const std::shared_ptr<const queues::Workload>& w : admitted_in_) {
    const queues::FlavorResourceQuantities usage = queues::AdmittedUsage(*w);
    run_cq[w->admission->cluster_queue].Add(usage, 1);
    run_lq[absl::StrCat(w->namespace_name, "/", w->queue_name)].Add(usage, 1);
  }
  auto add = [](const Tally& tally, QueueTally& t) {
    t.reserving += tally.workloads;
    for (const auto& [fr, sum] : tally.usage) {
      auto& [v, holders] = t.holders[fr];
      v += sum.first;
      holders += sum.second;
    }
  };
  for (const auto& [cq, holding] : qa_.admitted_) add(holding.tally, by_cq[cq]);
  for (const auto& [lq, tally] : qa_.admitted_by_lq_) add(tally, by_lq[lq]);
  for (const auto& [cq, tally] : run_cq) add(tally, by_cq[cq]);
  for (const auto& [lq, tally] : run_lq) add(tally, by_lq[lq]);
  // A (flavor, resource) counts where some Workload holds it, as if each
  // one's had been added.
  for (auto* by : {&by_cq, &by_lq}) {
    for (auto& [queue, t] : *by) {
      for (const auto& [fr, sum] : t.holders) {
        if (sum.second > 0) t.usage[fr] = sum.first;
      }
    }
  }
  const queues::FlavorIndex flavors = Flavors();
  const std::optional<queues::QuotaTree> tree = SharesTree(by_cq);
  CohortStatuses(tree);
  for (const queues::ClusterQueue& cq : in_.cluster_queues) {
    const std::string key = store::keys::KueueKey("clusterqueues", "", cq.name);
    auto held = qa_.objects_.find(key);
    if (held == qa_.objects_.end()) continue;
    const QueueTally& tally = by_cq[cq.name];
    const queues::ActiveCondition active =
        queues::ClusterQueueActive(cq, flavors, /*in_cohort_cycle=*/false);
    std::optional<double> share;
    // With fair sharing the status also says the share, which any queue
    // of the cohort changes: made every run.
    if (tree.has_value() || !Seen(key, held->second.revision, true, tally)) {
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
      share = SetShare(
          tree,
          tree ? tree->ClusterQueueNode(cq.name) : queues::QuotaTree::kNoNode,
          status);
      SetCondition(status.mutable_conditions(), "Active", active.active,
                   active.reason, active.message, now_);
      if (!StageStatus(key, held->second.object, status) && !tree.has_value())
        See(key, held->second.revision, true, tally);
    }
    ClusterQueueGauges& g = queue_gauges_.emplace_back();
    g.name = cq.name;
    g.cohort = cq.cohort;
    g.status = active.active ? kClusterQueueActive : kClusterQueuePending;
    auto held_back = held_back_.find(cq.name);
    g.pending_active = tally.pending - tally.parked;
    g.pending_inadmissible =
        tally.parked + (held_back == held_back_.end() ? 0 : held_back->second);
    g.reserving = tally.reserving;
    g.admitted = tally.reserving;
    g.weighted_share = share;
    for (const queues::ResourceGroup& group : cq.resource_groups) {
      for (const queues::FlavorQuotas& fq : group.flavors) {
        for (const queues::ResourceQuota& rq : fq.resources) {
          auto it = tally.usage.find({fq.name, rq.name});
          const double used = BaseUnits(
              rq.name, it == tally.usage.end() ? int64_t{0} : it->second);
          g.resources.push_back(
              {.flavor = fq.name,
               .resource = rq.name,
               .nominal_quota = BaseUnits(rq.name, rq.nominal_quota),
               .borrowing_limit = LimitOrInf(rq.name, rq.borrowing_limit),
               .lending_limit = LimitOrInf(rq.name, rq.lending_limit),
               .reservation = used,
               .usage = used});
        }
      }
    }
  }
  for (const auto& [lq_key, lq] : local_queues_) {
    const std::string key = store::keys::KueueKey(
        "localqueues", lq->metadata().namespace_(), lq->metadata().name());
    auto held = qa_.objects_.find(key);
    if (held == qa_.objects_.end()) continue;
    const QueueTally& tally = by_lq[lq_key];
    const bool cq_exists = cluster_queues_.contains(lq->spec().cluster_queue());
    if (Seen(key, held->second.revision, cq_exists, tally)) continue;
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
    SetCondition(status.mutable_conditions(), "Active", cq_exists && !stopped,
                 stopped     ? "Stopped"
                 : cq_exists ? "Ready"
                             : "ClusterQueueDoesNotExist",
                 stopped     ? "LocalQueue is stopped"
                 : cq_exists ? "Can submit new workloads to localQueue"
                             : "Can't submit new workloads to clusterQueue",
                 now_);
    if (!StageStatus(key, held->second.object, status))
      See(key, held->second.revision, cq_exists, tally);
  }
}

// Reports the gauges and what was measured: called once the commit
// succeeded (or when there was nothing to commit).
void QueueAdmission::Stage::ReportMetrics() {
  ControllerMetrics* metrics = qa_.options_.metrics;
  if (metrics == nullptr) return;
  metrics->QueueGauges(queue_gauges_, cohort_gauges_);
  for (const auto& measure : measured_) measure(*metrics);
}

// Stages `object` with `status` when it differs from the held one.
template <typename Status>
bool QueueAdmission::Stage::StageStatus(const std::string& key,
                                        const api::KueueObject& object,
                                        const Status& status) {
  // Compared before the object is copied: most queues' status is as held.
  if (object.has_cluster_queue()) {
    if constexpr (std::is_same_v<Status, api::ClusterQueueStatus>) {
      if (object.cluster_queue().status().SerializeAsString() ==
          status.SerializeAsString())
        return false;
    }
  } else if (object.has_cohort()) {
    if constexpr (std::is_same_v<Status, api::CohortStatus>) {
      if (object.cohort().status().SerializeAsString() ==
          status.SerializeAsString())
        return false;
    }
  } else if (object.has_local_queue()) {
    if constexpr (std::is_same_v<Status, api::LocalQueueStatus>) {
      if (object.local_queue().status().SerializeAsString() ==
          status.SerializeAsString())
        return false;
    }
  }
  api::KueueObject copy = object;
  if (copy.has_cluster_queue()) {
    if constexpr (std::is_same_v<Status, api::ClusterQueueStatus>)
      *copy.mutable_cluster_queue()->mutable_status() = status;
  } else if (copy.has_cohort()) {
    if constexpr (std::is_same_v<Status, api::CohortStatus>)
      *copy.mutable_cohort()->mutable_status() = status;
  } else if (copy.has_local_queue()) {
    if constexpr (std::is_same_v<Status, api::LocalQueueStatus>)
      *copy.mutable_local_queue()->mutable_status() = status;
  }
  staged_[key] = std::move(copy);
  return true;
}

// Whether the status at `key` (held at `revision`) was found written as
// `tally` and the rest would make it now.
bool QueueAdmission::Stage::Seen(const std::string& key, int64_t revision,
                                 bool cluster_queue_exists,
                                 const QueueTally& tally) const {
  auto seen = qa_.statuses_seen_.find(key);
  if (seen == qa_.statuses_seen_.end()) return false;
  const StatusSeen& s = seen->second;
  return s.revision == revision && s.flavors == qa_.flavors_changed_ &&
         s.cluster_queue_exists == cluster_queue_exists &&
         s.pending == tally.pending && s.reserving == tally.reserving &&
         s.usage == tally.usage;
}

void QueueAdmission::Stage::See(const std::string& key, int64_t revision,
                                bool cluster_queue_exists,
                                const QueueTally& tally) {
  qa_.statuses_seen_[key] =
      StatusSeen{revision,      qa_.flavors_changed_, cluster_queue_exists,
                 tally.pending, tally.reserving,      tally.usage};
}

}  // namespace jobset::scheduler
