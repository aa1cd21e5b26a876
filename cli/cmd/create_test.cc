// create -f through a failover: a create whose connection broke after it
// may have reached jobsetd is sent again; what it then finds is reported as
// kubectl would (AlreadyExists) unless it is byte for byte what this
// invocation sent (created).
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/defaults.h"
#include "cli/commands.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "proto/jobset_service.grpc.pb.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// CreateJobSet as jobsetd answers it (defaults applied; a repeat of the same
// spec: created=false and the JobSet stored; another spec: ALREADY_EXISTS),
// except that the next create can be made to answer UNAVAILABLE as a leader
// killed before it replied would look, after committing it or before.
class FailingOver final : public api::JobSetService::Service {
 public:
  grpc::Status CreateJobSet(grpc::ServerContext*,
                            const api::CreateJobSetRequest* request,
                            api::CreateJobSetResponse* response) override {
    api::JobSet jobset = request->jobset();
    api::SetJobSetDefaults(&jobset);
    absl::MutexLock lock(&mu_);
    ++creates_;
    if (break_before_commit_) {
      break_before_commit_ = false;
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "Socket closed");
    }
    if (jobset.metadata().name().empty()) {
      jobset.mutable_metadata()->set_name(
          absl::StrCat(jobset.metadata().generate_name(), creates_));
    }
    const std::string& name = jobset.metadata().name();
    auto it = stored_.find(name);
    if (it == stored_.end()) {
      stored_[name] = jobset;
      if (break_after_commit_) {
        break_after_commit_ = false;
        return grpc::Status(grpc::StatusCode::UNAVAILABLE, "Socket closed");
      }
      response->set_created(true);
      *response->mutable_jobset() = jobset;
      return grpc::Status::OK;
    }
    if (!google::protobuf::util::MessageDifferencer::Equals(it->second.spec(),
                                                            jobset.spec())) {
      return grpc::Status(grpc::StatusCode::ALREADY_EXISTS,
                          absl::StrCat("jobsets.jobset.x-k8s.io \"", name,
                                       "\" already exists with a different "
                                       "spec"));
    }
    response->set_created(false);
    *response->mutable_jobset() = it->second;
    return grpc::Status::OK;
  }

  grpc::Status GetJobSet(grpc::ServerContext*,
                         const api::GetJobSetRequest* request,
                         api::JobSet* response) override {
    absl::MutexLock lock(&mu_);
    auto it = stored_.find(request->name());
    if (it == stored_.end()) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "not found");
    }
    *response = it->second;
    return grpc::Status::OK;
  }
  grpc::Status UpdateJobSet(grpc::ServerContext*,
                            const api::UpdateJobSetRequest* request,
                            api::JobSet* response) override {
    api::JobSet jobset = request->jobset();
    api::SetJobSetDefaults(&jobset);
    absl::MutexLock lock(&mu_);
    stored_[jobset.metadata().name()] = jobset;
    *response = jobset;
    return grpc::Status::OK;
  }

  void BreakNext(bool after_commit) {
    absl::MutexLock lock(&mu_);
    (after_commit ? break_after_commit_ : break_before_commit_) = true;
  }
  int creates() {
    absl::MutexLock lock(&mu_);
    return creates_;
  }
  size_t stored() {
    absl::MutexLock lock(&mu_);
    return stored_.size();
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, api::JobSet> stored_ ABSL_GUARDED_BY(mu_);
  bool break_after_commit_ ABSL_GUARDED_BY(mu_) = false;
  bool break_before_commit_ ABSL_GUARDED_BY(mu_) = false;
  int creates_ ABSL_GUARDED_BY(mu_) = 0;
};

std::string Manifest(const std::string& name_line, const std::string& label) {
  return absl::StrCat(R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  )",
                      name_line, "\n  labels: {tier: ", label, "}\n", R"(spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        template:
          spec:
            containers:
            - {name: main, image: busybox, command: ["true"]}
)");
}

class CreateFailoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = absl::StrCat("127.0.0.1:", port);
  }
  void TearDown() override { server_->Shutdown(); }

  int Run(const std::string& verb, const std::string& manifest) {
    const char* dir = std::getenv("TEST_TMPDIR");
    const std::string path =
        absl::StrCat(dir == nullptr ? "/tmp" : dir, "/create.yaml");
    std::ofstream(path, std::ios::trunc) << manifest;
    out_.str("");
    err_.str("");
    return Main({absl::StrCat("--server=http://", address_), verb, "-f", path},
                nullptr, {.out = &out_, .err = &err_});
  }

  FailingOver service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::ostringstream out_, err_;
};

TEST_F(CreateFailoverTest, ARepeatThatFindsItsOwnJobSetReportsCreated) {
  service_.BreakNext(/*after_commit=*/true);
  ASSERT_EQ(Run("create", Manifest("name: train", "a")), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "jobset.jobset.x-k8s.io/train created\n");
  EXPECT_EQ(service_.creates(), 2);
  EXPECT_EQ(service_.stored(), 1u);
  // Run again: it was there before this invocation, as kubectl says.
  EXPECT_EQ(Run("create", Manifest("name: train", "a")), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("\"train\" already exists"));
  // apply is idempotent: it says unchanged.
  EXPECT_EQ(Run("apply", Manifest("name: train", "a")), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "jobset.jobset.x-k8s.io/train unchanged\n");
}

TEST_F(CreateFailoverTest, ARepeatThatFindsAnotherJobSetReportsAlreadyExists) {
  // Someone else's JobSet of that name and spec, with another label.
  ASSERT_EQ(Run("create", Manifest("name: train", "b")), kExitOk) << err_.str();
  // This create's connection breaks before the commit: the repeat finds a
  // JobSet it cannot tell from its own by the answer (created: false), but
  // not the one it sent.
  service_.BreakNext(/*after_commit=*/false);
  EXPECT_EQ(Run("create", Manifest("name: train", "a")), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("\"train\" already exists"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("created")));
}

TEST_F(CreateFailoverTest, AGenerateNameCreateIsNotSentTwice) {
  service_.BreakNext(/*after_commit=*/true);
  EXPECT_EQ(Run("create", Manifest("generateName: train-", "a")),
            kExitUnreachable);
  EXPECT_THAT(err_.str(),
              HasSubstr("not sent again: the request may have reached "
                        "jobsetd, and CreateJobSet is not safe to repeat"));
  EXPECT_EQ(service_.creates(), 1);
  EXPECT_EQ(service_.stored(), 1u);
}

}  // namespace
}  // namespace jobset::cli
