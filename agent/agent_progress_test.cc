// Progress heartbeats end to end on one host (docs/agent.md): a real pod
// (process mode, the shim runtime) writes its steps to $JOBSET_PROGRESS_FILE
// and a jobsetd stand-in receives the agent's reports with the step and a
// rate; hostile inputs written into a running pod's progress directory (what
// its own container could write there) are counted, never taken. Every wait
// is for a positive signal with a deadline.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/agent.h"
#include "agent/metrics.h"
#include "agent/runtime/progress_dir.h"
#include "agent/runtime/runtime_test_env.h"
#include "agent/runtime/shim_runtime.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/agent.grpc.pb.h"

namespace jobset::agent {
namespace {

using ::jobset::agent::testing::PodBuilder;
using ::jobset::agent::testing::RunfilePath;
using ::jobset::testing::IsOk;

constexpr absl::Duration kTimeout = absl::Seconds(30);

// A jobsetd stand-in: welcomes each stream with `pods` desired and keeps
// every progress report it is sent. Thread-safe.
class ProgressRecorder final : public api::AgentService::Service {
 public:
  explicit ProgressRecorder(std::vector<api::PodAssignment> pods)
      : pods_(std::move(pods)) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port_);
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~ProgressRecorder() override {
    server_->Shutdown(absl::ToChronoTime(RealDeadline(absl::Seconds(1))));
  }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

  grpc::Status Connect(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<api::SchedulerMessage, api::AgentMessage>*
          stream) override {
    api::AgentMessage msg;
    if (!stream->Read(&msg)) return grpc::Status::OK;
    api::SchedulerMessage welcome;
    welcome.mutable_welcome()->set_heartbeat_interval_ms(1000);
    for (const api::PodAssignment& a : pods_)
      *welcome.mutable_welcome()->add_pods() = a;
    stream->Write(welcome);
    while (stream->Read(&msg)) {
      if (!msg.has_pod_update() || !msg.pod_update().has_progress()) continue;
      absl::MutexLock lock(&mu_);
      reports_.push_back(msg.pod_update());
    }
    return grpc::Status::OK;
  }

  // Waits until a progress report of pod `uid` satisfies `want`; returns it.
  std::optional<api::PodReport> Await(
      const std::string& uid,
      const std::function<bool(const api::PodProgress&)>& want) {
    absl::MutexLock lock(&mu_);
    std::optional<api::PodReport> found;
    auto seen = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (const api::PodReport& r : reports_) {
        if (r.pod_uid() == uid && want(r.progress())) found = r;
      }
      return found.has_value();
    };
    mu_.AwaitWithTimeout(absl::Condition(&seen), kTimeout);
    return found;
  }

 private:
  const std::vector<api::PodAssignment> pods_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  absl::Mutex mu_;
  std::vector<api::PodReport> reports_ ABSL_GUARDED_BY(mu_);
};

class AgentProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (pods in private roots)";
    static int counter = 0;
    work_dir_ =
        absl::StrCat(getenv("TEST_TMPDIR"), "/agent-progress-", ++counter);
    ShimRuntime::Options o;
    o.work_dir = work_dir_;
    o.shim_path = RunfilePath("agent/runtime/jobset-pod-shim");
    o.cgroup_root = "jobset-test";
    o.accelerators.dev_root = work_dir_ + "-dev";
    absl::StatusOr<std::unique_ptr<ShimRuntime>> r = ShimRuntime::Create(o);
    ASSERT_THAT(r.status(), IsOk());
    runtime_ = *std::move(r);
  }

  void TearDown() override {
    if (agent_ != nullptr) agent_->Shutdown();
    agent_.reset();
    for (const std::string& uid : uids_) {
      EXPECT_THAT(runtime_->Remove(uid), IsOk());
    }
  }

  // Starts the agent with jobsetd wanting one pod `uid` running `script`.
  void Run(const std::string& uid, const std::string& script) {
    uids_.push_back(uid);
    jobsetd_ =
        std::make_unique<ProgressRecorder>(std::vector<api::PodAssignment>{
            PodBuilder(uid)
                .Container("main", {"/bin/sh", "-c", script})
                .Build()});
    Agent::Options options;
    options.scheduler = jobsetd_->address();
    options.registration.set_name("n1");
    options.registration.set_address("127.0.0.1");
    options.tick = absl::Milliseconds(20);
    options.metrics = &metrics_;
    options.progress_report_interval = absl::Milliseconds(200);
    agent_ = std::make_unique<Agent>(options, runtime_.get(), RealClock::Get());
    agent_->Start();
  }

  // Puts `data` in pod `uid`'s progress file as its container would: a
  // temporary file beside it, renamed over it.
  void Write(const std::string& uid, const std::string& data) {
    const std::string dir = runtime_->ProgressDir(uid);
    std::ofstream(dir + "/tmp", std::ios::binary | std::ios::trunc) << data;
    ASSERT_EQ(rename((dir + "/tmp").c_str(),
                     absl::StrCat(dir, "/", kProgressFileName).c_str()),
              0);
  }
  void Remove(const std::string& uid) {
    const std::string file =
        absl::StrCat(runtime_->ProgressDir(uid), "/", kProgressFileName);
    ASSERT_EQ(unlink(file.c_str()) == 0 || rmdir(file.c_str()) == 0, true);
  }

  double Rejected(const std::string& reason) {
    return metrics_.progress_rejected.Add({{"reason", reason}}).Value();
  }

  std::string work_dir_;
  std::unique_ptr<ShimRuntime> runtime_;
  std::unique_ptr<ProgressRecorder> jobsetd_;
  AgentMetrics metrics_;
  std::unique_ptr<Agent> agent_;
  std::vector<std::string> uids_;
};

TEST_F(AgentProgressTest, RealPodReportsItsStepAndRate) {
  // Ten steps every 50 ms, each line written beside the file and renamed
  // over it, as jobset.progress.report does.
  Run("trainer",
      "i=0; while [ $i -lt 1200 ]; do i=$((i+1)); "
      "echo \"step=$((i*10)) checkpoint_step=$((i/10*100))\" "
      "> \"$JOBSET_PROGRESS_FILE.tmp\"; "
      "mv \"$JOBSET_PROGRESS_FILE.tmp\" \"$JOBSET_PROGRESS_FILE\"; "
      "sleep 0.05; done");
  std::optional<api::PodReport> report =
      jobsetd_->Await("trainer", [](const api::PodProgress& p) {
        return p.step() >= 100 && p.steps_per_second() > 0;
      });
  ASSERT_TRUE(report.has_value());
  // A report of progress alone: jobsetd keeps it out of its controller.
  EXPECT_FALSE(report->has_status());
  EXPECT_EQ(report->in_place_restart_attempt(), 0);
  const api::PodProgress& p = report->progress();
  EXPECT_GE(p.checkpoint_step(), 0);
  EXPECT_LE(p.checkpoint_step(), p.step());
  // About 200 steps/s; anything positive and far below 10,000 is a rate
  // measured on the agent's clock, however slow this host.
  EXPECT_GT(p.steps_per_second(), 0);
  EXPECT_LT(p.steps_per_second(), 10'000);
  EXPECT_LT(p.since_last_advance().seconds(), 10);
  EXPECT_EQ(p.rejected_lines(), 0);
  EXPECT_GE(metrics_.progress_reports.Value(), 1);
}

TEST_F(AgentProgressTest, HostileInputsAreCountedNotTrusted) {
  Run("victim", "exec sleep 600");
  auto step_and_rejected = [](int64_t step, int64_t rejected) {
    return [step, rejected](const api::PodProgress& p) {
      return p.step() == step && p.rejected_lines() == rejected;
    };
  };
  // The directory is made when the agent starts the pod.
  ASSERT_THAT(
      testing::WaitForPod(*runtime_, "victim", testing::IsRunning, kTimeout)
          .status(),
      IsOk());
  const std::string dir = runtime_->ProgressDir("victim");
  Write("victim", "step=100\n");
  ASSERT_TRUE(jobsetd_->Await("victim", step_and_rejected(100, 0)));

  Write("victim", "garbage\n");
  ASSERT_TRUE(jobsetd_->Await("victim", step_and_rejected(100, 1)));

  // A link to a file that parses (it could be another pod's).
  const std::string elsewhere = work_dir_ + "-elsewhere";
  std::ofstream(elsewhere) << "step=999999\n";
  ASSERT_EQ(symlink(elsewhere.c_str(), (dir + "/link").c_str()), 0);
  ASSERT_EQ(rename((dir + "/link").c_str(), (dir + "/progress").c_str()), 0);
  ASSERT_TRUE(jobsetd_->Await("victim", step_and_rejected(100, 2)));

  Write("victim", absl::StrCat("step=", std::string(1 << 20, '1'), "\n"));
  ASSERT_TRUE(jobsetd_->Await("victim", step_and_rejected(100, 3)));

  Write("victim", "step=50\n");  // decreasing within the pod's instance
  ASSERT_TRUE(jobsetd_->Await("victim", step_and_rejected(100, 4)));

  // A fifo nobody writes: opening it to read would block the agent.
  Remove("victim");
  ASSERT_EQ(mkfifo((dir + "/progress").c_str(), 0666), 0);
  ASSERT_TRUE(jobsetd_->Await("victim", step_and_rejected(100, 5)));
  Remove("victim");
  ASSERT_EQ(mkdir((dir + "/progress").c_str(), 0777), 0);
  ASSERT_TRUE(jobsetd_->Await("victim", step_and_rejected(100, 6)));
  Remove("victim");

  // And the agent still reads the pod: a good line is taken.
  Write("victim", "step=150\n");
  ASSERT_TRUE(jobsetd_->Await("victim", step_and_rejected(150, 6)));
  EXPECT_EQ(Rejected("malformed"), 1);
  EXPECT_EQ(Rejected("not_a_file"), 3);
  EXPECT_EQ(Rejected("too_long"), 1);
  EXPECT_EQ(Rejected("decreasing"), 1);
}

}  // namespace
}  // namespace jobset::agent
