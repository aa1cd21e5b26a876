#include "scheduler/queues/cluster_state.h"

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
