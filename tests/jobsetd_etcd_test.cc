// jobsetd on etcd, end to end: a jobsetd process with --store=etcd on a
// private etcd stores a JobSet through the API, and a restarted jobsetd (same
// etcd, same --data_dir for its credentials) still serves it.
#include <signal.h>
#include <sys/wait.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "api/jobset_builder.h"
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

}  // namespace
}  // namespace jobset
