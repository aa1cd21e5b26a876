#include "scheduler/queues/preemption.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/queues/cluster_state.h"
#include "scheduler/queues/flavor_assigner.h"
#include "scheduler/queues/model.h"
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

const FlavorResource kCpuDefault{"default", "cpu"};

ClusterQueueBuilder Cq(std::string name, std::string cohort, int64_t cores) {
  return std::move(ClusterQueueBuilder(std::move(name))
                       .Cohort(std::move(cohort))
                       .Flavor("default", {Quota("cpu", Cpu(cores))}));
}

// An admitted workload of `cores` pods of 1 cpu, reserved at kT0 + minute.
Workload Running(std::string name, std::string cq, int32_t priority,
                 int32_t cores, int minute) {
  return WorkloadBuilder(std::move(name))
      .Priority(priority)
      .PodSet("w", cores, {{"cpu", Cpu(1)}})
      .AdmittedOn(std::move(cq), "default", kT0 + absl::Minutes(minute))
      .Build();
}

struct Case {
  std::string name;
  std::vector<ClusterQueue> cqs;  // the first is the preemptor's
  std::vector<Workload> admitted;
  int32_t priority;  // the preemptor's, queued at kT0 + 30 min
  int64_t cores;     // it requests
  // Victim name -> reason, in Kueue's output order.
  std::vector<std::pair<std::string, std::string>> want;
};

class GetTargetsTest : public ::testing::TestWithParam<Case> {};

TEST_P(GetTargetsTest, VictimsAndReasons) {
  const Case& c = GetParam();
  absl::StatusOr<ClusterState> state = ClusterState::Build(
      {ResourceFlavor{"default", {}, {}, {}}}, {}, c.cqs, c.admitted);
  ASSERT_TRUE(state.ok()) << state.status();
  const Workload preemptor = WorkloadBuilder("p")
                                 .Priority(c.priority)
                                 .QueuedAt(kT0 + absl::Minutes(30))
                                 .Queue(c.cqs[0].name)
                                 .Build();
  const Preemptor p{
      &preemptor, &c.cqs[0], {kCpuDefault}, {{kCpuDefault, Cpu(c.cores)}}};
  const QuotaTree before = state->tree();
  std::vector<std::pair<std::string, std::string>> got;
  for (const PreemptionTarget& t :
       GetTargets(p, *state, kT0 + absl::Hours(1))) {
    got.emplace_back(t.victim->workload->name, t.reason);
  }
  EXPECT_EQ(got, c.want);
  // The simulation leaves the snapshot as it found it.
  for (const ClusterQueue& cq : c.cqs) {
    const QuotaTree::NodeId n = state->tree().ClusterQueueNode(cq.name);
    EXPECT_EQ(state->tree().Usage(n, kCpuDefault),
              before.Usage(n, kCpuDefault));
  }
}

const PreemptionPolicy kLower = PreemptionPolicy::kLowerPriority;

INSTANTIATE_TEST_SUITE_P(
    Table, GetTargetsTest,
    ::testing::Values(
        // §6 scenario 9: cq-b reclaims; J-y, admitted last, goes.
        Case{"ReclaimTakesTheNewest",
             {Cq("cq-b", "team", 8)
                  .ReclaimWithinCohort(PreemptionPolicy::kAny)
                  .Build(),
              Cq("cq-a", "team", 8).Build()},
             {Running("j-x", "cq-a", 0, 8, 0), Running("j-y", "cq-a", 0, 4, 1)},
             0,
             8,
             {{"j-y", "InCohortReclamation"}}},
        // §6 scenario 10: reclaim Never.
        Case{"ReclaimOff",
             {Cq("cq-b", "team", 8).Build(), Cq("cq-a", "team", 8).Build()},
             {Running("j-x", "cq-a", 0, 8, 0), Running("j-y", "cq-a", 0, 4, 1)},
             0,
             8,
             {}},
        // §6 scenario 11.
        Case{"LowerPriorityInTheQueue",
             {Cq("cq", "", 8).WithinClusterQueue(kLower).Build()},
             {Running("j-low", "cq", 100, 8, 0)},
             1000,
             4,
             {{"j-low", "InClusterQueue"}}},
        // §6 scenario 12: equal priority.
        Case{"EqualPriorityLowerPriority",
             {Cq("cq", "", 8).WithinClusterQueue(kLower).Build()},
             {Running("j-old", "cq", 100, 8, 0)},
             100,
             4,
             {}},
        Case{"EqualPriorityQueuedLaterIsNewer",
             {Cq("cq", "", 8)
                  .WithinClusterQueue(
                      PreemptionPolicy::kLowerOrNewerEqualPriority)
                  .Build()},
             // Queued at kT0 + 40 min, after the preemptor's kT0 + 30 min.
             {WorkloadBuilder("j-newer")
                  .Priority(100)
                  .QueuedAt(kT0 + absl::Minutes(40))
                  .PodSet("w", 8, {{"cpu", Cpu(1)}})
                  .AdmittedOn("cq", "default")
                  .Build()},
             100,
             4,
             {{"j-newer", "InClusterQueue"}}},
        Case{"EqualPriorityQueuedEarlierStays",
             {Cq("cq", "", 8)
                  .WithinClusterQueue(
                      PreemptionPolicy::kLowerOrNewerEqualPriority)
                  .Build()},
             {Running("j-older", "cq", 100, 8, 0)},
             100,
             4,
             {}},
        // §6 scenario 13: order C, B, A; all removed; fill-back keeps A.
        Case{"MinimalSet",
             {Cq("cq", "", 8).WithinClusterQueue(kLower).Build()},
             {Running("a", "cq", 10, 6, 0), Running("b", "cq", 1, 1, 1),
              Running("c", "cq", 1, 1, 2)},
             100,
             6,
             {{"a", "InClusterQueue"}}},
        // §6 scenario 36: reclaim while borrowing, up to the threshold ...
        Case{"ReclaimWhileBorrowing",
             {Cq("cq-a", "team", 4)
                  .ReclaimWithinCohort(PreemptionPolicy::kAny)
                  .BorrowWithinCohort(BorrowWithinCohortPolicy::kLowerPriority,
                                      100)
                  .Build(),
              Cq("cq-b", "team", 4).Build(), Cq("cq-c", "team", 0).Build()},
             {Running("j-c", "cq-c", 50, 8, 0)},
             200,
             6,
             {{"j-c", "InCohortReclaimWhileBorrowing"}}},
        // ... not above it ...
        Case{"AboveTheThresholdOnlyWithoutBorrowing",
             {Cq("cq-a", "team", 4)
                  .ReclaimWithinCohort(PreemptionPolicy::kAny)
                  .BorrowWithinCohort(BorrowWithinCohortPolicy::kLowerPriority,
                                      100)
                  .Build(),
              Cq("cq-b", "team", 4).Build(), Cq("cq-c", "team", 0).Build()},
             {Running("j-c", "cq-c", 150, 8, 0)},
             200,
             6,
             {}},
        // ... and within its own quota, whatever the priority.
        Case{"WithinNominalIsReclamation",
             {Cq("cq-a", "team", 4)
                  .ReclaimWithinCohort(PreemptionPolicy::kAny)
                  .BorrowWithinCohort(BorrowWithinCohortPolicy::kLowerPriority,
                                      100)
                  .Build(),
              Cq("cq-b", "team", 4).Build(), Cq("cq-c", "team", 0).Build()},
             {Running("j-c", "cq-c", 150, 8, 0)},
             200,
             4,
             {{"j-c", "InCohortReclamation"}}},
        // Queues within their quota are not reclaimed from.
        Case{"NoReclaimFromQueuesWithinQuota",
             {Cq("cq-b", "team", 8)
                  .ReclaimWithinCohort(PreemptionPolicy::kAny)
                  .Build(),
              Cq("cq-a", "team", 8).Build()},
             {Running("j-x", "cq-a", 0, 8, 0), Running("b", "cq-b", 0, 4, 0)},
             0,
             8,
             {}},
        // Other queues' candidates go before the preemptor's own.
        Case{"OtherQueuesFirst",
             {Cq("cq-b", "team", 8)
                  .ReclaimWithinCohort(PreemptionPolicy::kAny)
                  .WithinClusterQueue(kLower)
                  .Build(),
              Cq("cq-a", "team", 8).Build()},
             {Running("own", "cq-b", 0, 4, 5), Running("x", "cq-a", 5, 8, 0),
              Running("y", "cq-a", 5, 4, 1)},
             10,
             4,
             {{"y", "InCohortReclamation"}}}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(GetTargetsTest, MinimumRuntimeProtectsACandidate) {
  // Beyond Kueue: "b" may not be preempted before kT0 + 2h.
  const std::vector<ClusterQueue> cqs = {
      Cq("cq", "", 8).WithinClusterQueue(kLower).Build()};
  std::vector<Workload> admitted = {Running("a", "cq", 1, 4, 0),
                                    Running("b", "cq", 1, 4, 9)};
  admitted[1].times.not_preemptible_before = kT0 + absl::Hours(2);
  absl::StatusOr<ClusterState> state =
      ClusterState::Build({}, {}, cqs, admitted);
  ASSERT_TRUE(state.ok());
  const Workload p = WorkloadBuilder("p").Priority(10).Queue("cq").Build();
  auto victims = [&](absl::Time now) {
    std::vector<std::string> names;
    for (const PreemptionTarget& t :
         GetTargets({&p, &cqs[0], {kCpuDefault}, {{kCpuDefault, Cpu(4)}}},
                    *state, now)) {
      names.push_back(t.victim->workload->name);
    }
    return names;
  };
  EXPECT_THAT(victims(kT0 + absl::Hours(1)), ElementsAre("a"));
  // Without protection Kueue takes the most recently reserved: b.
  EXPECT_THAT(victims(kT0 + absl::Hours(2)), ElementsAre("b"));
}

struct OrderCase {
  std::string name;
  Workload a;
  Workload b;
  bool a_first;
};

class CandidateLessTest : public ::testing::TestWithParam<OrderCase> {};

TEST_P(CandidateLessTest, KueueOrderWithWorkLost) {
  const OrderCase& c = GetParam();
  const absl::Time now = kT0 + absl::Hours(1);
  EXPECT_EQ(CandidateLess(c.a, c.b, "mine", now), c.a_first);
  EXPECT_EQ(CandidateLess(c.b, c.a, "mine", now), !c.a_first);
}

INSTANTIATE_TEST_SUITE_P(
    Table, CandidateLessTest,
    ::testing::Values(
        OrderCase{"EvictedFirst",
                  WorkloadBuilder("a").Priority(9).Evicted().Build(),
                  WorkloadBuilder("b").Build(), true},
        OrderCase{"OtherQueueFirst",
                  WorkloadBuilder("a").Queue("other").Build(),
                  WorkloadBuilder("b").Queue("mine").Build(), true},
        OrderCase{"LowerPriorityFirst",
                  WorkloadBuilder("a").Priority(1).Build(),
                  WorkloadBuilder("b").Priority(2).Build(), true},
        OrderCase{"MostRecentReservationFirst", Running("a", "q", 0, 1, 10),
                  Running("b", "q", 0, 1, 5), true},
        // A missing reservation counts as now: the most recent.
        OrderCase{"MissingReservationIsNow", WorkloadBuilder("z").Build(),
                  Running("b", "q", 0, 1, 5), true},
        // Beyond Kueue: b restarted 2 minutes ago and loses less work than
        // a, reserved 10 minutes after b but running since.
        OrderCase{"LeastWorkLostFirst", Running("a", "q", 0, 1, 10),
                  WorkloadBuilder("b")
                      .PodSet("w", 1, {{"cpu", Cpu(1)}})
                      .AdmittedOn("q", "default", kT0)
                      .LastRestart(kT0 + absl::Minutes(58))
                      .Build(),
                  false},
        OrderCase{"UidLast", WorkloadBuilder("a").Build(),
                  WorkloadBuilder("b").Build(), true}),
    [](const ::testing::TestParamInfo<OrderCase>& info) {
      return info.param.name;
    });

TEST(SimulatePreemptionTest, PreemptReclaimOrNoCandidates) {
  const std::vector<ClusterQueue> cqs = {
      Cq("cq-a", "team", 8)
          .WithinClusterQueue(kLower)
          .ReclaimWithinCohort(PreemptionPolicy::kAny)
          .Build(),
      Cq("cq-b", "team", 4).Build()};
  const std::vector<Workload> admitted = {Running("own", "cq-a", 0, 4, 0),
                                          Running("lent", "cq-b", 0, 8, 0)};
  absl::StatusOr<ClusterState> state =
      ClusterState::Build({}, {}, cqs, admitted);
  ASSERT_TRUE(state.ok());
  const Workload high = WorkloadBuilder("p").Priority(5).Queue("cq-a").Build();
  const Workload low = WorkloadBuilder("p").Priority(0).Queue("cq-a").Build();
  // cq-a runs 4 of its 8, cq-b borrows the other 4.
  // 4 more: cq-a's own quota, lent to cq-b: reclaim.
  const PreemptionSimulation reclaim = SimulatePreemption(
      low, cqs[0], nullptr, kCpuDefault, Cpu(4), *state, kT0);
  EXPECT_EQ(reclaim.possibility, PreemptionPossibility::kReclaim);
  EXPECT_EQ(reclaim.borrow_after, 0);
  // 8: cq-b's loan and the lower-priority "own" must both go.
  const PreemptionSimulation preempt = SimulatePreemption(
      high, cqs[0], nullptr, kCpuDefault, Cpu(8), *state, kT0);
  EXPECT_EQ(preempt.possibility, PreemptionPossibility::kPreempt);
  const PreemptionSimulation none = SimulatePreemption(
      low, cqs[1], nullptr, kCpuDefault, Cpu(8), *state, kT0);
  EXPECT_EQ(none.possibility, PreemptionPossibility::kNoCandidates);
}

TEST(PreemptionMessageTest, KueueWording) {
  Workload p = WorkloadBuilder("p").Uid("wl-2").Build();
  p.job_uid = "job-2-uid";
  EXPECT_EQ(
      PreemptionMessage(p, kInClusterQueue, "/cohort-1/cq-2", "/cohort-1/cq-2"),
      "Preempted to accommodate a workload (UID: wl-2, JobUID: "
      "job-2-uid) due to prioritization in the ClusterQueue; preemptor "
      "path: /cohort-1/cq-2; preemptee path: /cohort-1/cq-2");
  p.job_uid = "";
  EXPECT_EQ(PreemptionMessage(p, kInCohortReclaimWhileBorrowing, "/team/cq-b",
                              "/team/cq-a"),
            "Preempted to accommodate a workload (UID: wl-2, JobUID: UNKNOWN) "
            "due to reclamation within the cohort while borrowing; preemptor "
            "path: /team/cq-b; preemptee path: /team/cq-a");
}

}  // namespace
}  // namespace jobset::scheduler::queues
