// kueue-semantics.md §6's behavioural scenarios that this pure core decides,
// each a TEST named after it and citing its number. A small World applies
// the cycle's decisions as the controller will: admissions hold quota,
// victims are marked evicted and release quota when StopVictims() says their
// JobSets stopped, parked heads return when capacity in their cohort tree
// changes.
//
// Not here, because the controller or the API layer decides them (where
// they are tested instead):
//   21 eviction keeps the JobSet's restart count and template, 34 completion
//     (scheduler/controller/queue_admission_test);
//   22, 23, 24 LocalQueues missing or pointing nowhere, 25 a missing flavor,
//     26 Hold, 27 HoldAndDrain, 28 namespaceSelector, 29 a missing
//     WorkloadPriorityClass, 30 manageJobsWithoutQueueName, 32 a queue-name
//     change, 35 early release, 37 maximum execution time
//     (scheduler/controller/queue_scenarios_test; 23 also
//     queue_admission_test's MissingLocalQueueIsNamed, a missing
//     ClusterQueue also cycle_test's MissingQueue);
//   31 default LocalQueue (scheduler/server/jobset_api_test), 38 too many
//     replicatedJobs (JobSet -> Workload validation, jobset_update_rules_test);
//   33 the PodsReady timeout (scheduler/controller/queue_pods_ready_test;
//     its backoff keeping a workload out of the heap is covered below).

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/queues/cycle.h"
#include "scheduler/queues/flavor_assigner.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/queue_order.h"
#include "scheduler/queues/quota.h"
#include "scheduler/queues/test_builders.h"

namespace jobset::scheduler::queues {
namespace {

using ::jobset::scheduler::queues::testing::ClusterQueueBuilder;
using ::jobset::scheduler::queues::testing::Cpu;
using ::jobset::scheduler::queues::testing::kT0;
using ::jobset::scheduler::queues::testing::Quota;
using ::jobset::scheduler::queues::testing::WorkloadBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

// The snapshot plus the controller's side of each decision.
class World {
 public:
  explicit World(std::vector<ClusterQueue> cqs,
                 std::vector<ResourceFlavor> flavors = {Flavor("default")},
                 std::vector<Cohort> cohorts = {}) {
    input_.flavors = std::move(flavors);
    input_.cohorts = std::move(cohorts);
    input_.cluster_queues = std::move(cqs);
    for (const ClusterQueue& cq : input_.cluster_queues) Queue(cq.name);
  }

  static ResourceFlavor Flavor(std::string name) {
    return ResourceFlavor{std::move(name), {}, {}, {}};
  }

  // Queues a workload in its ClusterQueue.
  void Submit(Workload w) {
    Queue(w.cluster_queue)
        .workloads.push_back(
            PendingWorkload{std::make_shared<const Workload>(std::move(w)),
                            false, absl::InfinitePast()});
  }

  // Adds a workload that already holds quota on `flavor`, reserved at kT0,
  // before the world's first cycle.
  void Running(Workload w, std::string flavor = "default") {
    const std::string cq = w.cluster_queue;
    input_.admitted.push_back(std::make_shared<const Workload>(
        WorkloadBuilder(std::move(w)).AdmittedOn(cq, flavor, kT0).Build()));
  }

  // Runs one cycle, applies its decisions, returns them by workload name.
  std::map<std::string, Decision> Cycle() {
    absl::StatusOr<CycleResult> result = RunCycle(input_, now_);
    EXPECT_TRUE(result.ok()) << result.status();
    std::map<std::string, Decision> out;
    if (!result.ok()) return out;
    for (Decision& d : result->decisions) {
      Apply(d);
      const std::string name = d.workload.substr(d.workload.find('/') + 1);
      out.emplace(name, std::move(d));
    }
    now_ += absl::Seconds(1);
    return out;
  }

  // The workload's JobSet finished: its quota is released.
  void Finish(const std::string& name) {
    auto it = FindAdmitted(name);
    ASSERT_NE(it, input_.admitted.end()) << name;
    const std::string cq = (*it)->admission->cluster_queue;
    input_.admitted.erase(it);
    CapacityChanged(cq);
  }

  // The evicted workloads' JobSets stopped: their quota is released and
  // they requeue at their original queue-order time.
  void StopVictims() {
    std::vector<std::shared_ptr<const Workload>> keep;
    for (std::shared_ptr<const Workload>& held : input_.admitted) {
      if (!held->evicted) {
        keep.push_back(std::move(held));
        continue;
      }
      Workload w = *held;
      const std::string cq = w.admission->cluster_queue;
      w.evicted = false;
      w.admission.reset();
      w.times.quota_reserved.reset();
      Submit(std::move(w));
      CapacityChanged(cq);
    }
    input_.admitted = std::move(keep);
  }

  // A ClusterQueue, flavor or quota changed: every parked head returns.
  void Unpark() {
    for (PendingQueue& q : input_.pending) {
      for (PendingWorkload& p : q.workloads) p.parked = false;
    }
  }

  CycleInput& input() { return input_; }

  // Admitted workload `i`, copied to be changed: the copy replaces it.
  Workload& EditAdmitted(size_t i) {
    auto w = std::make_shared<Workload>(*input_.admitted[i]);
    Workload& edited = *w;
    input_.admitted[i] = std::move(w);
    return edited;
  }
  absl::Time now() const { return now_; }

  const Workload* Admitted(const std::string& name) const {
    auto it = std::find_if(input_.admitted.begin(), input_.admitted.end(),
                           [&](const std::shared_ptr<const Workload>& w) {
                             return w->name == name;
                           });
    return it == input_.admitted.end() ? nullptr : it->get();
  }

  // Returns the quota ClusterQueue `cq` holds on (flavor, cpu), in cpus.
  int64_t CpuUsage(const std::string& cq, const std::string& flavor) const {
    int64_t total = 0;
    for (const std::shared_ptr<const Workload>& w : input_.admitted) {
      if (w->admission->cluster_queue != cq) continue;
      auto usage = AdmittedUsage(*w);
      total += usage[FlavorResource{flavor, "cpu"}];
    }
    return total / 1000;
  }

 private:
  PendingQueue& Queue(const std::string& cq) {
    for (PendingQueue& q : input_.pending) {
      if (q.cluster_queue == cq) return q;
    }
    input_.pending.push_back(PendingQueue{cq, {}, ""});
    return input_.pending.back();
  }

  std::vector<std::shared_ptr<const Workload>>::iterator FindAdmitted(
      const std::string& name) {
    return std::find_if(input_.admitted.begin(), input_.admitted.end(),
                        [&](const std::shared_ptr<const Workload>& w) {
                          return w->name == name;
                        });
  }

  void CapacityChanged(const std::string& cq) {
    absl::StatusOr<QuotaTree> tree =
        QuotaTree::Build(input_.cohorts, input_.cluster_queues);
    ASSERT_TRUE(tree.ok());
    for (const std::string& name : QueuesToUnpark(*tree, cq)) {
      for (PendingWorkload& p : Queue(name).workloads) p.parked = false;
    }
  }

  void Apply(const Decision& d) {
    PendingQueue& queue = Queue(d.cluster_queue);
    auto it = std::find_if(
        queue.workloads.begin(), queue.workloads.end(),
        [&](const PendingWorkload& p) { return p.workload->uid == d.uid; });
    ASSERT_NE(it, queue.workloads.end()) << d.workload;
    if (queue.sticky_uid == d.uid) queue.sticky_uid.clear();
    switch (d.kind) {
      case DecisionKind::kAdmit: {
        auto w = std::make_shared<Workload>(*it->workload);
        queue.workloads.erase(it);
        w->admission = d.admission;
        w->times.quota_reserved = now_;
        input_.admitted.push_back(std::move(w));
        return;
      }
      case DecisionKind::kPreempt:
        for (const Victim& v : d.victims) {
          for (size_t i = 0; i < input_.admitted.size(); ++i) {
            if (input_.admitted[i]->uid == v.uid)
              EditAdmitted(i).evicted = true;
          }
        }
        break;
      case DecisionKind::kPending:
        break;
    }
    if (d.outcome.sticky) queue.sticky_uid = d.uid;
    if (d.outcome.requeue == Requeue::kPark) it->parked = true;
  }

  CycleInput input_;
  absl::Time now_ = kT0 + absl::Hours(1);
};

// §6's base: cq-a and cq-b in cohort team, cpu 8 each on flavor default.
ClusterQueueBuilder Base(std::string name, int64_t cores = 8) {
  return std::move(ClusterQueueBuilder(std::move(name))
                       .Cohort("team")
                       .Flavor("default", {Quota("cpu", Cpu(cores))}));
}

// cq-solo: no cohort.
ClusterQueueBuilder Solo(int64_t cores) {
  return std::move(ClusterQueueBuilder("cq-solo").Flavor(
      "default", {Quota("cpu", Cpu(cores))}));
}

// J(n): one podSet "w" of n pods of 1 cpu, queued `minute` after kT0.
Workload J(std::string name, std::string cq, int32_t n, int minute = 0,
           int32_t priority = 0) {
  return WorkloadBuilder(std::move(name))
      .Queue(std::move(cq))
      .Priority(priority)
      .QueuedAt(kT0 + absl::Minutes(minute))
      .PodSet("w", n, {{"cpu", Cpu(1)}})
      .Build();
}

TEST(ScenariosTest, Admission) {  // §6 scenario 1
  World world({Base("cq-a").Build(), Base("cq-b").Build()});
  world.Submit(J("j1", "cq-a", 4));
  auto d = world.Cycle();
  ASSERT_EQ(d["j1"].kind, DecisionKind::kAdmit);
  const Admission& a = *d["j1"].admission;
  EXPECT_EQ(a.cluster_queue, "cq-a");
  ASSERT_EQ(a.pod_set_assignments.size(), 1u);
  EXPECT_EQ(a.pod_set_assignments[0].name, "w");
  EXPECT_EQ(a.pod_set_assignments[0].count, 4);
  EXPECT_THAT(a.pod_set_assignments[0].flavors,
              ElementsAre(Pair("cpu", "default")));
  EXPECT_THAT(a.pod_set_assignments[0].resource_usage,
              ElementsAre(Pair("cpu", Cpu(4))));
  EXPECT_EQ(FormatQuantity("cpu", Cpu(4)), "4");
  EXPECT_EQ(world.CpuUsage("cq-a", "default"), 4);  // borrowed 0
}

TEST(ScenariosTest, WaitingWhenFull) {  // §6 scenario 2
  World world({Solo(4).Build()});
  world.Running(J("j1", "cq-solo", 4));
  world.Submit(J("j2", "cq-solo", 2));
  auto d = world.Cycle();
  EXPECT_EQ(d["j2"].kind, DecisionKind::kPending);
  EXPECT_EQ(d["j2"].outcome.reason, "WaitingForQuota");
  EXPECT_EQ(d["j2"].outcome.message,
            "couldn't assign flavors to pod set w: insufficient unused quota "
            "for cpu in flavor default, 2 more needed");
  EXPECT_EQ(d["j2"].outcome.requeue, Requeue::kPark);  // inadmissible
  EXPECT_THAT(world.Cycle(), IsEmpty());
  world.Finish("j1");
  EXPECT_EQ(world.Cycle()["j2"].kind, DecisionKind::kAdmit);
}

TEST(ScenariosTest, NeverFits) {  // §6 scenario 3
  World world({Solo(8).Build()});
  world.Submit(J("j", "cq-solo", 10));
  for (int i = 0; i < 2; ++i) {
    auto d = world.Cycle();
    EXPECT_EQ(d["j"].outcome.reason, "ExceedsMaxQuota");
    EXPECT_EQ(d["j"].outcome.message,
              "couldn't assign flavors to pod set w: insufficient quota for "
              "cpu in flavor default, previously considered podsets requests "
              "(0) + current podset request (10) > maximum capacity (8)");
    world.Unpark();
  }
}

TEST(ScenariosTest, PodSetsAddUp) {  // §6 scenario 4
  World world({Solo(8).Build()});
  world.Submit(WorkloadBuilder("j")
                   .Queue("cq-solo")
                   .PodSet("a", 5, {{"cpu", Cpu(1)}})
                   .PodSet("b", 5, {{"cpu", Cpu(1)}})
                   .Build());
  auto d = world.Cycle();
  EXPECT_EQ(d["j"].kind, DecisionKind::kPending);
  EXPECT_EQ(d["j"].outcome.message,
            "couldn't assign flavors to pod set b: insufficient quota for cpu "
            "in flavor default, previously considered podsets requests (5) + "
            "current podset request (5) > maximum capacity (8)");
  EXPECT_EQ(world.Admitted("j"), nullptr);
}

TEST(ScenariosTest, Borrowing) {  // §6 scenario 5
  World world({Base("cq-a").Build(), Base("cq-b").Build()});
  world.Running(J("run", "cq-a", 8));
  world.Submit(J("j", "cq-a", 4));
  EXPECT_EQ(world.Cycle()["j"].kind, DecisionKind::kAdmit);
  EXPECT_EQ(world.CpuUsage("cq-a", "default"), 12);  // borrowed 4
}

TEST(ScenariosTest, BorrowingLimit) {  // §6 scenario 6
  auto world_with = [](Workload j) {
    World world({ClusterQueueBuilder("cq-a")
                     .Cohort("team")
                     .Flavor("default", {Quota("cpu", Cpu(8), Cpu(2))})
                     .Build(),
                 Base("cq-b").Build()});
    world.Running(J("run", "cq-a", 8));
    world.Submit(std::move(j));
    return world.Cycle();
  };
  auto four = world_with(J("j", "cq-a", 4));
  EXPECT_EQ(four["j"].outcome.message,
            "couldn't assign flavors to pod set w: insufficient unused quota "
            "for cpu in flavor default, 2 more needed");
  EXPECT_EQ(world_with(J("j", "cq-a", 2))["j"].kind, DecisionKind::kAdmit);
  auto eleven = world_with(J("j", "cq-a", 11));
  EXPECT_EQ(eleven["j"].outcome.reason, "ExceedsMaxQuota");
  EXPECT_THAT(eleven["j"].outcome.message,
              ::testing::EndsWith("> maximum capacity (10)"));
}

TEST(ScenariosTest, LendingLimit) {  // §6 scenario 7
  for (const auto& [pods, admitted] :
       std::vector<std::pair<int, bool>>{{4, false}, {2, true}}) {
    World world(
        {Base("cq-a").Build(),
         ClusterQueueBuilder("cq-b")
             .Cohort("team")
             .Flavor("default", {Quota("cpu", Cpu(8), std::nullopt, Cpu(2))})
             .Build()});
    world.Running(J("run", "cq-a", 8));
    world.Submit(J("j", "cq-a", pods));
    EXPECT_EQ(world.Cycle()["j"].kind == DecisionKind::kAdmit, admitted)
        << pods;
  }
}

TEST(ScenariosTest, NominalFirst) {  // §6 scenario 8
  World world({Base("cq-a").Build(), Base("cq-b").Build()});
  world.Running(J("run-a", "cq-a", 8));
  world.Running(J("run-b", "cq-b", 6));
  world.Submit(J("j-a", "cq-a", 2, 0));  // older, but borrows
  world.Submit(J("j-b", "cq-b", 2, 5));
  auto d = world.Cycle();
  EXPECT_EQ(d["j-b"].kind, DecisionKind::kAdmit);
  EXPECT_EQ(d["j-a"].outcome.message,
            "Workload no longer fits after processing another workload");
}

TEST(ScenariosTest, Reclaim) {  // §6 scenario 9
  World world(
      {Base("cq-a").Build(),
       Base("cq-b").ReclaimWithinCohort(PreemptionPolicy::kAny).Build()});
  world.Running(J("j-x", "cq-a", 8));
  world.Submit(J("j-y", "cq-a", 4));
  ASSERT_EQ(world.Cycle()["j-y"].kind, DecisionKind::kAdmit);  // borrowing
  world.Submit(J("j-b", "cq-b", 8, 1));
  auto d = world.Cycle();
  ASSERT_EQ(d["j-b"].kind, DecisionKind::kPreempt);
  ASSERT_EQ(d["j-b"].victims.size(), 1u);
  EXPECT_EQ(d["j-b"].victims[0].workload, "default/j-y");
  EXPECT_EQ(d["j-b"].victims[0].reason, "InCohortReclamation");
  EXPECT_EQ(d["j-b"].victims[0].message,
            "Preempted to accommodate a workload (UID: j-b, JobUID: UNKNOWN) "
            "due to reclamation within the cohort; preemptor path: "
            "/team/cq-b; preemptee path: /team/cq-a");
  EXPECT_EQ(d["j-b"].outcome.reason, "WaitingForPreemptedWorkloads");
  EXPECT_THAT(d["j-b"].outcome.message,
              ::testing::EndsWith(". Pending the preemption of 1 workload(s)"));
  // Until J-y's JobSet stops, J-b waits and preempts nothing new.
  EXPECT_THAT(world.Cycle()["j-b"].victims,
              ElementsAre(::testing::Field(&Victim::already_evicted, true)));
  world.StopVictims();
  EXPECT_EQ(world.Cycle()["j-b"].kind, DecisionKind::kAdmit);
  EXPECT_EQ(world.Admitted("j-y"), nullptr);  // requeued, waits
}

TEST(ScenariosTest, ReclaimOff) {  // §6 scenario 10
  World world({Base("cq-a").Build(), Base("cq-b").Build()});
  world.Running(J("j-x", "cq-a", 8));
  world.Running(J("j-y", "cq-a", 4));
  world.Submit(J("j-b", "cq-b", 8, 5));
  auto d = world.Cycle();
  EXPECT_EQ(d["j-b"].kind, DecisionKind::kPending);
  EXPECT_TRUE(d["j-b"].victims.empty());
  EXPECT_EQ(d["j-b"].outcome.requeue, Requeue::kPark);
  // cq-a queues a borrowing workload, older than j-b; j-y finishes.
  world.Submit(J("j-z", "cq-a", 4, 0));
  world.Finish("j-y");
  d = world.Cycle();
  EXPECT_EQ(d["j-b"].kind, DecisionKind::kAdmit);
  EXPECT_EQ(d["j-z"].outcome.message,
            "Workload no longer fits after processing another workload");
}

TEST(ScenariosTest, PriorityInAClusterQueue) {  // §6 scenario 11
  World world(
      {Solo(8).WithinClusterQueue(PreemptionPolicy::kLowerPriority).Build()});
  world.Running(J("j-low", "cq-solo", 8, 0, 100));
  world.Submit(J("j-high", "cq-solo", 4, 1, 1000));
  auto d = world.Cycle();
  ASSERT_EQ(d["j-high"].kind, DecisionKind::kPreempt);
  EXPECT_EQ(d["j-high"].victims[0].reason, "InClusterQueue");
  EXPECT_THAT(
      d["j-high"].victims[0].message,
      ::testing::HasSubstr("due to prioritization in the ClusterQueue"));
  world.StopVictims();
  EXPECT_EQ(world.Cycle()["j-high"].kind, DecisionKind::kAdmit);
  EXPECT_EQ(world.Cycle()["j-low"].outcome.reason, "WaitingForQuota");
}

TEST(ScenariosTest, EqualPriority) {  // §6 scenario 12
  auto victims = [](PreemptionPolicy policy, int running_queued_minute) {
    World world({Solo(8).WithinClusterQueue(policy).Build()});
    world.Running(J("running", "cq-solo", 8, running_queued_minute, 100));
    world.Submit(J("p", "cq-solo", 4, 10, 100));
    return world.Cycle()["p"].victims.size();
  };
  EXPECT_EQ(victims(PreemptionPolicy::kLowerPriority, 20), 0u);
  EXPECT_EQ(victims(PreemptionPolicy::kLowerOrNewerEqualPriority, 20), 1u);
  EXPECT_EQ(victims(PreemptionPolicy::kLowerOrNewerEqualPriority, 0), 0u);
}

TEST(ScenariosTest, MinimalSet) {  // §6 scenario 13
  World world(
      {Solo(8).WithinClusterQueue(PreemptionPolicy::kLowerPriority).Build()});
  world.Running(J("a", "cq-solo", 6, 0, 10));
  world.Running(J("b", "cq-solo", 1, 0, 1));
  world.Running(J("c", "cq-solo", 1, 0, 1));
  world.EditAdmitted(0).times.quota_reserved = kT0;  // A oldest
  world.EditAdmitted(1).times.quota_reserved = kT0 + absl::Minutes(1);
  world.EditAdmitted(2).times.quota_reserved = kT0 + absl::Minutes(2);
  world.Submit(J("p", "cq-solo", 6, 0, 100));
  auto d = world.Cycle();
  ASSERT_EQ(d["p"].kind, DecisionKind::kPreempt);
  EXPECT_THAT(d["p"].victims,
              ElementsAre(::testing::Field(&Victim::workload, "default/a")));
}

TEST(ScenariosTest, StrictFifoBlocks) {  // §6 scenario 14
  World world({Solo(8).Strategy(QueueingStrategy::kStrictFIFO).Build()});
  world.Running(J("run", "cq-solo", 6));
  world.Submit(J("j2", "cq-solo", 4, 1));
  world.Submit(J("j3", "cq-solo", 2, 2));
  for (int i = 0; i < 3; ++i) {
    auto d = world.Cycle();
    EXPECT_EQ(d["j2"].kind, DecisionKind::kPending);
    EXPECT_EQ(d["j2"].outcome.requeue, Requeue::kHeap);
    EXPECT_FALSE(d.contains("j3"));
  }
}

TEST(ScenariosTest, BestEffortFifoSkips) {  // §6 scenario 15
  World world({Solo(8).Build()});
  world.Running(J("run", "cq-solo", 6));
  world.Submit(J("j2", "cq-solo", 4, 1));
  world.Submit(J("j3", "cq-solo", 2, 2));
  EXPECT_EQ(world.Cycle()["j2"].outcome.requeue, Requeue::kPark);
  EXPECT_EQ(world.Cycle()["j3"].kind, DecisionKind::kAdmit);
  EXPECT_THAT(world.Cycle(), IsEmpty());
  world.Finish("run");  // capacity changed: j2 returns
  EXPECT_EQ(world.Cycle()["j2"].kind, DecisionKind::kAdmit);
}

// §8.1's flavors.
std::vector<ResourceFlavor> OnDemandAndSpot() {
  return {
      ResourceFlavor{
          "on-demand", {{"cloud.example.com/capacity", "on-demand"}}, {}, {}},
      ResourceFlavor{
          "spot",
          {{"cloud.example.com/capacity", "spot"}},
          {{"cloud.example.com/spot", "true", TaintEffect::kNoSchedule}},
          {{"cloud.example.com/spot", TolerationOperator::kEqual, "true",
            TaintEffect::kNoSchedule}}}};
}

ClusterQueueBuilder OnDemandSpot(std::string name, int64_t on_demand,
                                 int64_t spot) {
  return std::move(ClusterQueueBuilder(std::move(name))
                       .Cohort("team")
                       .Flavor("on-demand", {Quota("cpu", Cpu(on_demand))})
                       .Flavor("spot", {Quota("cpu", Cpu(spot))}));
}

std::string FlavorOf(const Decision& d) {
  return d.admission->pod_set_assignments[0].flavors.at("cpu");
}

TEST(ScenariosTest, OnDemandThenSpot) {  // §6 scenario 16
  World world({OnDemandSpot("cq", 4, 8).Build()}, OnDemandAndSpot());
  world.Submit(J("j1", "cq", 4, 0));
  world.Submit(J("j2", "cq", 4, 1));
  EXPECT_EQ(FlavorOf(world.Cycle()["j1"]), "on-demand");
  EXPECT_EQ(FlavorOf(world.Cycle()["j2"]), "spot");
}

TEST(ScenariosTest, WhenCanBorrow) {  // §6 scenario 17
  for (const auto& [policy, flavor] :
       std::vector<std::pair<FungibilityPolicy, std::string>>{
           {FungibilityPolicy::kMayStopSearch, "on-demand"},
           {FungibilityPolicy::kTryNextFlavor, "spot"}}) {
    World world({OnDemandSpot("cq-a", 4, 8).WhenCanBorrow(policy).Build(),
                 OnDemandSpot("cq-b", 4, 0).Build()},
                OnDemandAndSpot());
    world.Running(J("run", "cq-a", 4), "on-demand");
    world.Submit(J("j", "cq-a", 4));
    EXPECT_EQ(FlavorOf(world.Cycle()["j"]), flavor);
  }
}

TEST(ScenariosTest, WhenCanPreempt) {  // §6 scenario 18
  for (const auto& [policy, preempts] :
       std::vector<std::pair<FungibilityPolicy, bool>>{
           {FungibilityPolicy::kTryNextFlavor, false},
           {FungibilityPolicy::kMayStopSearch, true}}) {
    World world({OnDemandSpot("cq", 4, 8)
                     .WithinClusterQueue(PreemptionPolicy::kLowerPriority)
                     .WhenCanPreempt(policy)
                     .Build()},
                OnDemandAndSpot());
    world.Running(J("low", "cq", 4, 0, 1), "on-demand");
    world.Submit(J("j", "cq", 4, 0, 10));
    auto d = world.Cycle();
    EXPECT_EQ(d["j"].kind == DecisionKind::kPreempt, preempts);
    if (!preempts) {
      EXPECT_EQ(FlavorOf(d["j"]), "spot");
    }
  }
}

TEST(ScenariosTest, A100AndH100) {  // §6 scenario 19
  World world({ClusterQueueBuilder("cq")
                   .Flavor("a100", {Quota("nvidia.com/gpu", 8)})
                   .Flavor("h100", {Quota("nvidia.com/gpu", 8)})
                   .Build()},
              {ResourceFlavor{"a100", {{"gpu.model", "a100"}}, {}, {}},
               ResourceFlavor{"h100", {{"gpu.model", "h100"}}, {}, {}}});
  world.Submit(WorkloadBuilder("j")
                   .Queue("cq")
                   .PodSet("w", 2, {{"nvidia.com/gpu", 1}})
                   .NodeSelector("gpu.model", "h100")
                   .NodeSelector("zone", "us-east1")  // no flavor defines it
                   .Build());
  auto d = world.Cycle();
  ASSERT_EQ(d["j"].kind, DecisionKind::kAdmit);
  EXPECT_EQ(
      d["j"].admission->pod_set_assignments[0].flavors.at("nvidia.com/gpu"),
      "h100");
}

TEST(ScenariosTest, PodSetsOnDifferentFlavors) {  // §6 scenario 20
  const ClusterQueue cq =
      ClusterQueueBuilder("cq")
          .Group({"cpu", "memory", "nvidia.com/gpu"})
          .Flavor("gpu-h100",
                  {Quota("cpu", Cpu(96)), Quota("memory", 1536LL << 30),
                   Quota("nvidia.com/gpu", 16)})
          .Flavor("cpu-pool",
                  {Quota("cpu", Cpu(64)), Quota("memory", 256LL << 30),
                   Quota("nvidia.com/gpu", 0)})
          .Build();
  World world(
      {cq},
      {ResourceFlavor{"gpu-h100",
                      {{"gpu.example.com/model", "h100"}},
                      {{"nvidia.com/gpu", "present", TaintEffect::kNoSchedule}},
                      {}},
       World::Flavor("cpu-pool")});
  world.Submit(
      WorkloadBuilder("j")
          .Queue("cq")
          .PodSet("driver", 1, {{"cpu", Cpu(2)}})
          .PodSet("workers", 4, {{"cpu", Cpu(16)}, {"nvidia.com/gpu", 4}})
          .Tolerate({"nvidia.com/gpu", TolerationOperator::kExists, "",
                     TaintEffect::kNoSchedule})
          .Build());
  auto d = world.Cycle();
  ASSERT_EQ(d["j"].kind, DecisionKind::kAdmit);
  const auto& ps = d["j"].admission->pod_set_assignments;
  EXPECT_THAT(ps[0].flavors, ElementsAre(Pair("cpu", "cpu-pool")));
  EXPECT_THAT(ps[1].flavors, ElementsAre(Pair("cpu", "gpu-h100"),
                                         Pair("nvidia.com/gpu", "gpu-h100")));
  EXPECT_THAT(ps[1].resource_usage,
              ElementsAre(Pair("cpu", Cpu(64)), Pair("nvidia.com/gpu", 16)));
}

TEST(ScenariosTest, MissingFlavor) {  // §6 scenario 25
  World world({ClusterQueueBuilder("cq-a")
                   .Flavor("ghost", {Quota("cpu", Cpu(8))})
                   .Build()});
  world.Submit(J("j", "cq-a", 1));
  auto d = world.Cycle();
  EXPECT_EQ(d["j"].outcome.reason, "Suspended");
  EXPECT_EQ(d["j"].outcome.message, "ClusterQueue cq-a is inactive");
  world.input().flavors.push_back(World::Flavor("ghost"));  // created
  world.Unpark();
  EXPECT_EQ(world.Cycle()["j"].kind, DecisionKind::kAdmit);
}

TEST(ScenariosTest, Hold) {  // §6 scenario 26
  World world({Base("cq-a").Stop(StopPolicy::kHold).Build()});
  world.Running(J("running", "cq-a", 4));
  world.Submit(J("j", "cq-a", 1));
  auto d = world.Cycle();
  EXPECT_EQ(d["j"].outcome.message, "ClusterQueue cq-a is inactive");
  EXPECT_NE(world.Admitted("running"), nullptr);  // not evicted
  world.input().cluster_queues[0].stop_policy = StopPolicy::kNone;
  world.Unpark();
  EXPECT_EQ(world.Cycle()["j"].kind, DecisionKind::kAdmit);
}

TEST(ScenariosTest, BackoffKeepsAWorkloadOutOfTheHeap) {  // §6 scenario 33
  World world({Solo(8).Build()});
  world.Submit(J("j", "cq-solo", 1));
  world.input().pending[0].workloads[0].requeue_at =
      world.now() + absl::Seconds(60);
  EXPECT_THAT(world.Cycle(), IsEmpty());
  world.input().pending[0].workloads[0].requeue_at = world.now();
  EXPECT_EQ(world.Cycle()["j"].kind, DecisionKind::kAdmit);
}

TEST(ScenariosTest, Completion) {  // §6 scenario 34
  World world({Base("cq-a").Build(), Base("cq-b").Build()});
  world.Running(J("done", "cq-a", 8));
  world.Running(J("other", "cq-b", 8));
  world.Submit(J("next", "cq-b", 4));
  EXPECT_EQ(world.Cycle()["next"].kind, DecisionKind::kPending);
  world.Finish("done");  // quota released in the cohort
  EXPECT_EQ(world.Cycle()["next"].kind, DecisionKind::kAdmit);
}

TEST(ScenariosTest, EarlyRelease) {  // §6 scenario 35
  World world({Solo(2).Build()});
  world.Running(J("a", "cq-solo", 2));
  world.Submit(J("next", "cq-solo", 1));
  EXPECT_EQ(world.Cycle()["next"].kind, DecisionKind::kPending);
  world.EditAdmitted(0).pod_sets[0].reclaimable = 1;  // one Job done
  world.Unpark();
  EXPECT_EQ(world.Cycle()["next"].kind, DecisionKind::kAdmit);
}

TEST(ScenariosTest, ReclaimWhileBorrowing) {  // §6 scenario 36
  auto cycle = [](int32_t jc_priority, int32_t ja_pods) {
    World world(
        {Base("cq-a", 4)
             .ReclaimWithinCohort(PreemptionPolicy::kAny)
             .BorrowWithinCohort(BorrowWithinCohortPolicy::kLowerPriority, 100)
             .Build(),
         Base("cq-b", 4).Build(), Base("cq-c", 0).Build()});
    world.Running(J("j-c", "cq-c", 8, 0, jc_priority));
    world.Submit(J("j-a", "cq-a", ja_pods, 1, 200));
    return world.Cycle()["j-a"];
  };
  const Decision below = cycle(50, 6);
  ASSERT_EQ(below.kind, DecisionKind::kPreempt);
  EXPECT_EQ(below.victims[0].reason, "InCohortReclaimWhileBorrowing");
  EXPECT_EQ(cycle(150, 6).kind, DecisionKind::kPending);
  const Decision own = cycle(150, 4);
  ASSERT_EQ(own.kind, DecisionKind::kPreempt);
  EXPECT_EQ(own.victims[0].reason, "InCohortReclamation");
}

}  // namespace
}  // namespace jobset::scheduler::queues
