// jobsetd on etcd, end to end: a jobsetd process with --store=etcd on a
// private etcd stores a JobSet through the API, and a restarted jobsetd (same
// etcd, same --data_dir for its credentials) still serves it; two replicas
// elect one leader, and the other takes over when it is killed.
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "api/jobset_builder.h"
#include "common/leader_redirect.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/jobset_service.grpc.pb.h"
#include "store/etcd/etcd_test_server.h"
#include "tests/cluster_credentials.h"
#include "tests/jobsetd_process.h"

namespace jobset {
namespace {

using ::jobset::api::CreateJobSetRequest;
using ::jobset::api::CreateJobSetResponse;
using ::jobset::api::GetJobSetRequest;
using ::jobset::api::JobSet;
using ::jobset::api::JobSetService;
using ::jobset::store::testing::EtcdTestServer;
using ::jobset::testing::ClusterCredentials;
using ::jobset::testing::JobsetdProcess;
using ::jobset::testing::ReadClusterCredentials;
using ::jobset::testing::SecureChannel;

// The replicas' --leader_lease in the HA test.
constexpr absl::Duration kLease = absl::Seconds(2);

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
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    CreateJobSetRequest request;
    *request.mutable_jobset() = api::testing::JobSetBuilder("on-etcd")
                                    .Namespace("etcd")
                                    .Replicated("workers", 2)
                                    .Build();
    CreateJobSetResponse response;
    const grpc::Status created =
        stub->CreateJobSet(&context, request, &response);
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

// Flags of a replica on `etcd` (mutual TLS) with its own data dir.
JobsetdProcess::Options Replica(const EtcdTestServer& etcd,
                                const std::string& data_dir,
                                const std::string& stderr_path) {
  JobsetdProcess::Options options;
  options.binary = JobsetdProcess::DefaultBinary();
  options.args = {
      "--listen=127.0.0.1:0",
      absl::StrCat("--data_dir=", data_dir),
      "--store=etcd",
      absl::StrCat("--etcd_endpoints=", absl::StrJoin(etcd.endpoints(), ",")),
      absl::StrCat("--etcd_cafile=", etcd.ca_file()),
      absl::StrCat("--etcd_certfile=", etcd.client_cert_file()),
      absl::StrCat("--etcd_keyfile=", etcd.client_key_file()),
      "--etcd_prefix=/ha/",
      absl::StrCat("--leader_lease=", absl::FormatDuration(kLease))};
  options.stderr_path = stderr_path;
  return options;
}

grpc::Status Create(JobSetService::Stub& stub, const std::string& name) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  CreateJobSetRequest request;
  *request.mutable_jobset() = api::testing::JobSetBuilder(name)
                                  .Namespace("etcd")
                                  .Replicated("workers", 2)
                                  .Build();
  CreateJobSetResponse response;
  return stub.CreateJobSet(&context, request, &response);
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
  auto stub_a = AdminStub(**a, dir_a);
  ASSERT_NE(stub_a, nullptr);
  for (int i = 0; i < 5; ++i) {
    const grpc::Status created = Create(*stub_a, absl::StrCat("acked-", i));
    ASSERT_TRUE(created.ok()) << created.error_message();
  }
  JobSet first;
  ASSERT_TRUE(Get(*stub_a, "acked-0", &first).ok());

  // The second replica shares the cluster's identity (its CA and serving
  // certificate; tokens are in etcd).
  std::filesystem::copy(dir_a, dir_b, std::filesystem::copy_options::recursive);
  JobsetdProcess::Options options_b =
      Replica(**etcd, dir_b, absl::StrCat(tmp, "/b.stderr"));
  options_b.ready_prefix = JobsetdProcess::kFollowerPrefix;
  auto b = JobsetdProcess::Start(options_b);
  ASSERT_TRUE(b.ok()) << b.status();
  {
    auto stub_b = AdminStub(**b, dir_b);
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

}  // namespace
}  // namespace jobset
