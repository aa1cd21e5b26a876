#ifndef JOBSET_SCHEDULER_QUEUES_TEST_BUILDERS_H_
#define JOBSET_SCHEDULER_QUEUES_TEST_BUILDERS_H_

// Builders for the tests of this package: ClusterQueues, Workloads and
// quotas in a line each. Test-only.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "scheduler/queues/model.h"

namespace jobset::scheduler::queues::testing {

// An arbitrary, fixed instant the tests count from.
inline const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

// Returns `cores` cpus in milli-units.
inline int64_t Cpu(int64_t cores) { return cores * 1000; }

// Returns a quota for `resource`; limits unset.
ResourceQuota Quota(std::string resource, int64_t nominal,
                    std::optional<int64_t> borrowing_limit = std::nullopt,
                    std::optional<int64_t> lending_limit = std::nullopt);

// ClusterQueueBuilder("cq-a").Cohort("team")
//     .Flavor("default", {Quota("cpu", Cpu(8))}).Build()
class ClusterQueueBuilder {
 public:
  explicit ClusterQueueBuilder(std::string name);

  ClusterQueueBuilder& Cohort(std::string cohort);
  ClusterQueueBuilder& Strategy(QueueingStrategy strategy);
  // Starts a resource group; later Flavor() calls add to it.
  ClusterQueueBuilder& Group(std::vector<std::string> covered_resources);
  // Adds a flavor to the last group, starting one that covers the quotas'
  // resources if there is none.
  ClusterQueueBuilder& Flavor(std::string flavor,
                              std::vector<ResourceQuota> quotas);
  ClusterQueueBuilder& WithinClusterQueue(PreemptionPolicy policy);
  ClusterQueueBuilder& ReclaimWithinCohort(PreemptionPolicy policy);
  ClusterQueueBuilder& BorrowWithinCohort(
      BorrowWithinCohortPolicy policy,
      std::optional<int32_t> max_priority_threshold = std::nullopt);
  ClusterQueueBuilder& WhenCanBorrow(FungibilityPolicy policy);
  ClusterQueueBuilder& WhenCanPreempt(FungibilityPolicy policy);
  ClusterQueueBuilder& Stop(StopPolicy policy);
  ClusterQueueBuilder& FairWeight(double weight);

  ClusterQueue Build() const { return cq_; }

 private:
  ClusterQueue cq_;
};

// WorkloadBuilder("j1").Queue("cq-a").PodSet("w", 4, {{"cpu", Cpu(1)}})
//     .Build(); namespace "default", uid = name, queued at kT0.
class WorkloadBuilder {
 public:
  explicit WorkloadBuilder(std::string name);
  // Continues from an existing workload.
  explicit WorkloadBuilder(Workload workload)
      : workload_(std::move(workload)) {}

  WorkloadBuilder& Namespace(std::string ns);
  WorkloadBuilder& Uid(std::string uid);
  WorkloadBuilder& Queue(std::string cluster_queue);
  WorkloadBuilder& Priority(int32_t priority);
  WorkloadBuilder& QueuedAt(absl::Time t);
  WorkloadBuilder& PodSet(std::string name, int32_t count,
                          ResourceQuantities per_pod);
  // Sets the last podSet's placement constraints.
  WorkloadBuilder& NodeSelector(std::string key, std::string value);
  WorkloadBuilder& Tolerate(Toleration toleration);
  // Admits every podSet to `cluster_queue` with every resource on `flavor`,
  // quota reserved at `reserved`.
  WorkloadBuilder& AdmittedOn(std::string cluster_queue, std::string flavor,
                              absl::Time reserved = kT0);
  WorkloadBuilder& Reclaimable(int32_t pods);
  WorkloadBuilder& Evicted();
  WorkloadBuilder& LastRestart(absl::Time t);
  WorkloadBuilder& NotPreemptibleBefore(absl::Time t);

  Workload Build() const { return workload_; }

 private:
  Workload workload_;
};

}  // namespace jobset::scheduler::queues::testing

#endif  // JOBSET_SCHEDULER_QUEUES_TEST_BUILDERS_H_
