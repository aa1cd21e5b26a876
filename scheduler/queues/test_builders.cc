#include "scheduler/queues/test_builders.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "scheduler/queues/model.h"

namespace jobset::scheduler::queues::testing {

ResourceQuota Quota(std::string resource, int64_t nominal,
                    std::optional<int64_t> borrowing_limit,
                    std::optional<int64_t> lending_limit) {
  return ResourceQuota{std::move(resource), nominal, borrowing_limit,
                       lending_limit};
}

ClusterQueueBuilder::ClusterQueueBuilder(std::string name) {
  cq_.name = std::move(name);
}

ClusterQueueBuilder& ClusterQueueBuilder::Cohort(std::string cohort) {
  cq_.cohort = std::move(cohort);
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::Strategy(QueueingStrategy strategy) {
  cq_.queueing_strategy = strategy;
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::Group(
    std::vector<std::string> covered_resources) {
  cq_.resource_groups.push_back(
      ResourceGroup{std::move(covered_resources), {}});
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::Flavor(
    std::string flavor, std::vector<ResourceQuota> quotas) {
  if (cq_.resource_groups.empty()) {
    std::vector<std::string> covered;
    for (const ResourceQuota& q : quotas) covered.push_back(q.name);
    Group(std::move(covered));
  }
  cq_.resource_groups.back().flavors.push_back(
      FlavorQuotas{std::move(flavor), std::move(quotas)});
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::WithinClusterQueue(
    PreemptionPolicy policy) {
  cq_.preemption.within_cluster_queue = policy;
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::ReclaimWithinCohort(
    PreemptionPolicy policy) {
  cq_.preemption.reclaim_within_cohort = policy;
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::BorrowWithinCohort(
    BorrowWithinCohortPolicy policy,
    std::optional<int32_t> max_priority_threshold) {
  cq_.preemption.borrow_within_cohort = {policy, max_priority_threshold};
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::WhenCanBorrow(
    FungibilityPolicy policy) {
  cq_.flavor_fungibility.when_can_borrow = policy;
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::WhenCanPreempt(
    FungibilityPolicy policy) {
  cq_.flavor_fungibility.when_can_preempt = policy;
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::Stop(StopPolicy policy) {
  cq_.stop_policy = policy;
  return *this;
}

ClusterQueueBuilder& ClusterQueueBuilder::FairWeight(double weight) {
  cq_.fair_weight = weight;
  return *this;
}

WorkloadBuilder::WorkloadBuilder(std::string name) {
  workload_.namespace_name = "default";
  workload_.uid = name;
  workload_.name = std::move(name);
  workload_.times.queue_order = kT0;
}

WorkloadBuilder& WorkloadBuilder::Namespace(std::string ns) {
  workload_.namespace_name = std::move(ns);
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Uid(std::string uid) {
  workload_.uid = std::move(uid);
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Queue(std::string cluster_queue) {
  workload_.cluster_queue = std::move(cluster_queue);
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Priority(int32_t priority) {
  workload_.priority = priority;
  return *this;
}

WorkloadBuilder& WorkloadBuilder::QueuedAt(absl::Time t) {
  workload_.times.queue_order = t;
  return *this;
}

WorkloadBuilder& WorkloadBuilder::PodSet(std::string name, int32_t count,
                                         ResourceQuantities per_pod) {
  queues::PodSet ps;
  ps.name = std::move(name);
  ps.count = count;
  ps.requests = std::move(per_pod);
  workload_.pod_sets.push_back(std::move(ps));
  return *this;
}

WorkloadBuilder& WorkloadBuilder::NodeSelector(std::string key,
                                               std::string value) {
  workload_.pod_sets.back().placement.node_selector[std::move(key)] =
      std::move(value);
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Tolerate(Toleration toleration) {
  workload_.pod_sets.back().placement.tolerations.push_back(
      std::move(toleration));
  return *this;
}

WorkloadBuilder& WorkloadBuilder::AdmittedOn(std::string cluster_queue,
                                             std::string flavor,
                                             absl::Time reserved) {
  Admission admission;
  admission.cluster_queue = cluster_queue;
  for (const queues::PodSet& ps : workload_.pod_sets) {
    PodSetAssignment psa;
    psa.name = ps.name;
    psa.count = ps.count;
    for (const auto& [resource, per_pod] : ps.requests) {
      psa.flavors[resource] = flavor;
      psa.resource_usage[resource] = per_pod * ps.count;
    }
    admission.pod_set_assignments.push_back(std::move(psa));
  }
  workload_.cluster_queue = std::move(cluster_queue);
  workload_.admission = std::move(admission);
  workload_.times.quota_reserved = reserved;
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Reclaimable(int32_t pods) {
  workload_.pod_sets.back().reclaimable = pods;
  return *this;
}

WorkloadBuilder& WorkloadBuilder::Evicted() {
  workload_.evicted = true;
  return *this;
}

WorkloadBuilder& WorkloadBuilder::LastRestart(absl::Time t) {
  workload_.times.last_restart = t;
  return *this;
}

WorkloadBuilder& WorkloadBuilder::NotPreemptibleBefore(absl::Time t) {
  workload_.times.not_preemptible_before = t;
  return *this;
}

}  // namespace jobset::scheduler::queues::testing
