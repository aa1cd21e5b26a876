// logs POD: what it asks jobsetd (--attempt N, -p/--previous, -c, -f) and
// what it prints, against a PodLogService fake.
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "cli/cmd/context.h"
#include "cli/commands.h"
#include "gmock/gmock.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "proto/agent.grpc.pb.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;

// Answers "hello\n" for pod "p" and NOT_FOUND for any other, recording the
// last request.
class FakeLogs final : public api::PodLogService::Service {
 public:
  grpc::Status GetPodLogs(grpc::ServerContext*,
                          const api::GetPodLogsRequest* request,
                          grpc::ServerWriter<api::PodLogs>* writer) override {
    {
      absl::MutexLock lock(&mu_);
      last_ = *request;
      ++calls_;
    }
    if (request->pod() != "p") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          "attempt 0 of JobSet default/train is no longer "
                          "kept; kept: 3-12");
    }
    api::PodLogs out;
    out.set_data("hello\n");
    writer->Write(out);
    return grpc::Status::OK;
  }
  api::GetPodLogsRequest last() {
    absl::MutexLock lock(&mu_);
    return last_;
  }
  int calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  absl::Mutex mu_;
  api::GetPodLogsRequest last_ ABSL_GUARDED_BY(mu_);
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
};

class LogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&logs_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = absl::StrCat("127.0.0.1:", port);
  }
  void TearDown() override { server_->Shutdown(); }

  int Run(std::vector<std::string> args) {
    out_.str("");
    err_.str("");
    args.insert(args.begin(), absl::StrCat("--server=http://", address_));
    return Main(args, nullptr, {.out = &out_, .err = &err_});
  }

  FakeLogs logs_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::ostringstream out_, err_;
};

TEST_F(LogsTest, AttemptAndPreviousReachTheRequest) {
  struct Case {
    std::vector<std::string> args;
    bool has_attempt;
    int32_t attempt;
    bool previous;
  };
  for (const Case& c : std::vector<Case>{
           {{"logs", "p"}, false, 0, false},
           {{"logs", "p", "--attempt", "3"}, true, 3, false},
           {{"logs", "p", "--attempt=0"}, true, 0, false},
           {{"logs", "p", "-p"}, false, 0, true},
           {{"logs", "p", "--previous"}, false, 0, true},
           {{"logs", "-n", "team", "p", "-p", "-c", "main", "-f"},
            false,
            0,
            true},
       }) {
    SCOPED_TRACE(c.args.back());
    ASSERT_EQ(Run(c.args), kExitOk) << err_.str();
    EXPECT_EQ(out_.str(), "hello\n");
    const api::GetPodLogsRequest sent = logs_.last();
    EXPECT_EQ(sent.pod(), "p");
    EXPECT_EQ(sent.has_attempt(), c.has_attempt);
    EXPECT_EQ(sent.attempt(), c.attempt);
    EXPECT_EQ(sent.previous(), c.previous);
  }
  const api::GetPodLogsRequest last = logs_.last();
  EXPECT_EQ(last.namespace_(), "team");
  EXPECT_EQ(last.container(), "main");
  EXPECT_TRUE(last.follow());
}

TEST_F(LogsTest, BadAttemptsAreUsageErrorsAndNeverSent) {
  for (const auto& [args, message] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"logs", "p", "--attempt", "2", "-p"},
            "--attempt and -p/--previous are exclusive"},
           {{"logs", "p", "--attempt=-1"},
            "--attempt must be a whole number, 0 or more; got \"-1\""},
           {{"logs", "p", "--attempt", "two"}, "got \"two\""},
           {{"logs", "p", "--attempt", "99999999999"}, "got \"99999999999\""},
       }) {
    SCOPED_TRACE(args.back());
    EXPECT_EQ(Run(args), kExitUsage);
    EXPECT_THAT(err_.str(), HasSubstr(message));
  }
  EXPECT_EQ(logs_.calls(), 0);
}

TEST_F(LogsTest, JobsetdsRefusalIsPrinted) {
  EXPECT_EQ(Run({"logs", "q", "--attempt", "0"}), kExitApiError);
  EXPECT_EQ(err_.str(),
            "error: attempt 0 of JobSet default/train is no longer kept; "
            "kept: 3-12\n");
}

}  // namespace
}  // namespace jobset::cli
