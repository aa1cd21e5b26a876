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

TEST(ClusterStateTest, AddsTheUsageOfAdmittedWorkloads) {
  const std::vector<ClusterQueue> cqs = {
      ClusterQueueBuilder("cq-a")
          .Cohort("team")
          .Flavor("default", {Quota("cpu", Cpu(8))})
          .Build(),
      ClusterQueueBuilder("cq-b")
          .Cohort("team")
          .Flavor("default", {Quota("cpu", Cpu(8))})
          .Build()};
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
