#include "scheduler/queues/cluster_state.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/test_builders.h"

namespace jobset::scheduler::queues {
namespace {

using ::jobset::scheduler::queues::testing::ClusterQueueBuilder;
using ::jobset::scheduler::queues::testing::Cpu;
using ::jobset::scheduler::queues::testing::Quota;
using ::jobset::scheduler::queues::testing::WorkloadBuilder;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

const FlavorResource kCpuDefault{"default", "cpu"};

// cq-a and cq-b in cohort team, 8 cpu each.
std::vector<ClusterQueue> TeamQueues() {
  std::vector<ClusterQueue> cqs;
  for (const char* name : {"cq-a", "cq-b"}) {
    cqs.push_back(ClusterQueueBuilder(name)
                      .Cohort("team")
                      .Flavor("default", {Quota("cpu", Cpu(8))})
                      .Build());
  }
  return cqs;
}

TEST(ClusterStateTest, AddsTheUsageOfAdmittedWorkloads) {
  const std::vector<ClusterQueue> cqs = TeamQueues();
  const std::vector<Workload> admitted = {
      WorkloadBuilder("x")
          .PodSet("w", 6, {{"cpu", Cpu(1)}})
          .AdmittedOn("cq-a", "default")
          .Build(),
      WorkloadBuilder("y")
          .PodSet("w", 4, {{"cpu", Cpu(1)}})
          .AdmittedOn("cq-a", "default")
          .Build(),
      // Pending: no quota.
      WorkloadBuilder("p")
          .Queue("cq-b")
          .PodSet("w", 4, {{"cpu", Cpu(1)}})
          .Build(),
      // Its ClusterQueue is gone: held nowhere.
      WorkloadBuilder("z")
          .PodSet("w", 4, {{"cpu", Cpu(1)}})
          .AdmittedOn("deleted", "default")
          .Build()};
  absl::StatusOr<ClusterState> state = ClusterState::Build(
      {ResourceFlavor{"default", {}, {}, {}}}, {}, cqs, admitted);
  ASSERT_TRUE(state.ok()) << state.status();
  const QuotaTree& tree = state->tree();
  EXPECT_EQ(tree.Usage(tree.ClusterQueueNode("cq-a"), kCpuDefault), Cpu(10));
  EXPECT_EQ(tree.Usage(tree.CohortNode("team"), kCpuDefault), Cpu(10));
  EXPECT_EQ(tree.Available(tree.ClusterQueueNode("cq-b"), kCpuDefault), Cpu(6));
  EXPECT_THAT(state->Admitted("cq-a"), SizeIs(2));
  EXPECT_THAT(state->Admitted("cq-b"), IsEmpty());
  EXPECT_THAT(state->Admitted("deleted"), IsEmpty());
  ASSERT_NE(state->FindClusterQueue("cq-b"), nullptr);
  EXPECT_EQ(state->FindClusterQueue("nope"), nullptr);
  EXPECT_TRUE(state->flavors().contains("default"));

  state->RemoveUsage(state->Admitted("cq-a")[0]);
  EXPECT_EQ(state->tree().Usage(tree.ClusterQueueNode("cq-a"), kCpuDefault),
            Cpu(4));
  state->AddUsage(state->Admitted("cq-a")[0]);
  EXPECT_EQ(state->tree().Usage(tree.ClusterQueueNode("cq-a"), kCpuDefault),
            Cpu(10));
}

TEST(ClusterStateTest, AddAdmittedAddsAsBuildDoes) {
  const std::vector<ClusterQueue> cqs = TeamQueues();
  const std::vector<Workload> admitted = {
      WorkloadBuilder("x")
          .PodSet("w", 10, {{"cpu", Cpu(1)}})
          .AdmittedOn("cq-a", "default")
          .Build(),
      WorkloadBuilder("y")
          .PodSet("w", 2, {{"cpu", Cpu(1)}})
          .AdmittedOn("cq-a", "default")
          .Build(),
      WorkloadBuilder("p").Queue("cq-b").PodSet("w", 4, {}).Build(),
      WorkloadBuilder("z")
          .PodSet("w", 4, {{"cpu", Cpu(1)}})
          .AdmittedOn("deleted", "default")
          .Build()};
  const std::vector<ResourceFlavor> flavors = {
      ResourceFlavor{"default", {}, {}, {}}};
  absl::StatusOr<ClusterState> built =
      ClusterState::Build(flavors, {}, cqs, admitted);
  absl::StatusOr<ClusterState> added =
      ClusterState::Build(flavors, {}, cqs, {admitted[0]});
  ASSERT_TRUE(built.ok() && added.ok());
  for (size_t i = 1; i < admitted.size(); ++i) added->AddAdmitted(admitted[i]);
  for (absl::string_view node : {"cq-a", "cq-b"}) {
    const QuotaTree::NodeId b = built->tree().ClusterQueueNode(node);
    const QuotaTree::NodeId a = added->tree().ClusterQueueNode(node);
    EXPECT_EQ(added->tree().Usage(a, kCpuDefault),
              built->tree().Usage(b, kCpuDefault));
    EXPECT_EQ(added->tree().Available(a, kCpuDefault),
              built->tree().Available(b, kCpuDefault));
  }
  EXPECT_EQ(added->tree().Usage(added->tree().CohortNode("team"), kCpuDefault),
            Cpu(12));
  ASSERT_THAT(added->Admitted("cq-a"), SizeIs(2));
  EXPECT_EQ(added->Admitted("cq-a")[1].workload, &admitted[1]);
  EXPECT_THAT(added->Admitted("cq-b"), IsEmpty());
  EXPECT_THAT(added->Admitted("deleted"), IsEmpty());
}

TEST(ClusterStateTest, AddingAQueuesWorkloadsAtOnceAddsAsEachOneDoes) {
  // cq-a keeps 3 of its 8 cpu from the cohort (lendingLimit 5): what its
  // workloads use beyond that is stored in the cohort.
  std::vector<ClusterQueue> cqs = TeamQueues();
  cqs[0] = ClusterQueueBuilder("cq-a")
               .Cohort("team")
               .Flavor("default", {Quota("cpu", Cpu(8), std::nullopt, Cpu(5))})
               .Build();
  std::vector<std::shared_ptr<const Workload>> admitted;
  for (int i = 0; i < 4; ++i) {
    admitted.push_back(std::make_shared<const Workload>(
        WorkloadBuilder("w" + std::to_string(i))
            .PodSet("w", i + 1, {{"cpu", Cpu(1)}})
            .AdmittedOn("cq-a", "default")
            .Build()));
  }
  const Workload late = WorkloadBuilder("late")
                            .PodSet("w", 2, {{"cpu", Cpu(1)}})
                            .AdmittedOn("cq-a", "default")
                            .Build();
  const std::vector<ResourceFlavor> flavors = {
      ResourceFlavor{"default", {}, {}, {}}};
  absl::StatusOr<ClusterState> each = ClusterState::Build(flavors, {}, cqs);
  absl::StatusOr<ClusterState> bulk = ClusterState::Build(flavors, {}, cqs);
  ASSERT_TRUE(each.ok() && bulk.ok());
  for (const auto& w : admitted) each->AddAdmitted(*w);
  each->AddAdmitted(late);
  // 1 + 2 + 3 + 4 cpu, then one added alone behind them.
  bulk->AddAdmitted("cq-a", admitted, {{kCpuDefault, Cpu(10)}});
  bulk->AddAdmitted(late);
  bulk->AddAdmitted("deleted", admitted, {{kCpuDefault, Cpu(10)}});
  for (absl::string_view cq : {"cq-a", "cq-b"}) {
    const QuotaTree::NodeId e = each->tree().ClusterQueueNode(cq);
    const QuotaTree::NodeId b = bulk->tree().ClusterQueueNode(cq);
    EXPECT_EQ(bulk->tree().Usage(b, kCpuDefault),
              each->tree().Usage(e, kCpuDefault));
    EXPECT_EQ(bulk->tree().Available(b, kCpuDefault),
              each->tree().Available(e, kCpuDefault));
  }
  const QuotaTree::NodeId team = bulk->tree().CohortNode("team");
  EXPECT_EQ(bulk->tree().Usage(team, kCpuDefault), Cpu(12 - 3));
  EXPECT_EQ(bulk->tree().Usage(team, kCpuDefault),
            each->tree().Usage(each->tree().CohortNode("team"), kCpuDefault));
  // Each one's entry, in the order added, with its own usage.
  const std::vector<AdmittedWorkload>& made = bulk->Admitted("cq-a");
  ASSERT_THAT(made, SizeIs(5));
  for (size_t i = 0; i < made.size(); ++i) {
    const AdmittedWorkload& want = each->Admitted("cq-a")[i];
    EXPECT_EQ(made[i].workload, want.workload);
    EXPECT_EQ(made[i].cq, bulk->tree().ClusterQueueNode("cq-a"));
    EXPECT_EQ(made[i].usage, want.usage);
  }
  EXPECT_THAT(bulk->Admitted("deleted"), IsEmpty());
  // A preemption's simulation takes one away and puts it back.
  bulk->RemoveUsage(made[3]);
  EXPECT_EQ(
      bulk->tree().Usage(bulk->tree().ClusterQueueNode("cq-a"), kCpuDefault),
      Cpu(8));
  bulk->AddUsage(made[3]);
  EXPECT_EQ(bulk->tree().Usage(team, kCpuDefault), Cpu(9));
}

TEST(ClusterStateTest, RejectsRepeatedNames) {
  absl::StatusOr<ClusterState> flavors = ClusterState::Build(
      {ResourceFlavor{"f", {}, {}, {}}, ResourceFlavor{"f", {}, {}, {}}}, {},
      {}, {});
  EXPECT_EQ(flavors.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(flavors.status().message(),
              HasSubstr("resourceFlavors: duplicate name \"f\""));
  const std::vector<ClusterQueue> cqs = {ClusterQueueBuilder("a").Build(),
                                         ClusterQueueBuilder("a").Build()};
  EXPECT_EQ(ClusterState::Build({}, {}, cqs, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace jobset::scheduler::queues
