// jobsetd on etcd, end to end: a jobsetd process with --store=etcd on a
// private etcd stores a JobSet through the API, and a restarted jobsetd (same
// etcd, same --data_dir for its credentials) still serves it; two replicas
// elect one leader, and the other takes over when it is killed or cut off
// from etcd.
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "api/jobset_builder.h"
#include "common/leader_redirect.h"
#include "common/status_macros.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/jobset_service.grpc.pb.h"
#include "store/etcd/etcd_test_server.h"
#include "store/etcd/tcp_proxy.h"
#include "tests/cluster_credentials.h"
#include "tests/e2e_support.h"
#include "tests/jobsetd_process.h"

namespace jobset {
namespace {

using ::jobset::api::CreateJobSetRequest;
using ::jobset::api::CreateJobSetResponse;
using ::jobset::api::GetJobSetRequest;
using ::jobset::api::JobSet;
using ::jobset::api::JobSetService;
using ::jobset::api::ListJobSetsRequest;
using ::jobset::api::ListJobSetsResponse;
using ::jobset::store::testing::EtcdTestServer;
using ::jobset::store::testing::TcpProxy;
using ::jobset::testing::AwaitNodesReady;
using ::jobset::testing::ClusterCredentials;
using ::jobset::testing::CountLines;
using ::jobset::testing::Eventually;
using ::jobset::testing::GatedPodCommand;
using ::jobset::testing::JobsetdProcess;
using ::jobset::testing::MountHostDir;
using ::jobset::testing::PodIoDir;
using ::jobset::testing::ReadClusterCredentials;
using ::jobset::testing::RemovePods;
using ::jobset::testing::RunCommand;
using ::jobset::testing::Runfile;
using ::jobset::testing::SecureChannel;

// The replicas' --leader_lease in the HA test.
constexpr absl::Duration kLease = absl::Seconds(2);
// jobsetd's default: longer than etcd takes to elect a new raft leader when
// its leader dies (its election timeout is 1 s), which a 2 s lease is not
// (the leader holds itself deposed 1.6 s after its last renewal).
constexpr absl::Duration kDefaultLease = absl::Seconds(5);

grpc::Status Get(JobSetService::Stub& stub, const std::string& name,
                 JobSet* out) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  GetJobSetRequest request;
  request.set_namespace_("etcd");
  request.set_name(name);
  return stub.GetJobSet(&context, request, out);
}

// A stub speaking to `jobsetd` as the administrator its data dir names.
std::unique_ptr<JobSetService::Stub> AdminStub(const JobsetdProcess& jobsetd,
                                               const std::string& data_dir) {
  absl::StatusOr<ClusterCredentials> credentials =
      ReadClusterCredentials(data_dir);
  EXPECT_TRUE(credentials.ok()) << credentials.status();
  if (!credentials.ok()) return nullptr;
  return JobSetService::NewStub(SecureChannel(
      jobsetd.address(), credentials->ca_pem, credentials->admin_token));
}

grpc::Status Create(JobSetService::Stub& stub, const std::string& name,
                    absl::Duration timeout = absl::Seconds(10)) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  CreateJobSetRequest request;
  *request.mutable_jobset() = api::testing::JobSetBuilder(name)
                                  .Namespace("etcd")
                                  .Replicated("workers", 2)
                                  .Build();
  CreateJobSetResponse response;
  return stub.CreateJobSet(&context, request, &response);
}

TEST(JobsetdEtcdTest, JobSetsSurviveARestartOnEtcd) {
  if (!EtcdTestServer::Available()) GTEST_SKIP() << EtcdTestServer::Why();
  const std::string tmp = ::testing::TempDir();
  auto etcd = EtcdTestServer::Start({.dir = absl::StrCat(tmp, "/etcd")});
  ASSERT_TRUE(etcd.ok()) << etcd.status();

  const std::string data_dir = absl::StrCat(tmp, "/jobsetd-data");
  JobsetdProcess::Options options;
  options.binary = JobsetdProcess::DefaultBinary();
  options.args = {"--listen=127.0.0.1:0", absl::StrCat("--data_dir=", data_dir),
                  "--store=etcd",
                  absl::StrCat("--etcd_endpoints=", (*etcd)->endpoints()[0]),
                  "--etcd_prefix=/smoke/"};
  options.stderr_path = absl::StrCat(tmp, "/jobsetd.stderr");

  std::string uid;
  {
    auto jobsetd = JobsetdProcess::Start(options);
    ASSERT_TRUE(jobsetd.ok()) << jobsetd.status();
    auto stub = AdminStub(**jobsetd, data_dir);
    ASSERT_NE(stub, nullptr);
    const grpc::Status created = Create(*stub, "on-etcd");
    ASSERT_TRUE(created.ok()) << created.error_message();
    JobSet got;
    const grpc::Status read = Get(*stub, "on-etcd", &got);
    ASSERT_TRUE(read.ok()) << read.error_message();
    uid = got.metadata().uid();
    EXPECT_FALSE(uid.empty());
    ASSERT_TRUE((*jobsetd)->Kill(SIGTERM).ok());
    auto status = (*jobsetd)->Wait();
    ASSERT_TRUE(status.ok()) << status.status();
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << (*jobsetd)->StderrTail();
  }

  // A new jobsetd process: everything it serves comes from etcd.
  auto jobsetd = JobsetdProcess::Start(options);
  ASSERT_TRUE(jobsetd.ok()) << jobsetd.status();
  auto stub = AdminStub(**jobsetd, data_dir);
  ASSERT_NE(stub, nullptr);
  JobSet got;
  const grpc::Status read = Get(*stub, "on-etcd", &got);
  ASSERT_TRUE(read.ok()) << read.error_message();
  EXPECT_EQ(got.metadata().uid(), uid);
  EXPECT_GT((*jobsetd)->start_revision(), 1);
}

// The secret every replica of these tests is given (--cluster_secret_file).
std::string ClusterSecretFile() {
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/cluster-secret");
  if (!std::filesystem::exists(path)) {
    std::ofstream(path) << "jobsetd-etcd-test-cluster-secret-0123456789\n";
  }
  return path;
}

// Flags of a replica on `etcd` (mutual TLS) with its own data dir.
JobsetdProcess::Options Replica(const EtcdTestServer& etcd,
                                const std::string& data_dir,
                                const std::string& stderr_path,
                                absl::Duration lease = kLease) {
  JobsetdProcess::Options options;
  options.binary = JobsetdProcess::DefaultBinary();
  options.args = {
      "--listen=127.0.0.1:0", absl::StrCat("--data_dir=", data_dir),
      "--store=etcd",
      absl::StrCat("--etcd_endpoints=", absl::StrJoin(etcd.endpoints(), ",")),
      absl::StrCat("--etcd_cafile=", etcd.ca_file()),
      absl::StrCat("--etcd_certfile=", etcd.client_cert_file()),
      absl::StrCat("--etcd_keyfile=", etcd.client_key_file()),
      "--etcd_prefix=/ha/",
      // The pods' files (GatedPodCommand's), mounted into them.
      absl::StrCat("--allowed_host_paths=", PodIoDir()),
      absl::StrCat("--leader_lease=", absl::FormatDuration(lease)),
      absl::StrCat("--cluster_secret_file=", ClusterSecretFile())};
  options.stderr_path = stderr_path;
  return options;
}

// Starts a second replica, following, with a data dir of its own: it takes
// the cluster's CA from etcd (sealed with the one cluster secret), as tokens
// and everything else.
absl::StatusOr<std::unique_ptr<JobsetdProcess>> StartFollower(
    const EtcdTestServer& etcd, const std::string& dir_b) {
  JobsetdProcess::Options options =
      Replica(etcd, dir_b, absl::StrCat(dir_b, ".stderr"));
  options.ready_prefix = JobsetdProcess::kFollowerPrefix;
  return JobsetdProcess::Start(options);
}

// Two replicas on a three-member etcd with mutual TLS: one leads, the other
// redirects to it; kill -9 of the leader and the other leads within the
// lease and a little, serving everything the first acknowledged.
TEST(JobsetdEtcdTest, TheFollowerRedirectsAndTakesOverWhenTheLeaderIsKilled) {
  if (!EtcdTestServer::Available()) GTEST_SKIP() << EtcdTestServer::Why();
  const std::string tmp = ::testing::TempDir();
  auto etcd = EtcdTestServer::Start(
      {.dir = absl::StrCat(tmp, "/ha-etcd"), .members = 3, .tls = true});
  ASSERT_TRUE(etcd.ok()) << etcd.status();

  const std::string dir_a = absl::StrCat(tmp, "/replica-a");
  const std::string dir_b = absl::StrCat(tmp, "/replica-b");
  auto a = JobsetdProcess::Start(
      Replica(**etcd, dir_a, absl::StrCat(tmp, "/a.stderr")));
  ASSERT_TRUE(a.ok()) << a.status();
  // Its credentials' folder is the owner's only, whatever the umask.
  EXPECT_EQ(std::filesystem::status(dir_a).permissions(),
            std::filesystem::perms::owner_all);
  auto stub_a = AdminStub(**a, dir_a);
  ASSERT_NE(stub_a, nullptr);
  for (int i = 0; i < 5; ++i) {
    const grpc::Status created = Create(*stub_a, absl::StrCat("acked-", i));
    ASSERT_TRUE(created.ok()) << created.error_message();
  }
  JobSet first;
  ASSERT_TRUE(Get(*stub_a, "acked-0", &first).ok());

  auto b = StartFollower(**etcd, dir_b);
  ASSERT_TRUE(b.ok()) << b.status();
  // Nothing was copied: the follower took the cluster's CA from etcd.
  {
    std::ifstream ca(absl::StrCat(dir_b, "/pki/ca.crt"));
    const std::string follower_ca((std::istreambuf_iterator<char>(ca)),
                                  std::istreambuf_iterator<char>());
    EXPECT_EQ(ReadClusterCredentials(dir_a)->ca_pem, follower_ca);
  }
  {
    // Its data dir holds no admin.conf until it leads; the first's token is
    // in etcd, valid at any replica.
    auto stub_b = AdminStub(**b, dir_a);
    ASSERT_NE(stub_b, nullptr);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    GetJobSetRequest request;
    request.set_namespace_("etcd");
    request.set_name("acked-0");
    JobSet got;
    const grpc::Status s = stub_b->GetJobSet(&context, request, &got);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE)
        << s.error_message();
    EXPECT_EQ(RedirectedLeader(context, s), (*a)->address());
  }

  const absl::Time killed = absl::Now();
  ASSERT_TRUE((*a)->Kill(SIGKILL).ok());
  ASSERT_TRUE((*b)->AwaitLeading(kLease + absl::Seconds(10)).ok())
      << (*b)->StderrTail();
  const absl::Duration failover = absl::Now() - killed;
  EXPECT_LE(failover, kLease + absl::Seconds(2));
  std::printf("failover (kill -9 of the leader -> the next serving): %s\n",
              absl::FormatDuration(failover).c_str());

  auto stub_b = AdminStub(**b, dir_b);
  ASSERT_NE(stub_b, nullptr);
  for (int i = 0; i < 5; ++i) {
    JobSet got;
    const grpc::Status read = Get(*stub_b, absl::StrCat("acked-", i), &got);
    ASSERT_TRUE(read.ok()) << read.error_message();
    if (i == 0) {
      EXPECT_EQ(got.metadata().uid(), first.metadata().uid());
    }
  }
  const grpc::Status created = Create(*stub_b, "after-failover");
  EXPECT_TRUE(created.ok()) << created.error_message();
}

// Two replicas on a three-member etcd with mutual TLS, `a` leading and `b`
// following, and agents given both addresses, the follower's first (they
// follow its redirect). The destructor stops every pod the agents started.
struct HaCluster {
  std::unique_ptr<EtcdTestServer> etcd;
  std::string dir_a, dir_b;
  std::unique_ptr<JobsetdProcess> a, b;
  std::vector<std::string> work_dirs;
  std::vector<std::unique_ptr<JobsetdProcess>> agents;

  ~HaCluster() {
    agents.clear();
    RemovePods(work_dirs);
  }

  // Starts it all under TempDir()/`name`-*, with `agents` agents.
  absl::Status Start(const std::string& name, int agent_count) {
    const std::string tmp = absl::StrCat(::testing::TempDir(), "/", name);
    JOBSET_ASSIGN_OR_RETURN(
        etcd, EtcdTestServer::Start(
                  {.dir = tmp + "-etcd", .members = 3, .tls = true}));
    dir_a = tmp + "-a";
    dir_b = tmp + "-b";
    JOBSET_ASSIGN_OR_RETURN(
        a, JobsetdProcess::Start(Replica(*etcd, dir_a, tmp + "-a.stderr")));
    JOBSET_ASSIGN_OR_RETURN(b, StartFollower(*etcd, dir_b));
    const std::string replicas = absl::StrCat(b->address(), ",", a->address());
    for (int n = 1; n <= agent_count; ++n) {
      const std::string node = absl::StrCat("node-", n);
      work_dirs.push_back(absl::StrCat(tmp, "-", node));
      JOBSET_ASSIGN_OR_RETURN(
          std::unique_ptr<JobsetdProcess> agent,
          JobsetdProcess::Start(
              {.binary = Runfile("agent/jobset-agent"),
               .args = {absl::StrCat("--scheduler=", replicas),
                        absl::StrCat("--node_name=", node),
                        absl::StrCat("--address=127.0.0.", n + 1),
                        absl::StrCat("--work_dir=", work_dirs.back()),
                        absl::StrCat("--join_token_file=", dir_a,
                                     "/join-token"),
                        absl::StrCat("--shim=",
                                     Runfile("agent/runtime/jobset-pod-shim")),
                        "--capacity=cpu=1,memory=4Gi"},
               .stderr_path = absl::StrCat(tmp, "-", node, ".stderr"),
               .ready_prefix =
                   absl::StrCat("jobset-agent ", node, " serving")}));
      agents.push_back(std::move(agent));
    }
    return absl::OkStatus();
  }

  // Creates `js` at the leader.
  grpc::Status Create(const api::JobSet& js) {
    auto stub = AdminStub(*a, dir_a);
    if (stub == nullptr) return grpc::Status(grpc::StatusCode::INTERNAL, "");
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    CreateJobSetRequest request;
    *request.mutable_jobset() = js;
    MountHostDir(request.mutable_jobset(), PodIoDir());
    CreateJobSetResponse response;
    return stub->CreateJobSet(&context, request, &response);
  }

  // kill -9 of `a`, then waits until `b` leads; its admin stub.
  std::unique_ptr<JobSetService::Stub> FailOver() {
    if (!a->Kill(SIGKILL).ok()) return nullptr;
    if (absl::Status s = b->AwaitLeading(kLease + absl::Seconds(10)); !s.ok()) {
      ADD_FAILURE() << s << b->StderrTail();
      return nullptr;
    }
    return AdminStub(*b, dir_b);
  }
};

// Agents and a client given every replica's address, the follower's first:
// they follow its redirect to the leader. kill -9 of the leader while a
// JobSet runs: its pods keep running, the agents reconnect to the next
// leader, and the JobSet completes there without a restart.
TEST(JobsetdEtcdTest, ARunningJobSetCompletesUnderTheNextLeader) {
  if (!EtcdTestServer::Available()) GTEST_SKIP() << EtcdTestServer::Why();
  const std::string tmp = ::testing::TempDir();
  HaCluster cluster;
  const absl::Status started_cluster = cluster.Start("run", 2);
  ASSERT_TRUE(started_cluster.ok()) << started_cluster;

  // Two pods that run until the test lets them end.
  const std::string gate = absl::StrCat(PodIoDir(), "/run-gate");
  const std::string started = absl::StrCat(PodIoDir(), "/run-started");
  api::JobSet js = api::testing::JobSetBuilder("through-failover")
                       .Namespace("etcd")
                       .Replicated("workers", 2)
                       .RestartPolicy("workers", "Never")
                       .BackoffLimit("workers", 0)
                       .Command("workers", GatedPodCommand(started, gate))
                       .Request("workers", "cpu", "1")
                       .Build();
  const grpc::Status created = cluster.Create(js);
  ASSERT_TRUE(created.ok()) << created.error_message();
  ASSERT_TRUE(
      Eventually([&] { return CountLines(started) == 2; }, absl::Seconds(30)))
      << cluster.a->StderrTail();

  // jobsetctl, given the follower first, is sent on to the leader.
  const std::string jobsetctl =
      absl::StrCat(Runfile("cli/jobsetctl"), " --config=", cluster.dir_a,
                   "/admin.conf --server=https://", cluster.b->address(),
                   ",https://", cluster.a->address(), " -n etcd");
  std::string out;
  ASSERT_EQ(RunCommand(
                absl::StrCat(jobsetctl, " get jobset through-failover -o name"),
                &out),
            0)
      << out;
  EXPECT_EQ(out, "jobset.jobset.x-k8s.io/through-failover\n");

  auto stub_b = cluster.FailOver();
  ASSERT_NE(stub_b, nullptr);
  // Both agents are back, at the new leader, before the pods may end.
  std::string nodes;
  ASSERT_TRUE(AwaitNodesReady(jobsetctl, {"node-1", "node-2"},
                              absl::Seconds(20), &nodes))
      << nodes << cluster.b->StderrTail() << cluster.agents[0]->StderrTail();
  { std::ofstream(gate) << "go"; }
  JobSet done;
  ASSERT_TRUE(Eventually(
      [&] {
        return Get(*stub_b, "through-failover", &done).ok() &&
               done.status().terminal_state() == "Completed";
      },
      absl::Seconds(30)))
      << done.DebugString() << cluster.b->StderrTail();
  EXPECT_EQ(done.status().restarts(), 0);
  EXPECT_EQ(CountLines(started), 2);  // No pod was started again.
}

// kill -9 of the leader the moment a pod fails, while it decides and
// commits the restart-all (for 4 pods: a journaled pass or not, wherever
// the kill lands): the next leader converges on exactly one new attempt,
// every pod of it started once, and the JobSet completes.
TEST(JobsetdEtcdTest, AKillDuringARestartAllConvergesOnOneNewAttempt) {
  if (!EtcdTestServer::Available()) GTEST_SKIP() << EtcdTestServer::Why();
  const std::string tmp = ::testing::TempDir();
  HaCluster cluster;
  const absl::Status started_cluster = cluster.Start("restart", 4);
  ASSERT_TRUE(started_cluster.ok()) << started_cluster;
  const std::string failed = absl::StrCat(PodIoDir(), "/restart-failed");
  const std::string starts = absl::StrCat(PodIoDir(), "/restart-starts");
  // Worker 0 fails once (the first time), after every pod started; the
  // others run until the attempt is replaced, then (attempt 1) end at once.
  const std::string script = absl::StrCat(
      "echo $$ >> ", starts, "; if [ -e ", failed, " ]; then exit 0; fi; ",
      "if [ \"$JOBSET_JOB_INDEX\" = 0 ]; then while [ $(wc -l < ", starts,
      ") -lt 4 ]; do sleep 0.05; done; touch ", failed, "; exit 1; fi; ",
      "while :; do sleep 0.1; done");
  api::JobSet js = api::testing::JobSetBuilder("restart-all")
                       .Namespace("etcd")
                       .Replicated("workers", 4)
                       .RestartPolicy("workers", "Never")
                       .BackoffLimit("workers", 0)
                       .Command("workers", {"/bin/sh", "-c", script})
                       .Request("workers", "cpu", "1")
                       .FailurePolicy(1)
                       .Build();
  const grpc::Status created = cluster.Create(js);
  ASSERT_TRUE(created.ok()) << created.error_message();
  ASSERT_TRUE(Eventually([&] { return std::filesystem::exists(failed); },
                         absl::Seconds(30)))
      << cluster.a->StderrTail();
  // As soon as the failure is there, often before jobsetd heard of it.
  auto stub_b = cluster.FailOver();
  ASSERT_NE(stub_b, nullptr);
  JobSet done;
  ASSERT_TRUE(Eventually(
      [&] {
        return Get(*stub_b, "restart-all", &done).ok() &&
               done.status().terminal_state() == "Completed";
      },
      absl::Seconds(60)))
      << done.DebugString() << cluster.b->StderrTail();
  EXPECT_EQ(done.status().restarts(), 1);
  // Four pods of attempt 0 and four of attempt 1: none duplicated.
  EXPECT_EQ(CountLines(starts), 8);
}

// kill -9 of the leader while a client's creates are being acknowledged:
// every create that was acknowledged is served by the next leader.
TEST(JobsetdEtcdTest, NoAcknowledgedCreateIsLostWhenTheLeaderIsKilled) {
  if (!EtcdTestServer::Available()) GTEST_SKIP() << EtcdTestServer::Why();
  const std::string tmp = ::testing::TempDir();
  auto etcd = EtcdTestServer::Start(
      {.dir = absl::StrCat(tmp, "/acked-etcd"), .members = 3, .tls = true});
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  const std::string dir_a = absl::StrCat(tmp, "/acked-a");
  const std::string dir_b = absl::StrCat(tmp, "/acked-b");
  auto a = JobsetdProcess::Start(
      Replica(**etcd, dir_a, absl::StrCat(tmp, "/acked-a.stderr")));
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = StartFollower(**etcd, dir_b);
  ASSERT_TRUE(b.ok()) << b.status();
  auto stub_a = AdminStub(**a, dir_a);
  ASSERT_NE(stub_a, nullptr);

  // Creates one after another until the leader stops answering.
  std::vector<std::string> acknowledged;
  std::thread creator([&] {
    for (int i = 0; i < 10'000; ++i) {
      const std::string name = absl::StrCat("c-", i);
      if (!Create(*stub_a, name).ok()) return;
      acknowledged.push_back(name);
    }
  });
  ASSERT_TRUE(
      Eventually([&] { return (*a)->Stdout().size() > 0; }, absl::Seconds(1)));
  absl::SleepFor(absl::Milliseconds(500));
  ASSERT_TRUE((*a)->Kill(SIGKILL).ok());
  creator.join();
  ASSERT_GT(acknowledged.size(), 0u);
  ASSERT_TRUE((*b)->AwaitLeading(kLease + absl::Seconds(10)).ok())
      << (*b)->StderrTail();
  auto stub_b = AdminStub(**b, dir_b);
  ASSERT_NE(stub_b, nullptr);
  int missing = 0;
  for (const std::string& name : acknowledged) {
    JobSet got;
    if (!Get(*stub_b, name, &got).ok()) ++missing;
  }
  EXPECT_EQ(missing, 0) << "of " << acknowledged.size() << " acknowledged";
  std::printf("%zu creates acknowledged before the kill, 0 lost\n",
              acknowledged.size());
}

// Each etcd member of three in turn killed and restarted (one of them is
// etcd's raft leader): the jobsetd leader goes on leading and writing, and
// nobody notices.
TEST(JobsetdEtcdTest, OneEtcdMemberDownIsNotNoticed) {
  if (!EtcdTestServer::Available()) GTEST_SKIP() << EtcdTestServer::Why();
  const std::string tmp = ::testing::TempDir();
  auto etcd = EtcdTestServer::Start(
      {.dir = absl::StrCat(tmp, "/member-etcd"), .members = 3, .tls = true});
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  const std::string dir = absl::StrCat(tmp, "/member-a");
  auto a = JobsetdProcess::Start(Replica(
      **etcd, dir, absl::StrCat(tmp, "/member-a.stderr"), kDefaultLease));
  ASSERT_TRUE(a.ok()) << a.status();
  auto stub = AdminStub(**a, dir);
  ASSERT_NE(stub, nullptr);
  ASSERT_TRUE(Create(*stub, "before").ok());
  for (int member = 0; member < 3; ++member) {
    SCOPED_TRACE(absl::StrCat("member ", member, " down"));
    ASSERT_TRUE((*etcd)->Kill(member).ok());
    const absl::Time start = absl::Now();
    for (int i = 0; i < 5; ++i) {
      const grpc::Status s =
          Create(*stub, absl::StrCat("down-", member, "-", i));
      ASSERT_TRUE(s.ok()) << s.error_message() << (*a)->StderrTail();
    }
    // Longer than the lease: the leader renewed it through the others.
    absl::SleepFor(kDefaultLease + absl::Milliseconds(500) -
                   std::min(absl::Now() - start, kDefaultLease));
    ASSERT_TRUE(Create(*stub, absl::StrCat("after-", member)).ok())
        << (*a)->StderrTail();
    ASSERT_TRUE((*etcd)->Restart(member).ok()) << (*etcd)->LogTail(member);
  }
  JobSet got;
  EXPECT_TRUE(Get(*stub, "before", &got).ok());
  EXPECT_TRUE(Get(*stub, "down-2-4", &got).ok());
  // Still the same process, still leading: it never lost its lease.
  EXPECT_EQ(kill((*a)->pid(), 0), 0);
}

// Two etcd members of three down: etcd has no quorum. A write is refused
// with UNAVAILABLE saying so (etcd's "no leader"), the leader, unable to
// renew its lease, stops; when the members return, the replica started
// again (as its supervisor would) leads, with every acknowledged write.
TEST(JobsetdEtcdTest, WithoutQuorumWritesAreRefusedAndNothingIsLost) {
  if (!EtcdTestServer::Available()) GTEST_SKIP() << EtcdTestServer::Why();
  const std::string tmp = ::testing::TempDir();
  auto etcd = EtcdTestServer::Start(
      {.dir = absl::StrCat(tmp, "/quorum-etcd"), .members = 3, .tls = true});
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  const std::string dir = absl::StrCat(tmp, "/quorum-a");
  const JobsetdProcess::Options options = Replica(
      **etcd, dir, absl::StrCat(tmp, "/quorum-a.stderr"), kDefaultLease);
  auto a = JobsetdProcess::Start(options);
  ASSERT_TRUE(a.ok()) << a.status();
  {
    auto stub = AdminStub(**a, dir);
    ASSERT_NE(stub, nullptr);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(Create(*stub, absl::StrCat("acked-", i)).ok());
    }
    ASSERT_TRUE((*etcd)->Kill(1).ok());
    ASSERT_TRUE((*etcd)->Kill(2).ok());
    const grpc::Status refused = Create(*stub, "without-quorum");
    EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE)
        << refused.error_message();
    EXPECT_THAT(refused.error_message(), ::testing::HasSubstr("etcd"));
    std::printf("without quorum: %s\n", refused.error_message().c_str());
  }
  // Its lease cannot be renewed: the leader stops by itself.
  absl::StatusOr<int> exited = (*a)->Wait(kDefaultLease + absl::Seconds(10));
  ASSERT_TRUE(exited.ok()) << exited.status();
  ASSERT_TRUE((*etcd)->Restart(1).ok()) << (*etcd)->LogTail(1);
  ASSERT_TRUE((*etcd)->Restart(2).ok()) << (*etcd)->LogTail(2);
  a->reset();
  JobsetdProcess::Options again = options;
  again.startup_timeout = absl::Seconds(30);
  auto restarted = JobsetdProcess::Start(again);
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  auto stub = AdminStub(**restarted, dir);
  ASSERT_NE(stub, nullptr);
  for (int i = 0; i < 3; ++i) {
    JobSet got;
    EXPECT_TRUE(Get(*stub, absl::StrCat("acked-", i), &got).ok());
  }
  EXPECT_TRUE(Create(*stub, "with-quorum").ok());
}

// The split-brain case end to end: the leader alive, serving its clients,
// but cut off from every etcd member (a TCP proxy in front of each that
// stops forwarding with the connections held open). It must exit before the
// other replica leads, and none of the writes it took after the cut may
// land, even when the partition heals and what it sent arrives late.
TEST(JobsetdEtcdTest,
     ALeaderCutOffFromEtcdStopsBeforeTheNextLeadsAndWritesNothing) {
  if (!EtcdTestServer::Available()) GTEST_SKIP() << EtcdTestServer::Why();
  const std::string tmp = ::testing::TempDir();
  auto etcd = EtcdTestServer::Start(
      {.dir = absl::StrCat(tmp, "/cut-etcd"), .members = 3, .tls = true});
  ASSERT_TRUE(etcd.ok()) << etcd.status();
  // The members' certificate names 127.0.0.1, which the proxies are too.
  std::vector<std::unique_ptr<TcpProxy>> proxies;
  std::vector<std::string> proxied;
  {
    // Healed, a proxy may write to the dead leader's sockets: its thread
    // (which takes this thread's signal mask) gets EPIPE, not SIGPIPE.
    sigset_t sigpipe, mask;
    sigemptyset(&sigpipe);
    sigaddset(&sigpipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigpipe, &mask);
    absl::Cleanup restore = [&mask] {
      pthread_sigmask(SIG_SETMASK, &mask, nullptr);
    };
    for (const std::string& endpoint : (*etcd)->endpoints()) {
      auto proxy =
          TcpProxy::Start(std::string(absl::StripPrefix(endpoint, "https://")));
      ASSERT_TRUE(proxy.ok()) << proxy.status();
      proxied.push_back(absl::StrCat("https://", (*proxy)->address()));
      proxies.push_back(*std::move(proxy));
    }
  }
  // The default lease: a 2 s one leaves a loaded machine little room
  // between the leader's deadline (1.6 s) and a renewal's answer.
  const absl::Duration lease = kDefaultLease;
  const std::string dir_a = absl::StrCat(tmp, "/cut-a");
  const std::string dir_b = absl::StrCat(tmp, "/cut-b");
  JobsetdProcess::Options options_a =
      Replica(**etcd, dir_a, absl::StrCat(tmp, "/cut-a.stderr"), lease);
  for (std::string& arg : options_a.args) {
    if (absl::StartsWith(arg, "--etcd_endpoints=")) {
      arg = absl::StrCat("--etcd_endpoints=", absl::StrJoin(proxied, ","));
    }
  }
  auto a = JobsetdProcess::Start(options_a);
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = StartFollower(**etcd, dir_b);
  ASSERT_TRUE(b.ok()) << b.status();
  auto stub_a = AdminStub(**a, dir_a);
  ASSERT_NE(stub_a, nullptr);
  for (int i = 0; i < 3; ++i) {
    const grpc::Status created = Create(*stub_a, absl::StrCat("before-", i));
    ASSERT_TRUE(created.ok()) << created.error_message();
  }

  // Creates one after another, before and after the cut, until `a` exits.
  // A short deadline, so that several reach `a` while it is cut off.
  struct Sent {
    std::string name;
    absl::Time at;
    grpc::StatusCode code;
  };
  std::vector<Sent> sent;
  std::atomic<bool> stop = false;
  std::thread creator([&] {
    const absl::Time give_up = absl::Now() + lease + absl::Seconds(20);
    for (int i = 0; i < 1000 && !stop.load() && absl::Now() < give_up; ++i) {
      const std::string name = absl::StrCat("c-", i);
      const absl::Time at = absl::Now();
      const grpc::Status created =
          Create(*stub_a, name, absl::Milliseconds(500));
      sent.push_back({name, at, created.error_code()});
    }
  });
  absl::Cleanup join_creator = [&] {
    stop.store(true);
    if (creator.joinable()) creator.join();
  };
  absl::SleepFor(absl::Milliseconds(500));
  for (const auto& proxy : proxies) proxy->Cut(true);
  const absl::Time cut = absl::Now();

  // Both watched in one loop: `b` is looked at first in each round, so a
  // round that sees both counts `b` as leading first. "jobsetd leads" is
  // printed the moment `b` wins, before it loads the store and serves.
  absl::Time a_exited = absl::InfiniteFuture();
  absl::Time b_leads = absl::InfiniteFuture();
  int a_status = 0;
  for (const absl::Time deadline = cut + lease + absl::Seconds(10);
       (a_exited == absl::InfiniteFuture() ||
        b_leads == absl::InfiniteFuture()) &&
       absl::Now() < deadline;
       absl::SleepFor(absl::Milliseconds(5))) {
    if (b_leads == absl::InfiniteFuture() &&
        absl::StrContains((*b)->Stdout(), "jobsetd leads ")) {
      b_leads = absl::Now();
    }
    if (a_exited == absl::InfiniteFuture()) {
      if (absl::StatusOr<int> status = (*a)->Wait(absl::ZeroDuration());
          status.ok()) {
        a_exited = absl::Now();
        a_status = *status;
        stop.store(true);
      }
    }
  }
  std::move(join_creator).Invoke();
  ASSERT_NE(a_exited, absl::InfiniteFuture())
      << "the leader cut off from etcd did not exit\n"
      << (*a)->StderrTail();
  ASSERT_NE(b_leads, absl::InfiniteFuture()) << (*b)->StderrTail();
  EXPECT_LT(a_exited, b_leads)
      << "the next replica led " << absl::FormatDuration(a_exited - b_leads)
      << " before the one cut off exited\n"
      << (*a)->StderrTail() << (*b)->StderrTail();
  EXPECT_TRUE(WIFEXITED(a_status) && WEXITSTATUS(a_status) == 1)
      << a_status << (*a)->StderrTail();
  EXPECT_THAT((*a)->StderrTail(), ::testing::HasSubstr("leadership lost"));
  // It exits 4/5 of the lease after it sent its last renewal etcd answered,
  // which was before the cut.
  EXPECT_LE(a_exited - cut, lease);
  EXPECT_LE(b_leads - cut, lease + absl::Seconds(2));
  ASSERT_TRUE((*b)->AwaitLeading(absl::Seconds(10)).ok()) << (*b)->StderrTail();
  const absl::Time b_serves = absl::Now();

  // The partition heals: what `a` sent into the cut links, still held by
  // the proxies, reaches etcd now, late. Its fence went with its lease, so
  // none of it may land.
  for (const auto& proxy : proxies) proxy->Cut(false);
  absl::SleepFor(absl::Seconds(1));

  auto stub_b = AdminStub(**b, dir_b);
  ASSERT_NE(stub_b, nullptr);
  std::set<std::string> stored;
  {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    ListJobSetsRequest request;
    request.set_namespace_("etcd");
    request.set_limit(10'000);
    ListJobSetsResponse response;
    const grpc::Status listed =
        stub_b->ListJobSets(&context, request, &response);
    ASSERT_TRUE(listed.ok()) << listed.error_message();
    ASSERT_TRUE(response.continue_().empty());
    for (const JobSet& js : response.items()) {
      stored.insert(js.metadata().name());
    }
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(stored.contains(absl::StrCat("before-", i)));
  }
  // Every acknowledged create is stored. One not acknowledged that was sent
  // before the cut may or may not be (it may have reached etcd, its answer
  // not the client). The proxies forward for up to one more 20 ms poll after
  // Cut(): only a create sent 100 ms after it is surely cut off, and it is
  // neither acknowledged nor stored. One that timed out waited at `a`; one
  // sent after `a` exited was refused a connection.
  const absl::Time surely_cut = cut + absl::Milliseconds(100);
  int acknowledged = 0, acknowledged_after_cut = 0, waited_cut_off = 0;
  std::vector<std::string> missing, landed_after_cut;
  std::set<std::string> names = {"before-0", "before-1", "before-2"};
  for (const Sent& s : sent) {
    names.insert(s.name);
    const bool after_cut = s.at >= surely_cut;
    waited_cut_off +=
        after_cut && s.code == grpc::StatusCode::DEADLINE_EXCEEDED;
    if (s.code == grpc::StatusCode::OK) {
      ++acknowledged;
      acknowledged_after_cut += after_cut;
      if (!stored.contains(s.name)) missing.push_back(s.name);
    } else if (after_cut && stored.contains(s.name)) {
      landed_after_cut.push_back(s.name);
    }
  }
  std::vector<std::string> unknown;
  for (const std::string& name : stored) {
    if (!names.contains(name)) unknown.push_back(name);
  }
  EXPECT_GT(acknowledged, 0);
  EXPECT_GT(waited_cut_off, 0);
  EXPECT_EQ(acknowledged_after_cut, 0);
  EXPECT_THAT(missing, ::testing::IsEmpty());
  EXPECT_THAT(landed_after_cut, ::testing::IsEmpty());
  EXPECT_THAT(unknown, ::testing::IsEmpty());
  std::printf(
      "cut off from etcd (lease %s): the leader exited after %s, the next "
      "led after %s (%s later) and served after %s; %d creates "
      "acknowledged, %d sent after the cut waited at the leader cut off, "
      "none acknowledged or stored\n",
      absl::FormatDuration(lease).c_str(),
      absl::FormatDuration(a_exited - cut).c_str(),
      absl::FormatDuration(b_leads - cut).c_str(),
      absl::FormatDuration(b_leads - a_exited).c_str(),
      absl::FormatDuration(b_serves - cut).c_str(), acknowledged,
      waited_cut_off);
  EXPECT_TRUE(Create(*stub_b, "after-the-cut").ok());
}

}  // namespace
}  // namespace jobset
