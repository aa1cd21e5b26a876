// NodeRestriction (issue 40, item 3) reproduced through the hub: a node
// registered with a taint says hello again without it, claiming labels only
// an admin may set and a fleet's worth of GPUs. What the controller (and so
// placement) is told must be the node's taint, none of those labels, and no
// such capacity. The admin's own edits are in agent_hub_test.cc.
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/agents/agent_hub.h"
#include "scheduler/agents/test_orders.h"
#include "scheduler/placement/filters.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::scheduler::testing::HelloFrom;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// What the hub tells the controller of nodes. Thread-compatible: no
// liveness thread runs.
class NodesSink : public NodeSink {
 public:
  void SetNode(NodeInfo node) override { nodes.push_back(std::move(node)); }
  void ReportPod(PodReport) override {}
  void LoseNode(std::string, std::string, std::string) override {}
  std::vector<NodeInfo> nodes;
};

class NodeRestrictionTest : public ::testing::Test {
 protected:
  NodeRestrictionTest() { Start(); }

  void Start() {
    hub_.reset();
    sink_.nodes.clear();
    absl::StatusOr<std::unique_ptr<AgentHub>> hub =
        AgentHub::Create(&store_, AgentHub::Options{.clock = &clock_,
                                                    .sink = &sink_,
                                                    .liveness_thread = false});
    ASSERT_THAT(hub.status(), IsOk());
    hub_ = *std::move(hub);
  }

  store::MemoryStore store_;
  FakeClock clock_;
  NodesSink sink_;
  std::unique_ptr<AgentHub> hub_;
};

api::Hello Registered() {
  api::Hello hello = HelloFrom("n1");
  api::Taint* t = hello.mutable_node()->add_taints();
  t->set_key("dedicated");
  t->set_value("team-b");
  t->set_effect("NoSchedule");
  return hello;
}

// Its second hello: the taint gone, the pool labels claimed, 1000 GPUs.
api::Hello Hostile() {
  api::Hello hello = HelloFrom("n1");
  auto& labels = *hello.mutable_node()->mutable_labels();
  labels["node-restriction.kubernetes.io/pool"] = "secure";
  labels["jobsetd.io/pool"] = "secure";
  (*hello.mutable_node()->mutable_capacity())["nvidia.com/gpu"] = "1000";
  return hello;
}

// Whether placement's filters let a pod selecting `selector`, with no
// tolerations, onto `node`.
bool Admits(const NodeInfo& node,
            const std::map<std::string, std::string, std::less<>>& selector) {
  return placement::MatchesNodeSelector(selector, node.labels) &&
         placement::FirstUntoleratedTaint(node.taints, {}) == nullptr;
}

TEST_F(NodeRestrictionTest, AHelloClaimingAFleetOfGpusIsRefusedNamingTheLimit) {
  ASSERT_THAT(hub_->Connect(Registered(), [] {}).status(), IsOk());
  EXPECT_THAT(hub_->Connect(Hostile(), [] {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("hello.node.capacity[nvidia.com/gpu]"),
                             HasSubstr("\"1000\""), HasSubstr("256"))));
  // The node as it was: four GPUs.
  ASSERT_THAT(sink_.nodes, SizeIs(1));
  EXPECT_EQ(sink_.nodes.back().allocatable.extended.at("nvidia.com/gpu"), 4);
}

TEST_F(NodeRestrictionTest, AHelloCannotDropItsTaintNorClaimRestrictedLabels) {
  ASSERT_THAT(hub_->Connect(Registered(), [] {}).status(), IsOk());
  api::Hello hostile = Hostile();
  (*hostile.mutable_node()->mutable_capacity())["nvidia.com/gpu"] = "4";
  ASSERT_THAT(hub_->Connect(hostile, [] {}).status(), IsOk());
  // Dropped and counted (restricted_label, node_taints), not refused.
  EXPECT_EQ(hub_->refused(), 2);

  ASSERT_THAT(sink_.nodes, SizeIs(2));
  const NodeInfo& told = sink_.nodes.back();
  EXPECT_FALSE(told.labels.contains("jobsetd.io/pool"));
  EXPECT_FALSE(told.labels.contains("node-restriction.kubernetes.io/pool"));
  EXPECT_EQ(told.labels.at("slice"), "a");  // Its own labels stay.
  ASSERT_THAT(told.taints, SizeIs(1));
  EXPECT_EQ(told.taints[0].key, "dedicated");
  // Placement: a pod only the admin's pool label admits stays away, and so
  // does one that does not tolerate the node's taint.
  EXPECT_FALSE(Admits(told, {{"jobsetd.io/pool", "secure"}}));
  EXPECT_FALSE(Admits(told, {}));

  // What operators see agrees, and survives a restart of jobsetd.
  Start();
  absl::StatusOr<api::Node> node = hub_->GetNode("n1");
  ASSERT_THAT(node.status(), IsOk());
  EXPECT_FALSE(node->metadata().labels().contains("jobsetd.io/pool"));
  ASSERT_THAT(node->spec().taints(), SizeIs(1));
  EXPECT_EQ(node->spec().taints(0).key(), "dedicated");
  ASSERT_THAT(sink_.nodes, SizeIs(1));
  EXPECT_FALSE(Admits(sink_.nodes.back(), {}));
}

}  // namespace
}  // namespace jobset::scheduler
