// jobsetd's controller, node registry and gRPC server in this process, with
// real jobset-agent Agents on FakeRuntimes talking to it over gRPC: the
// protocol end to end, without launching processes (tests/ does that).
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "agent/agent.h"
#include "agent/fake_runtime.h"
#include "api/jobset_builder.h"
#include "common/status_matchers.h"
#include "gtest/gtest.h"
#include "prometheus/metric_family.h"
#include "proto/agent.grpc.pb.h"
#include "proto/jobset_service.grpc.pb.h"
#include "scheduler/agents/agent_hub.h"
#include "scheduler/agents/agent_service.h"
#include "scheduler/agents/pod_log_service.h"
#include "scheduler/auth/insecure_auth_for_test.h"
#include "scheduler/controller/controller.h"
#include "scheduler/metrics.h"
#include "scheduler/server/server.h"
#include "store/forwarding_store.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::IsOk;

// Counts the scans of pods records (how the log service finds a pod).
class PodScanCountingStore : public store::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<store::ScanResult> Scan(absl::string_view prefix,
                                         absl::string_view start_after,
                                         size_t limit) override {
    if (absl::StartsWith(prefix, "pods/")) {
      absl::MutexLock lock(&mu_);
      ++pod_scans_;
    }
    return ForwardingStore::Scan(prefix, start_after, limit);
  }
  // Following a log, the log service waits here between polls of the
  // agent.
  using Store::WaitForEvents;
  absl::StatusOr<std::vector<store::Event>> WaitForEvents(
      absl::string_view prefix, int64_t after_revision, absl::Time deadline,
      size_t max_events, int64_t* looked_at) override {
    {
      absl::MutexLock lock(&mu_);
      ++waits_;
    }
    return ForwardingStore::WaitForEvents(prefix, after_revision, deadline,
                                          max_events, looked_at);
  }
  int pod_scans() {
    absl::MutexLock lock(&mu_);
    return pod_scans_;
  }
  int waits() {
    absl::MutexLock lock(&mu_);
    return waits_;
  }

 private:
  absl::Mutex mu_;
  int pod_scans_ ABSL_GUARDED_BY(mu_) = 0;
  int waits_ ABSL_GUARDED_BY(mu_) = 0;
};

// Polls `done` for up to 15 s (real agents over gRPC: an end-to-end test
// waits for a positive signal with a deadline).
bool Eventually(const std::function<bool()>& done) {
  Clock* clock = RealClock::Get();
  const absl::Time deadline = clock->Now() + absl::Seconds(15);
  while (clock->Now() < deadline) {
    if (done()) return true;
    clock->SleepUntil(clock->Now() + absl::Milliseconds(20));
  }
  return done();
}

class AgentProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto hub = AgentHub::Create(
        &store_,
        AgentHub::Options{.node_lost_timeout = absl::Seconds(1),
                          .heartbeat_interval = absl::Milliseconds(100),
                          .restart_grace = absl::ZeroDuration(),
                          .metrics = &metrics_});
    ASSERT_THAT(hub.status(), IsOk());
    hub_ = *std::move(hub);
    auto controller = Controller::Start(&store_, hub_.get(), RealClock::Get(),
                                        api::Features{.restart_job = true},
                                        &controller_metrics_);
    ASSERT_THAT(controller.status(), IsOk());
    controller_ = *std::move(controller);
    hub_->Attach(controller_.get());
    agent_service_ =
        std::make_unique<AgentServiceImpl>(hub_.get(), auth_.get());
    log_service_ = std::make_unique<PodLogServiceImpl>(&log_store_, hub_.get(),
                                                       auth_.get());
    Server::Options options;
    options.listen = "127.0.0.1:0";
    options.auth = auth_.get();
    options.services = {agent_service_.get(), log_service_.get()};
    options.end_streams = [this] { hub_->CloseAll(); };
    auto server = Server::Start(options, &store_);
    ASSERT_THAT(server.status(), IsOk());
    server_ = *std::move(server);
    stub_ = api::JobSetService::NewStub(grpc::CreateChannel(
        server_->address(), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    agents_.clear();
    server_->Shutdown(absl::Now() + absl::Seconds(1));
    server_.reset();
    hub_->CloseAll();
    controller_.reset();
    hub_.reset();
  }

  // Starts (or restarts, on the same runtime) the agent of node `name`, with
  // `extra` capacity besides one CPU and 1Gi.
  void StartAgent(const std::string& name, agent::FakeRuntime* runtime,
                  const std::map<std::string, std::string>& extra = {}) {
    agent::Agent::Options o;
    o.scheduler = server_->address();
    o.registration.set_name(name);
    o.registration.set_address(absl::StrCat("10.0.0.", agents_.size() + 1));
    (*o.registration.mutable_capacity())["cpu"] = "1";
    (*o.registration.mutable_capacity())["memory"] = "1Gi";
    for (const auto& [name, value] : extra)
      (*o.registration.mutable_capacity())[name] = value;
    o.tick = absl::Milliseconds(20);
    auto a = std::make_unique<agent::Agent>(o, runtime, RealClock::Get());
    a->Start();
    agents_[name] = std::move(a);
    ASSERT_TRUE(Eventually([&] { return agents_[name]->welcomed(); }));
  }

  void Create(api::JobSet js) {
    grpc::ClientContext ctx;
    api::CreateJobSetRequest req;
    *req.mutable_jobset() = std::move(js);
    api::CreateJobSetResponse resp;
    grpc::Status s = stub_->CreateJobSet(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  api::JobSet Get(const std::string& name) {
    grpc::ClientContext ctx;
    api::GetJobSetRequest req;
    req.set_namespace_("default");
    req.set_name(name);
    api::JobSet js;
    EXPECT_TRUE(stub_->GetJobSet(&ctx, req, &js).ok());
    return js;
  }

  // Pods running on `runtime`, by uid.
  static std::vector<std::string> Running(agent::FakeRuntime& runtime) {
    std::vector<std::string> out;
    for (const agent::PodState& p : runtime.List()) {
      if (p.status.phase() == "Running") out.push_back(p.uid);
    }
    return out;
  }

  // stage -> observations of jobsetd_pod_startup_stage_seconds.
  std::map<std::string, uint64_t> Stages() {
    std::map<std::string, uint64_t> out;
    for (const prometheus::MetricFamily& f : metrics_.registry->Collect()) {
      if (f.name != "jobsetd_pod_startup_stage_seconds") continue;
      for (const prometheus::ClientMetric& m : f.metric)
        out[m.label.at(0).value] = m.histogram.sample_count;
    }
    return out;
  }

  SchedulerMetrics metrics_;
  PrometheusControllerMetrics controller_metrics_{&metrics_};
  store::MemoryStore store_;
  PodScanCountingStore log_store_{&store_};
  std::unique_ptr<AgentHub> hub_;
  std::unique_ptr<Controller> controller_;
  InsecureAuthForTest auth_;
  std::unique_ptr<AgentServiceImpl> agent_service_;
  std::unique_ptr<PodLogServiceImpl> log_service_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<api::JobSetService::Stub> stub_;
  // The nodes' runtimes outlive the agents that use them.
  agent::FakeRuntime a_, b_;
  std::map<std::string, std::unique_ptr<agent::Agent>> agents_;
};

TEST_F(AgentProtocolTest, PodsRunOnAgentsAndTheirExitsCompleteTheJobSet) {
  agent::FakeRuntime& a = a_;
  agent::FakeRuntime& b = b_;
  StartAgent("node-a", &a);
  StartAgent("node-b", &b);
  // Two pods of one CPU each: one per node.
  JobSetBuilder builder("train");
  builder.Replicated("workers", 2);
  builder.Request("workers", "cpu", "1");
  Create(builder.Build());
  ASSERT_TRUE(Eventually(
      [&] { return Running(a).size() == 1 && Running(b).size() == 1; }));
  // The agents got bound pods with the attempt's host table.
  const api::PodAssignment got = a.started()[0];
  EXPECT_EQ(got.pod().spec().node_name(), "node-a");
  EXPECT_EQ(got.hosts_size(), 2);
  ASSERT_TRUE(Eventually([&] {
    return Get("train").status().replicated_jobs_status(0).ready() == 2;
  }));

  a.Exit(Running(a)[0], 0);
  b.Exit(Running(b)[0], 0);
  ASSERT_TRUE(Eventually(
      [&] { return Get("train").status().terminal_state() == "Completed"; }));
  // Once their final statuses are durable, the agents forget the pods.
  EXPECT_TRUE(Eventually([&] { return a.List().empty() && b.List().empty(); }));
  EXPECT_EQ(a.started().size(), 1u);
  EXPECT_EQ(b.started().size(), 1u);
  // Each launch passed each startup stage once.
  const std::map<std::string, uint64_t> want = {
      {"created_to_bound", 2},    {"bound_to_sent", 2},
      {"sent_to_received", 2},    {"received_to_started", 2},
      {"started_to_reported", 2}, {"reported_to_committed", 2}};
  EXPECT_EQ(Stages(), want);
}

// A queue of GPU pods: a pod that waited for devices is placed the moment
// the pods before it finish, and is admitted on their devices (kubelet frees a
// finished pod's devices before it admits the next; jobsetd sends releases
// before runs), never failed with UnexpectedAdmissionError.
TEST_F(AgentProtocolTest, AQueuedGpuPodRunsOnTheDevicesOfThePodsBeforeIt) {
  StartAgent("node-a", &a_, {{"nvidia.com/gpu", "8"}});
  auto gpu_jobset = [](const std::string& name) {
    JobSetBuilder b(name);
    b.Replicated("workers", 1)
        .RestartPolicy("workers", "Never")
        .BackoffLimit("workers", 0)
        .Request("workers", "nvidia.com/gpu", "4");
    api::JobSet js = b.Build();
    // Extended resources are asked for as limits (requests equal them).
    (*js.mutable_spec()
          ->mutable_replicated_jobs(0)
          ->mutable_template_()
          ->mutable_spec()
          ->mutable_template_()
          ->mutable_spec()
          ->mutable_containers(0)
          ->mutable_resources()
          ->mutable_limits())["nvidia.com/gpu"] = "4";
    return js;
  };
  Create(gpu_jobset("first"));
  Create(gpu_jobset("second"));
  ASSERT_TRUE(Eventually([&] { return Running(a_).size() == 2; }));
  Create(gpu_jobset("third"));
  ASSERT_TRUE(Eventually(
      [&] { return Get("third").status().replicated_jobs_status_size() > 0; }));
  EXPECT_EQ(Running(a_).size(), 2u);  // Waits: the node's 8 GPUs are taken.
  for (const std::string& uid : Running(a_)) a_.Exit(uid, 0);
  ASSERT_TRUE(Eventually([&] {
    return Get("third").status().terminal_state() == "Failed" ||
           Running(a_).size() == 1;
  }));
  EXPECT_EQ(Running(a_).size(), 1u) << Get("third").DebugString();
  const std::vector<api::PodAssignment> started = a_.started();
  ASSERT_EQ(started.size(), 3u);
  EXPECT_EQ(started[2].pod().metadata().name().substr(0, 5), "third");
  for (const std::string& uid : Running(a_)) a_.Exit(uid, 0);
  EXPECT_TRUE(Eventually([&] {
    return Get("third").status().terminal_state() == "Completed";
  })) << Get("third").DebugString();
}

// A runtime's pod events (image pulls) go with the pod's next report, even
// when its status did not change, and become the JobSet's events, once.
TEST_F(AgentProtocolTest, PodEventsReachTheJobSetsEventsOnce) {
  StartAgent("node-a", &a_);
  JobSetBuilder builder("pull");
  builder.Replicated("workers", 1);
  Create(builder.Build());
  ASSERT_TRUE(Eventually([&] { return Running(a_).size() == 1; }));
  const std::string uid = Running(a_)[0];
  const std::string pod = a_.started()[0].pod().metadata().name();
  api::PodEvent pulled;
  pulled.set_type("Normal");
  pulled.set_reason("Pulled");
  pulled.set_message("Successfully pulled image \"busybox:1\" in 1.2s");
  a_.AddEvent(uid, pulled);
  auto notes = [&] {
    grpc::ClientContext ctx;
    api::ListEventsRequest req;
    req.set_jobset("pull");
    api::ListEventsResponse resp;
    EXPECT_TRUE(stub_->ListEvents(&ctx, req, &resp).ok());
    std::vector<std::string> out;
    for (const api::Event& e : resp.items()) {
      if (e.reason() == "Pulled") out.push_back(e.type() + " " + e.note());
    }
    return out;
  };
  const std::string want = absl::StrCat(
      "Normal pod ", pod, ": Successfully pulled image \"busybox:1\" in 1.2s");
  ASSERT_TRUE(Eventually([&] { return notes().size() == 1; }));
  EXPECT_EQ(notes()[0], want);
  // Nothing is sent twice: a later event arrives, with the reports after
  // the first, and the first is still there once.
  api::PodEvent later = pulled;
  later.set_message("Successfully pulled image \"busybox:2\" in 0.5s");
  a_.AddEvent(uid, later);
  ASSERT_TRUE(Eventually([&] { return notes().size() >= 2; }));
  std::vector<std::string> got = notes();
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{
                     want, absl::StrCat("Normal pod ", pod,
                                        ": Successfully pulled image "
                                        "\"busybox:2\" in 0.5s")}));
}

// Issue 19: a fake agent sends a 3.5 MiB report (under gRPC's 4 MiB). It
// used to push the Job's pods record past the store's value limit and crash
// jobsetd on the refused commit; now the hub refuses and counts it, the
// stream stays up and jobsetd keeps serving.
TEST_F(AgentProtocolTest, AHugeReportIsRefusedAndJobsetdKeepsServing) {
  auto agent_stub = api::AgentService::NewStub(grpc::CreateChannel(
      server_->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  auto stream = agent_stub->Connect(&ctx);
  api::AgentMessage hello;
  hello.mutable_hello()->mutable_node()->set_name("node-x");
  hello.mutable_hello()->mutable_node()->set_address("10.0.0.9");
  (*hello.mutable_hello()->mutable_node()->mutable_capacity())["cpu"] = "1";
  (*hello.mutable_hello()->mutable_node()->mutable_capacity())["memory"] =
      "1Gi";
  ASSERT_TRUE(stream->Write(hello));
  api::SchedulerMessage in;
  ASSERT_TRUE(stream->Read(&in));
  ASSERT_TRUE(in.has_welcome());

  Create(JobSetBuilder("train").Replicated("workers", 1).Build());
  // The pod comes to the fake agent.
  std::string uid;
  while (uid.empty() && stream->Read(&in)) {
    if (in.has_run()) uid = in.run().pod().metadata().uid();
  }
  ASSERT_FALSE(uid.empty());

  api::AgentMessage huge;
  huge.mutable_pod_update()->set_pod_uid(uid);
  huge.mutable_pod_update()->mutable_status()->set_phase("Failed");
  huge.mutable_pod_update()->mutable_status()->set_message(
      std::string(3'500'000, 'x'));
  ASSERT_TRUE(stream->Write(huge));
  ASSERT_TRUE(Eventually([&] { return hub_->refused() == 1; }));

  // The stream is up: a heartbeat is answered.
  api::AgentMessage hb;
  hb.mutable_heartbeat()->set_seq(42);
  ASSERT_TRUE(stream->Write(hb));
  bool acked = false;
  while (!acked && stream->Read(&in)) {
    acked = in.has_heartbeat_ack() && in.heartbeat_ack().seq() == 42;
  }
  EXPECT_TRUE(acked);
  // The refused report changed nothing; jobsetd serves, and a good report
  // completes the JobSet.
  EXPECT_EQ(Get("train").status().terminal_state(), "");
  api::AgentMessage done;
  done.mutable_pod_update()->set_pod_uid(uid);
  done.mutable_pod_update()->mutable_status()->set_phase("Succeeded");
  ASSERT_TRUE(stream->Write(done));
  EXPECT_TRUE(Eventually(
      [&] { return Get("train").status().terminal_state() == "Completed"; }));
  stream->WritesDone();
  ctx.TryCancel();
  stream->Finish();
}

// Issue 19: `jobsetctl logs -f` rescanned the JobSet's pods every 300 ms
// while following. Now the pod is found once; following, its Job's records
// are read again only when they change, and the stream ends when the pod
// has finished.
TEST_F(AgentProtocolTest, FollowingALogReadsThePodAgainOnlyWhenItsJobChanges) {
  agent::FakeRuntime& a = a_;
  const std::string log = ::testing::TempDir() + "/follow.log";
  { std::ofstream(log) << "hello\n"; }
  a.set_log_path(log);
  StartAgent("node-a", &a);
  Create(JobSetBuilder("train").Replicated("workers", 1).Build());
  ASSERT_TRUE(Eventually([&] {
    const api::JobSet js = Get("train");
    return js.status().replicated_jobs_status_size() == 1 &&
           js.status().replicated_jobs_status(0).ready() == 1;
  }));
  const std::string uid = Running(a)[0];
  std::string pod_name;
  {
    grpc::ClientContext ctx;
    api::ListPodsRequest req;
    api::ListPodsResponse resp;
    ASSERT_TRUE(stub_->ListPods(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.items_size(), 1);
    pod_name = resp.items(0).metadata().name();
  }
  auto logs = api::PodLogService::NewStub(grpc::CreateChannel(
      server_->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
  api::GetPodLogsRequest req;
  req.set_pod(pod_name);
  req.set_follow(true);
  auto reader = logs->GetPodLogs(&ctx, req);
  api::PodLogs out;
  ASSERT_TRUE(reader->Read(&out));
  EXPECT_EQ(out.data(), "hello\n");
  const int found = log_store_.pod_scans();
  // Three polls of an unchanging pod (the old code rescanned at each).
  const int waits = log_store_.waits();
  ASSERT_TRUE(Eventually([&] { return log_store_.waits() >= waits + 3; }));
  EXPECT_EQ(log_store_.pod_scans(), found);
  // The pod finishes: its Job's record changes, the stream ends.
  a.Exit(uid, 0);
  while (reader->Read(&out)) {
  }
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_LE(log_store_.pod_scans() - found, 3);
}

TEST_F(AgentProtocolTest, ARestartedAgentReattachesWithoutRelaunching) {
  agent::FakeRuntime& a = a_;
  StartAgent("node-a", &a);
  Create(JobSetBuilder("train").Replicated("workers", 1).Build());
  ASSERT_TRUE(Eventually([&] { return Running(a).size() == 1; }));
  const std::string uid = Running(a)[0];
  // The agent goes away (its pod keeps running) and comes back.
  agents_.erase("node-a");
  a.Exit(uid, 0);  // Exits while no agent is there.
  StartAgent("node-a", &a);
  ASSERT_TRUE(Eventually(
      [&] { return Get("train").status().terminal_state() == "Completed"; }));
  EXPECT_EQ(a.started().size(), 1u);  // Never launched twice.
  EXPECT_EQ(Get("train").status().restarts(), 0);
}

TEST_F(AgentProtocolTest,
       ALostNodesPodsRestartElsewhereAndItsZombiesAreStopped) {
  agent::FakeRuntime& a = a_;
  agent::FakeRuntime& b = b_;
  StartAgent("node-a", &a);
  StartAgent("node-b", &b);
  JobSetBuilder builder("train");
  builder.Replicated("workers", 1)
      .RestartPolicy("workers", "Never")
      .FailurePolicy(3);
  builder.BackoffLimit("workers", 0);
  Create(builder.Build());
  ASSERT_TRUE(
      Eventually([&] { return Running(a).size() + Running(b).size() == 1; }));
  const bool on_a = Running(a).size() == 1;
  agent::FakeRuntime& first = on_a ? a : b;
  agent::FakeRuntime& second = on_a ? b : a;
  const std::string first_node = on_a ? "node-a" : "node-b";
  const std::string old_uid = Running(first)[0];

  // The node's agent dies; its pod is still there.
  agents_.erase(first_node);
  ASSERT_TRUE(
      Eventually([&] { return Get("train").status().restarts() == 1; }));
  ASSERT_TRUE(Eventually([&] { return Running(second).size() == 1; }));
  EXPECT_TRUE(first.Has(old_uid));

  // It comes back: the old attempt is not wanted and goes at once.
  StartAgent(first_node, &first);
  EXPECT_TRUE(Eventually([&] { return !first.Has(old_uid); }));
  EXPECT_EQ(Get("train").status().restarts(), 1);
  EXPECT_GE(hub_->fenced_reports(), 1);
}

TEST_F(AgentProtocolTest, RunningPodsLearnTheHostnamesOfPodsPlacedLater) {
  agent::FakeRuntime& a = a_;
  agent::FakeRuntime& b = b_;
  StartAgent("node-a", &a);
  StartAgent("node-b", &b);
  // The workers are created only once the leader is ready (dependsOn).
  Create(JobSetBuilder("train")
             .Replicated("leader", 1)
             .Replicated("workers", 1)
             .DependsOn("workers", "leader", "Ready")
             .Build());
  ASSERT_TRUE(
      Eventually([&] { return Running(a).size() + Running(b).size() == 2; }));
  std::string leader;
  for (agent::FakeRuntime* r : {&a, &b}) {
    for (const api::PodAssignment& started : r->started()) {
      if (started.pod().spec().hostname() == "train-leader-0-0")
        leader = started.pod().metadata().uid();
    }
  }
  ASSERT_FALSE(leader.empty());
  agent::FakeRuntime& leader_node = a.Has(leader) ? a : b;
  EXPECT_TRUE(Eventually([&] {
    std::vector<std::string> names = leader_node.HostNames(leader);
    return std::find(names.begin(), names.end(), "train-workers-0-0") !=
           names.end();
  }));
}

}  // namespace
}  // namespace jobset::scheduler
