// jobsetd and jobset-agents on --runtime=cri, against a private containerd
// and a private registry with basic auth, built and torn down here: a
// JobSet naming a private image runs with its pull secret, its ENTRYPOINT,
// as the image's non-root user, with a Secret as env and a ConfigMap as
// files; without the pull secret it waits ErrImagePull / ImagePullBackOff
// with kubelet's events and the agent carries on; a pod naming a Secret
// that does not exist waits CreateContainerConfigError until it is created.
// Skipped, with the reason, where containerd cannot run.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
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

std::string Runfile(const std::string& path) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/",
                      std::getenv("TEST_WORKSPACE"), "/", path);
}

bool Eventually(const std::function<bool()>& done,
                absl::Duration timeout = absl::Seconds(60)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return done();
}

// The JobSet every test runs, `pods` pods of the private image.
std::string Manifest(const std::string& name, const std::string& image,
                     int pods, bool pull_secret,
                     const std::string& token_secret) {
  return absl::StrReplaceAll(
      R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: NAME
spec:
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
              env:
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
                  "--node_lost_timeout=5s", "--heartbeat_interval=200ms",
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

  std::string State(const std::string& name) {
    grpc::ClientContext ctx;
    api::GetJobSetRequest req;
    req.set_name(name);
    api::JobSet js;
    stub_->GetJobSet(&ctx, req, &js).ok();
    return js.status().terminal_state();
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
        if (c.state() == "waiting")
          out.push_back(absl::StrCat(c.reason(), ": ", c.message()));
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

}  // namespace
}  // namespace jobset
