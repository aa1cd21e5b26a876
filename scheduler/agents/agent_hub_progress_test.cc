// Pod progress through the hub (our addition; docs/agent.md, "Progress
// heartbeats"): a report of progress alone reaches the progress table and
// not the controller; a bad progress is refused and counted alone; entries
// go with their pod or their node's stream.
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/agents/agent_hub.h"
#include "scheduler/agents/test_orders.h"
#include "scheduler/metrics.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::scheduler::testing::Drain;
using ::jobset::scheduler::testing::HelloFrom;
using ::jobset::scheduler::testing::OrderOn;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::SizeIs;

class CountingSink : public NodeSink {
 public:
  void SetNode(NodeInfo) override {}
  void ReportPod(PodReport report) override { reports.push_back(report); }
  void LoseNode(std::string, std::string, std::string) override {}
  std::vector<PodReport> reports;
};

api::AgentMessage ProgressOf(const std::string& uid, int64_t step) {
  api::AgentMessage msg;
  api::PodReport* r = msg.mutable_pod_update();
  r->set_pod_uid(uid);
  r->mutable_progress()->set_step(step);
  r->mutable_progress()->set_steps_per_second(2.5);
  r->mutable_progress()->mutable_since_last_advance()->set_seconds(1);
  return msg;
}

class AgentHubProgressTest : public ::testing::Test {
 protected:
  AgentHubProgressTest() {
    absl::StatusOr<std::unique_ptr<AgentHub>> hub = AgentHub::Create(
        &store_, AgentHub::Options{.node_lost_timeout = absl::Seconds(5),
                                   .restart_grace = absl::Seconds(5),
                                   .clock = &clock_,
                                   .metrics = &metrics_,
                                   .sink = &sink_,
                                   .liveness_thread = false});
    EXPECT_THAT(hub.status(), IsOk());
    hub_ = *std::move(hub);
    hub_->Run(OrderOn("n1", "a"));
    hub_->Run(OrderOn("n1", "b"));
    hub_->Run(OrderOn("n2", "c"));
  }

  std::shared_ptr<AgentHub::Session> Connect(const std::string& node) {
    auto s = hub_->Connect(HelloFrom(node), [] {});
    EXPECT_THAT(s.status(), IsOk());
    Drain(**s);
    return *s;
  }

  double Refused(const std::string& reason) {
    return metrics_.refused_reports.Add({{"reason", reason}}).Value();
  }

  store::MemoryStore store_;
  FakeClock clock_;
  SchedulerMetrics metrics_;
  CountingSink sink_;
  std::unique_ptr<AgentHub> hub_;
};

TEST_F(AgentHubProgressTest, ProgressAloneReachesTheTableNotTheController) {
  auto s = Connect("n1");
  const size_t before = sink_.reports.size();  // the Hello's
  ASSERT_THAT(hub_->OnMessage(s.get(), ProgressOf("a", 120)), IsOk());
  EXPECT_THAT(sink_.reports, SizeIs(before));
  std::optional<PodProgressEntry> a = hub_->progress().Get("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->node, "n1");
  EXPECT_EQ(a->step, 120);
  EXPECT_DOUBLE_EQ(a->steps_per_second, 2.5);
  EXPECT_EQ(a->received_at, clock_.Now());
  clock_.Advance(absl::Seconds(4));
  EXPECT_EQ(a->SinceLastAdvance(clock_.Now()), absl::Seconds(5));
  EXPECT_EQ(hub_->refused(), 0);
}

TEST_F(AgentHubProgressTest, BadProgressIsRefusedAloneAndCounted) {
  auto s = Connect("n1");
  const size_t before = sink_.reports.size();
  // A status with a negative step: the status counts, the progress not.
  api::AgentMessage msg = ProgressOf("a", -1);
  msg.mutable_pod_update()->mutable_status()->set_phase("Running");
  ASSERT_THAT(hub_->OnMessage(s.get(), msg), IsOk());
  ASSERT_THAT(sink_.reports, SizeIs(before + 1));
  EXPECT_EQ(sink_.reports.back().status.phase(), "Running");
  EXPECT_EQ(hub_->progress().Get("a"), std::nullopt);
  EXPECT_EQ(Refused("progress_step"), 1);
  // Each limit, on a report of progress alone.
  api::AgentMessage nan = ProgressOf("a", 5);
  nan.mutable_pod_update()->mutable_progress()->set_steps_per_second(
      std::nan(""));
  api::AgentMessage checkpoint = ProgressOf("a", 5);
  checkpoint.mutable_pod_update()->mutable_progress()->set_checkpoint_step(6);
  api::AgentMessage age = ProgressOf("a", 5);
  age.mutable_pod_update()
      ->mutable_progress()
      ->mutable_since_last_advance()
      ->set_seconds(-1);
  for (const api::AgentMessage* m : {&nan, &checkpoint, &age}) {
    ASSERT_THAT(hub_->OnMessage(s.get(), *m), IsOk());
  }
  EXPECT_EQ(Refused("progress_rate"), 1);
  EXPECT_EQ(Refused("progress_checkpoint"), 1);
  EXPECT_EQ(Refused("progress_age"), 1);
  EXPECT_EQ(hub_->progress().Get("a"), std::nullopt);
  EXPECT_THAT(sink_.reports, SizeIs(before + 1));
  // The stream is still up.
  ASSERT_THAT(hub_->OnMessage(s.get(), ProgressOf("a", 5)), IsOk());
  EXPECT_EQ(hub_->progress().Get("a")->step, 5);
}

TEST_F(AgentHubProgressTest, OnlyTheNodesOwnPodsAreRecorded) {
  auto s = Connect("n1");
  // A pod nobody has: fenced (and released), not recorded.
  ASSERT_THAT(hub_->OnMessage(s.get(), ProgressOf("gone", 9)), IsOk());
  EXPECT_EQ(hub_->progress().Get("gone"), std::nullopt);
  EXPECT_EQ(hub_->fenced_reports(), 1);
  // Another node's pod: refused, as any report of it, ending the stream.
  EXPECT_THAT(hub_->OnMessage(s.get(), ProgressOf("c", 9)),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_EQ(hub_->progress().Get("c"), std::nullopt);
}

TEST_F(AgentHubProgressTest, EntriesGoWithTheirPodOrTheirNode) {
  auto s1 = Connect("n1");
  auto s2 = Connect("n2");
  ASSERT_THAT(hub_->OnMessage(s1.get(), ProgressOf("a", 1)), IsOk());
  ASSERT_THAT(hub_->OnMessage(s1.get(), ProgressOf("b", 1)), IsOk());
  ASSERT_THAT(hub_->OnMessage(s2.get(), ProgressOf("c", 1)), IsOk());
  EXPECT_EQ(hub_->progress().size(), 3u);
  hub_->Release("n1", "a");  // released: gone
  EXPECT_EQ(hub_->progress().Get("a"), std::nullopt);
  hub_->Disconnect(s1.get());  // its stream ended: its pods' go
  EXPECT_EQ(hub_->progress().Get("b"), std::nullopt);
  EXPECT_TRUE(hub_->progress().Get("c").has_value());
  // n2 falls silent past the timeout: lost, and its pods' go.
  clock_.Advance(absl::Seconds(6));
  EXPECT_THAT(hub_->CheckLiveness(), ::testing::Contains("n2"));
  EXPECT_EQ(hub_->progress().size(), 0u);
}

}  // namespace
}  // namespace jobset::scheduler
