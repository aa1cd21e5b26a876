// The Agent facade end to end over a FakeRuntime: its log retention sweeps
// by the injected clock, leader epochs across replicas, and a jobsetd that
// cannot be reached (retried) as against one that revoked the node (not).
// Nothing sleeps: each test waits for a positive signal.
#include "agent/agent.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/fake_runtime.h"
#include "agent/runtime/runtime.h"
#include "agent/sweep_recorder.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/agent.grpc.pb.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;

TEST(AgentLogRetentionTest, SweepsOncePerIntervalOfTheInjectedClock) {
  FakeClock clock;
  const absl::Time start = clock.Now();
  SweepRecorder runtime;
  Agent::Options options;
  options.scheduler = "127.0.0.1:1";  // Nobody there: ticks run anyway.
  options.tick = absl::Milliseconds(5);
  options.log_retention.retention = absl::Hours(2);
  options.log_retention.max_bytes = 12345;
  options.log_sweep = absl::Minutes(1);
  Agent agent(options, &runtime, &clock);
  agent.Start();
  EXPECT_EQ(runtime.WaitSweeps(1), std::vector<absl::Time>{start});
  EXPECT_EQ(runtime.retention().retention, absl::Hours(2));
  EXPECT_EQ(runtime.retention().max_bytes, 12345);
  // Ticks go on in real time; the next sweep waits for the clock
  // (LogSweeperTest shows none comes before a whole interval).
  clock.Advance(absl::Minutes(1));
  EXPECT_EQ(runtime.WaitSweeps(2),
            (std::vector<absl::Time>{start, start + absl::Minutes(1)}));
  agent.Shutdown();
}

// A scheduler replica for the epoch test: each stream gets a Welcome naming
// `epoch` with `pods` desired, then is held until the agent cancels it
// (counted) or End() (UNAVAILABLE); after End() streams are refused.
class WelcomingReplica final : public api::AgentService::Service {
 public:
  WelcomingReplica(int64_t epoch, std::vector<std::string> pods)
      : epoch_(epoch), pods_(std::move(pods)) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~WelcomingReplica() override {
    End();
    server_->Shutdown(std::chrono::system_clock::now());
  }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  int connects() {
    absl::MutexLock lock(&mu_);
    return connects_;
  }
  // Waits (real time, at most 10 s) until the agent has cancelled `n`
  // streams; returns whether it has.
  bool AwaitCancelled(int n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return cancelled_ >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
  }
  void End() {
    absl::MutexLock lock(&mu_);
    ended_ = true;
  }

  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<api::SchedulerMessage, api::AgentMessage>*
          stream) override {
    api::AgentMessage hello;
    if (!stream->Read(&hello)) return grpc::Status::CANCELLED;
    {
      absl::MutexLock lock(&mu_);
      if (ended_)
        return grpc::Status(grpc::StatusCode::UNAVAILABLE, "replica is gone");
      ++connects_;
    }
    api::SchedulerMessage welcome;
    welcome.mutable_welcome()->set_leader_epoch(epoch_);
    welcome.mutable_welcome()->set_heartbeat_interval_ms(100);
    for (const std::string& uid : pods_) {
      welcome.mutable_welcome()
          ->add_pods()
          ->mutable_pod()
          ->mutable_metadata()
          ->set_uid(uid);
    }
    stream->Write(welcome);
    absl::MutexLock lock(&mu_);
    auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return ended_ || context->IsCancelled();
    };
    while (
        !mu_.AwaitWithTimeout(absl::Condition(&done), absl::Milliseconds(20))) {
    }
    if (!ended_) ++cancelled_;
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "replica went away");
  }

 private:
  const int64_t epoch_;
  const std::vector<std::string> pods_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  absl::Mutex mu_;
  int connects_ ABSL_GUARDED_BY(mu_) = 0;
  int cancelled_ ABSL_GUARDED_BY(mu_) = 0;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
};

// A deposed leader (an older epoch) that still answers is not obeyed: its
// Welcome, which no longer wants the node's pod, removes nothing, and the
// agent goes on to the next replica.
TEST(AgentEpochTest, AnOlderLeaderIsIgnored) {
  FakeRuntime runtime;
  api::PodAssignment running;
  running.mutable_pod()->mutable_metadata()->set_uid("p1");
  ASSERT_THAT(runtime.Start(running), IsOk());
  WelcomingReplica leader(/*epoch=*/7, {"p1"});
  WelcomingReplica deposed(/*epoch=*/5, {});
  Agent::Options options;
  options.scheduler = absl::StrCat(leader.address(), ",", deposed.address());
  options.registration.set_name("node-a");
  options.tick = absl::Milliseconds(10);
  options.min_backoff = absl::Milliseconds(10);
  options.max_backoff = absl::Milliseconds(50);
  Agent agent(options, &runtime, RealClock::Get());
  agent.Start();
  ASSERT_TRUE(agent.AwaitWelcomed(true, absl::Seconds(10)));
  // The leader goes away: the agent tries the next address, the deposed
  // leader, which welcomes it with its older epoch; the agent drops that
  // stream without doing anything it said.
  leader.End();
  ASSERT_TRUE(deposed.AwaitCancelled(1));
  ASSERT_GE(deposed.connects(), 1);
  EXPECT_TRUE(runtime.Has("p1"));  // Nothing the deposed leader said was done.
  EXPECT_FALSE(agent.welcomed());
  // It goes round again (the leader refuses, the deposed one is dropped).
  ASSERT_TRUE(deposed.AwaitCancelled(2));
  EXPECT_TRUE(runtime.Has("p1"));
  EXPECT_FALSE(agent.welcomed());
  agent.Shutdown();
}

// A jobsetd that ends every stream with `status` once it has the Hello.
class RefusingJobsetd final : public api::AgentService::Service {
 public:
  explicit RefusingJobsetd(grpc::Status status) : status_(std::move(status)) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~RefusingJobsetd() override {
    server_->Shutdown(std::chrono::system_clock::now());
  }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  int attempts() {
    absl::MutexLock lock(&mu_);
    return attempts_;
  }
  // Waits (real time, at most 10 s) until `n` streams were refused.
  bool AwaitAttempts(int n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return attempts_ >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
  }

  grpc::Status Connect(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<api::SchedulerMessage, api::AgentMessage>*
          stream) override {
    api::AgentMessage hello;
    if (!stream->Read(&hello)) return grpc::Status::CANCELLED;
    absl::MutexLock lock(&mu_);
    ++attempts_;
    return status_;
  }

 private:
  const grpc::Status status_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  absl::Mutex mu_;
  int attempts_ ABSL_GUARDED_BY(mu_) = 0;
};

Agent::Options QuickOptions(const std::string& scheduler) {
  Agent::Options options;
  options.scheduler = scheduler;
  options.registration.set_name("node-a");
  options.tick = absl::Milliseconds(10);
  options.min_backoff = absl::Milliseconds(10);
  options.max_backoff = absl::Milliseconds(20);
  return options;
}

// jobsetd down or restarting is an outage: the agent keeps trying.
TEST(AgentConnectTest, AnUnavailableJobsetdIsRetried) {
  RefusingJobsetd jobsetd(
      grpc::Status(grpc::StatusCode::UNAVAILABLE, "jobsetd is restarting"));
  FakeRuntime runtime;
  int revocations = 0;
  Agent::Options options = QuickOptions(jobsetd.address());
  options.on_revoked = [&](const std::string&) { ++revocations; };
  Agent agent(options, &runtime, RealClock::Get());
  agent.Start();
  EXPECT_TRUE(jobsetd.AwaitAttempts(3));
  EXPECT_FALSE(agent.revoked());
  agent.Shutdown();
  EXPECT_EQ(revocations, 0);
}

// Issue 39 item 8: a revoked node used to retry forever, about once a
// second, with the certificate jobsetd will never take again. It says so
// once and stops connecting (jobset-agent then exits non-zero).
TEST(AgentConnectTest, ARevokedCertificateStopsConnecting) {
  RefusingJobsetd jobsetd(grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                                       "certificate has been revoked"));
  FakeRuntime runtime;
  api::PodAssignment running;
  running.mutable_pod()->mutable_metadata()->set_uid("p1");
  ASSERT_THAT(runtime.Start(running), IsOk());
  absl::Mutex mu;
  std::vector<std::string> revocations;
  Agent::Options options = QuickOptions(jobsetd.address());
  options.on_revoked = [&](const std::string& message) {
    absl::MutexLock lock(&mu);
    revocations.push_back(message);
  };
  Agent agent(options, &runtime, RealClock::Get());
  agent.Start();
  ASSERT_TRUE(agent.AwaitRevoked(absl::Seconds(10)));
  // The connecting thread has returned: no attempt follows the refusal.
  EXPECT_EQ(jobsetd.attempts(), 1);
  EXPECT_EQ(agent.connects(), 1);
  agent.Shutdown();
  EXPECT_EQ(jobsetd.attempts(), 1);
  EXPECT_TRUE(runtime.Has("p1"));  // Pods keep running.
  absl::MutexLock lock(&mu);
  EXPECT_EQ(revocations,
            std::vector<std::string>{"certificate has been revoked"});
}

}  // namespace
}  // namespace jobset::agent
