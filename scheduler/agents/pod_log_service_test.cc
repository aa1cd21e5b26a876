// `jobsetctl logs POD --attempt N` and `--previous` end to end in one
// process: jobsetd's controller, hub and gRPC server, and a real
// jobset-agent Agent on a FakeRuntime. A restart erases the old attempt's
// pods; the log service finds them in the controller's records and asks
// their agent for the old pod's log.
#include "scheduler/agents/pod_log_service.h"

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/agent.h"
#include "agent/fake_runtime.h"
#include "api/jobset_builder.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/agent.grpc.pb.h"
#include "proto/jobset_service.grpc.pb.h"
#include "scheduler/agents/agent_hub.h"
#include "scheduler/agents/agent_service.h"
#include "scheduler/auth/insecure_auth_for_test.h"
#include "scheduler/controller/controller.h"
#include "scheduler/records/constants.h"
#include "scheduler/server/server.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::IsOk;
using ::testing::HasSubstr;

// Polls `done` for up to 15 s (real agents over gRPC).
bool Eventually(const std::function<bool()>& done) {
  Clock* clock = RealClock::Get();
  const absl::Time deadline = clock->Now() + absl::Seconds(15);
  while (clock->Now() < deadline) {
    if (done()) return true;
    clock->SleepUntil(clock->Now() + absl::Milliseconds(20));
  }
  return done();
}

// What a GetPodLogs call returned.
struct Read {
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string message;
  std::string data;
};

class PodLogServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto hub = AgentHub::Create(
        &store_,
        AgentHub::Options{.node_lost_timeout = absl::Seconds(30),
                          .heartbeat_interval = absl::Milliseconds(100),
                          .restart_grace = absl::ZeroDuration()});
    ASSERT_THAT(hub.status(), IsOk());
    hub_ = *std::move(hub);
    auto controller =
        Controller::Start(&store_, hub_.get(), RealClock::Get(), {});
    ASSERT_THAT(controller.status(), IsOk());
    controller_ = *std::move(controller);
    hub_->Attach(controller_.get());
    agent_service_ =
        std::make_unique<AgentServiceImpl>(hub_.get(), auth_.get());
    logs_ =
        std::make_unique<PodLogServiceImpl>(&store_, hub_.get(), auth_.get());
    // The same, keeping one attempt only (jobsetd --attempt_history=1).
    logs_one_ = std::make_unique<PodLogServiceImpl>(
        &store_, hub_.get(), auth_.get(), nullptr, RealClock::Get(), 1);
    for (auto* service : {logs_.get(), logs_one_.get()}) {
      Server::Options options;
      options.listen = "127.0.0.1:0";
      options.auth = auth_.get();
      options.services = {service};
      if (service == logs_.get()) {
        options.services.push_back(agent_service_.get());
        options.end_streams = [this] { hub_->CloseAll(); };
      }
      auto server = Server::Start(options, &store_);
      ASSERT_THAT(server.status(), IsOk());
      servers_.push_back(*std::move(server));
    }
    stub_ = api::JobSetService::NewStub(grpc::CreateChannel(
        servers_[0]->address(), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    agent_.reset();
    for (auto& server : servers_)
      server->Shutdown(absl::Now() + absl::Seconds(1));
    servers_.clear();
    hub_->CloseAll();
    controller_.reset();
    hub_.reset();
  }

  void StartAgent() {
    agent::Agent::Options o;
    o.scheduler = servers_[0]->address();
    o.registration.set_name("node-a");
    o.registration.set_address("10.0.0.1");
    (*o.registration.mutable_capacity())["cpu"] = "4";
    (*o.registration.mutable_capacity())["memory"] = "1Gi";
    o.tick = absl::Milliseconds(20);
    agent_ = std::make_unique<agent::Agent>(o, &runtime_, RealClock::Get());
    agent_->Start();
    ASSERT_TRUE(Eventually([&] { return agent_->welcomed(); }));
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

  // JobSet `jobset`'s pods of attempt `attempt` as the API lists them,
  // running on the agent.
  std::vector<api::Pod> RunningPods(const std::string& jobset,
                                    const std::string& attempt = "0") {
    grpc::ClientContext ctx;
    api::ListPodsRequest req;
    api::ListPodsResponse resp;
    EXPECT_TRUE(stub_->ListPods(&ctx, req, &resp).ok());
    std::vector<api::Pod> out;
    for (const api::Pod& pod : resp.items()) {
      if (pod.metadata().labels().at(kJobSetNameKey) == jobset &&
          pod.metadata().labels().at(kRestartAttemptKey) == attempt &&
          runtime_.Has(pod.metadata().uid()) &&
          !pod.metadata().has_deletion_timestamp()) {
        out.push_back(pod);
      }
    }
    return out;
  }

  // Reads pod `pod`'s log through the log service (`server` 1: the one
  // keeping one attempt); `set` fills in attempt or previous.
  Read Logs(const std::string& pod,
            const std::function<void(api::GetPodLogsRequest&)>& set,
            int server = 0) {
    auto stub = api::PodLogService::NewStub(grpc::CreateChannel(
        servers_[server]->address(), grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    api::GetPodLogsRequest req;
    req.set_pod(pod);
    set(req);
    auto reader = stub->GetPodLogs(&ctx, req);
    Read out;
    api::PodLogs chunk;
    while (reader->Read(&chunk)) out.data += chunk.data();
    const grpc::Status s = reader->Finish();
    out.code = s.error_code();
    out.message = s.error_message();
    return out;
  }

  store::MemoryStore store_;
  std::unique_ptr<AgentHub> hub_;
  std::unique_ptr<Controller> controller_;
  InsecureAuthForTest auth_;
  std::unique_ptr<AgentServiceImpl> agent_service_;
  std::unique_ptr<PodLogServiceImpl> logs_, logs_one_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::unique_ptr<api::JobSetService::Stub> stub_;
  agent::FakeRuntime runtime_;  // Outlives the agent.
  std::unique_ptr<agent::Agent> agent_;
};

// "train": two Jobs of one pod; attempt 0 fails, attempt 1 runs.
TEST_F(PodLogServiceTest, AnEarlierAttemptsPodIsReadFromItsAgent) {
  StartAgent();
  Create(JobSetBuilder("train")
             .Replicated("workers", 2)
             .RestartPolicy("workers", "Never")
             .BackoffLimit("workers", 0)
             .FailurePolicy(3)
             .Build());
  std::vector<api::Pod> first;
  ASSERT_TRUE(Eventually([&] {
    first = RunningPods("train");
    return first.size() == 2;
  }));
  runtime_.Exit(first[0].metadata().uid(), 1);
  std::vector<api::Pod> second;
  ASSERT_TRUE(Eventually([&] {
    second = RunningPods("train", "1");
    return Get("train").status().restarts() == 1 && second.size() == 2;
  }));
  // Which pod of attempt 0 had each current pod's Job.
  std::map<std::string, api::Pod> old_of_job;
  for (const api::Pod& pod : first)
    old_of_job[pod.metadata().labels().at(kBatchJobNameKey)] = pod;
  const api::Pod& now = second[0];
  const api::Pod& old =
      old_of_job.at(now.metadata().labels().at(kBatchJobNameKey));
  ASSERT_NE(old.metadata().uid(), now.metadata().uid());
  // Once the pass after the launch recorded the old attempt, every way of
  // naming it reaches the old pod's uid on its node; the fake runtime has
  // no log yet, so the agent's not-found names that uid.
  const auto previous = [](api::GetPodLogsRequest& r) { r.set_previous(true); };
  const auto attempt0 = [](api::GetPodLogsRequest& r) { r.set_attempt(0); };
  ASSERT_TRUE(Eventually([&] {
    return Logs(now.metadata().name(), previous)
               .message.find(old.metadata().uid()) != std::string::npos;
  })) << Logs(now.metadata().name(), previous).message;
  for (const auto& [name, set] :
       std::vector<std::pair<std::string,
                             std::function<void(api::GetPodLogsRequest&)>>>{
           {now.metadata().name(), previous},
           {now.metadata().name(), attempt0},
           {old.metadata().name(), attempt0},
           {old.metadata().name(), previous}}) {
    SCOPED_TRACE(name);
    const Read r = Logs(name, set);
    EXPECT_EQ(r.code, grpc::StatusCode::NOT_FOUND);
    EXPECT_THAT(r.message, HasSubstr(old.metadata().uid()));
    EXPECT_THAT(r.message, HasSubstr("of attempt 0 of JobSet default/train"));
    EXPECT_THAT(r.message, HasSubstr("--log_retention"));
  }
  // With a log, its bytes come back; `follow` ends at its end (the pod has
  // ended), and limit_bytes keeps the tail.
  const std::string log = ::testing::TempDir() + "/attempt.log";
  { std::ofstream(log) << "attempt-0\n"; }
  runtime_.set_log_path(log);
  EXPECT_EQ(Logs(now.metadata().name(), previous).data, "attempt-0\n");
  const Read followed = Logs(old.metadata().name(), [](auto& r) {
    r.set_attempt(0);
    r.set_follow(true);
    r.set_limit_bytes(2);
  });
  EXPECT_EQ(followed.code, grpc::StatusCode::OK) << followed.message;
  EXPECT_EQ(followed.data, "0\n");
  // Attempt 1 is the current one: the current pod, as without attempt.
  const Read current =
      Logs(now.metadata().name(), [](auto& r) { r.set_attempt(1); });
  EXPECT_EQ(current.code, grpc::StatusCode::OK) << current.message;
  EXPECT_EQ(current.data, "attempt-0\n");  // The fake's one file.
  // A container the template lacks.
  const Read bad_container = Logs(now.metadata().name(), [](auto& r) {
    r.set_previous(true);
    r.set_container("sidecar");
  });
  EXPECT_EQ(bad_container.code, grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(bad_container.message, HasSubstr("\"sidecar\""));

  // Requests that cannot be served, each with a clear error.
  struct Case {
    std::string pod;
    std::function<void(api::GetPodLogsRequest&)> set;
    int server;
    grpc::StatusCode code;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {now.metadata().name(), [](auto& r) { r.set_attempt(-1); }, 0,
            grpc::StatusCode::INVALID_ARGUMENT, "attempt: -1 is negative"},
           {now.metadata().name(),
            [](auto& r) {
              r.set_attempt(0);
              r.set_previous(true);
            },
            0, grpc::StatusCode::INVALID_ARGUMENT, "not both"},
           {now.metadata().name(), [](auto& r) { r.set_attempt(7); }, 0,
            grpc::StatusCode::OUT_OF_RANGE,
            "attempt 7 of JobSet default/train has not run; its current "
            "attempt is 1"},
           {now.metadata().name(), [](auto& r) { r.set_previous(true); }, 1,
            grpc::StatusCode::OUT_OF_RANGE,
            "attempt 0 of JobSet default/train is no longer kept; kept: 1-1"},
           {"train-workers-0-0-zzzzz", [](auto& r) { r.set_attempt(0); }, 0,
            grpc::StatusCode::NOT_FOUND,
            "pod \"train-workers-0-0-zzzzz\" not found in namespace "
            "\"default\""},
       }) {
    SCOPED_TRACE(c.message);
    const Read r = Logs(c.pod, c.set, c.server);
    EXPECT_EQ(r.code, c.code) << r.message;
    EXPECT_THAT(r.message, HasSubstr(c.message));
  }

  // The agent gone: its node's logs cannot be read now.
  agent_.reset();
  EXPECT_TRUE(Eventually([&] {
    const Read r = Logs(now.metadata().name(), previous);
    return r.code == grpc::StatusCode::UNAVAILABLE &&
           r.message.find("ran on node node-a") != std::string::npos;
  }));
}

TEST_F(PodLogServiceTest, AJobSetThatNeverRestartedHasNoPreviousAttempt) {
  StartAgent();
  Create(JobSetBuilder("once").Replicated("workers", 1).Build());
  std::vector<api::Pod> pods;
  ASSERT_TRUE(Eventually([&] {
    pods = RunningPods("once");
    return pods.size() == 1;
  }));
  const Read r =
      Logs(pods[0].metadata().name(), [](auto& r) { r.set_previous(true); });
  EXPECT_EQ(r.code, grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(r.message,
              HasSubstr("JobSet default/once has no earlier attempt"));
}

}  // namespace
}  // namespace jobset::scheduler
