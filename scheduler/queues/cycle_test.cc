#include "scheduler/queues/cycle.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/queues/cluster_state.h"
#include "scheduler/queues/flavor_assigner.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/queue_order.h"
#include "scheduler/queues/test_builders.h"

namespace jobset::scheduler::queues {
namespace {

using ::jobset::scheduler::queues::testing::ClusterQueueBuilder;
using ::jobset::scheduler::queues::testing::Cpu;
using ::jobset::scheduler::queues::testing::kT0;
using ::jobset::scheduler::queues::testing::Quota;
using ::jobset::scheduler::queues::testing::WorkloadBuilder;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

ClusterQueueBuilder Cq(std::string name, std::string cohort, int64_t cores) {
  return std::move(ClusterQueueBuilder(std::move(name))
                       .Cohort(std::move(cohort))
                       .Flavor("default", {Quota("cpu", Cpu(cores))}));
}

Workload Running(std::string name, std::string cq, int32_t cores,
                 int32_t priority = 0) {
  return WorkloadBuilder(std::move(name))
      .Priority(priority)
      .PodSet("w", cores, {{"cpu", Cpu(1)}})
      .AdmittedOn(std::move(cq), "default")
      .Build();
}

Workload Job(std::string name, std::string cq, int32_t cores, int minute = 0,
             int32_t priority = 0) {
  return WorkloadBuilder(std::move(name))
      .Queue(std::move(cq))
      .Priority(priority)
      .QueuedAt(kT0 + absl::Minutes(minute))
      .PodSet("w", cores, {{"cpu", Cpu(1)}})
      .Build();
}

PendingQueue Queue(std::string cq, std::vector<Workload> workloads) {
  PendingQueue q;
  q.cluster_queue = std::move(cq);
  for (Workload& w : workloads) {
    q.workloads.push_back(
        PendingWorkload{std::make_shared<const Workload>(std::move(w)), false,
                        absl::InfinitePast()});
  }
  return q;
}

CycleInput Input(std::vector<ClusterQueue> cqs, std::vector<Workload> admitted,
                 std::vector<PendingQueue> pending) {
  CycleInput in{{ResourceFlavor{"default", {}, {}, {}}},
                {},
                std::move(cqs),
                {},
                std::move(pending),
                std::nullopt};
  for (Workload& w : admitted)
    in.admitted.push_back(std::make_shared<const Workload>(std::move(w)));
  return in;
}

// The snapshot of `input` that a run of cycles keeps.
absl::StatusOr<ClusterState> Snapshot(const CycleInput& input) {
  absl::StatusOr<ClusterState> state =
      ClusterState::Build(input.flavors, input.cohorts, input.cluster_queues);
  if (state.ok()) {
    for (const auto& w : input.admitted) state->AddAdmitted(*w);
  }
  return state;
}

// A decision in one line: "<name> <kind> <reason>: <message>".
std::string Line(const Decision& d) {
  const std::string name = d.workload.substr(d.workload.find('/') + 1);
  switch (d.kind) {
    case DecisionKind::kAdmit:
      return name + " admit";
    case DecisionKind::kPreempt: {
      std::string line = name + " preempt";
      for (const Victim& v : d.victims) line += " " + v.uid + ":" + v.reason;
      return line;
    }
    case DecisionKind::kPending:
      break;
  }
  return name + " pending " + d.outcome.reason + ": " + d.outcome.message;
}

struct Case {
  std::string name;
  CycleInput input;
  std::vector<std::string> want;  // in processing order
};

class RunCycleTest : public ::testing::TestWithParam<Case> {};

TEST_P(RunCycleTest, Decisions) {
  absl::StatusOr<CycleResult> result = RunCycle(GetParam().input, kT0);
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<std::string> got;
  for (const Decision& d : result->decisions) got.push_back(Line(d));
  EXPECT_EQ(got, GetParam().want);
}

// On a snapshot kept across cycles, a cycle decides as on its own and takes
// back what it booked: run twice on one snapshot, it decides the same twice.
TEST_P(RunCycleTest, KeptSnapshotDecidesAlikeAndIsLeftAsFound) {
  const CycleInput& input = GetParam().input;
  absl::StatusOr<ClusterState> state = Snapshot(input);
  ASSERT_TRUE(state.ok()) << state.status();
  for (int run = 0; run < 2; ++run) {
    absl::StatusOr<CycleResult> result = RunCycle(input, *state, kT0);
    ASSERT_TRUE(result.ok()) << result.status();
    std::vector<std::string> got;
    for (const Decision& d : result->decisions) got.push_back(Line(d));
    EXPECT_EQ(got, GetParam().want) << "run " << run;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, RunCycleTest,
    ::testing::Values(
        Case{"Admits",
             Input({Cq("cq", "", 8).Build()}, {},
                   {Queue("cq", {Job("j1", "cq", 4)})}),
             {"j1 admit"}},
        Case{"OneHeadPerQueue",
             Input({Cq("cq", "", 8).Build()}, {},
                   {Queue("cq", {Job("j2", "cq", 1, 1), Job("j1", "cq", 1)})}),
             {"j1 admit"}},
        Case{"NoFit",
             Input({Cq("cq", "", 8).Build()}, {},
                   {Queue("cq", {Job("j", "cq", 10)})}),
             {"j pending ExceedsMaxQuota: couldn't assign flavors to pod set "
              "w: insufficient quota for cpu in flavor default, previously "
              "considered podsets requests (0) + current podset request (10) "
              "> maximum capacity (8)"}},
        // No double booking: both fit on the snapshot, the second no more.
        Case{"UsageAddedAsAdmitted",
             Input({Cq("cq-a", "team", 4).Build(),
                    Cq("cq-b", "team", 4).Build()},
                   {},
                   {Queue("cq-a", {Job("a", "cq-a", 6, 0)}),
                    Queue("cq-b", {Job("b", "cq-b", 6, 1)})}),
             {"a admit",
              "b pending WaitingForQuota: Workload no longer fits after "
              "processing another workload"}},
        // §3.2 step 4: no borrowing first, whatever the queue order.
        Case{"NominalBeforeBorrowing",
             Input({Cq("cq-a", "team", 8).Build(),
                    Cq("cq-b", "team", 8).Build()},
                   {Running("ra", "cq-a", 8), Running("rb", "cq-b", 6)},
                   {Queue("cq-a", {Job("j-a", "cq-a", 2, 0)}),
                    Queue("cq-b", {Job("j-b", "cq-b", 2, 5)})}),
             {"j-b admit",
              "j-a pending WaitingForQuota: Workload no longer fits after "
              "processing another workload"}},
        // Then priority.
        Case{"PriorityAcrossQueues",
             Input({Cq("cq-a", "team", 4).Build(),
                    Cq("cq-b", "team", 4).Build()},
                   {},
                   {Queue("cq-a", {Job("low", "cq-a", 6, 0, 1)}),
                    Queue("cq-b", {Job("high", "cq-b", 6, 5, 9)})}),
             {"high admit",
              "low pending WaitingForQuota: Workload no longer fits after "
              "processing another workload"}},
        // A head that needs preemption but has no candidates holds the
        // quota it could use, so a borrowing head cannot take it.
        Case{"ReservesUnreclaimableQuota",
             Input({Cq("cq-a", "team", 8).Build(),
                    Cq("cq-b", "team", 8).Build()},
                   {Running("x", "cq-a", 12)},
                   {Queue("cq-a", {Job("more", "cq-a", 4, 0)}),
                    Queue("cq-b", {Job("j-b", "cq-b", 8, 5)})}),
             {"j-b pending WaitingForQuota: couldn't assign flavors to pod set "
              "w: insufficient unused quota for cpu in flavor default, 4 more "
              "needed",
              "more pending WaitingForQuota: Workload no longer fits after "
              "processing another workload"}},
        // With reclaimWithinCohort Any it preempts instead.
        Case{"Reclaims",
             Input({Cq("cq-a", "team", 8).Build(),
                    Cq("cq-b", "team", 8)
                        .ReclaimWithinCohort(PreemptionPolicy::kAny)
                        .Build()},
                   {Running("x", "cq-a", 8),
                    WorkloadBuilder("y")
                        .PodSet("w", 4, {{"cpu", Cpu(1)}})
                        .AdmittedOn("cq-a", "default", kT0 + absl::Minutes(1))
                        .Build()},
                   {Queue("cq-b", {Job("j-b", "cq-b", 8)})}),
             {"j-b preempt y:InCohortReclamation"}},
        // Two heads wanting the same victim: the second is skipped.
        Case{"OverlappingTargets",
             Input({Cq("cq-a", "team", 4)
                        .ReclaimWithinCohort(PreemptionPolicy::kAny)
                        .Build(),
                    Cq("cq-b", "team", 4)
                        .ReclaimWithinCohort(PreemptionPolicy::kAny)
                        .Build(),
                    Cq("cq-c", "team", 0).Build()},
                   {Running("c", "cq-c", 8)},
                   {Queue("cq-a", {Job("j-a", "cq-a", 4, 0)}),
                    Queue("cq-b", {Job("j-b", "cq-b", 4, 1)})}),
             {"j-a preempt c:InCohortReclamation",
              "j-b pending WaitingForQuota: Workload has overlapping "
              "preemption targets with another workload"}},
        Case{"InactiveQueue",
             Input({Cq("cq", "", 8).Stop(StopPolicy::kHold).Build()}, {},
                   {Queue("cq", {Job("j", "cq", 1)})}),
             {"j pending Suspended: ClusterQueue cq is inactive"}},
        Case{"MissingFlavorMakesTheQueueInactive",
             Input({ClusterQueueBuilder("cq")
                        .Flavor("ghost", {Quota("cpu", Cpu(8))})
                        .Build()},
                   {}, {Queue("cq", {Job("j", "cq", 1)})}),
             {"j pending Suspended: ClusterQueue cq is inactive"}},
        Case{"MissingQueue",
             Input({}, {}, {Queue("nope", {Job("j", "nope", 1)})}),
             {"j pending Misconfigured: ClusterQueue nope not found"}}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(RunCycleTest, AdmissionPreemptionAndRequeue) {
  const CycleInput input =
      Input({Cq("cq", "", 8)
                 .WithinClusterQueue(PreemptionPolicy::kLowerPriority)
                 .Build()},
            {Running("low", "cq", 8, 1)},
            {Queue("cq", {Job("high", "cq", 4, 0, 9)})});
  absl::StatusOr<CycleResult> result = RunCycle(input, kT0);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->decisions.size(), 1u);
  const Decision& d = result->decisions[0];
  EXPECT_EQ(d.kind, DecisionKind::kPreempt);
  EXPECT_EQ(d.workload, "default/high");
  EXPECT_EQ(d.cluster_queue, "cq");
  EXPECT_EQ(d.outcome.reason, "WaitingForPreemptedWorkloads");
  EXPECT_EQ(d.outcome.message,
            "couldn't assign flavors to pod set w: insufficient unused quota "
            "for cpu in flavor default, 4 more needed. Pending the preemption "
            "of 1 workload(s)");
  EXPECT_EQ(d.outcome.requeue, Requeue::kHeap);
  EXPECT_TRUE(d.outcome.sticky);
  ASSERT_EQ(d.victims.size(), 1u);
  EXPECT_EQ(d.victims[0].workload, "default/low");
  EXPECT_EQ(d.victims[0].message,
            "Preempted to accommodate a workload (UID: high, JobUID: UNKNOWN) "
            "due to prioritization in the ClusterQueue; preemptor path: /cq; "
            "preemptee path: /cq");
  EXPECT_FALSE(d.victims[0].already_evicted);
}

TEST(RunCycleTest, ParkedAndBackingOffHeadsAreNotOffered) {
  CycleInput input =
      Input({Cq("cq", "", 8).Build()}, {},
            {Queue("cq", {Job("parked", "cq", 1, 0), Job("waits", "cq", 1, 1),
                          Job("next", "cq", 1, 2)})});
  input.pending[0].workloads[0].parked = true;
  input.pending[0].workloads[1].requeue_at = kT0 + absl::Seconds(1);
  absl::StatusOr<CycleResult> result = RunCycle(input, kT0);
  ASSERT_TRUE(result.ok());
  ASSERT_EQ(result->decisions.size(), 1u);
  EXPECT_EQ(result->decisions[0].workload, "default/next");
}

// A run's cycles on one snapshot, each admission added to it as the caller
// appends it, decide as cycles that build their own.
TEST(RunCycleTest, KeptSnapshotFollowsTheAdmissionsAdded) {
  CycleInput input = Input(
      {Cq("cq-a", "team", 8).Build(), Cq("cq-b", "team", 4).Build()}, {},
      {Queue("cq-a", {Job("a1", "cq-a", 4, 0), Job("a2", "cq-a", 4, 1),
                      Job("a3", "cq-a", 4, 2)}),
       Queue("cq-b", {Job("b1", "cq-b", 3, 3), Job("b2", "cq-b", 3, 4)})});
  CycleInput fresh = input;
  absl::StatusOr<ClusterState> state = Snapshot(input);
  ASSERT_TRUE(state.ok());
  std::vector<std::string> kept_lines;
  std::vector<std::string> fresh_lines;
  // Admits each decision's head into `in` (and `kept`, when given).
  auto apply = [](const CycleResult& r, CycleInput& in, ClusterState* kept,
                  std::vector<std::string>& lines) {
    for (const Decision& d : r.decisions) {
      lines.push_back(Line(d));
      if (d.kind != DecisionKind::kAdmit) continue;
      for (PendingQueue& q : in.pending) {
        for (auto it = q.workloads.begin(); it != q.workloads.end(); ++it) {
          if (it->workload->uid != d.uid) continue;
          auto w = std::make_shared<Workload>(*it->workload);
          q.workloads.erase(it);
          w->admission = d.admission;
          in.admitted.push_back(std::move(w));
          if (kept != nullptr) kept->AddAdmitted(*in.admitted.back());
          break;
        }
      }
    }
  };
  for (int cycle = 0; cycle < 4; ++cycle) {
    absl::StatusOr<CycleResult> k = RunCycle(input, *state, kT0);
    absl::StatusOr<CycleResult> f = RunCycle(fresh, kT0);
    ASSERT_TRUE(k.ok() && f.ok());
    apply(*k, input, &*state, kept_lines);
    apply(*f, fresh, nullptr, fresh_lines);
  }
  EXPECT_EQ(kept_lines, fresh_lines);
  EXPECT_THAT(kept_lines,
              ::testing::Contains(
                  "b2 pending WaitingForQuota: Workload no longer fits after "
                  "processing another workload"));
  EXPECT_THAT(kept_lines, ::testing::Contains("b2 admit").Times(0));
  EXPECT_EQ(input.admitted.size(), 3u);  // a1, a2, b1
}

TEST(RunCycleTest, RejectsTwoEntriesForOneQueue) {
  const CycleInput input =
      Input({Cq("cq", "", 8).Build()}, {}, {Queue("cq", {}), Queue("cq", {})});
  EXPECT_THAT(RunCycle(input, kT0).status().message(),
              HasSubstr("two entries for ClusterQueue \"cq\""));
}

struct ActiveCase {
  std::string name;
  ClusterQueue cq;
  bool in_cycle;
  ActiveCondition want;
};

class ClusterQueueActiveTest : public ::testing::TestWithParam<ActiveCase> {};

TEST_P(ClusterQueueActiveTest, Condition) {
  FlavorIndex flavors;
  flavors.emplace("default", ResourceFlavor{"default", {}, {}, {}});
  const ActiveCondition got =
      ClusterQueueActive(GetParam().cq, flavors, GetParam().in_cycle);
  EXPECT_EQ(got.active, GetParam().want.active);
  EXPECT_EQ(got.reason, GetParam().want.reason);
  EXPECT_EQ(got.message, GetParam().want.message);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ClusterQueueActiveTest,
    ::testing::Values(
        ActiveCase{"Ready",
                   Cq("cq", "", 1).Build(),
                   false,
                   {true, "Ready", "Can admit new workloads"}},
        ActiveCase{
            "Stopped",
            Cq("cq", "", 1).Stop(StopPolicy::kHold).Build(),
            false,
            {false, "Stopped", "Can't admit new workloads: is stopped."}},
        // §6 scenario 25.
        ActiveCase{"FlavorNotFound",
                   ClusterQueueBuilder("cq-a")
                       .Flavor("ghost", {Quota("cpu", 1)})
                       .Build(),
                   false,
                   {false, "FlavorNotFound",
                    "Can't admit new workloads: references missing "
                    "ResourceFlavor(s): [ghost]."}},
        ActiveCase{"StoppedAndMissing",
                   ClusterQueueBuilder("cq")
                       .Flavor("a", {Quota("cpu", 1)})
                       .Flavor("b", {Quota("cpu", 1)})
                       .Stop(StopPolicy::kHoldAndDrain)
                       .Build(),
                   false,
                   {false, "Stopped",
                    "Can't admit new workloads: is stopped, references "
                    "missing ResourceFlavor(s): [a b]."}},
        ActiveCase{"CohortCycle",
                   Cq("cq", "x", 1).Build(),
                   true,
                   {false, "Unknown", "Can't admit new workloads."}}),
    [](const ::testing::TestParamInfo<ActiveCase>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace jobset::scheduler::queues
