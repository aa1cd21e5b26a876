#include "scheduler/placement/placement.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/placement/test_cluster.h"

namespace jobset::scheduler::placement {
namespace {

using ::jobset::testing::StatusIs;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Eq;
using testing::GpuNode;
using testing::GpuPod;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::JobSetRequest;
using testing::kGpu;
using testing::kPool;
using testing::MustBuild;
using ::testing::Not;
using testing::SliceCluster;

std::shared_ptr<const PodRequirements> Share(PodRequirements requirements) {
  return std::make_shared<const PodRequirements>(std::move(requirements));
}

PodRequirements GpuRequirements(int64_t gpus) { return *GpuPod(gpus); }

// One Job of `pods` pods, not exclusive.
PlacementRequest OneJob(std::shared_ptr<const PodRequirements> requirements,
                        int pods) {
  return JobSetRequest("job", 1, pods, std::move(requirements), "");
}

Placement MustPlace(const ClusterSnapshot& cluster,
                    const PlacementRequest& request) {
  absl::StatusOr<Placement> placement = Place(cluster, request);
  EXPECT_TRUE(placement.ok()) << placement.status();
  return placement.ok() ? *std::move(placement) : Placement{};
}

// ---------------------------------------------------------------------------
// Every hard constraint: a two-node cluster where node-a breaks the
// constraint and node-b does not; one pod must land on node-b, and two pods
// must be rejected with the constraint's reason.

struct ConstraintCase {
  std::string name;
  NodeRecord node_a;  // violates the constraint
  PodRequirements requirements;
  std::string reason;  // node-a's reason when two pods do not fit
};

class ConstraintTest : public ::testing::TestWithParam<ConstraintCase> {};

TEST_P(ConstraintTest, KeepsPodOffViolatingNode) {
  const ConstraintCase& c = GetParam();
  NodeRecord node_b = GpuNode("node-b", 8, {{"pool", "p"}, {"gen", "5"}});
  ClusterSnapshot cluster = MustBuild({c.node_a, node_b});
  auto requirements = Share(c.requirements);

  Placement one = MustPlace(cluster, OneJob(requirements, 1));
  ASSERT_TRUE(one.placed()) << one.RejectionSummary();
  EXPECT_THAT(one.jobs[0].nodes, ElementsAre("node-b"));

  // Pods take all 8 GPUs of a node, so the second pod has nowhere to go.
  PodRequirements two_requirements = c.requirements;
  two_requirements.resources.extended[kGpu] = 8;
  Placement two = MustPlace(cluster, OneJob(Share(two_requirements), 2));
  EXPECT_FALSE(two.placed());
  EXPECT_THAT(two.jobs, IsEmpty());
  ASSERT_EQ(two.rejections.size(), 1);
  EXPECT_EQ(two.rejections[0].job_key, "ns/job-0");
  EXPECT_EQ(two.rejections[0].reason,
            absl::StrCat("room for only 1 of the 2 pods; 1/2 nodes are "
                         "available: 1 ",
                         c.reason, "."));
}

NodeRecord NodeA(Labels labels = {{"pool", "p"}, {"gen", "5"}}) {
  return GpuNode("node-a", 8, std::move(labels));
}

std::vector<ConstraintCase> ConstraintCases() {
  std::vector<ConstraintCase> cases;
  {
    NodeRecord a = NodeA();
    a.allocated.extended[kGpu] = 4;  // e.g. held by a terminating pod
    cases.push_back(
        {"Resources", a, GpuRequirements(8), "Insufficient nvidia.com/gpu"});
  }
  {
    NodeRecord a = NodeA();
    a.allocated.cpu_millis = 63'500;
    cases.push_back({"Cpu", a, GpuRequirements(1), "Insufficient cpu"});
  }
  {
    NodeRecord a = NodeA();
    a.allocatable.extended[std::string(kPods)] = 110;
    a.allocated.extended[std::string(kPods)] = 110;
    cases.push_back({"PodCount", a, GpuRequirements(1), "Too many pods"});
  }
  {
    PodRequirements r = GpuRequirements(1);
    r.node_selector = {{"pool", "p"}};
    cases.push_back({"NodeSelector", NodeA({{"pool", "q"}}), r,
                     "node(s) didn't match Pod's node affinity/selector"});
  }
  using Op = NodeSelectorRequirement::Operator;
  const std::string affinity =
      "node(s) didn't match Pod's node affinity/selector";
  auto with_affinity = [](std::vector<NodeSelectorTerm> terms) {
    PodRequirements r = GpuRequirements(1);
    r.required_node_affinity = std::move(terms);
    return r;
  };
  cases.push_back({"AffinityIn", NodeA({{"pool", "q"}}),
                   with_affinity({{{{"pool", Op::kIn, {"p", "r"}}}}}),
                   affinity});
  cases.push_back({"AffinityNotIn", NodeA({{"pool", "q"}}),
                   with_affinity({{{{"pool", Op::kNotIn, {"q"}}}}}), affinity});
  cases.push_back({"AffinityExists", NodeA({{"other", "x"}}),
                   with_affinity({{{{"pool", Op::kExists, {}}}}}), affinity});
  cases.push_back({"AffinityDoesNotExist", NodeA({{"spot", "true"}}),
                   with_affinity({{{{"spot", Op::kDoesNotExist, {}}}}}),
                   affinity});
  cases.push_back({"AffinityGt", NodeA({{"gen", "3"}}),
                   with_affinity({{{{"gen", Op::kGt, {}, 4}}}}), affinity});
  // Terms are ORed, expressions ANDed.
  cases.push_back(
      {"AffinityTermsOred", NodeA({{"pool", "q"}, {"gen", "5"}}),
       with_affinity({{{{"pool", Op::kIn, {"p"}}, {"gen", Op::kIn, {"5"}}}},
                      {{{"pool", Op::kIn, {"z"}}}}}),
       affinity});
  {
    NodeRecord a = NodeA();
    a.taints.push_back({"dedicated", "infra", TaintEffect::kNoSchedule});
    cases.push_back({"TaintNoSchedule", a, GpuRequirements(1),
                     "node(s) had untolerated taint {dedicated: infra}"});
  }
  {
    NodeRecord a = NodeA();
    a.taints.push_back({"dedicated", "infra", TaintEffect::kNoExecute});
    PodRequirements r = GpuRequirements(1);
    r.tolerations.push_back({"dedicated", false, "other", std::nullopt});
    cases.push_back({"TaintWrongValue", a, r,
                     "node(s) had untolerated taint {dedicated: infra}"});
  }
  {
    NodeRecord a = NodeA();
    a.cordoned = true;
    cases.push_back(
        {"Cordoned", a, GpuRequirements(1), "node(s) were unschedulable"});
  }
  {
    NodeRecord a = NodeA();
    a.ready = false;
    cases.push_back(
        {"NotReady", a, GpuRequirements(1),
         "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"});
  }
  {
    NodeRecord a = NodeA();
    a.used_host_ports.push_back({HostPort::Protocol::kTcp, 8476});
    PodRequirements r = GpuRequirements(1);
    r.host_ports.push_back({HostPort::Protocol::kTcp, 8476});
    cases.push_back(
        {"HostPorts", a, r,
         "node(s) didn't have free ports for the requested pod ports"});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(
    Constraints, ConstraintTest, ::testing::ValuesIn(ConstraintCases()),
    [](const ::testing::TestParamInfo<ConstraintCase>& info) {
      return info.param.name;
    });

TEST(PlaceTest, ToleratedTaintsAndPreferNoScheduleDoNotFilter) {
  NodeRecord a = GpuNode("node-a");
  a.taints.push_back({"dedicated", "gpu", TaintEffect::kNoSchedule});
  a.taints.push_back({"spot", "", TaintEffect::kPreferNoSchedule});
  NodeRecord b = GpuNode("node-b");
  b.taints.push_back({"anything", "x", TaintEffect::kNoExecute});
  ClusterSnapshot cluster = MustBuild({a, b});

  PodRequirements equal = GpuRequirements(8);
  equal.tolerations.push_back({"dedicated", false, "gpu", std::nullopt});
  Placement p = MustPlace(cluster, OneJob(Share(equal), 1));
  ASSERT_TRUE(p.placed()) << p.RejectionSummary();
  EXPECT_THAT(p.jobs[0].nodes, ElementsAre("node-a"));

  // An empty key with Exists tolerates every taint.
  PodRequirements all = GpuRequirements(8);
  all.tolerations.push_back({"", true, "", std::nullopt});
  p = MustPlace(cluster, OneJob(Share(all), 2));
  ASSERT_TRUE(p.placed()) << p.RejectionSummary();
  EXPECT_THAT(p.jobs[0].nodes, ElementsAre("node-a", "node-b"));
}

TEST(PlaceTest, PacksSeveralPodsOnANodeWhenResourcesAllow) {
  ClusterSnapshot cluster = MustBuild({GpuNode("node-a"), GpuNode("node-b")});
  Placement p = MustPlace(cluster, OneJob(GpuPod(2), 6));
  ASSERT_TRUE(p.placed());
  EXPECT_THAT(p.jobs[0].nodes, ElementsAre("node-a", "node-a", "node-a",
                                           "node-a", "node-b", "node-b"));
}

TEST(PlaceTest, HostPortsAllowOnePodPerNode) {
  ClusterSnapshot cluster = MustBuild({GpuNode("node-a"), GpuNode("node-b")});
  PodRequirements r = GpuRequirements(1);
  r.host_ports.push_back({HostPort::Protocol::kUdp, 9000});
  Placement p = MustPlace(cluster, OneJob(Share(r), 2));
  ASSERT_TRUE(p.placed());
  EXPECT_THAT(p.jobs[0].nodes, ElementsAre("node-a", "node-b"));

  p = MustPlace(cluster, OneJob(Share(r), 3));
  ASSERT_FALSE(p.placed());
  EXPECT_EQ(p.rejections[0].reason,
            "room for only 2 of the 3 pods; 2/2 nodes are available.");

  // Two Jobs of the request that claim the same port do not share a node.
  PlacementRequest both = JobSetRequest("job", 2, 1, Share(r), "");
  p = MustPlace(cluster, both);
  ASSERT_TRUE(p.placed());
  EXPECT_THAT(p.jobs[0].nodes, ElementsAre("node-a"));
  EXPECT_THAT(p.jobs[1].nodes, ElementsAre("node-b"));
}

TEST(PlaceTest, MissingResourceIsInsufficientEverywhere) {
  ClusterSnapshot cluster = MustBuild({GpuNode("node-a"), GpuNode("node-b")});
  PodRequirements r = GpuRequirements(0);
  r.resources.extended["google.com/tpu"] = 4;
  Placement p = MustPlace(cluster, OneJob(Share(r), 1));
  ASSERT_FALSE(p.placed());
  EXPECT_EQ(p.rejections[0].reason,
            "0/2 nodes are available: 2 Insufficient google.com/tpu.");
}

TEST(PlaceTest, KubernetesStyleMessageCountsEveryNode) {
  std::vector<NodeRecord> nodes;
  for (int i = 0; i < 16; ++i) {
    NodeRecord node = GpuNode(absl::StrFormat("node-%02d", i), 8,
                              {{"accelerator", i < 8 ? "h100" : "a100"}});
    if (i < 8) node.allocated.extended[kGpu] = 8;
    nodes.push_back(std::move(node));
  }
  ClusterSnapshot cluster = MustBuild(std::move(nodes));
  PodRequirements r = GpuRequirements(8);
  r.node_selector = {{"accelerator", "h100"}};
  Placement p = MustPlace(cluster, OneJob(Share(r), 4));
  ASSERT_FALSE(p.placed());
  EXPECT_EQ(p.rejections[0].reason,
            "0/16 nodes are available: 8 Insufficient nvidia.com/gpu, 8 "
            "node(s) didn't match Pod's node affinity/selector.");
}

// A JobSet's excluded nodes (a straggler's) take none of its pods, spread
// or exclusive, and the rejection counts them.
TEST(PlaceTest, ExcludedNodesTakeNoPod) {
  ClusterSnapshot cluster = MustBuild(SliceCluster(8, 4));
  PlacementRequest spread = JobSetRequest("w", 1, 4, GpuPod(8), "");
  ASSERT_THAT(MustPlace(cluster, spread).jobs[0].nodes, Contains("node-00000"))
      << "the node it would take otherwise";
  spread.excluded_nodes = {"node-00000", "no-such-node"};
  Placement p = MustPlace(cluster, spread);
  ASSERT_TRUE(p.placed()) << p.RejectionSummary();
  EXPECT_THAT(p.jobs[0].nodes, Not(Contains("node-00000")));

  PlacementRequest exclusive = JobSetRequest("w", 2, 4, GpuPod(8));
  exclusive.excluded_nodes = {"node-00005"};
  p = MustPlace(cluster, exclusive);
  ASSERT_FALSE(p.placed()) << "one slice of the two lost a node";
  EXPECT_THAT(p.RejectionSummary(),
              HasSubstr("1 node(s) were excluded for this JobSet (straggler)"));
}

// A slice of four hosts and a hot spare: the first attempt leaves the spare
// alone; once a host is lost, a replacement (use_spares) keeps the slice.
TEST(PlaceTest, HotSparesOnlyReplace) {
  std::vector<NodeRecord> nodes;
  for (int i = 0; i < 5; ++i) {
    Labels labels = {{kPool, "pool-a"}};
    if (i == 4) labels["jobsetd.io/spare"] = "true";
    nodes.push_back(GpuNode(absl::StrCat("a-", i), 8, labels));
  }
  for (int i = 0; i < 4; ++i) {
    nodes.push_back(GpuNode(absl::StrCat("b-", i), 8, {{kPool, "pool-b"}}));
  }
  PlacementRequest request = JobSetRequest("w", 1, 4, GpuPod(8));
  request.jobs[0].previous_nodes = {"a-0", "a-1", "a-2", "a-3"};
  Placement p = MustPlace(MustBuild(nodes), request);
  ASSERT_TRUE(p.placed()) << p.RejectionSummary();
  EXPECT_THAT(p.jobs[0].nodes, Not(Contains("a-4")));

  nodes[2].ready = false;  // a-2 is lost
  ClusterSnapshot lost = MustBuild(nodes);
  p = MustPlace(lost, request);
  ASSERT_TRUE(p.placed()) << p.RejectionSummary();
  EXPECT_EQ(p.jobs[0].domain, "pool-b") << "no spare: another slice";

  request.use_spares = true;
  p = MustPlace(lost, request);
  ASSERT_TRUE(p.placed()) << p.RejectionSummary();
  EXPECT_EQ(p.jobs[0].domain, "pool-a");
  EXPECT_THAT(p.jobs[0].nodes, Contains("a-4"));

  // Without the other slice the rejection names the spare.
  nodes.resize(5);
  request.use_spares = false;
  p = MustPlace(MustBuild(nodes), request);
  ASSERT_FALSE(p.placed());
  EXPECT_THAT(p.RejectionSummary(), HasSubstr("1 node(s) were hot spares"));
}

// ---------------------------------------------------------------------------
// The gang rule.

TEST(PlaceTest, GangIsAllOrNothing) {
  ClusterSnapshot cluster = MustBuild(SliceCluster(8, 4));
  PlacementRequest request;
  request.jobs.push_back({"ns/small", GpuPod(8), 4, "", {}});
  request.jobs.push_back({"ns/big", GpuPod(8), 5, "", {}});
  Placement p = MustPlace(cluster, request);
  ASSERT_FALSE(p.placed());
  EXPECT_THAT(p.jobs, IsEmpty());
  ASSERT_EQ(p.rejections.size(), 1);
  EXPECT_EQ(p.rejections[0].job_key, "ns/small");
  // The bigger Job went first and left 3 nodes.
  EXPECT_EQ(p.RejectionSummary(),
            "ns/small: room for only 3 of the 4 pods; 3/8 nodes are "
            "available: 5 Insufficient nvidia.com/gpu.");

  request.jobs[1].pod_count = 4;
  p = MustPlace(cluster, request);
  ASSERT_TRUE(p.placed()) << p.RejectionSummary();
  ASSERT_EQ(p.jobs.size(), 2);
  EXPECT_EQ(p.jobs[0].job_key, "ns/small");
  EXPECT_EQ(p.jobs[0].nodes.size(), 4);
  EXPECT_EQ(p.jobs[1].nodes.size(), 4);
}

TEST(PlaceTest, EveryFailingJobIsReported) {
  ClusterSnapshot cluster = MustBuild(SliceCluster(4, 4));
  PlacementRequest request = JobSetRequest("w", 3, 2, GpuPod(16), "");
  Placement p = MustPlace(cluster, request);
  ASSERT_EQ(p.rejections.size(), 3);
  EXPECT_EQ(p.rejections[2].job_key, "ns/w-2");
}

TEST(PlaceTest, EmptyRequestAndZeroPodJobsArePlaced) {
  ClusterSnapshot cluster = MustBuild(SliceCluster(4, 4));
  EXPECT_TRUE(MustPlace(cluster, PlacementRequest{}).placed());
  Placement p = MustPlace(cluster, JobSetRequest("z", 2, 0, GpuPod(8)));
  ASSERT_TRUE(p.placed());
  EXPECT_THAT(p.jobs[0].nodes, IsEmpty());
}

// ---------------------------------------------------------------------------
// Exclusive topology.

TEST(PlaceTest, ExclusiveJobsEachGetTheirOwnDomain) {
  ClusterSnapshot cluster = MustBuild(SliceCluster(16, 4));
  Placement p = MustPlace(cluster, JobSetRequest("w", 4, 4, GpuPod(1)));
  ASSERT_TRUE(p.placed()) << p.RejectionSummary();
  std::vector<std::string> domains;
  for (const JobPlacement& job : p.jobs) {
    domains.push_back(job.domain);
    // Each pod of a Job in its Job's domain; 1-GPU pods share a node.
    for (const std::string& node : job.nodes) {
      const auto id = cluster.FindNode(node);
      EXPECT_EQ(cluster.node(*id).labels.at(kPool), job.domain);
    }
  }
  EXPECT_THAT(domains,
              ElementsAre("pool-0000", "pool-0001", "pool-0002", "pool-0003"));
  EXPECT_THAT(p.jobs[0].nodes, ElementsAre("node-00000", "node-00000",
                                           "node-00000", "node-00000"));
}

TEST(PlaceTest, ExclusiveJobNeverSpansDomains) {
  // 2 slices of 4 nodes, 8 free nodes in all, but no slice has 5.
  ClusterSnapshot cluster = MustBuild(SliceCluster(8, 4));
  Placement p = MustPlace(cluster, JobSetRequest("w", 1, 5, GpuPod(8)));
  ASSERT_FALSE(p.placed());
  EXPECT_EQ(p.rejections[0].reason,
            "exclusive topology \"cloud.google.com/gke-nodepool\": no free "
            "domain has room for the 5 pods (2 domains: 2 with room for at "
            "most 4 pods); 8/8 nodes are available.");
}

TEST(PlaceTest, ExclusiveRejectionNamesDomainsTakenInTheRequest) {
  ClusterSnapshot cluster = MustBuild(SliceCluster(8, 4));
  Placement p = MustPlace(cluster, JobSetRequest("w", 3, 4, GpuPod(8)));
  ASSERT_FALSE(p.placed());
  ASSERT_EQ(p.rejections.size(), 1);
  EXPECT_EQ(p.rejections[0].job_key, "ns/w-2");
  EXPECT_EQ(p.rejections[0].reason,
            "exclusive topology \"cloud.google.com/gke-nodepool\": no free "
            "domain has room for the 4 pods (2 domains: 2 taken by other "
            "jobs of this JobSet); 0/8 nodes are available: 8 node(s) were "
            "in a topology domain held by another job.");
}

TEST(PlaceTest, NodesWithoutTheTopologyLabelTakeNoExclusivePod) {
  std::vector<NodeRecord> nodes = SliceCluster(4, 4);
  nodes.push_back(GpuNode("bare-0"));
  nodes.push_back(GpuNode("bare-1"));
  ClusterSnapshot cluster = MustBuild(std::move(nodes));
  Placement p = MustPlace(cluster, JobSetRequest("w", 1, 6, GpuPod(8)));
  ASSERT_FALSE(p.placed());
  EXPECT_THAT(p.rejections[0].reason,
              HasSubstr("4/6 nodes are available: 2 node(s) didn't have the "
                        "topology label cloud.google.com/gke-nodepool."));

  p = MustPlace(cluster, JobSetRequest("w", 1, 1, GpuPod(8), "rack"));
  ASSERT_FALSE(p.placed());
  EXPECT_EQ(p.rejections[0].reason,
            "exclusive topology \"rack\": no free domain has room for the 1 "
            "pods (0 domains); 0/6 nodes are available: 6 node(s) didn't have "
            "the topology label rack.");
}

TEST(PlaceTest, ExclusiveKeyThatTheSnapshotDoesNotIndex) {
  std::vector<NodeRecord> nodes;
  for (int i = 0; i < 6; ++i) {
    nodes.push_back(GpuNode(absl::StrCat("node-", i), 8,
                            {{"example.com/block", i < 2 ? "b0" : "b1"}}));
  }
  ClusterSnapshot cluster = MustBuild(std::move(nodes));
  ASSERT_EQ(cluster.FindTopology("example.com/block"), nullptr);
  Placement p = MustPlace(
      cluster, JobSetRequest("w", 2, 2, GpuPod(8), "example.com/block"));
  ASSERT_TRUE(p.placed()) << p.RejectionSummary();
  EXPECT_EQ(p.jobs[0].domain, "b0");
  EXPECT_EQ(p.jobs[1].domain, "b1");
  EXPECT_THAT(p.jobs[1].nodes, ElementsAre("node-2", "node-3"));
}

struct HoldCase {
  std::string name;
  int32_t hold_priority;
  int32_t request_priority;
  bool exclusive_request;
  bool placed;
};

class HoldTest : public ::testing::TestWithParam<HoldCase> {};

// One slice of 4 nodes, held by another JobSet's Job.
TEST_P(HoldTest, HeldDomainIsClosedAtItsPriorityOnly) {
  const HoldCase& c = GetParam();
  ClusterSnapshot cluster = MustBuild(
      SliceCluster(4, 4), {{kPool, "pool-0000", "other/job", c.hold_priority}});
  Placement p =
      MustPlace(cluster, JobSetRequest("w", 1, 1, GpuPod(1),
                                       c.exclusive_request ? kPool : "",
                                       c.request_priority));
  EXPECT_EQ(p.placed(), c.placed) << p.RejectionSummary();
  if (!c.placed) {
    EXPECT_THAT(p.rejections[0].reason,
                HasSubstr("4 node(s) were in a topology domain held by "
                          "another job"));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Holds, HoldTest,
    ::testing::Values(HoldCase{"ExclusiveSamePriority", 0, 0, true, false},
                      HoldCase{"ExclusiveOtherPriority", 100, 0, true, true},
                      HoldCase{"SpreadSamePriority", 5, 5, false, false},
                      HoldCase{"SpreadOtherPriority", 5, 6, false, true}),
    [](const ::testing::TestParamInfo<HoldCase>& info) {
      return info.param.name;
    });

TEST(PlaceTest, ExclusiveSkipsDomainsInUseByOtherJobs) {
  std::vector<NodeRecord> nodes = SliceCluster(8, 4);
  nodes[1].jobs.push_back({"other/job", 0});   // pool-0000, same priority
  nodes[5].jobs.push_back({"other/low", -1});  // pool-0001, other priority
  ClusterSnapshot cluster = MustBuild(std::move(nodes));
  Placement p = MustPlace(cluster, JobSetRequest("w", 1, 1, GpuPod(1)));
  ASSERT_TRUE(p.placed());
  EXPECT_EQ(p.jobs[0].domain, "pool-0001");

  p = MustPlace(cluster, JobSetRequest("w", 2, 1, GpuPod(1)));
  ASSERT_FALSE(p.placed());
  EXPECT_THAT(p.rejections[0].reason,
              HasSubstr("(2 domains: 1 taken by other jobs of this JobSet, 1 "
                        "in use by pods of other jobs)"));
}

TEST(PlaceTest, ExclusivityAcrossJobSetsThroughHolds) {
  // JobSet A is placed, the controller records its holds, then JobSet B
  // finds the remaining domain.
  ClusterSnapshot empty = MustBuild(SliceCluster(12, 4));
  Placement a = MustPlace(empty, JobSetRequest("a", 2, 4, GpuPod(8)));
  ASSERT_TRUE(a.placed());
  std::vector<DomainHold> holds;
  std::vector<NodeRecord> nodes = SliceCluster(12, 4);
  for (const JobPlacement& job : a.jobs) {
    holds.push_back({kPool, job.domain, job.job_key, 0});
    for (const std::string& name : job.nodes) {
      for (NodeRecord& node : nodes) {
        if (node.name != name) continue;
        node.allocated.extended[kGpu] += 8;
        node.jobs.push_back({job.job_key, 0});
      }
    }
  }
  ClusterSnapshot after = MustBuild(nodes, holds);
  Placement b = MustPlace(after, JobSetRequest("b", 2, 1, GpuPod(1)));
  ASSERT_FALSE(b.placed());
  EXPECT_THAT(b.rejections[0].reason,
              HasSubstr("2 held by other jobs, 1 taken by other jobs of this "
                        "JobSet"));
  b = MustPlace(after, JobSetRequest("b", 1, 1, GpuPod(1)));
  ASSERT_TRUE(b.placed());
  EXPECT_EQ(b.jobs[0].domain, "pool-0002");
  // A Job without exclusive topology keeps out of held domains too.
  b = MustPlace(after, JobSetRequest("b", 1, 4, GpuPod(1), ""));
  ASSERT_TRUE(b.placed());
  EXPECT_THAT(b.jobs[0].nodes, ElementsAre("node-00008", "node-00008",
                                           "node-00008", "node-00008"));
}

TEST(PlaceTest, SpreadJobsOfTheRequestKeepOutOfItsExclusiveDomains) {
  ClusterSnapshot cluster = MustBuild(SliceCluster(8, 4));
  PlacementRequest request;
  request.jobs.push_back({"ns/driver", GpuPod(1), 1, "", {}});
  request.jobs.push_back({"ns/worker", GpuPod(8), 4, kPool, {}});
  Placement p = MustPlace(cluster, request);
  ASSERT_TRUE(p.placed()) << p.RejectionSummary();
  EXPECT_EQ(p.jobs[1].domain, "pool-0000");
  EXPECT_THAT(p.jobs[0].nodes, ElementsAre("node-00004"));
}

// ---------------------------------------------------------------------------
// Scores: best fit, fewest domains, sticky restart.

TEST(PlaceTest, BestFitTakesTheSmallestSliceThatHoldsTheJob) {
  std::vector<NodeRecord> nodes;
  auto add_slice = [&](const std::string& pool, int size) {
    for (int i = 0; i < size; ++i) {
      nodes.push_back(GpuNode(absl::StrCat(pool, "-", i), 8, {{kPool, pool}}));
    }
  };
  add_slice("a-big", 16);
  add_slice("b-small", 4);
  add_slice("c-medium", 8);
  ClusterSnapshot cluster = MustBuild(std::move(nodes));
  PlacementRequest request = JobSetRequest("w", 1, 4, GpuPod(8));
  request.jobs.push_back({"ns/big", GpuPod(8), 16, kPool, {}});
  request.jobs.push_back({"ns/six", GpuPod(8), 6, kPool, {}});
  Placement p = MustPlace(cluster, request);
  ASSERT_TRUE(p.placed()) << p.RejectionSummary();
  EXPECT_EQ(p.jobs[0].domain, "b-small");
  EXPECT_EQ(p.jobs[1].domain, "a-big");
  EXPECT_EQ(p.jobs[2].domain, "c-medium");
}

TEST(PlaceTest, SpreadJobTouchesFewestDomains) {
  // pool-0000 has 2 free nodes, pool-0001 4, pool-0002 3.
  std::vector<NodeRecord> nodes = SliceCluster(12, 4);
  nodes[0].allocated.extended[kGpu] = 8;
  nodes[1].allocated.extended[kGpu] = 8;
  nodes[8].allocated.extended[kGpu] = 8;
  ClusterSnapshot cluster = MustBuild(std::move(nodes));

  auto domains_of = [&](const Placement& p) {
    std::vector<std::string> pools;
    for (const std::string& h : p.jobs[0].nodes) {
      pools.push_back(cluster.node(*cluster.FindNode(h)).labels.at(kPool));
    }
    std::sort(pools.begin(), pools.end());
    pools.erase(std::unique(pools.begin(), pools.end()), pools.end());
    return pools;
  };
  // 3 pods: the tightest slice that holds them all.
  Placement p = MustPlace(cluster, OneJob(GpuPod(8), 3));
  EXPECT_THAT(domains_of(p), ElementsAre("pool-0002"));
  // 6 pods: the roomiest slice, then the next.
  p = MustPlace(cluster, OneJob(GpuPod(8), 6));
  EXPECT_THAT(domains_of(p), ElementsAre("pool-0001", "pool-0002"));
}

TEST(PlaceTest, StickyRestartReusesPreviousNodes) {
  ClusterSnapshot cluster = MustBuild(SliceCluster(8, 4));
  PlacementRequest request = OneJob(GpuPod(8), 3);
  request.jobs[0].previous_nodes = {"node-00006", "", "node-00002"};
  Placement p = MustPlace(cluster, request);
  ASSERT_TRUE(p.placed());
  EXPECT_EQ(p.jobs[0].nodes[0], "node-00006");
  EXPECT_EQ(p.jobs[0].nodes[2], "node-00002");
  // The same nodes by id, for callers that keep their own per-node state.
  ASSERT_EQ(p.jobs[0].node_ids.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(cluster.node(p.jobs[0].node_ids[i]).name, p.jobs[0].nodes[i]);
  }

  // A previous node that is now full, or gone, is replaced.
  request.jobs[0].previous_nodes = {"gone", "node-00005"};
  std::vector<NodeRecord> nodes = SliceCluster(8, 4);
  nodes[5].allocated.extended[kGpu] = 8;
  ClusterSnapshot full = MustBuild(std::move(nodes));
  p = MustPlace(full, request);
  ASSERT_TRUE(p.placed());
  EXPECT_NE(p.jobs[0].nodes[1], "node-00005");
}

TEST(PlaceTest, StickyRestartKeepsTheExclusiveDomain) {
  // The previous attempt ran in pool-0001, which its own Job still holds and
  // where its terminating pods still use capacity of one node.
  std::vector<NodeRecord> nodes = SliceCluster(12, 4);
  nodes[4].allocated.extended[kGpu] = 4;
  nodes[4].jobs.push_back({"ns/w-0", 0});
  ClusterSnapshot cluster =
      MustBuild(std::move(nodes), {{kPool, "pool-0001", "ns/w-0", 0}});
  PlacementRequest request = JobSetRequest("w", 2, 4, GpuPod(4));
  request.restart_attempt = 1;
  request.jobs[0].previous_nodes = {"node-00004", "node-00005", "node-00006",
                                    "node-00007"};
  Placement p = MustPlace(cluster, request);
  ASSERT_TRUE(p.placed()) << p.RejectionSummary();
  EXPECT_EQ(p.jobs[0].domain, "pool-0001");
  EXPECT_THAT(p.jobs[0].nodes, ElementsAre("node-00004", "node-00005",
                                           "node-00006", "node-00007"));
  EXPECT_EQ(p.jobs[1].domain, "pool-0000");
}

// ---------------------------------------------------------------------------
// Determinism and input errors.

TEST(PlaceTest, SameInputSameResultWhateverTheNodeOrder) {
  std::vector<NodeRecord> nodes = SliceCluster(64, 4);
  ClusterSnapshot forward = MustBuild(nodes);
  std::reverse(nodes.begin(), nodes.end());
  ClusterSnapshot backward = MustBuild(nodes);
  PlacementRequest request = JobSetRequest("w", 5, 3, GpuPod(2));
  request.jobs.push_back({"ns/spread", GpuPod(8), 7, "", {}});
  Placement a = MustPlace(forward, request);
  Placement b = MustPlace(backward, request);
  ASSERT_TRUE(a.placed());
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].nodes, b.jobs[i].nodes);
    EXPECT_EQ(a.jobs[i].domain, b.jobs[i].domain);
  }
}

TEST(PlaceTest, RejectsMalformedRequests) {
  ClusterSnapshot cluster = MustBuild(SliceCluster(4, 4));
  PlacementRequest request = JobSetRequest("w", 2, 1, GpuPod(1));
  request.jobs[1].job_key = "ns/w-0";
  EXPECT_THAT(Place(cluster, request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("jobs[1].job_key: Duplicate value")));
  request = JobSetRequest("w", 1, 1, nullptr);
  EXPECT_THAT(Place(cluster, request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("jobs[0].requirements")));
  request = JobSetRequest("w", 1, -1, GpuPod(1));
  EXPECT_THAT(Place(cluster, request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("jobs[0].pod_count")));
  request = JobSetRequest("w", 1, 1, GpuPod(1));
  request.jobs[0].previous_nodes = {"a", "b"};
  EXPECT_THAT(Place(cluster, request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("jobs[0].previous_nodes")));
  request.jobs[0].previous_nodes.clear();
  request.jobs[0].job_key.clear();
  EXPECT_THAT(Place(cluster, request),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("jobs[0].job_key: Required value")));
}

}  // namespace
}  // namespace jobset::scheduler::placement
