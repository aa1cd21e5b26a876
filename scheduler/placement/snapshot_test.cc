#include "scheduler/placement/snapshot.h"

#include <string>
#include <utility>
#include <vector>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/placement/test_cluster.h"

namespace jobset::scheduler::placement {
namespace {

using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;
using ::testing::SizeIs;

using Holder = ClusterSnapshot::Holder;

MATCHER_P2(IsHolder, job, priority, "") {
  return arg.job == job && arg.priority == priority;
}

TEST(ClusterSnapshotTest, NodesInNameOrderWithLabelIndex) {
  ClusterSnapshotBuilder builder;
  builder.IndexLabel("pool").IndexLabel("zone");
  builder.AddNode(testing::GpuNode("c", 8, {{"pool", "p1"}, {"zone", "z"}}));
  builder.AddNode(testing::GpuNode("a", 8, {{"pool", "p2"}}));
  builder.AddNode(testing::GpuNode("b", 8, {{"pool", "p1"}}));
  absl::StatusOr<ClusterSnapshot> snapshot = builder.Build();
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  ASSERT_EQ(snapshot->num_nodes(), 3);
  EXPECT_EQ(snapshot->node(0).name, "a");
  EXPECT_EQ(snapshot->node(2).name, "c");
  EXPECT_THAT(snapshot->FindNode("b"), Optional(1));
  EXPECT_EQ(snapshot->FindNode("d"), std::nullopt);

  const ClusterSnapshot::Topology* pools = snapshot->FindTopology("pool");
  ASSERT_NE(pools, nullptr);
  ASSERT_EQ(pools->domains.size(), 2);
  EXPECT_EQ(pools->domains[0].value, "p2");  // first seen in name order
  EXPECT_THAT(pools->domain_of_node, ElementsAre(0, 1, 1));
  EXPECT_THAT(pools->domains[1].nodes, ElementsAre(1, 2));
  EXPECT_THAT(pools->domain_by_value.at("p1"), 1);
  const ClusterSnapshot::Topology* zones = snapshot->FindTopology("zone");
  ASSERT_NE(zones, nullptr);
  EXPECT_THAT(zones->domain_of_node, ElementsAre(-1, -1, 0));
  EXPECT_EQ(snapshot->FindTopology("rack"), nullptr);
}

TEST(ClusterSnapshotTest, ASnapshotStartedFromTheLastKeepsItsNodesNotItsUsage) {
  ClusterSnapshotBuilder builder;
  NodeRecord b = testing::GpuNode("b", 8, {{"rack", "r1"}, {"team", "x"}});
  b.allocated.extended[testing::kGpu] = 6;
  b.jobs.push_back({"ns/old", 0});
  b.used_host_ports.push_back({HostPort::Protocol::kTcp, 80});
  builder.AddNode(std::move(b));
  builder.AddNode(testing::GpuNode("a", 4, {{"rack", "r2"}, {"team", "y"}}));
  builder.AddHold({"rack", "r1", "ns/old", 0});
  absl::StatusOr<ClusterSnapshot> first = builder.Build();
  ASSERT_TRUE(first.ok()) << first.status();
  const int gpu = *first->FindResource(testing::kGpu);
  EXPECT_EQ(first->free(1)[gpu], 2);
  EXPECT_FALSE(first->plain(1));
  EXPECT_EQ(first->FindTopology("team"), nullptr);  // not indexed

  // Node ids are name order; the old usage and holds are gone.
  ClusterSnapshotBuilder again(*std::move(first));
  EXPECT_EQ(again.node(1).name, "b");
  EXPECT_THAT(again.node(1).jobs, IsEmpty());
  again.node(0).allocated.extended[testing::kGpu] = 1;
  again.node(0).jobs.push_back({"ns/new", 3});
  again.AddHold({"team", "y", "ns/new", 3});  // a key not indexed before
  absl::StatusOr<ClusterSnapshot> second = again.Build();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_THAT(second->FindNode("b"), Optional(1));
  EXPECT_EQ(second->free(0)[gpu], 3);
  EXPECT_EQ(second->free(1)[gpu], 8);
  EXPECT_TRUE(second->plain(1));
  ASSERT_THAT(second->jobs_on_node(0), ElementsAre(IsHolder(0, 3)));
  EXPECT_EQ(second->job_key(0), "ns/new");
  EXPECT_THAT(second->jobs_on_node(1), IsEmpty());
  EXPECT_THAT(second->FindTopology("rack")->domain_of_node, ElementsAre(0, 1));
  EXPECT_THAT(second->FindTopology("rack")->domains[1].holds, IsEmpty());
  EXPECT_THAT(second->holds_on_node(1), IsEmpty());
  ASSERT_NE(second->FindTopology("team"), nullptr);
  EXPECT_THAT(second->FindTopology("team")->domains[0].holds,
              ElementsAre(IsHolder(0, 3)));
  EXPECT_THAT(second->holds_on_node(0), ElementsAre(IsHolder(0, 3)));
  EXPECT_EQ(second->num_holds(), 1);

  // Usage of a resource no node declared: the indexes are built again.
  ClusterSnapshotBuilder third(*std::move(second));
  third.node(1).allocated.extended["example.com/fpga"] = 1;
  absl::StatusOr<ClusterSnapshot> rebuilt = third.Build();
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  ASSERT_TRUE(rebuilt->FindResource("example.com/fpga").has_value());
  EXPECT_EQ(rebuilt->free(1)[*rebuilt->FindResource("example.com/fpga")], -1);
  EXPECT_EQ(rebuilt->free(1)[*rebuilt->FindResource(testing::kGpu)], 8);
  EXPECT_THAT(rebuilt->FindNode("a"), Optional(0));
}

// What a pass places is added to its snapshot: the usage and holds it had
// stay, the new ones join them.
TEST(ClusterSnapshotTest, ASnapshotAddedToKeepsItsUsageAndHolds) {
  ClusterSnapshotBuilder builder;
  NodeRecord b = testing::GpuNode("b", 8, {{"rack", "r1"}});
  b.allocated.extended[testing::kGpu] = 6;
  b.jobs.push_back({"ns/old", 0});
  builder.AddNode(std::move(b));
  builder.AddNode(testing::GpuNode("a", 4, {{"rack", "r2"}}));
  builder.AddHold({"rack", "r1", "ns/old", 0});
  absl::StatusOr<ClusterSnapshot> first = builder.Build();
  ASSERT_TRUE(first.ok()) << first.status();
  const int gpu = *first->FindResource(testing::kGpu);

  ClusterSnapshotBuilder more =
      ClusterSnapshotBuilder::Adding(*std::move(first));
  EXPECT_THAT(more.node(1).jobs,
              ElementsAre(Field(&NodeJob::job_key, "ns/old")));
  more.node(0).allocated.extended[testing::kGpu] += 3;
  more.node(0).jobs.push_back({"ns/new", 0});
  more.node(0).used_host_ports.push_back({HostPort::Protocol::kTcp, 80});
  more.AddHold({"rack", "r2", "ns/new", 0});
  absl::StatusOr<ClusterSnapshot> second = more.Build();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->free(0)[gpu], 1);
  EXPECT_EQ(second->free(1)[gpu], 2);
  EXPECT_FALSE(second->plain(0));
  EXPECT_EQ(second->num_holds(), 2);
  const ClusterSnapshot::Topology& rack = *second->FindTopology("rack");
  ASSERT_THAT(rack.domains[0].holds, SizeIs(1));  // r2, node a
  EXPECT_EQ(second->job_key(rack.domains[0].holds[0].job), "ns/new");
  ASSERT_THAT(rack.domains[1].holds, SizeIs(1));  // r1, node b
  EXPECT_EQ(second->job_key(rack.domains[1].holds[0].job), "ns/old");

  // A snapshot started afresh from it forgets both.
  ClusterSnapshotBuilder again(*std::move(second));
  absl::StatusOr<ClusterSnapshot> third = again.Build();
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(third->free(0)[gpu], 4);
  EXPECT_EQ(third->num_holds(), 0);
}

TEST(ClusterSnapshotTest, OnlyTopologyKeysAreIndexedOthersAreScanned) {
  ClusterSnapshot snapshot = testing::MustBuild(
      {testing::GpuNode("a", 8, {{"team", "x"}, {"rack", "r1"}}),
       testing::GpuNode("b", 8, {{"team", "y"}}),
       testing::GpuNode("c", 8, {{"team", "x"}, {"rack", "r1"}})});
  EXPECT_EQ(snapshot.FindTopology("team"), nullptr);
  ASSERT_NE(snapshot.FindTopology("rack"), nullptr);  // a default key
  EXPECT_THAT(snapshot.FindTopology("rack")->domains[0].nodes,
              ElementsAre(0, 2));
  const ClusterSnapshot::Topology teams = snapshot.ScanTopology("team");
  ASSERT_EQ(teams.domains.size(), 2);
  EXPECT_EQ(teams.domains[0].value, "x");
  EXPECT_THAT(teams.domains[0].nodes, ElementsAre(0, 2));
  EXPECT_THAT(teams.domain_of_node, ElementsAre(0, 1, 0));
  EXPECT_THAT(snapshot.ScanTopology("none").domains, IsEmpty());
}

TEST(ClusterSnapshotTest, DenseFreeCapacity) {
  NodeRecord a = testing::GpuNode("a", 8);
  a.allocated.cpu_millis = 4000;
  a.allocated.extended["nvidia.com/gpu"] = 3;
  NodeRecord b = testing::GpuNode("b", 0);
  b.allocatable.extended["google.com/tpu"] = 4;
  b.allocated.extended["google.com/tpu"] = 5;  // overcommitted
  ClusterSnapshot snapshot = testing::MustBuild({a, b});
  ASSERT_EQ(snapshot.num_resources(), 4);
  EXPECT_EQ(snapshot.resource_name(2), "google.com/tpu");
  EXPECT_THAT(snapshot.FindResource("cpu"), Optional(0));
  EXPECT_THAT(snapshot.FindResource("memory"), Optional(1));
  EXPECT_THAT(snapshot.FindResource("nvidia.com/gpu"), Optional(3));
  EXPECT_EQ(snapshot.FindResource("pods"), std::nullopt);
  EXPECT_THAT(snapshot.free(0), ElementsAre(60'000, int64_t{512} << 30, 0, 5));
  EXPECT_THAT(snapshot.free(1), ElementsAre(64'000, int64_t{512} << 30, -1, 0));
}

TEST(ClusterSnapshotTest, HoldsAndJobsOnNodes) {
  std::vector<NodeRecord> nodes = testing::SliceCluster(8, 4);
  nodes[6].jobs.push_back({"ns/running", 3});
  ClusterSnapshot snapshot = testing::MustBuild(
      std::move(nodes), {{testing::kPool, "pool-0001", "ns/holder", 7},
                         {testing::kPool, "pool-0009", "ns/gone", 0},
                         {"rack", "r1", "ns/no-rack", 0}});
  EXPECT_EQ(snapshot.num_holds(), 1);
  const auto holder = snapshot.FindJob("ns/holder");
  const auto running = snapshot.FindJob("ns/running");
  ASSERT_TRUE(holder.has_value());
  ASSERT_TRUE(running.has_value());
  EXPECT_EQ(snapshot.job_key(*holder), "ns/holder");
  EXPECT_THAT(snapshot.holds_on_node(3), IsEmpty());
  for (int h = 4; h < 8; ++h) {
    EXPECT_THAT(snapshot.holds_on_node(h), ElementsAre(IsHolder(*holder, 7)));
  }
  EXPECT_THAT(snapshot.jobs_on_node(6), ElementsAre(IsHolder(*running, 3)));
  EXPECT_THAT(snapshot.jobs_on_node(5), IsEmpty());
  const auto& domain = snapshot.FindTopology(testing::kPool)->domains[1];
  EXPECT_THAT(domain.holds, ElementsAre(IsHolder(*holder, 7)));
}

TEST(ClusterSnapshotBuilderTest, RejectsBadInput) {
  EXPECT_THAT(ClusterSnapshotBuilder()
                  .AddNode(testing::GpuNode("a"))
                  .AddNode(testing::GpuNode("a"))
                  .Build(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("duplicate node a")));
  EXPECT_THAT(
      ClusterSnapshotBuilder().AddNode(testing::GpuNode("")).Build(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty name")));
  NodeRecord negative = testing::GpuNode("n");
  negative.allocatable.extended["nvidia.com/gpu"] = -1;
  EXPECT_THAT(ClusterSnapshotBuilder().AddNode(negative).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("node n: allocatable nvidia.com/gpu")));
  EXPECT_THAT(ClusterSnapshotBuilder()
                  .AddNode(testing::GpuNode("a"))
                  .AddHold({"pool", "p", "", 0})
                  .Build(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("job key are required")));
}

}  // namespace
}  // namespace jobset::scheduler::placement
