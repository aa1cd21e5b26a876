// jobsetd and several jobset-agents as real processes on 127.0.0.1, running
// real pods (the process runtime): peers resolve each other, an agent killed
// briefly costs nothing, a node lost for longer restarts the JobSet
// elsewhere, a scheduler outage is not a failure, and a pod that cannot run
// fails alone.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "api/jobset_builder.h"
#include "api/manifest.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/agent.grpc.pb.h"
#include "proto/jobset_service.grpc.pb.h"
#include "tests/cluster_credentials.h"
#include "tests/e2e_support.h"
#include "tests/jobsetd_process.h"

namespace jobset {
namespace {

using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::JobsetdProcess;

using ::jobset::testing::CountLines;
using ::jobset::testing::Eventually;
using ::jobset::testing::MountHostDir;
using ::jobset::testing::Runfile;

class AgentE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(
        std::getenv("TEST_TMPDIR"), "/",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    // Pods write their results here (Create mounts it into every pod) as
    // the agent's default pod user.
    std::filesystem::permissions(dir_, std::filesystem::perms::all);
    StartJobsetd("127.0.0.1:0");
  }

  void TearDown() override {
    agents_.clear();  // SIGKILL: the pods' shims live on...
    // ... so stop every pod this test started, through the runtime.
    testing::RemovePods(work_dirs_);
    jobsetd_.reset();
  }

  // Starts jobsetd on `listen` (again: a restart), `extra` flags last.
  void StartJobsetd(const std::string& listen,
                    std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        absl::StrCat("--listen=", listen),
        absl::StrCat("--data_dir=", dir_, "/jobsetd"), "--node_lost_timeout=2s",
        "--heartbeat_interval=200ms", "--restart_grace=3s",
        "--shutdown_grace=1s",
        // The test's directory (Create) and the PyTorch example's checkpoints.
        absl::StrCat("--allowed_host_paths=", dir_,
                     ",/tmp/jobsetd-example-checkpoints")};
    args.insert(args.end(), extra.begin(), extra.end());
    auto jobsetd = JobsetdProcess::Start(
        {.binary = Runfile("scheduler/jobsetd"),
         .args = args,
         .stderr_path = absl::StrCat(dir_, "/jobsetd.stderr")});
    ASSERT_TRUE(jobsetd.ok()) << jobsetd.status();
    jobsetd_ = *std::move(jobsetd);
    address_ = jobsetd_->address();
    absl::StatusOr<testing::ClusterCredentials> credentials =
        testing::ReadClusterCredentials(absl::StrCat(dir_, "/jobsetd"));
    ASSERT_TRUE(credentials.ok()) << credentials.status();
    stub_ = api::JobSetService::NewStub(testing::SecureChannel(
        address_, credentials->ca_pem, credentials->admin_token));
  }

  // Starts (or restarts) the agent of node `name` at 127.0.0.<n>.
  void StartAgent(const std::string& name, int n,
                  std::vector<std::string> extra = {}) {
    const std::string work_dir = absl::StrCat(dir_, "/", name);
    if (std::find(work_dirs_.begin(), work_dirs_.end(), work_dir) ==
        work_dirs_.end())
      work_dirs_.push_back(work_dir);
    std::vector<std::string> args = {
        absl::StrCat("--scheduler=", address_),
        absl::StrCat("--node_name=", name),
        absl::StrCat("--address=127.0.0.", n),
        absl::StrCat("--work_dir=", work_dir),
        absl::StrCat("--join_token_file=", dir_, "/jobsetd/join-token"),
        absl::StrCat("--shim=", Runfile("agent/runtime/jobset-pod-shim")),
        "--capacity=cpu=1,memory=4Gi",
        absl::StrCat("--labels=slice=s", n)};
    args.insert(args.end(), extra.begin(), extra.end());
    agents_.erase(name);
    auto agent = JobsetdProcess::Start(
        {.binary = Runfile("agent/jobset-agent"),
         .args = args,
         .stderr_path = absl::StrCat(dir_, "/", name, ".stderr"),
         .ready_prefix = absl::StrCat("jobset-agent ", name, " serving")});
    ASSERT_TRUE(agent.ok()) << agent.status();
    agents_[name] = *std::move(agent);
  }

  // Creates `js` with the test's directory mounted at its own path in every
  // container: a process-mode pod sees the host's system directories only
  // (agent/runtime/pod_root.h), and writes what the test reads here.
  // Without `mount_test_dir`, nothing is mounted: the test's directory
  // holds the agents' work dirs, and a hostPath over a pod's own directory
  // would hide what the agent binds there (its progress directory).
  void Create(const api::JobSet& js, bool mount_test_dir = true) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    api::CreateJobSetRequest req;
    *req.mutable_jobset() = js;
    if (mount_test_dir) MountHostDir(req.mutable_jobset(), dir_);
    api::CreateJobSetResponse resp;
    grpc::Status s = stub_->CreateJobSet(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  api::JobSet Get(const std::string& name) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    api::GetJobSetRequest req;
    req.set_namespace_("default");
    req.set_name(name);
    api::JobSet js;
    stub_->GetJobSet(&ctx, req, &js);
    return js;
  }

  bool Finished(const std::string& name, const std::string& state) {
    return Eventually(
        [&] { return Get(name).status().terminal_state() == state; },
        absl::Seconds(40));
  }

  // Pod uids the agent of `node` holds (from its work dir).
  std::vector<std::string> PodsOn(const std::string& node) {
    std::vector<std::string> uids;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(
             absl::StrCat(dir_, "/", node, "/pods"), ec)) {
      uids.push_back(e.path().filename().string());
    }
    return uids;
  }

  // Every container log (*.log) the agents of `nodes` keep, concatenated.
  std::string LogsOf(const std::vector<std::string>& nodes) {
    std::string logs;
    for (const std::string& node : nodes) {
      std::error_code ec;
      for (const auto& e : std::filesystem::recursive_directory_iterator(
               absl::StrCat(dir_, "/", node, "/logs"), ec)) {
        if (e.path().extension() != ".log") continue;
        std::ifstream log(e.path());
        logs.append((std::istreambuf_iterator<char>(log)),
                    std::istreambuf_iterator<char>());
      }
    }
    return logs;
  }

  // A one-container JobSet: `replicas` Jobs of one pod each running
  // /bin/sh -c `script`, one CPU each (one pod per node).
  JobSetBuilder ShellJobSet(const std::string& name, int replicas,
                            const std::string& script) {
    JobSetBuilder b(name);
    b.Replicated("workers", replicas)
        .RestartPolicy("workers", "Never")
        .BackoffLimit("workers", 0)
        .Command("workers", {"/bin/sh", "-c", script})
        .Request("workers", "cpu", "1");
    return b;
  }

  // What a failed expectation prints: the file `log` the pods wrote (when
  // given), and the tails of jobsetd's and every agent's stderr.
  std::string Seen(const std::string& log = "") {
    std::string seen;
    if (!log.empty()) {
      std::ifstream in(log);
      absl::StrAppend(&seen, "--- ", log, ":\n",
                      std::string((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>()));
    }
    if (jobsetd_ != nullptr)
      absl::StrAppend(&seen, "--- jobsetd:\n", jobsetd_->StderrTail(16384));
    for (const auto& [name, agent] : agents_) {
      if (agent != nullptr)
        absl::StrAppend(&seen, "--- ", name, ":\n", agent->StderrTail(8192));
    }
    return seen;
  }

  std::string dir_;
  std::string address_;
  std::unique_ptr<JobsetdProcess> jobsetd_;
  std::map<std::string, std::unique_ptr<JobsetdProcess>> agents_;
  std::vector<std::string> work_dirs_;
  std::unique_ptr<api::JobSetService::Stub> stub_;
};

TEST_F(AgentE2eTest, PodsResolveTheirPeersAndTheJobSetCompletes) {
  StartAgent("node-a", 2);
  StartAgent("node-b", 3);
  const std::string out = absl::StrCat(dir_, "/resolved");
  // Each pod resolves both pods' hostnames (the JobSet's subdomain form too)
  // and records what it sees.
  Create(ShellJobSet("peers", 2,
                     absl::StrCat("getent hosts peers-workers-0-0.peers "
                                  "peers-workers-1-0 >> ",
                                  out, ".$JOB_COMPLETION_INDEX.$(hostname)"))
             .Build());
  ASSERT_TRUE(Finished("peers", "Completed")) << Get("peers").DebugString();
  // The pods saw their own hostnames and each other's node address.
  const std::string a = absl::StrCat(out, ".0.peers-workers-0-0");
  const std::string b = absl::StrCat(out, ".0.peers-workers-1-0");
  ASSERT_TRUE(std::filesystem::exists(a)) << a;
  ASSERT_TRUE(std::filesystem::exists(b)) << b;
  std::ifstream in(a);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  EXPECT_THAT(text, ::testing::HasSubstr("127.0.0."));
  EXPECT_THAT(text, ::testing::HasSubstr("peers-workers-1-0"));
}

TEST_F(AgentE2eTest, AnAgentKilledBrieflyCostsNoRestartAndNoRelaunch) {
  StartAgent("node-a", 2);
  const std::string launches = absl::StrCat(dir_, "/launches");
  Create(
      ShellJobSet("brief", 1, absl::StrCat("echo x >> ", launches, "; sleep 3"))
          .Build());
  ASSERT_TRUE(Eventually([&] { return CountLines(launches) == 1; }));
  ASSERT_TRUE(agents_["node-a"]->Kill(SIGKILL).ok());
  agents_["node-a"]->Wait().IgnoreError();
  absl::SleepFor(absl::Milliseconds(500));
  StartAgent("node-a", 2);
  ASSERT_TRUE(Finished("brief", "Completed")) << Get("brief").DebugString();
  EXPECT_EQ(Get("brief").status().restarts(), 0);
  EXPECT_EQ(CountLines(launches), 1);
}

TEST_F(AgentE2eTest, InPlaceRestartRestartsEveryPodWhereItIsBehindABarrier) {
  StartAgent("node-a", 2);
  StartAgent("node-b", 3);
  StartAgent("node-c", 4);
  const std::string log = absl::StrCat(dir_, "/attempts");
  // Attempt 0: pod 1 fails after a second, the others run until stopped
  // (each notes its stop). Attempt 1: every pod notes its start and ends.
  // Lines are appended by the shell itself (no process to kill), so the
  // file's order is the order of events.
  const std::string script = absl::StrCat(
      "a=$JOBSET_IN_PLACE_RESTART_ATTEMPT; h=$(hostname); ",
      "note() { echo \"$1 $a $h\" >> ", log, "; }; ",
      "trap 'note stop; exit 143' TERM; note start; ",
      "if [ \"$a\" = 0 ]; then ",
      "  if [ \"$JOBSET_JOB_INDEX\" = 1 ]; then sleep 1; note fail; exit 3; "
      "fi; ",
      "  while :; do sleep 0.1; done; ", "fi");
  api::JobSet js = ShellJobSet("inplace", 3, script)
                       .BackoffLimit("workers", 2147483647)
                       .RestartStrategy("InPlaceRestart")
                       .FailurePolicy(2)
                       .Build();
  Create(js);
  ASSERT_TRUE(Finished("inplace", "Completed")) << Get("inplace").DebugString();
  const api::JobSet done = Get("inplace");
  EXPECT_EQ(done.status().restarts(), 0);  // Nothing was recreated.
  EXPECT_EQ(done.status().current_in_place_restart_attempt(), 1);
  EXPECT_EQ(done.status().previous_in_place_restart_attempt(), 0);

  // What happened per attempt, on which pod (by its stable hostname), in
  // order.
  std::vector<std::string> events, pod_of;  // "stop 0"; its pod
  std::map<std::string, std::multiset<std::string>> hosts;
  std::ifstream in(log);
  std::string all;
  for (std::string line; std::getline(in, line);) {
    absl::StrAppend(&all, line, "\n");
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    ASSERT_EQ(f.size(), 3u) << all;
    events.push_back(absl::StrCat(f[0], " ", f[1]));
    pod_of.push_back(f[2]);
    hosts[events.back()].insert(f[2]);
  }
  auto distinct = [&](const std::string& event) {
    return std::set<std::string>(hosts[event].begin(), hosts[event].end());
  };
  EXPECT_EQ(hosts["start 0"].size(), 3u) << all;
  EXPECT_EQ(distinct("start 0").size(), 3u) << all;
  EXPECT_EQ(hosts["fail 0"].size(), 1u) << all;
  // (The shell may note a stop twice: the stop signal reaches it once
  // directly and once through its process group.)
  EXPECT_EQ(distinct("stop 0").size(), 2u) << all;
  // The same pods ran both attempts, each once.
  EXPECT_EQ(hosts["start 1"], hosts["start 0"]) << all;
  // The barrier: no container of attempt 1 started before every container
  // of attempt 0 had ended.
  std::set<std::string> ended;
  for (size_t i = 0; i < events.size() && events[i] != "start 1"; ++i) {
    if (events[i] == "stop 0" || events[i] == "fail 0") {
      ended.insert(pod_of[i]);
    }
  }
  EXPECT_EQ(ended.size(), 3u) << all;
}

TEST_F(AgentE2eTest, AnAgentRestartedDuringAnInPlaceAttemptRunsItOnce) {
  // The agent stays away longer than the default node-lost timeout here.
  ASSERT_TRUE(jobsetd_->Kill(SIGKILL).ok());
  jobsetd_->Wait().IgnoreError();
  StartJobsetd(address_, {"--node_lost_timeout=30s"});
  StartAgent("node-a", 2);
  StartAgent("node-b", 3);
  const std::string log = absl::StrCat(dir_, "/attempts");
  // Attempt 0: pod 1 fails once both pods noted their start (else pod 0
  // may be stopped before it does, under load). Attempt 1: each pod notes
  // its start, then works for 3 s, while node-a's agent is killed and comes
  // back after its pod has ended.
  const std::string script = absl::StrCat(
      "a=$JOBSET_IN_PLACE_RESTART_ATTEMPT; echo \"start $a $(hostname)\" >> ",
      log, "; if [ \"$a\" = 0 ]; then ",
      "  if [ \"$JOBSET_JOB_INDEX\" = 1 ]; then ",
      "    until [ \"$(grep -c '^start 0 ' ", log, ")\" = 2 ]; do ",
      "sleep 0.05; done; exit 3; fi; ", "  while :; do sleep 0.1; done; ",
      "fi; sleep 3");
  Create(ShellJobSet("again", 2, script)
             .BackoffLimit("workers", 2147483647)
             .RestartStrategy("InPlaceRestart")
             .FailurePolicy(2)
             .Build());
  ASSERT_TRUE(Eventually([&] { return CountLines(log) == 4; })) << Seen(log);
  ASSERT_TRUE(agents_["node-a"]->Kill(SIGKILL).ok());
  agents_["node-a"]->Wait().IgnoreError();
  absl::SleepFor(absl::Milliseconds(3500));  // The pod of attempt 1 ends.
  StartAgent("node-a", 2);
  ASSERT_TRUE(Finished("again", "Completed"))
      << Get("again").DebugString() << Seen(log);
  EXPECT_EQ(Get("again").status().restarts(), 0);
  EXPECT_EQ(Get("again").status().current_in_place_restart_attempt(), 1);
  // Two pods, two attempts each: attempt 1 was not run a second time by
  // the restarted agent.
  EXPECT_EQ(CountLines(log), 4) << Seen(log);
}

TEST_F(AgentE2eTest, ALostNodeRestartsTheJobSetElsewhereAndItsPodsAreStopped) {
  StartAgent("node-a", 2);
  StartAgent("node-b", 3);
  const std::string starts = absl::StrCat(dir_, "/starts");
  // Attempt 0 hangs; attempt 1 finishes.
  JobSetBuilder b = ShellJobSet(
      "lost", 1,
      absl::StrCat("echo $JOBSET_RESTART_ATTEMPT >> ", starts,
                   "; [ \"$JOBSET_RESTART_ATTEMPT\" -ge 1 ] && exit 0; "
                   "sleep 300"));
  b.FailurePolicy(3);
  Create(b.Build());
  ASSERT_TRUE(Eventually([&] { return CountLines(starts) == 1; }));
  const std::string victim = PodsOn("node-a").empty() ? "node-b" : "node-a";
  const std::vector<std::string> old_pods = PodsOn(victim);
  ASSERT_EQ(old_pods.size(), 1u);
  ASSERT_TRUE(agents_[victim]->Kill(SIGKILL).ok());
  agents_[victim]->Wait().IgnoreError();
  ASSERT_TRUE(Finished("lost", "Completed")) << Get("lost").DebugString();
  EXPECT_EQ(Get("lost").status().restarts(), 1);
  // The lost node comes back: its old attempt is stopped and forgotten.
  StartAgent(victim, victim == "node-a" ? 2 : 3);
  EXPECT_TRUE(Eventually([&] { return PodsOn(victim).empty(); }));
  EXPECT_EQ(Get("lost").status().restarts(), 1);
}

// Hang detection (jobsetd.io/progress-timeout): attempt 0's pods write a
// few steps to $JOBSET_PROGRESS_FILE and hang; jobsetd fails the attempt
// with ProgressStalled and attempt 1, which finishes, runs.
TEST_F(AgentE2eTest, AHungGangIsRestartedFromItsProgress) {
  StartAgent("node-a", 2);
  StartAgent("node-b", 3);
  JobSetBuilder b = ShellJobSet(
      "hang", 2,
      "for i in 1 2 3; do echo step=$i >> \"$JOBSET_PROGRESS_FILE\"; "
      "sleep 0.3; done; [ \"$JOBSET_RESTART_ATTEMPT\" -ge 1 ] && exit 0; "
      "sleep 300");
  b.FailurePolicy(2).Annotation("jobsetd.io/progress-timeout", "3s");
  Create(b.Build(), /*mount_test_dir=*/false);
  ASSERT_TRUE(Finished("hang", "Completed")) << Get("hang").DebugString();
  EXPECT_EQ(Get("hang").status().restarts(), 1);
}

TEST_F(AgentE2eTest, ASchedulerOutageIsNotAFailure) {
  StartAgent("node-a", 2);
  StartAgent("node-b", 3);
  const std::string done = absl::StrCat(dir_, "/done");
  // Both pods exit while jobsetd is down.
  Create(ShellJobSet("outage", 2, absl::StrCat("sleep 2; echo x >> ", done))
             .Build());
  ASSERT_TRUE(Eventually([&] {
    return PodsOn("node-a").size() == 1 && PodsOn("node-b").size() == 1;
  }));
  ASSERT_TRUE(jobsetd_->Kill(SIGKILL).ok());
  jobsetd_->Wait().IgnoreError();
  ASSERT_TRUE(Eventually([&] { return CountLines(done) == 2; }));
  absl::SleepFor(absl::Seconds(3));  // Longer than the node-lost timeout.
  StartJobsetd(address_);
  ASSERT_TRUE(Finished("outage", "Completed")) << Get("outage").DebugString();
  EXPECT_EQ(Get("outage").status().restarts(), 0);
  EXPECT_EQ(CountLines(done), 2);
}

// A launcher's flags as upstream manifests write them: kubelet expands
// $(NAME) in command and args from the container's env, and so does every
// runtime of jobsetd ($$ escapes; an unknown name stays as written).
TEST_F(AgentE2eTest, CommandAndArgsExpandTheContainersEnv) {
  StartAgent("node-a", 2);
  StartAgent("node-b", 3);
  const std::string out = absl::StrCat(dir_, "/flags");
  // Two Jobs of one pod each: both pods are index 0 of their Job.
  JobSetBuilder b = ShellJobSet("expand", 2, "");
  b.Command("workers",
            {"/bin/sh", "-c", absl::StrCat("echo \"$0 $1 $2\" >> ", out),
             "--node_rank=$(JOB_COMPLETION_INDEX)", "$$(JOB_COMPLETION_INDEX)",
             "$(NO_SUCH_VARIABLE)"});
  Create(b.Build());
  ASSERT_TRUE(Finished("expand", "Completed")) << Get("expand").DebugString();
  std::ifstream in(out);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  EXPECT_THAT(lines,
              ::testing::ElementsAre(
                  "--node_rank=0 $(JOB_COMPLETION_INDEX) $(NO_SUCH_VARIABLE)",
                  "--node_rank=0 $(JOB_COMPLETION_INDEX) $(NO_SUCH_VARIABLE)"));
}

TEST_F(AgentE2eTest, APodThatCannotRunFailsAloneAndTheAgentCarriesOn) {
  StartAgent("node-a", 2);
  JobSetBuilder bad = ShellJobSet("bad", 1, "");
  bad.Command("workers", {"/no/such/binary"});
  Create(bad.Build());
  ASSERT_TRUE(Finished("bad", "Failed")) << Get("bad").DebugString();
  // The same agent still runs the next JobSet.
  Create(ShellJobSet("good", 1, "exit 0").Build());
  ASSERT_TRUE(Finished("good", "Completed")) << Get("good").DebugString();
}

// The pod template of `js`'s first ReplicatedJob.
api::PodSpec& PodTemplate(api::JobSet& js) {
  return *js.mutable_spec()
              ->mutable_replicated_jobs(0)
              ->mutable_template_()
              ->mutable_spec()
              ->mutable_template_()
              ->mutable_spec();
}

// A queue of GPU jobs, the most common ML setup: four rounds of 4-GPU pods on
// two 8-GPU agents. Each pod that waited is placed as the pods before it
// finish, and is admitted on their devices, never failed for them.
TEST_F(AgentE2eTest, FourRoundsOfQueuedGpuPodsAllRunOnTwoAgents) {
  for (const auto& [node, n] : {std::pair{"node-a", 2}, std::pair{"node-b", 3}})
    StartAgent(node, n, {"--capacity=cpu=8,memory=4Gi,nvidia.com/gpu=8"});
  const std::string ran = absl::StrCat(dir_, "/ran");
  constexpr int kJobSets = 16;  // 4 at a time: 4 rounds.
  for (int i = 0; i < kJobSets; ++i) {
    api::JobSet js =
        ShellJobSet(absl::StrCat("gpu-", i), 1,
                    absl::StrCat("echo \"$NVIDIA_VISIBLE_DEVICES\" >> ", ran,
                                 "; sleep 1"))
            .Build();
    for (auto* quantities : {PodTemplate(js)
                                 .mutable_containers(0)
                                 ->mutable_resources()
                                 ->mutable_limits(),
                             PodTemplate(js)
                                 .mutable_containers(0)
                                 ->mutable_resources()
                                 ->mutable_requests()})
      (*quantities)["nvidia.com/gpu"] = "4";
    Create(js);
  }
  for (int i = 0; i < kJobSets; ++i) {
    const std::string name = absl::StrCat("gpu-", i);
    ASSERT_TRUE(
        Eventually([&] { return !Get(name).status().terminal_state().empty(); },
                   absl::Seconds(60)))
        << Get(name).DebugString();
    EXPECT_EQ(Get(name).status().terminal_state(), "Completed")
        << Get(name).DebugString();
  }
  EXPECT_EQ(CountLines(ran), kJobSets);
}

TEST_F(AgentE2eTest, TheSecurityContextReachesThePodAndARefusalTheScheduler) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the shim changes users";
  // A pod without runAsUser runs as the agent's user (root), as before
  // issue 40, so that runAsNonRoot below has a root to refuse.
  StartAgent("node-a", 2, {"--default_pod_uid=0"});
  api::JobSet as_user =
      ShellJobSet("asuser", 1, "echo uid=$(id -u) gid=$(id -g)").Build();
  PodTemplate(as_user).mutable_security_context()->set_run_as_user(1000);
  PodTemplate(as_user).mutable_security_context()->set_run_as_group(3000);
  Create(as_user);
  ASSERT_TRUE(Finished("asuser", "Completed")) << Get("asuser").DebugString();
  std::string logs;
  std::error_code ec;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           absl::StrCat(dir_, "/node-a/logs"), ec)) {
    if (!e.is_regular_file()) continue;
    std::ifstream log(e.path());
    logs.append((std::istreambuf_iterator<char>(log)),
                std::istreambuf_iterator<char>());
  }
  EXPECT_THAT(logs, ::testing::HasSubstr("uid=1000 gid=3000\n"));

  // runAsNonRoot with no user: the container never starts, and jobsetd sees
  // why, as kubelet shows it.
  api::JobSet refused = ShellJobSet("refused", 1, "exit 0").Build();
  PodTemplate(refused).mutable_security_context()->set_run_as_non_root(true);
  Create(refused);
  ASSERT_TRUE(Finished("refused", "Failed")) << Get("refused").DebugString();
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  api::ListPodsRequest req;
  req.set_jobset("refused");
  api::ListPodsResponse pods;
  ASSERT_TRUE(stub_->ListPods(&ctx, req, &pods).ok());
  ASSERT_GE(pods.items_size(), 1);
  const api::PodStatus& status = pods.items(0).status();
  ASSERT_GE(status.container_statuses_size(), 1) << status.DebugString();
  EXPECT_EQ(status.container_statuses(0).state().waiting().reason(),
            "CreateContainerConfigError");
  EXPECT_THAT(status.container_statuses(0).state().waiting().message(),
              ::testing::HasSubstr(
                  "container has runAsNonRoot and image will run as root"));
}

// Issue 40: a pod that sets no runAsUser is not root on its host: it runs
// as the agent's --default_pod_uid (65534, its group too) with no
// capability in effect, and passes runAsNonRoot.
TEST_F(AgentE2eTest, APodWithoutRunAsUserRunsAsTheDefaultPodUid) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the shim changes users";
  StartAgent("node-a", 2);
  api::JobSet js = ShellJobSet("nobody", 1,
                               "echo uid=$(id -u) gid=$(id -g) "
                               "$(grep CapEff /proc/self/status)")
                       .Build();
  PodTemplate(js).mutable_security_context()->set_run_as_non_root(true);
  Create(js);
  ASSERT_TRUE(Finished("nobody", "Completed")) << Get("nobody").DebugString();
  EXPECT_THAT(
      LogsOf({"node-a"}),
      ::testing::HasSubstr("uid=65534 gid=65534 CapEff: 0000000000000000\n"));
}

// ...unless its namespace is privileged when jobsetd admits it: then, as on
// Kubernetes, it runs as the image's user (root here).
TEST_F(AgentE2eTest, APodOfAPrivilegedNamespaceRunsAsRootWithoutRunAsUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the shim changes users";
  StartAgent("node-a", 2);
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    api::ApplyNamespaceRequest req;
    req.mutable_namespace_()->mutable_metadata()->set_name("default");
    (*req.mutable_namespace_()
          ->mutable_metadata()
          ->mutable_labels())["pod-security.kubernetes.io/enforce"] =
        "privileged";
    api::ApplyNamespaceResponse resp;
    const grpc::Status s = stub_->ApplyNamespace(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  Create(ShellJobSet("rooted", 1, "echo uid=$(id -u) gid=$(id -g)").Build());
  ASSERT_TRUE(Finished("rooted", "Completed")) << Get("rooted").DebugString();
  EXPECT_THAT(LogsOf({"node-a"}), ::testing::HasSubstr("uid=0 gid=0\n"));
}

TEST_F(AgentE2eTest,
       AFrozenAgentsPodsStopOnItsLeaseBeforeTheirReplacementsStart) {
  // lease + its 1 s kill grace < node-lost timeout (2 s): no overlap.
  StartAgent("node-a", 2, {"--lease=500ms"});
  StartAgent("node-b", 3, {"--lease=500ms"});
  const std::string log = absl::StrCat(dir_, "/log");
  // Attempt 0 records when it is stopped; attempt 1 when it starts.
  JobSetBuilder b = ShellJobSet(
      "frozen", 1,
      absl::StrCat("now() { date +%s.%N; }; ",
                   "if [ \"$JOBSET_RESTART_ATTEMPT\" -ge 1 ]; then ",
                   "echo \"start $(now)\" >> ", log, "; exit 0; fi; ",
                   "echo \"run $(now)\" >> ", log, "; ",
                   "trap 'trap \"\" TERM; echo \"stop $(now)\" >> ", log,
                   "; exit 143' TERM; ", "sleep 300 & wait $!"));
  b.FailurePolicy(3);
  Create(b.Build());
  ASSERT_TRUE(Eventually([&] { return CountLines(log) == 1; }));
  const std::string victim = PodsOn("node-a").empty() ? "node-b" : "node-a";
  // Frozen past its lease and the node-lost timeout: the JobSet moves on.
  ASSERT_TRUE(agents_[victim]->Kill(SIGSTOP).ok());
  ASSERT_TRUE(Finished("frozen", "Completed")) << Get("frozen").DebugString();
  ASSERT_TRUE(agents_[victim]->Kill(SIGCONT).ok());
  // Thawed, it forgets the old attempt; nothing restarts again.
  EXPECT_TRUE(Eventually([&] { return PodsOn(victim).empty(); }));
  EXPECT_EQ(Get("frozen").status().restarts(), 1);
  // The old attempt stopped before the new one started.
  std::map<std::string, double> at;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> words = absl::StrSplit(line, ' ');
    double t = 0;
    if (words.size() == 2 && absl::SimpleAtod(words[1], &t)) at[words[0]] = t;
  }
  ASSERT_TRUE(at.contains("stop") && at.contains("start")) << CountLines(log);
  EXPECT_LT(at["stop"], at["start"]);
}

// A free TCP port on 127.0.0.1 (closed again; the caller binds it soon).
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

TEST_F(AgentE2eTest, PyTorchDdpRestartsAndResumesFromItsCheckpoint) {
  if (system("/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null") !=
      0) {
    GTEST_SKIP() << "python3-torch is not installed (tools/setup installs it)";
  }
  // The example's checkpoint folder, one of this test process's own: runs at
  // once (--runs_per_test, two clones) would share and remove it.
  const std::string example_ckpt =
      "/tmp/jobsetd-example-checkpoints/pytorch-ddp";
  const std::string ckpt = absl::StrCat(example_ckpt, "-", getpid());
  std::filesystem::remove_all(ckpt);
  // The example's hostPath (type: Directory), for its pods' default user.
  std::filesystem::create_directories(ckpt);
  std::filesystem::permissions(ckpt, std::filesystem::perms::all);
  for (int i = 1; i <= 4; ++i) StartAgent(absl::StrCat("node-", i), i + 1);
  // The example as it is, on a port free on this machine.
  std::ifstream in(Runfile("examples/pytorch-ddp.yaml"));
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  text = absl::StrReplaceAll(
      text, {{"\"29500\"", absl::StrCat("\"", FreePort(), "\"")},
             {example_ckpt, ckpt}});
  auto manifest = api::LoadManifest(text);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  // Nothing of the test's directory mounted: it would hide the progress
  // directory the ranks report to.
  Create((*manifest)[0].jobset, /*mount_test_dir=*/false);
  const bool done = Eventually(
      [&] { return !Get("pytorch-ddp").status().terminal_state().empty(); },
      absl::Seconds(150));
  const std::string logs = LogsOf({"node-1", "node-2", "node-3", "node-4"});
  std::filesystem::remove_all(ckpt);
  ASSERT_TRUE(done) << logs;
  EXPECT_EQ(Get("pytorch-ddp").status().terminal_state(), "Completed") << logs;
  EXPECT_EQ(Get("pytorch-ddp").status().restarts(), 1);
  EXPECT_THAT(logs, ::testing::HasSubstr("rank 3: simulated failure"));
  EXPECT_THAT(logs, ::testing::HasSubstr("attempt 1: resumed from epoch"));
  EXPECT_THAT(logs, ::testing::HasSubstr("rank 0 attempt 1 epoch 9"));
  // Every rank wrote its progress to $JOBSET_PROGRESS_FILE.
  EXPECT_THAT(logs,
              ::testing::Not(::testing::HasSubstr("progress not reported")));
}

// examples/torchrun.yaml as it is: torchrun's c10d rendezvous on
// $(JOBSET_COORDINATOR). The coordinator pod finds itself in the endpoint
// (its FQDN is its canonical name) and hosts the store; both ranks meet.
TEST_F(AgentE2eTest, TorchrunRendezvousOnTheCoordinatorWorksUnchanged) {
  if (system("/usr/bin/python3 -c 'import torch.distributed' 2>/dev/null") !=
      0) {
    GTEST_SKIP() << "python3-torch is not installed (tools/setup installs it)";
  }
  StartAgent("node-1", 2);
  StartAgent("node-2", 3);
  std::ifstream in(Runfile("examples/torchrun.yaml"));
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  // The example as it is, on a port free on this machine.
  text = absl::StrReplaceAll(text, {{":29400", absl::StrCat(":", FreePort())}});
  auto manifest = api::LoadManifest(text);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  Create((*manifest)[0].jobset);
  const bool done = Eventually(
      [&] { return !Get("torchrun").status().terminal_state().empty(); },
      absl::Seconds(120));
  const std::string logs = LogsOf({"node-1", "node-2"});
  ASSERT_TRUE(done) << logs;
  EXPECT_EQ(Get("torchrun").status().terminal_state(), "Completed") << logs;
  EXPECT_THAT(logs, ::testing::HasSubstr(
                        "rank 0/2 on torchrun-workers-0-0.torchrun: sum of "
                        "ranks 1"));
  EXPECT_THAT(logs, ::testing::HasSubstr("rank 1/2 on "));
}

// Every attempt kept: attempt 0 prints and fails, the gang restarts, and
// attempt 1 prints and succeeds. The restart gave the pod a new name; its
// log and the erased attempt 0 pod's are both read through the API
// `jobsetctl logs` uses (GetPodLogs, and with previous).
TEST_F(AgentE2eTest, AnEarlierAttemptsLogIsReadAfterTheRestart) {
  StartAgent("node-a", 2);
  JobSetBuilder b = ShellJobSet("again", 1,
                                "echo \"attempt-$JOBSET_RESTART_ATTEMPT\"; "
                                "[ \"$JOBSET_RESTART_ATTEMPT\" -ge 1 ]");
  b.FailurePolicy(1);
  Create(b.Build(), /*mount_test_dir=*/false);
  ASSERT_TRUE(Finished("again", "Completed")) << Get("again").DebugString();
  ASSERT_EQ(Get("again").status().restarts(), 1);
  std::string pod;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
    api::ListPodsRequest req;
    req.set_namespace_("default");
    api::ListPodsResponse resp;
    ASSERT_TRUE(stub_->ListPods(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.items_size(), 1);
    pod = resp.items(0).metadata().name();
  }
  absl::StatusOr<testing::ClusterCredentials> credentials =
      testing::ReadClusterCredentials(absl::StrCat(dir_, "/jobsetd"));
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  auto logs = api::PodLogService::NewStub(testing::SecureChannel(
      address_, credentials->ca_pem, credentials->admin_token));
  auto read = [&](bool previous) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    api::GetPodLogsRequest req;
    req.set_namespace_("default");
    req.set_pod(pod);
    req.set_previous(previous);
    auto reader = logs->GetPodLogs(&ctx, req);
    std::string data;
    api::PodLogs chunk;
    while (reader->Read(&chunk)) data += chunk.data();
    const grpc::Status s = reader->Finish();
    return s.ok() ? data : absl::StrCat("error: ", s.error_message());
  };
  EXPECT_EQ(read(/*previous=*/false), "attempt-1\n");
  EXPECT_EQ(read(/*previous=*/true), "attempt-0\n");
}

}  // namespace
}  // namespace jobset
