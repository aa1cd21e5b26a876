// The hub's notifications to its sink (the controller): their order, and
// that none is made with the hub's lock held.
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/agents/agent_hub.h"
#include "scheduler/agents/test_orders.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::scheduler::testing::HelloFrom;
using ::jobset::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::SizeIs;

// The status of the node's Ready condition ("True", "Unknown").
std::string Ready(const api::Node& node) {
  for (const api::NodeCondition& c : node.status().conditions()) {
    if (c.type() == "Ready") return c.status();
  }
  return "<none>";
}

// What the sink hears of a node is what the hub decided, in the order it
// decided it: a loss and the reconnect after it arrive as LoseNode, then
// SetNode (Ready), and the sink is never called with the hub's lock held (a
// sink may read the hub from its calls).
//
// ReadingSink records what it hears with the node's Ready condition as the hub
// shows it meanwhile. Thread-compatible.
class ReadingSink : public NodeSink {
 public:
  explicit ReadingSink(AgentHub** hub) : hub_(hub) {}
  void SetNode(NodeInfo node) override {
    heard.push_back("SetNode " + node.name + (node.ready ? " ready" : "") +
                    " (" + Ready(*(*hub_)->GetNode(node.name)) + ")");
  }
  void LoseNode(std::string name, std::string reason, std::string) override {
    heard.push_back("LoseNode " + name + " " + reason + " (" +
                    Ready(*(*hub_)->GetNode(name)) + ")");
  }
  void ReportPod(PodReport) override {}
  std::vector<std::string> heard;

 private:
  AgentHub** const hub_;
};

TEST(AgentHubNotifyTest, TheSinkHearsEachNodesChangesInOrderWithoutTheLock) {
  store::MemoryStore store;
  FakeClock clock;
  AgentHub* raw = nullptr;
  ReadingSink sink(&raw);
  // Created first: the sink comes later, as the controller does.
  absl::StatusOr<std::unique_ptr<AgentHub>> hub = AgentHub::Create(
      &store, AgentHub::Options{.node_lost_timeout = absl::Seconds(5),
                                .clock = &clock,
                                .liveness_thread = false});
  ASSERT_THAT(hub.status(), IsOk());
  raw = hub->get();
  (*hub)->Attach(&sink);
  auto s = (*hub)->Connect(HelloFrom("n1"), nullptr);
  ASSERT_THAT(s.status(), IsOk());
  clock.Advance(absl::Seconds(5));
  ASSERT_THAT((*hub)->CheckLiveness(), ElementsAre("n1"));
  auto again = (*hub)->Connect(HelloFrom("n1"), nullptr);
  ASSERT_THAT(again.status(), IsOk());
  ASSERT_THAT((*hub)->Drain("n1").status(), IsOk());
  EXPECT_THAT(
      sink.heard,
      ElementsAre("SetNode n1 ready (True)", "LoseNode n1 NodeLost (Unknown)",
                  "SetNode n1 ready (True)",
                  // The cordon, the eviction, the node still Ready.
                  "SetNode n1 ready (True)",
                  "LoseNode n1 EvictionByEvictionAPI (True)",
                  "SetNode n1 ready (True)"));
  (*hub)->CloseAll();
  // Closed: the sink hears nothing more.
  clock.Advance(absl::Seconds(5));
  EXPECT_THAT((*hub)->CheckLiveness(), ElementsAre("n1"));
  EXPECT_THAT(sink.heard, SizeIs(6));
}

// Many agents reconnecting while the liveness thread declares them lost:
// each node's last word to the sink is the hub's state (run under tsan).
TEST(AgentHubNotifyTest, ANodesLastNotificationMatchesTheHub) {
  // Keeps the last thing heard of each node. Thread-safe.
  class LastWordSink : public NodeSink {
   public:
    void SetNode(NodeInfo node) override {
      absl::MutexLock lock(&mu_);
      last_[node.name] = node.ready;
    }
    void ReportPod(PodReport) override {}
    void LoseNode(std::string name, std::string, std::string) override {
      absl::MutexLock lock(&mu_);
      last_[name] = false;
    }
    std::map<std::string, bool> last() {
      absl::MutexLock lock(&mu_);
      return last_;
    }

   private:
    absl::Mutex mu_;
    std::map<std::string, bool> last_ ABSL_GUARDED_BY(mu_);
  };
  store::MemoryStore store;
  FakeClock clock;
  LastWordSink sink;
  absl::StatusOr<std::unique_ptr<AgentHub>> hub = AgentHub::Create(
      &store, AgentHub::Options{.node_lost_timeout = absl::Seconds(1),
                                .clock = &clock,
                                .sink = &sink,
                                .liveness_thread = false});
  ASSERT_THAT(hub.status(), IsOk());
  std::vector<std::thread> agents;
  for (int n = 0; n < 4; ++n) {
    agents.emplace_back([&, n] {
      for (int i = 0; i < 50; ++i) {
        auto s = (*hub)->Connect(HelloFrom(absl::StrCat("n", n)), nullptr);
        ASSERT_THAT(s.status(), IsOk());
      }
    });
  }
  std::thread liveness([&] {
    for (int i = 0; i < 100; ++i) {
      clock.Advance(absl::Seconds(1));
      (*hub)->CheckLiveness();
    }
  });
  for (std::thread& t : agents) t.join();
  liveness.join();
  std::map<std::string, bool> last = sink.last();
  ASSERT_THAT(last, SizeIs(4));
  for (const auto& [name, ready] : last) {
    EXPECT_EQ(ready, Ready(*(*hub)->GetNode(name)) == "True") << name;
  }
}

}  // namespace
}  // namespace jobset::scheduler
