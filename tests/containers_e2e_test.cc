// jobsetd and jobset-agents on --runtime=cri, against a private containerd
// and a private registry with basic auth, built and torn down here: a
// JobSet naming a private image runs with its pull secret, its ENTRYPOINT,
// as the image's non-root user, with a Secret as env and a ConfigMap as
// files; without the pull secret it waits ErrImagePull / ImagePullBackOff
// with kubelet's events and the agent carries on; a pod naming a Secret
// that does not exist waits CreateContainerConfigError until it is created;
// agents killed with -9 take up their running containers again; a
// restart-all of four pods on four agents runs the next attempt.
// Skipped, with the reason, where containerd cannot run.
#include <signal.h>
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

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/runtime/cri/containerd_test_env.h"
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

using ::jobset::agent::testing::BuildBusyboxRootfs;
using ::jobset::agent::testing::ContainerdUnavailable;
using ::jobset::agent::testing::ImageConfig;
using ::jobset::agent::testing::TestContainerd;
using ::jobset::agent::testing::TestRegistry;
using ::jobset::testing::JobsetdProcess;
using ::testing::Contains;
using ::testing::HasSubstr;

constexpr char kUser[] = "team";
constexpr char kPassword[] = "pull-secret-7f3a";

// The image's ENTRYPOINT: says who it is and what it was given; CMD "ok".
constexpr char kEntrypoint[] = R"(#!/bin/sh
echo "uid=$(id -u) gid=$(id -g) token=$API_TOKEN mode=$(cat /etc/settings/mode) arg=$1"
)";

using ::jobset::testing::Runfile;

// Containers take longer than processes: a minute, polled every 100 ms.
bool Eventually(const std::function<bool()>& done,
                absl::Duration timeout = absl::Seconds(60)) {
  return testing::Eventually(done, timeout, absl::Milliseconds(100));
}

// The JobSet every test runs, `pods` pods of the private image; `script`,
// when given, is run by sh in place of the image's entrypoint, and
// `max_restarts` is its failurePolicy's.
std::string Manifest(const std::string& name, const std::string& image,
                     int pods, bool pull_secret,
                     const std::string& token_secret,
                     const std::string& script = "", int max_restarts = 0) {
  return absl::StrReplaceAll(
      R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: NAME
spec:
  failurePolicy:
    maxRestarts: MAX_RESTARTS
  replicatedJobs:
  - name: workers
    replicas: 1
    template:
      spec:
        parallelism: PODS
        completions: PODS
        completionMode: Indexed
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
PULL_SECRETS            securityContext:
              runAsNonRoot: true
            containers:
            - name: trainer
              image: IMAGE
COMMAND              env:
              - name: API_TOKEN
                valueFrom:
                  secretKeyRef: {name: TOKEN_SECRET, key: token}
              volumeMounts:
              - {name: settings, mountPath: /etc/settings}
              resources:
                requests: {cpu: "1"}
            volumes:
            - name: settings
              configMap: {name: settings}
)",
      {{"NAME", name},
       {"IMAGE", image},
       {"PODS", absl::StrCat(pods)},
       {"TOKEN_SECRET", token_secret},
       {"MAX_RESTARTS", absl::StrCat(max_restarts)},
       {"COMMAND", script.empty()
                       ? ""
                       : absl::StrCat("              command: [/bin/sh, -c, '",
                                      script, "']\n")},
       {"PULL_SECRETS", pull_secret ? "            imagePullSecrets:\n"
                                      "            - name: regcred\n"
                                    : ""}});
}

class ContainersE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = ContainerdUnavailable(); !why.empty()) {
      GTEST_SKIP() << "containerd cannot run here: " << why;
    }
    dir_ = absl::StrCat(
        std::getenv("TEST_TMPDIR"), "/",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);

    auto registry = TestRegistry::Start(dir_ + "/registry", kUser, kPassword);
    ASSERT_TRUE(registry.ok()) << registry.status();
    registry_ = *std::move(registry);
    const std::string script = dir_ + "/entrypoint";
    { std::ofstream(script) << kEntrypoint; }
    std::filesystem::permissions(script, std::filesystem::perms(0755));
    ASSERT_TRUE(
        BuildBusyboxRootfs(dir_ + "/rootfs", {{script, "/bin/entrypoint"}})
            .ok());
    ImageConfig config;
    config.entrypoint = {"/bin/entrypoint"};
    config.cmd = {"ok"};
    config.env = {"PATH=/bin"};
    config.user = "1000:1000";
    auto image =
        registry_->Push(dir_ + "/rootfs", config, "jobset-e2e/trainer", "1");
    ASSERT_TRUE(image.ok()) << image.status();
    image_ = *image;
    auto containerd = TestContainerd::Start(dir_ + "/containerd");
    ASSERT_TRUE(containerd.ok()) << containerd.status();
    containerd_ = *std::move(containerd);

    auto jobsetd = JobsetdProcess::Start(
        {.binary = Runfile("scheduler/jobsetd"),
         .args = {"--listen=127.0.0.1:0",
                  absl::StrCat("--data_dir=", dir_, "/jobsetd"),
                  "--node_lost_timeout=20s", "--heartbeat_interval=200ms",
                  "--shutdown_grace=1s"},
         .stderr_path = dir_ + "/jobsetd.stderr"});
    ASSERT_TRUE(jobsetd.ok()) << jobsetd.status();
    jobsetd_ = *std::move(jobsetd);
    auto credentials =
        testing::ReadClusterCredentials(absl::StrCat(dir_, "/jobsetd"));
    ASSERT_TRUE(credentials.ok()) << credentials.status();
    auto channel = testing::SecureChannel(
        jobsetd_->address(), credentials->ca_pem, credentials->admin_token);
    stub_ = api::JobSetService::NewStub(channel);
    logs_ = api::PodLogService::NewStub(channel);
    for (int i = 1; i <= 2; ++i) StartAgent(i);

    ApplyDockerConfigSecret();
    ApplySecret("api-token", "token", "s3cr3t-token");
    api::ApplyConfigMapRequest cm;
    cm.mutable_config_map()->mutable_metadata()->set_name("settings");
    (*cm.mutable_config_map()->mutable_data())["mode"] = "fast";
    grpc::ClientContext ctx;
    api::ApplyConfigMapResponse resp;
    ASSERT_TRUE(stub_->ApplyConfigMap(&ctx, cm, &resp).ok());
  }

  void TearDown() override {
    agents_.clear();  // SIGKILL; containerd keeps the containers...
    jobsetd_.reset();
    // ... which its shutdown removes, with everything it mounted.
    if (containerd_ != nullptr) {
      EXPECT_TRUE(containerd_->Shutdown().ok());
    }
    registry_.reset();
  }

  void StartAgent(int n) {
    const std::string name = absl::StrCat("node-", n);
    auto agent = JobsetdProcess::Start(
        {.binary = Runfile("agent/jobset-agent"),
         .args = {absl::StrCat("--scheduler=", jobsetd_->address()),
                  absl::StrCat("--node_name=", name),
                  absl::StrCat("--address=127.0.0.", n + 1),
                  absl::StrCat("--work_dir=", dir_, "/", name),
                  absl::StrCat("--join_token_file=", dir_,
                               "/jobsetd/join-token"),
                  "--runtime=cri",
                  absl::StrCat("--cri_endpoint=", containerd_->endpoint()),
                  "--capacity=cpu=1,memory=4Gi"},
         .stderr_path = absl::StrCat(dir_, "/", name, ".stderr"),
         .ready_prefix = absl::StrCat("jobset-agent ", name, " serving")});
    ASSERT_TRUE(agent.ok()) << agent.status();
    agents_[name] = *std::move(agent);
  }

  void ApplySecret(const std::string& name, const std::string& key,
                   const std::string& value) {
    api::ApplySecretRequest req;
    req.mutable_secret()->mutable_metadata()->set_name(name);
    (*req.mutable_secret()->mutable_data())[key] = value;
    grpc::ClientContext ctx;
    api::ApplySecretResponse resp;
    grpc::Status s = stub_->ApplySecret(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  // regcred: kubernetes.io/dockerconfigjson for the registry, as
  // `kubectl create secret docker-registry` writes it.
  void ApplyDockerConfigSecret() {
    api::ApplySecretRequest req;
    req.mutable_secret()->mutable_metadata()->set_name("regcred");
    req.mutable_secret()->set_type("kubernetes.io/dockerconfigjson");
    (*req.mutable_secret()->mutable_data())[".dockerconfigjson"] = absl::StrCat(
        R"({"auths":{")", registry_->address(), R"(":{"username":")", kUser,
        R"(","password":")", kPassword, R"("}}})");
    grpc::ClientContext ctx;
    api::ApplySecretResponse resp;
    grpc::Status s = stub_->ApplySecret(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  void Create(const std::string& manifest) {
    auto objects = api::LoadManifest(manifest);
    ASSERT_TRUE(objects.ok()) << objects.status();
    ASSERT_EQ(objects->size(), 1u);
    grpc::ClientContext ctx;
    api::CreateJobSetRequest req;
    *req.mutable_jobset() = (*objects)[0].jobset;
    api::CreateJobSetResponse resp;
    grpc::Status s = stub_->CreateJobSet(&ctx, req, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  api::JobSet Get(const std::string& name) {
    grpc::ClientContext ctx;
    api::GetJobSetRequest req;
    req.set_name(name);
    api::JobSet js;
    stub_->GetJobSet(&ctx, req, &js).ok();
    return js;
  }

  std::string State(const std::string& name) {
    return Get(name).status().terminal_state();
  }

  std::vector<api::Pod> Pods(const std::string& jobset) {
    grpc::ClientContext ctx;
    api::ListPodsRequest req;
    req.set_jobset(jobset);
    api::ListPodsResponse resp;
    stub_->ListPods(&ctx, req, &resp).ok();
    return {resp.items().begin(), resp.items().end()};
  }

  // "<reason>: <message>" of every pod's first container's waiting state.
  std::vector<std::string> Waiting(const std::string& jobset) {
    std::vector<std::string> out;
    for (const api::Pod& pod : Pods(jobset)) {
      for (const api::ContainerStatus& c : pod.status().container_statuses()) {
        if (c.state().has_waiting()) {
          out.push_back(absl::StrCat(c.state().waiting().reason(), ": ",
                                     c.state().waiting().message()));
        }
      }
    }
    return out;
  }

  // "<type> <reason> <note>" of the JobSet's events.
  std::vector<std::string> Events(const std::string& jobset) {
    grpc::ClientContext ctx;
    api::ListEventsRequest req;
    req.set_jobset(jobset);
    api::ListEventsResponse resp;
    stub_->ListEvents(&ctx, req, &resp).ok();
    std::vector<std::string> out;
    for (const api::Event& e : resp.items())
      out.push_back(absl::StrCat(e.type(), " ", e.reason(), " ", e.note()));
    return out;
  }

  std::string Logs(const std::string& pod) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    api::GetPodLogsRequest req;
    req.set_pod(pod);
    auto reader = logs_->GetPodLogs(&ctx, req);
    std::string out;
    api::PodLogs chunk;
    while (reader->Read(&chunk)) out += chunk.data();
    reader->Finish().ok();
    return out;
  }

  bool AnyEvent(const std::string& jobset, const std::string& part) {
    for (const std::string& e : Events(jobset)) {
      if (absl::StrContains(e, part)) return true;
    }
    return false;
  }

  std::string dir_;
  std::unique_ptr<TestRegistry> registry_;
  std::unique_ptr<TestContainerd> containerd_;
  std::string image_;
  std::unique_ptr<JobsetdProcess> jobsetd_;
  std::map<std::string, std::unique_ptr<JobsetdProcess>> agents_;
  std::unique_ptr<api::JobSetService::Stub> stub_;
  std::unique_ptr<api::PodLogService::Stub> logs_;
};

TEST_F(ContainersE2eTest, APrivateImageRunsWithItsPullSecretAsItsNonRootUser) {
  Create(Manifest("private", image_, 2, /*pull_secret=*/true, "api-token"));
  ASSERT_TRUE(Eventually([&] { return State("private") == "Completed"; }))
      << absl::StrJoin(Waiting("private"), "\n") << "\n"
      << absl::StrJoin(Events("private"), "\n");
  const std::vector<api::Pod> pods = Pods("private");
  ASSERT_EQ(pods.size(), 2u);
  for (const api::Pod& pod : pods) {
    // The image's entrypoint and CMD, its user (as kubelet passes it, the
    // uid alone: its group is root's where the image has no /etc/passwd
    // entry), the Secret's value as env and the ConfigMap's key as a file.
    EXPECT_THAT(Logs(pod.metadata().name()),
                HasSubstr("uid=1000 gid=0 token=s3cr3t-token mode=fast arg=ok"))
        << pod.metadata().name();
  }
  // kubelet's pull events reached the JobSet's.
  EXPECT_TRUE(AnyEvent("private", "Normal Pulling pod "))
      << absl::StrJoin(Events("private"), "\n");
  EXPECT_TRUE(AnyEvent("private", "Normal Pulled pod "))
      << absl::StrJoin(Events("private"), "\n");
  // The JobSet as clients see it holds the reference, never the value.
  for (const api::Pod& pod : pods) {
    EXPECT_FALSE(absl::StrContains(pod.DebugString(), "s3cr3t-token"));
  }
  for (const std::string& e : Events("private")) {
    EXPECT_FALSE(absl::StrContains(e, "s3cr3t-token")) << e;
    EXPECT_FALSE(absl::StrContains(e, kPassword)) << e;
  }
}

TEST_F(ContainersE2eTest, WithoutItsPullSecretTheImageWaitsAndTheAgentRunsOn) {
  Create(Manifest("anonymous", image_, 1, /*pull_secret=*/false, "api-token"));
  ASSERT_TRUE(Eventually([&] {
    for (const std::string& w : Waiting("anonymous")) {
      if (absl::StartsWith(
              w, "ImagePullBackOff: Back-off pulling image \"" + image_ + "\""))
        return true;
    }
    return false;
  })) << absl::StrJoin(Waiting("anonymous"), "\n");
  EXPECT_TRUE(AnyEvent("anonymous",
                       absl::StrCat("Failed to pull image \"", image_, "\"")))
      << absl::StrJoin(Events("anonymous"), "\n");
  EXPECT_TRUE(AnyEvent("anonymous", "Normal BackOff pod "))
      << absl::StrJoin(Events("anonymous"), "\n");
  EXPECT_EQ(State("anonymous"), "");
  // The other node (or the same one) still runs a pod that has the secret.
  Create(Manifest("after", image_, 1, /*pull_secret=*/true, "api-token"));
  EXPECT_TRUE(Eventually([&] { return State("after") == "Completed"; }))
      << absl::StrJoin(Waiting("after"), "\n");
}

TEST_F(ContainersE2eTest, AMissingSecretWaitsUntilItIsCreated) {
  Create(Manifest("late", image_, 1, /*pull_secret=*/true, "late-token"));
  ASSERT_TRUE(Eventually([&] {
    for (const std::string& w : Waiting("late")) {
      if (w == "CreateContainerConfigError: secret \"late-token\" not found")
        return true;
    }
    return false;
  })) << absl::StrJoin(Waiting("late"), "\n");
  const std::vector<api::Pod> pods = Pods("late");
  ASSERT_EQ(pods.size(), 1u);
  const std::string pod = pods[0].metadata().name();
  EXPECT_THAT(Events("late"),
              Contains(absl::StrCat("Warning Failed pod ", pod,
                                    ": Error: secret \"late-token\" not "
                                    "found")));
  ApplySecret("late-token", "token", "now-here");
  ASSERT_TRUE(Eventually([&] { return State("late") == "Completed"; }))
      << absl::StrJoin(Waiting("late"), "\n");
  EXPECT_THAT(Logs(pod), HasSubstr("token=now-here"));
}

// An agent killed with -9 leaves its containers to containerd: a new agent
// on the same work dir takes them up by label, relaunches nothing, and
// reports what ended while it was away and what ends after.
TEST_F(ContainersE2eTest,
       AnAgentKilledAndRestartedTakesUpItsRunningContainers) {
  // Pod 0 ends 2 s after it starts, while the agents are down; pod 1 8 s.
  Create(Manifest("survivor", image_, 2, /*pull_secret=*/true, "api-token",
                  "echo start; sleep $((2 + 6 * JOB_COMPLETION_INDEX)); "
                  "echo done"));
  std::map<std::string, std::string> uids;  // name -> uid
  ASSERT_TRUE(Eventually([&] {
    uids.clear();
    for (const api::Pod& pod : Pods("survivor")) {
      if (pod.status().phase() == "Running") {
        uids[pod.metadata().name()] = pod.metadata().uid();
      }
    }
    return uids.size() == 2;
  })) << absl::StrJoin(Waiting("survivor"), "\n");
  for (auto& [name, agent] : agents_) ASSERT_TRUE(agent->Kill(SIGKILL).ok());
  for (auto& [name, agent] : agents_) ASSERT_TRUE(agent->Wait().ok());
  absl::SleepFor(absl::Seconds(4));
  for (int i = 1; i <= 2; ++i) StartAgent(i);

  ASSERT_TRUE(Eventually([&] { return State("survivor") == "Completed"; }))
      << absl::StrJoin(Waiting("survivor"), "\n") << "\n"
      << absl::StrJoin(Events("survivor"), "\n");
  EXPECT_EQ(Get("survivor").status().restarts(), 0);
  const std::vector<api::Pod> pods = Pods("survivor");
  ASSERT_EQ(pods.size(), 2u);
  for (const api::Pod& pod : pods) {
    // The same pods, each run once, ended by their own exit.
    EXPECT_EQ(uids[pod.metadata().name()], pod.metadata().uid());
    EXPECT_EQ(pod.status().phase(), "Succeeded") << pod.ShortDebugString();
    ASSERT_EQ(pod.status().container_statuses_size(), 1);
    EXPECT_EQ(
        pod.status().container_statuses(0).state().terminated().exit_code(), 0);
    EXPECT_EQ(pod.status().container_statuses(0).restart_count(), 0);
    EXPECT_EQ(Logs(pod.metadata().name()), "start\ndone\n")
        << pod.metadata().name();
  }
}

// Restart-all across four nodes: one pod's failure ends every running
// container of the attempt, and the next attempt runs all four again.
TEST_F(ContainersE2eTest, RestartAllOfFourPodsRunsTheNextAttempt) {
  for (int i = 3; i <= 4; ++i) StartAgent(i);
  Create(Manifest(
      "gang", image_, 4, /*pull_secret=*/true, "api-token",
      "echo attempt $JOBSET_RESTART_ATTEMPT index $JOB_COMPLETION_INDEX; "
      "if [ $JOBSET_RESTART_ATTEMPT = 0 ]; then "
      "[ $JOB_COMPLETION_INDEX = 2 ] && exit 3; "
      // As pid 1, sh dies of SIGTERM only with a handler.
      "trap \"exit 143\" TERM; sleep 30 & wait; fi",
      /*max_restarts=*/1));
  ASSERT_TRUE(Eventually([&] { return State("gang") == "Completed"; }))
      << absl::StrJoin(Waiting("gang"), "\n") << "\n"
      << absl::StrJoin(Events("gang"), "\n");
  EXPECT_EQ(Get("gang").status().restarts(), 1);
  // Only the second attempt's pods are left, one per node, each run once.
  ASSERT_TRUE(Eventually([&] { return Pods("gang").size() == 4; }));
  std::set<std::string> nodes;
  for (const api::Pod& pod : Pods("gang")) {
    EXPECT_EQ(pod.status().phase(), "Succeeded") << pod.ShortDebugString();
    nodes.insert(pod.spec().node_name());
    const std::string log = Logs(pod.metadata().name());
    EXPECT_THAT(log, ::testing::StartsWith("attempt 1 index "))
        << pod.metadata().name();
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
  }
  EXPECT_EQ(nodes.size(), 4u);
  // None of the first attempt's containers is left running in containerd.
  EXPECT_TRUE(Eventually(
      [&] {
        absl::StatusOr<int> n = containerd_->RunningContainers();
        return n.ok() && *n == 0;
      },
      absl::Seconds(10)));
}

}  // namespace
}  // namespace jobset
