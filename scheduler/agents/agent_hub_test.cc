#include "scheduler/agents/agent_hub.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/agents/test_orders.h"
#include "scheduler/controller/agent_fleet.h"
#include "scheduler/metrics.h"
#include "scheduler/records/records.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::scheduler::testing::Drain;
using ::jobset::scheduler::testing::Env;
using ::jobset::scheduler::testing::HelloFrom;
using ::jobset::scheduler::testing::HostsOf;
using ::jobset::scheduler::testing::MakeJob;
using ::jobset::scheduler::testing::OrderOn;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// Records what the hub tells the controller. Thread-compatible: these tests
// run no liveness thread, so the hub calls it from the test's thread only.
class RecordingSink : public NodeSink {
 public:
  void SetNode(NodeInfo node) override { nodes.push_back(std::move(node)); }
  void ReportPod(PodReport report) override {
    reports.push_back(std::move(report));
  }
  void LoseNode(std::string name, std::string reason,
                std::string message) override {
    lost.push_back(name + ":" + reason);
    last_message = message;
  }
  std::vector<NodeInfo> nodes;
  std::vector<PodReport> reports;
  std::vector<std::string> lost;
  std::string last_message;
};

// The status of the node's Ready condition ("True", "Unknown").
std::string Ready(const api::Node& node) {
  for (const api::NodeCondition& c : node.status().conditions()) {
    if (c.type() == "Ready") return c.status();
  }
  return "<none>";
}

std::string Annotation(const api::Node& node, const std::string& key) {
  auto it = node.metadata().annotations().find(key);
  return it == node.metadata().annotations().end() ? "<unset>" : it->second;
}

class AgentHubTest : public ::testing::Test {
 protected:
  AgentHubTest() { Start(); }

  void Start() {
    hub_.reset();
    sink_ = RecordingSink();
    // No liveness thread: the tests call CheckLiveness.
    absl::StatusOr<std::unique_ptr<AgentHub>> hub = AgentHub::Create(
        &store_, AgentHub::Options{.node_lost_timeout = absl::Seconds(5),
                                   .heartbeat_interval = absl::Seconds(1),
                                   .restart_grace = absl::Seconds(10),
                                   .clock = &clock_,
                                   .leader_epoch = 42,
                                   .sink = &sink_,
                                   .liveness_thread = false});
    ASSERT_THAT(hub.status(), IsOk());
    hub_ = *std::move(hub);
  }

  std::shared_ptr<AgentHub::Session> Connect(const api::Hello& hello,
                                             int* cancels = nullptr) {
    auto s = hub_->Connect(hello, [cancels] {
      if (cancels != nullptr) ++*cancels;
    });
    EXPECT_THAT(s.status(), IsOk());
    return s.ok() ? *s : nullptr;
  }

  store::MemoryStore store_;
  FakeClock clock_;
  RecordingSink sink_;
  std::unique_ptr<AgentHub> hub_;
};

TEST_F(AgentHubTest, WelcomesWithTheDesiredSetAndForwardsChanges) {
  hub_->Run(OrderOn("n1", "a", {{"127.0.0.2", {"train-0-0"}}}));
  hub_->Run(OrderOn("n2", "b"));
  auto s = Connect(HelloFrom("n1"));
  ASSERT_THAT(sink_.nodes, SizeIs(1));
  EXPECT_EQ(sink_.nodes[0].name, "n1");
  EXPECT_EQ(sink_.nodes[0].allocatable.cpu_millis, 8000);
  EXPECT_EQ(sink_.nodes[0].allocatable.memory_bytes, int64_t{32} << 30);
  EXPECT_EQ(sink_.nodes[0].allocatable.extended.at("nvidia.com/gpu"), 4);

  std::vector<api::SchedulerMessage> got = Drain(*s);
  ASSERT_THAT(got, SizeIs(1));
  ASSERT_TRUE(got[0].has_welcome());
  ASSERT_THAT(got[0].welcome().pods(), SizeIs(1));  // Only n1's.
  // The full pod, built from its Job and record, environment resolved.
  const api::PodAssignment& welcomed = got[0].welcome().pods(0);
  EXPECT_EQ(welcomed.pod().metadata().uid(), "a");
  EXPECT_EQ(welcomed.pod().metadata().name(), "pod-a");
  EXPECT_EQ(
      welcomed.pod().metadata().labels().at("batch.kubernetes.io/job-name"),
      "train-workers-0");
  EXPECT_EQ(welcomed.pod().spec().node_name(), "n1");
  EXPECT_EQ(welcomed.pod().spec().hostname(), "train-workers-0-0");
  EXPECT_EQ(Env(welcomed.pod(), "NODE"), "n1");
  EXPECT_FALSE(welcomed.stop());
  const api::HostTable welcomed_hosts = HostsOf(welcomed);
  ASSERT_THAT(welcomed_hosts.hosts(), SizeIs(1));
  EXPECT_EQ(welcomed_hosts.hosts(0).address(), "127.0.0.2");
  EXPECT_EQ(welcomed_hosts.hosts(0).names(0), "train-0-0");
  EXPECT_EQ(got[0].welcome().heartbeat_interval_ms(), 1000);
  EXPECT_EQ(got[0].welcome().leader_epoch(), 42);

  hub_->Run(OrderOn("n1", "c", {{"127.0.0.3", {"train-0-1"}}}));
  hub_->Stop("n1", "a");
  hub_->Release("n1", "a");
  got = Drain(*s);
  ASSERT_THAT(got, SizeIs(3));
  EXPECT_EQ(got[0].run().pod().metadata().uid(), "c");
  EXPECT_EQ(Env(got[0].run().pod(), "NODE"), "n1");
  const api::HostTable hosts = HostsOf(got[0].run());
  ASSERT_THAT(hosts.hosts(), SizeIs(1));
  EXPECT_EQ(hosts.hosts(0).names(0), "train-0-1");
  EXPECT_FALSE(got[0].run().stop());
  EXPECT_EQ(got[1].stop().pod_uid(), "a");
  EXPECT_EQ(got[2].release().pod_uid(), "a");

  absl::StatusOr<api::Node> node = hub_->GetNode("n1");
  ASSERT_THAT(node.status(), IsOk());
  EXPECT_EQ(Ready(*node), "True");
  EXPECT_EQ(Annotation(*node, "jobsetd.x-k8s.io/connected"), "true");
  EXPECT_EQ(Annotation(*node, "jobsetd.x-k8s.io/pods"), "1");
  EXPECT_EQ(Annotation(*node, "jobsetd.x-k8s.io/allocated"), "cpu=500m");
}

TEST_F(AgentHubTest, FencesReportsAboutPodsNotAssignedToTheNode) {
  hub_->Run(OrderOn("n1", "mine"));
  hub_->Run(OrderOn("n2", "theirs"));
  api::Hello hello = HelloFrom("n1");
  // What the agent knew when it connected: its pod, and an old one.
  hello.add_pods()->set_pod_uid("mine");
  hello.mutable_pods(0)->mutable_status()->set_phase("Succeeded");
  hello.add_pods()->set_pod_uid("old");
  auto s = Connect(hello);
  ASSERT_THAT(sink_.reports, SizeIs(1));
  EXPECT_EQ(sink_.reports[0].pod_uid, "mine");
  EXPECT_EQ(sink_.reports[0].node, "n1");
  EXPECT_EQ(sink_.reports[0].status.phase(), "Succeeded");
  EXPECT_EQ(hub_->fenced_reports(), 1);
  Drain(*s);

  // n1 reporting n2's pod is refused outright (a node speaks only for
  // itself: the stream ends), and changes nothing.
  api::AgentMessage update;
  update.mutable_pod_update()->set_pod_uid("theirs");
  update.mutable_pod_update()->mutable_status()->set_phase("Failed");
  EXPECT_THAT(hub_->OnMessage(s.get(), update),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("node \"n1\" may only report pods bound")));
  EXPECT_THAT(sink_.reports, SizeIs(1));
  // A pod no node holds any more (released) is only fenced.
  update.mutable_pod_update()->set_pod_uid("released-long-ago");
  ASSERT_THAT(hub_->OnMessage(s.get(), update), IsOk());
  EXPECT_EQ(hub_->fenced_reports(), 2);
  std::vector<api::SchedulerMessage> got = Drain(*s);
  ASSERT_THAT(got, SizeIs(1));
  EXPECT_EQ(got[0].release().pod_uid(), "released-long-ago");

  // Its own pod's report goes through, duplicates included (the controller
  // applies the first terminal one).
  update.mutable_pod_update()->set_pod_uid("mine");
  ASSERT_THAT(hub_->OnMessage(s.get(), update), IsOk());
  ASSERT_THAT(hub_->OnMessage(s.get(), update), IsOk());
  EXPECT_THAT(sink_.reports, SizeIs(3));
}

TEST_F(AgentHubTest, AHelloClaimingAnotherNodesPodIsRefused) {
  hub_->Run(OrderOn("n2", "theirs"));
  api::Hello hello = HelloFrom("n1");
  hello.add_pods()->set_pod_uid("theirs");
  hello.mutable_pods(0)->mutable_status()->set_phase("Failed");
  EXPECT_THAT(hub_->Connect(hello, [] {}).status(),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(sink_.reports, IsEmpty());
  // Once released from n2, the uid is nobody's: only fenced.
  hub_->Release("n2", "theirs");
  EXPECT_THAT(hub_->Connect(hello, [] {}).status(), IsOk());
}

TEST_F(AgentHubTest, AStoppedPodIsWelcomedWithItsStopMarkUntilReleased) {
  hub_->Run(OrderOn("n1", "a"));
  hub_->Run(OrderOn("n1", "b"));
  hub_->Stop("n1", "a");
  hub_->Stop("n1", "unknown");  // Not in the set: nothing to tell.
  auto s = Connect(HelloFrom("n1"));
  std::vector<api::SchedulerMessage> got = Drain(*s);
  ASSERT_THAT(got, SizeIs(1));
  ASSERT_THAT(got[0].welcome().pods(), SizeIs(2));
  EXPECT_EQ(got[0].welcome().pods(0).pod().metadata().uid(), "a");
  EXPECT_TRUE(got[0].welcome().pods(0).stop());
  EXPECT_EQ(got[0].welcome().pods(1).pod().metadata().uid(), "b");
  EXPECT_FALSE(got[0].welcome().pods(1).stop());
  // A stopped pod no longer counts against the node.
  EXPECT_EQ(Annotation(*hub_->GetNode("n1"), "jobsetd.x-k8s.io/pods"), "1");

  hub_->Release("n1", "a");
  auto again = Connect(HelloFrom("n1"));
  got = Drain(*again);
  ASSERT_THAT(got, SizeIs(1));
  ASSERT_THAT(got[0].welcome().pods(), SizeIs(1));
  EXPECT_EQ(got[0].welcome().pods(0).pod().metadata().uid(), "b");
}

TEST_F(AgentHubTest, TheDesiredSetSharesJobsAndHostTablesUntilReleased) {
  std::shared_ptr<const api::Job> job = MakeJob();
  auto hosts = std::make_shared<const SharedHostTable>(
      std::vector<HostEntry>{{"127.0.0.2", {"train-workers-0-0"}},
                             {"127.0.0.3", {"train-workers-0-1"}}});
  for (int i = 0; i < 2; ++i) {
    Assignment order = OrderOn("n1", absl::StrCat("p", i), {}, job, i);
    order.hosts = hosts;
    hub_->Run(order);
  }
  // Two pods, one Job and one host table: no copy per pod.
  EXPECT_EQ(job.use_count(), 3);
  EXPECT_EQ(hosts.use_count(), 3);

  auto s = Connect(HelloFrom("n1"));
  std::vector<api::SchedulerMessage> got = Drain(*s);
  ASSERT_THAT(got, SizeIs(1));
  ASSERT_THAT(got[0].welcome().pods(), SizeIs(2));
  for (int i = 0; i < 2; ++i) {
    const api::PodAssignment& a = got[0].welcome().pods(i);
    EXPECT_EQ(a.pod().spec().hostname(), absl::StrCat("train-workers-0-", i));
    EXPECT_THAT(HostsOf(a).hosts(), SizeIs(2));
    // One encoding for the attempt: every pod carries the same bytes.
    EXPECT_EQ(a.hosts_table(), hosts->Encoded());
  }

  hub_->Release("n1", "p0");
  hub_->Release("n1", "p1");
  EXPECT_EQ(job.use_count(), 1);
  EXPECT_EQ(hosts.use_count(), 1);
}

TEST_F(AgentHubTest, MessagesKeepTheirOrderWhileAWriterPops) {
  auto s = Connect(HelloFrom("n1"));
  Drain(*s);
  constexpr int kPods = 200;
  std::vector<api::SchedulerMessage> got;
  // The stream's writer, as AgentServiceImpl runs it.
  std::thread writer([&] {
    api::SchedulerMessage m;
    while (got.size() < 2 * kPods && s->Pop(&m, absl::Seconds(5)))
      got.push_back(m);
  });
  for (int i = 0; i < kPods; ++i) {
    hub_->Run(OrderOn("n1", absl::StrCat("p", i)));
    hub_->Stop("n1", absl::StrCat("p", i));
  }
  writer.join();
  ASSERT_THAT(got, SizeIs(2 * kPods));
  for (int i = 0; i < kPods; ++i) {
    EXPECT_EQ(got[2 * i].run().pod().metadata().uid(), absl::StrCat("p", i));
    EXPECT_EQ(got[2 * i + 1].stop().pod_uid(), absl::StrCat("p", i));
  }
}

TEST_F(AgentHubTest, HeartbeatsAreAcknowledged) {
  auto s = Connect(HelloFrom("n1"));
  Drain(*s);
  api::AgentMessage hb;
  hb.mutable_heartbeat()->set_seq(42);
  ASSERT_THAT(hub_->OnMessage(s.get(), hb), IsOk());
  std::vector<api::SchedulerMessage> got = Drain(*s);
  ASSERT_THAT(got, SizeIs(1));
  EXPECT_EQ(got[0].heartbeat_ack().seq(), 42);
  api::AgentMessage hello;
  *hello.mutable_hello() = HelloFrom("n1");
  EXPECT_THAT(hub_->OnMessage(s.get(), hello),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(AgentHubTest, ASilentNodeIsLostAfterTheTimeoutEvenWithinTheGrace) {
  // The grace is for nodes known before this jobsetd started: a node that
  // connected to it is under the normal timeout at once.
  int cancels = 0;
  auto s = Connect(HelloFrom("n1"), &cancels);
  Drain(*s);
  clock_.Advance(absl::Seconds(4));  // Silent 4s: within the timeout.
  EXPECT_THAT(hub_->CheckLiveness(), IsEmpty());
  clock_.Advance(absl::Seconds(1));  // 5s, still within the 10s grace.
  EXPECT_THAT(hub_->CheckLiveness(), ElementsAre("n1"));
  EXPECT_THAT(sink_.lost, ElementsAre("n1:NodeLost"));
  EXPECT_THAT(sink_.last_message, HasSubstr("no heartbeat for 5s"));
  EXPECT_EQ(cancels, 1);
  EXPECT_EQ(Ready(*hub_->GetNode("n1")), "Unknown");
  // Lost once, not again.
  EXPECT_THAT(hub_->CheckLiveness(), IsEmpty());
  // The zombie's stream is fenced.
  api::AgentMessage hb;
  hb.mutable_heartbeat()->set_seq(1);
  EXPECT_THAT(hub_->OnMessage(s.get(), hb),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  // It says hello again and is Ready.
  auto again = Connect(HelloFrom("n1"));
  EXPECT_EQ(Ready(*hub_->GetNode("n1")), "True");
  EXPECT_TRUE(sink_.nodes.back().ready);
}

TEST_F(AgentHubTest, ANodeKnownBeforeARestartHasTheGraceToReconnect) {
  auto s = Connect(HelloFrom("n1"));
  auto other = Connect(HelloFrom("n2"));
  Start();  // jobsetd restarts (or another replica leads): both are stored.
  auto back = Connect(HelloFrom("n2"));  // n2 reconnects at once.
  Drain(*back);
  clock_.Advance(absl::Seconds(9));  // n1 silent 9s, within the grace.
  // n2 reconnected to this jobsetd and then went silent: the normal timeout.
  EXPECT_THAT(hub_->CheckLiveness(), ElementsAre("n2"));
  clock_.Advance(absl::Seconds(2));  // The grace is over: n1 is lost.
  EXPECT_THAT(hub_->CheckLiveness(), ElementsAre("n1"));
  EXPECT_THAT(sink_.last_message, HasSubstr("no heartbeat for 11s"));
  EXPECT_THAT(hub_->CheckLiveness(), IsEmpty());
}

TEST_F(AgentHubTest, AHeartbeatingNodeIsNeverLost) {
  auto s = Connect(HelloFrom("n1"));
  api::AgentMessage hb;
  for (int i = 0; i < 30; ++i) {
    clock_.Advance(absl::Seconds(1));
    hb.mutable_heartbeat()->set_seq(i);
    ASSERT_THAT(hub_->OnMessage(s.get(), hb), IsOk());
    EXPECT_THAT(hub_->CheckLiveness(), IsEmpty());
  }
  EXPECT_THAT(sink_.lost, IsEmpty());
}

TEST_F(AgentHubTest, ASecondConnectionReplacesTheFirst) {
  int cancels = 0;
  auto first = Connect(HelloFrom("n1"), &cancels);
  auto second = Connect(HelloFrom("n1"));
  EXPECT_EQ(cancels, 1);
  api::SchedulerMessage m;
  Drain(*first);
  EXPECT_FALSE(first->Pop(&m, absl::ZeroDuration()));
  api::AgentMessage hb;
  hb.mutable_heartbeat()->set_seq(1);
  EXPECT_THAT(hub_->OnMessage(first.get(), hb),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(hub_->OnMessage(second.get(), hb), IsOk());
}

// Issue 19: what an agent reports is bounded before it reaches the
// controller: messages cut to 4 KiB, anything else refused and counted, and
// the stream stays up.
TEST_F(AgentHubTest, CutsOrRefusesReportsAndKeepsTheStream) {
  SchedulerMetrics metrics;
  hub_.reset();
  absl::StatusOr<std::unique_ptr<AgentHub>> hub =
      AgentHub::Create(&store_, AgentHub::Options{.clock = &clock_,
                                                  .metrics = &metrics,
                                                  .sink = &sink_,
                                                  .liveness_thread = false});
  ASSERT_THAT(hub.status(), IsOk());
  hub_ = *std::move(hub);
  hub_->Run(OrderOn("n1", "mine"));
  auto s = Connect(HelloFrom("n1"));
  Drain(*s);

  api::AgentMessage huge;
  huge.mutable_pod_update()->set_pod_uid("mine");
  huge.mutable_pod_update()->mutable_status()->set_phase("Failed");
  huge.mutable_pod_update()->mutable_status()->set_message(
      std::string(3'500'000, 'x'));
  EXPECT_THAT(hub_->OnMessage(s.get(), huge), IsOk());
  api::AgentMessage stranger;
  stranger.mutable_pod_update()->set_pod_uid("mine");
  stranger.mutable_pod_update()
      ->mutable_status()
      ->add_container_statuses()
      ->set_name("not-in-the-spec");
  EXPECT_THAT(hub_->OnMessage(s.get(), stranger), IsOk());
  EXPECT_THAT(sink_.reports, IsEmpty());
  EXPECT_EQ(hub_->refused(), 2);
  EXPECT_EQ(metrics.refused_reports.Add({{"reason", "too_large"}}).Value(), 1);
  EXPECT_EQ(
      metrics.refused_reports.Add({{"reason", "unknown_container"}}).Value(),
      1);

  // The stream is still up, and a report with a long message gets through
  // cut, as Kubernetes cuts a termination message.
  api::AgentMessage hb;
  hb.mutable_heartbeat()->set_seq(7);
  EXPECT_THAT(hub_->OnMessage(s.get(), hb), IsOk());
  api::AgentMessage fine;
  fine.mutable_pod_update()->set_pod_uid("mine");
  fine.mutable_pod_update()->mutable_status()->set_phase("Failed");
  fine.mutable_pod_update()->mutable_status()->set_message(
      std::string(100'000, 'y'));
  api::ContainerStatus* c =
      fine.mutable_pod_update()->mutable_status()->add_container_statuses();
  c->set_name("main");
  c->set_message(std::string(10'000, 'z'));
  EXPECT_THAT(hub_->OnMessage(s.get(), fine), IsOk());
  ASSERT_THAT(sink_.reports, SizeIs(1));
  EXPECT_EQ(sink_.reports[0].status.message().size(), 4096u);
  EXPECT_EQ(sink_.reports[0].status.container_statuses(0).message().size(),
            4096u);
  // A report for a pod the node does not hold is refused (fenced) too.
  api::AgentMessage other;
  other.mutable_pod_update()->set_pod_uid("theirs");
  EXPECT_THAT(hub_->OnMessage(s.get(), other), IsOk());
  EXPECT_EQ(hub_->fenced_reports(), 1);
  EXPECT_THAT(sink_.reports, SizeIs(1));
}

TEST_F(AgentHubTest, RefusesAnAddressThatIsNotAnIpLiteral) {
  api::Hello hello = HelloFrom("n1");
  hello.mutable_node()->set_address("127.0.0.2\n6.6.6.6 evil.example");
  EXPECT_THAT(hub_->Connect(hello, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hello.node.address")));
  hello = HelloFrom("n1");
  (*hello.mutable_node()->mutable_labels())["not a label"] = "x";
  EXPECT_THAT(hub_->Connect(hello, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hello.node.labels[not a label]")));
  EXPECT_EQ(hub_->refused(), 2);
  EXPECT_THAT(hub_->ListNodes(), IsEmpty());
}

TEST_F(AgentHubTest, SkipsAStoredNodeThatDoesNotDecode) {
  auto s = Connect(HelloFrom("n1"));
  ASSERT_THAT(store_
                  .Commit(store::Batch().Put(store::keys::NodeKey("garbage"),
                                             "\xff\xff\xff"))
                  .status(),
              IsOk());
  s.reset();
  Start();
  ASSERT_THAT(sink_.nodes, SizeIs(1));
  EXPECT_EQ(sink_.nodes[0].name, "n1");
}

TEST_F(AgentHubTest, RejectsABadRegistrationNamingTheField) {
  api::Hello hello = HelloFrom("Bad_Name");
  EXPECT_THAT(hub_->Connect(hello, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hello.node.name")));
  hello = HelloFrom("n1");
  (*hello.mutable_node()->mutable_capacity())["memory"] = "lots";
  EXPECT_THAT(hub_->Connect(hello, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hello.node.capacity[memory]")));
  hello = HelloFrom("n1");
  api::Taint* t = hello.mutable_node()->add_taints();
  t->set_key("k");
  t->set_effect("Sometimes");
  EXPECT_THAT(hub_->Connect(hello, nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hello.node.taints[0].effect")));
  EXPECT_THAT(hub_->ListNodes(), IsEmpty());
}

TEST_F(AgentHubTest, NodesAndCordonsSurviveARestart) {
  auto s = Connect(HelloFrom("n1"));
  ASSERT_THAT(hub_->SetCordoned("n1", true).status(), IsOk());
  EXPECT_TRUE(sink_.nodes.back().cordoned);
  s.reset();
  Start();  // jobsetd restarts: n1 is known, Ready within the grace.
  ASSERT_THAT(sink_.nodes, SizeIs(1));
  EXPECT_EQ(sink_.nodes[0].name, "n1");
  EXPECT_TRUE(sink_.nodes[0].cordoned);
  EXPECT_TRUE(sink_.nodes[0].ready);
  EXPECT_EQ(Ready(*hub_->GetNode("n1")), "True");
  EXPECT_EQ(Annotation(*hub_->GetNode("n1"), "jobsetd.x-k8s.io/connected"),
            "false");
  // It never comes back: lost once the grace has passed.
  clock_.Advance(absl::Seconds(10));
  EXPECT_THAT(hub_->CheckLiveness(), ElementsAre("n1"));
  EXPECT_THAT(hub_->SetCordoned("nope", true).status(),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(AgentHubTest, DrainCordonsAndFailsThePods) {
  auto s = Connect(HelloFrom("n1"));
  absl::StatusOr<api::Node> node = hub_->Drain("n1");
  ASSERT_THAT(node.status(), IsOk());
  EXPECT_TRUE(node->spec().unschedulable());
  EXPECT_THAT(sink_.lost, ElementsAre("n1:EvictionByEvictionAPI"));
  EXPECT_TRUE(sink_.nodes.back().cordoned);
  EXPECT_TRUE(sink_.nodes.back().ready);
}

TEST_F(AgentHubTest, ReadsLogsFromTheNodeAskedOnly) {
  EXPECT_THAT(
      hub_->ReadLog("n1", "a", "main", 0, 100, absl::Milliseconds(10)).status(),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("not connected")));
  auto n1 = Connect(HelloFrom("n1"));
  auto n2 = Connect(HelloFrom("n2"));
  Drain(*n1);
  Drain(*n2);
  // The agent answers from another thread, as its stream would.
  std::thread agent([&] {
    api::SchedulerMessage m;
    ASSERT_TRUE(n1->Pop(&m, absl::Seconds(5)));
    ASSERT_TRUE(m.has_log_request());
    EXPECT_EQ(m.log_request().pod_uid(), "a");
    EXPECT_EQ(m.log_request().offset(), -100);
    api::AgentMessage answer;
    answer.mutable_log_chunk()->set_request_id(m.log_request().request_id());
    // Another node cannot answer for n1: refused, its stream ended.
    answer.mutable_log_chunk()->set_data("forged");
    EXPECT_THAT(hub_->OnMessage(n2.get(), answer),
                StatusIs(absl::StatusCode::kPermissionDenied,
                         HasSubstr("may only answer log requests sent to it")));
    answer.mutable_log_chunk()->set_data("hello\n");
    answer.mutable_log_chunk()->set_next_offset(6);
    ASSERT_THAT(hub_->OnMessage(n1.get(), answer), IsOk());
  });
  absl::StatusOr<api::LogChunk> chunk =
      hub_->ReadLog("n1", "a", "main", -100, 100, absl::Seconds(5));
  agent.join();
  ASSERT_THAT(chunk.status(), IsOk());
  EXPECT_EQ(chunk->data(), "hello\n");
  EXPECT_EQ(chunk->next_offset(), 6);
  // Nobody answers: UNAVAILABLE after the timeout.
  EXPECT_THAT(
      hub_->ReadLog("n2", "b", "main", 0, 100, absl::Milliseconds(50)).status(),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("answer")));
}

// The Ready condition of `node` (its first condition).
const api::NodeCondition& ReadyCondition(const api::Node& node) {
  return node.status().conditions(0);
}

TEST_F(AgentHubTest, NodesAreKubernetesNodesWithTheirTimes) {
  const int64_t start = absl::ToUnixSeconds(clock_.Now());
  auto s = Connect(HelloFrom("n1"));
  clock_.Advance(absl::Seconds(3));
  api::AgentMessage hb;
  hb.mutable_heartbeat()->set_seq(1);
  ASSERT_THAT(hub_->OnMessage(s.get(), hb), IsOk());
  absl::StatusOr<api::Node> node = hub_->GetNode("n1");
  ASSERT_THAT(node.status(), IsOk());
  EXPECT_EQ(node->api_version(), "v1");
  EXPECT_EQ(node->kind(), "Node");
  EXPECT_EQ(node->metadata().name(), "n1");
  EXPECT_EQ(node->metadata().labels().at("kubernetes.io/hostname"), "n1");
  EXPECT_EQ(node->metadata().creation_timestamp().seconds(), start);
  EXPECT_EQ(node->status().capacity().at("cpu"), "8");
  ASSERT_THAT(node->status().conditions(), SizeIs(1));
  EXPECT_EQ(ReadyCondition(*node).status(), "True");
  EXPECT_EQ(ReadyCondition(*node).last_heartbeat_time().seconds(), start + 3);
  EXPECT_EQ(ReadyCondition(*node).last_transition_time().seconds(), start);

  // Lost: Unknown since then, the last heartbeat kept.
  clock_.Advance(absl::Seconds(10));
  ASSERT_THAT(hub_->CheckLiveness(), ElementsAre("n1"));
  node = hub_->GetNode("n1");
  EXPECT_EQ(ReadyCondition(*node).status(), "Unknown");
  EXPECT_EQ(ReadyCondition(*node).reason(), "NodeStatusUnknown");
  EXPECT_EQ(ReadyCondition(*node).last_heartbeat_time().seconds(), start + 3);
  EXPECT_EQ(ReadyCondition(*node).last_transition_time().seconds(), start + 13);

  // Back: Ready again from its new hello; created when first registered.
  clock_.Advance(absl::Seconds(1));
  auto again = Connect(HelloFrom("n1"));
  node = hub_->GetNode("n1");
  EXPECT_EQ(ReadyCondition(*node).status(), "True");
  EXPECT_EQ(ReadyCondition(*node).last_transition_time().seconds(), start + 14);
  EXPECT_EQ(node->metadata().creation_timestamp().seconds(), start);
}

TEST_F(AgentHubTest, TheCreationTimeSurvivesARestart) {
  const int64_t start = absl::ToUnixSeconds(clock_.Now());
  auto s = Connect(HelloFrom("n1"));
  s.reset();
  clock_.Advance(absl::Seconds(60));
  Start();
  absl::StatusOr<api::Node> node = hub_->GetNode("n1");
  ASSERT_THAT(node.status(), IsOk());
  EXPECT_EQ(node->metadata().creation_timestamp().seconds(), start);
  // Known from the store, not heard from yet: Ready since jobsetd started,
  // no heartbeat.
  EXPECT_EQ(ReadyCondition(*node).status(), "True");
  EXPECT_FALSE(ReadyCondition(*node).has_last_heartbeat_time());
  EXPECT_EQ(ReadyCondition(*node).last_transition_time().seconds(), start + 60);
}

TEST_F(AgentHubTest, LoadsARecordWrittenBeforeCreationTimes) {
  // What earlier versions stored: the registration and the cordon only.
  api::NodeRecord old;
  *old.mutable_registration() = HelloFrom("n1").node();
  old.set_cordoned(true);
  ASSERT_THAT(store_
                  .Commit(store::Batch().Put(store::keys::NodeKey("n1"),
                                             old.SerializeAsString()))
                  .status(),
              IsOk());
  Start();
  absl::StatusOr<api::Node> node = hub_->GetNode("n1");
  ASSERT_THAT(node.status(), IsOk());
  EXPECT_TRUE(node->spec().unschedulable());
  EXPECT_FALSE(node->metadata().has_creation_timestamp());
  // Its next hello dates it, and the date is stored.
  const int64_t now = absl::ToUnixSeconds(clock_.Now());
  auto s = Connect(HelloFrom("n1"));
  s.reset();
  Start();
  node = hub_->GetNode("n1");
  EXPECT_EQ(node->metadata().creation_timestamp().seconds(), now);
  EXPECT_TRUE(node->spec().unschedulable());
}

TEST_F(AgentHubTest, RemoveAnswersWithTheNodeAsItWas) {
  auto s = Connect(HelloFrom("n1"));
  absl::StatusOr<api::Node> removed = hub_->Remove("n1");
  ASSERT_THAT(removed.status(), IsOk());
  EXPECT_EQ(removed->metadata().name(), "n1");
  EXPECT_THAT(hub_->GetNode("n1").status(),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(AgentHubTest, AnAdminsLabelsAndTaintsOutliveReconnectsAndRestarts) {
  auto s = Connect(HelloFrom("n1"));
  api::LabelNodeRequest label;
  label.set_name("n1");
  (*label.mutable_labels())["jobsetd.io/pool"] = "secure";
  ASSERT_THAT(hub_->LabelNode(label).status(), IsOk());
  api::TaintNodeRequest taint;
  taint.set_name("n1");
  api::Taint* t = taint.add_add();
  t->set_key("dedicated");
  t->set_value("team-a");
  t->set_effect("NoSchedule");
  absl::StatusOr<api::Node> node = hub_->TaintNode(taint);
  ASSERT_THAT(node.status(), IsOk());
  EXPECT_EQ(node->metadata().labels().at("jobsetd.io/pool"), "secure");
  ASSERT_THAT(node->spec().taints(), SizeIs(1));
  // The controller was told at once.
  EXPECT_EQ(sink_.nodes.back().labels.at("jobsetd.io/pool"), "secure");
  ASSERT_THAT(sink_.nodes.back().taints, SizeIs(1));

  // The node reconnects, then jobsetd restarts and it reconnects again: its
  // Hellos (no taint, no pool label) remove neither.
  s = Connect(HelloFrom("n1"));
  s.reset();
  Start();
  s = Connect(HelloFrom("n1"));
  EXPECT_EQ(sink_.nodes.back().labels.at("jobsetd.io/pool"), "secure");
  ASSERT_THAT(sink_.nodes.back().taints, SizeIs(1));
  EXPECT_EQ(sink_.nodes.back().taints[0].key, "dedicated");
  node = hub_->GetNode("n1");
  EXPECT_EQ(node->metadata().labels().at("jobsetd.io/pool"), "secure");
  EXPECT_EQ(node->spec().taints(0).value(), "team-a");

  // Removed by the admin, gone for good.
  taint.clear_add();
  t = taint.add_remove();
  t->set_key("dedicated");
  ASSERT_THAT(hub_->TaintNode(taint).status(), IsOk());
  EXPECT_THAT(sink_.nodes.back().taints, IsEmpty());
  label.clear_labels();
  label.add_remove("jobsetd.io/pool");
  ASSERT_THAT(hub_->LabelNode(label).status(), IsOk());
  Start();
  EXPECT_FALSE(sink_.nodes.back().labels.contains("jobsetd.io/pool"));
  EXPECT_THAT(sink_.nodes.back().taints, IsEmpty());

  // Refused edits change nothing; an unknown node is kubectl's NotFound.
  label.set_name("nope");
  EXPECT_THAT(
      hub_->LabelNode(label).status(),
      StatusIs(absl::StatusCode::kNotFound, "nodes \"nope\" not found"));
  EXPECT_THAT(
      hub_->TaintNode(taint).status(),
      StatusIs(absl::StatusCode::kNotFound, "taint \"dedicated\" not found"));
}

}  // namespace
}  // namespace jobset::scheduler
