// The agent's handling of untrusted LogRequests (ReadLogChunk over the shim
// runtime's files) and its log retention sweep, driven by a FakeClock.
#include "agent/agent.h"

#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/fake_runtime.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/runtime.h"
#include "agent/runtime/shim_runtime.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/agent.grpc.pb.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class ReadLogChunkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    root_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/logs", ++counter);
    ASSERT_EQ(mkdir(root_.c_str(), 0700), 0);
    ShimRuntime::Options options;
    options.work_dir = root_ + "/work";
    options.shim_path = "/bin/true";  // Never spawned: no pod is started.
    absl::StatusOr<std::unique_ptr<ShimRuntime>> r =
        ShimRuntime::Create(options);
    ASSERT_THAT(r.status(), IsOk());
    runtime_ = std::move(*r);
  }

  api::LogChunk Read(const std::string& uid, const std::string& container,
                     int64_t offset = 0, int32_t max_bytes = 1 << 16) {
    api::LogRequest request;
    request.set_request_id(7);
    request.set_pod_uid(uid);
    request.set_container(container);
    request.set_offset(offset);
    request.set_max_bytes(max_bytes);
    return ReadLogChunk(*runtime_, request);
  }

  std::string root_;
  std::unique_ptr<ShimRuntime> runtime_;
};

TEST_F(ReadLogChunkTest, EscapingUidsAndNamesReadNothing) {
  // <root>/secret/main.log is <work>/logs/../../secret/main.log.
  ASSERT_EQ(mkdir((root_ + "/secret").c_str(), 0700), 0);
  ASSERT_THAT(WriteFileAtomic(root_ + "/secret/main.log", "TOPSECRET"), IsOk());
  struct Case {
    std::string uid, container;
  };
  for (const Case& c : std::vector<Case>{{"../../secret", "main"},
                                         {"../../..", "main"},
                                         {"..", "main"},
                                         {"x", "../../../secret/main"},
                                         {"nope", "main"}}) {
    api::LogChunk chunk = Read(c.uid, c.container);
    EXPECT_EQ(chunk.request_id(), 7);
    EXPECT_THAT(chunk.data(), IsEmpty()) << c.uid << " " << c.container;
    EXPECT_THAT(chunk.error(), HasSubstr("not found"))
        << c.uid << " " << c.container;
  }
}

TEST_F(ReadLogChunkTest, SizesAreBounded) {
  // A released pod's log (its log directory is kept; its pod dir is gone).
  const std::string dir = root_ + "/work/logs/done";
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const int64_t size = 3 * int64_t{kMaxLogChunkBytes};
  ASSERT_THAT(WriteFileAtomic(dir + "/main.log", std::string(size, 'x')),
              IsOk());
  api::LogChunk chunk =
      Read("done", "main", 0, std::numeric_limits<int32_t>::max());
  EXPECT_THAT(chunk.error(), IsEmpty());
  EXPECT_EQ(chunk.data().size(), kMaxLogChunkBytes);
  EXPECT_EQ(chunk.next_offset(), kMaxLogChunkBytes);
  // The most negative offset is a tail of at most kMaxLogTailBytes, here
  // the whole file, and no overflow.
  chunk = Read("done", "main", std::numeric_limits<int64_t>::min(), 10);
  EXPECT_THAT(chunk.error(), IsEmpty());
  EXPECT_EQ(chunk.data(), "xxxxxxxxxx");
  EXPECT_EQ(chunk.next_offset(), 10);
  chunk = Read("done", "main", -4, 10);
  EXPECT_EQ(chunk.next_offset(), size);
  EXPECT_EQ(chunk.data().size(), 4u);
}

TEST(ReadCriLogChunkTest, WholeLinesDecodedOffsetsInTheFile) {
  const std::string path =
      absl::StrCat(std::getenv("TEST_TMPDIR"), "/cri-main.log");
  const std::string line1 = "2026-12-01T19:12:03.98Z stdout F one\n";
  const std::string line2 = "2026-12-01T19:12:04.1Z stderr P tw\n";
  const std::string line3 = "2026-12-01T19:12:04.2Z stderr F o\n";
  const std::string partial = "2026-12-01T19:12:05Z stdout F thr";
  ASSERT_THAT(WriteFileAtomic(path, line1 + line2 + line3 + partial), IsOk());
  FakeRuntime runtime;
  runtime.set_log_path(path);
  runtime.set_cri_log_format(true);
  api::LogRequest request;
  request.set_pod_uid("u1");
  request.set_container("main");
  request.set_max_bytes(1 << 16);
  api::LogChunk chunk = ReadLogChunk(runtime, request);
  EXPECT_THAT(chunk.error(), IsEmpty());
  EXPECT_EQ(chunk.data(), "one\ntwo\n");
  // The unfinished line is read again next time.
  EXPECT_EQ(chunk.next_offset(),
            static_cast<int64_t>((line1 + line2 + line3).size()));
  // A tail starts at the first whole line.
  request.set_offset(-static_cast<int64_t>(line3.size() + partial.size() + 3));
  chunk = ReadLogChunk(runtime, request);
  EXPECT_EQ(chunk.data(), "o\n");
}

// A runtime that runs nothing and records the agent's retention sweeps.
class SweepRecorder final : public Runtime {
 public:
  absl::Status Start(const api::PodAssignment&) override {
    return absl::OkStatus();
  }
  absl::Status Stop(const std::string&, absl::Duration) override {
    return absl::OkStatus();
  }
  absl::Status Remove(const std::string&) override { return absl::OkStatus(); }
  std::vector<PodState> List() override { return {}; }
  absl::Status UpdateHosts(
      const std::string&,
      const google::protobuf::RepeatedPtrField<api::HostEntry>&) override {
    return absl::NotFoundError("none");
  }
  std::string LogPath(const std::string&, const std::string&) const override {
    return "";
  }
  absl::StatusOr<int> PruneLogs(absl::Time now,
                                const LogRetention& retention) override {
    absl::MutexLock lock(&mu_);
    sweeps_.push_back(now);
    retention_ = retention;
    return 0;
  }

  // Waits (real time, at most 10 s) until `n` sweeps happened; returns them.
  std::vector<absl::Time> WaitSweeps(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return sweeps_.size() >= n;
    };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
    return sweeps_;
  }
  LogRetention retention() {
    absl::MutexLock lock(&mu_);
    return retention_;
  }

 private:
  absl::Mutex mu_;
  std::vector<absl::Time> sweeps_ ABSL_GUARDED_BY(mu_);
  LogRetention retention_ ABSL_GUARDED_BY(mu_);
};

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
  // Ticks go on in real time; the clock has not moved: no second sweep.
  absl::SleepFor(absl::Milliseconds(50));
  clock.Advance(absl::Seconds(59));
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(runtime.WaitSweeps(0).size(), 1u);
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(runtime.WaitSweeps(2),
            (std::vector<absl::Time>{start, start + absl::Minutes(1)}));
  agent.Shutdown();
}

// A scheduler replica for the epoch test: each stream gets a Welcome naming
// `epoch` with `pods` desired, then is held until End() (UNAVAILABLE).
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
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "replica went away");
  }

 private:
  const int64_t epoch_;
  const std::vector<std::string> pods_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  absl::Mutex mu_;
  int connects_ ABSL_GUARDED_BY(mu_) = 0;
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
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!agent.welcomed() && absl::Now() < deadline)
    absl::SleepFor(absl::Milliseconds(10));
  ASSERT_TRUE(agent.welcomed());
  // The leader's stream ends: the agent tries the next address, the deposed
  // leader, and leaves it for the first again.
  leader.End();
  while ((deposed.connects() == 0 || agent.welcomed()) &&
         absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_GE(deposed.connects(), 1);
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_TRUE(runtime.Has("p1"));  // Nothing the deposed leader said was done.
  EXPECT_FALSE(agent.welcomed());
  agent.Shutdown();
}

}  // namespace
}  // namespace jobset::agent
