// apply/create/delete -f against fake JobSet and Access services in this
// process: JobSet requests overlap, results print in the file's order, RBAC
// documents and a JobSet named twice keep the file's order.
#include <algorithm>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cli/commands.h"
#include "gmock/gmock.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "proto/auth.grpc.pb.h"
#include "proto/jobset_service.grpc.pb.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Keeps JobSets in a map, as jobsetd would answer Get, Create, Update and
// Delete. The first `overlap` Creates each wait (up to 5 s) until that many
// have arrived, so a client that sends one at a time shows a peak of 1. A
// JobSet named "bad-..." is refused as invalid. Every call is logged.
class FakeJobSets final : public api::JobSetService::Service {
 public:
  explicit FakeJobSets(int overlap) : overlap_(overlap) {}

  grpc::Status GetJobSet(grpc::ServerContext*,
                         const api::GetJobSetRequest* request,
                         api::JobSet* response) override {
    absl::MutexLock lock(&mu_);
    auto it = stored_.find(Key(request->namespace_(), request->name()));
    if (it == stored_.end()) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "not found");
    }
    *response = it->second;
    return grpc::Status::OK;
  }

  grpc::Status CreateJobSet(grpc::ServerContext*,
                            const api::CreateJobSetRequest* request,
                            api::CreateJobSetResponse* response) override {
    const api::ObjectMeta& meta = request->jobset().metadata();
    absl::MutexLock lock(&mu_);
    ++in_flight_;
    peak_ = std::max(peak_, in_flight_);
    if (++arrived_ <= overlap_) {
      auto all_here = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return peak_ >= overlap_;
      };
      mu_.AwaitWithTimeout(absl::Condition(&all_here), absl::Seconds(5));
    }
    --in_flight_;
    if (absl::StartsWith(meta.name(), "bad-")) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "spec.replicatedJobs[0].replicas: must be >= 0");
    }
    const std::string key = Key(meta.namespace_(), meta.name());
    log_.push_back(absl::StrCat("create ", key));
    response->set_created(stored_.count(key) == 0);
    if (response->created() && !request->dry_run()) {
      stored_[key] = request->jobset();
    }
    *response->mutable_jobset() = request->jobset();
    return grpc::Status::OK;
  }

  grpc::Status UpdateJobSet(grpc::ServerContext*,
                            const api::UpdateJobSetRequest* request,
                            api::JobSet* response) override {
    const api::ObjectMeta& meta = request->jobset().metadata();
    absl::MutexLock lock(&mu_);
    const std::string key = Key(meta.namespace_(), meta.name());
    log_.push_back(absl::StrCat("update ", key));
    stored_[key] = request->jobset();
    *response = request->jobset();
    return grpc::Status::OK;
  }

  grpc::Status DeleteJobSet(grpc::ServerContext*,
                            const api::DeleteJobSetRequest* request,
                            api::JobSet* response) override {
    absl::MutexLock lock(&mu_);
    const std::string key = Key(request->namespace_(), request->name());
    if (stored_.erase(key) == 0) {
      return grpc::Status(
          grpc::StatusCode::NOT_FOUND,
          absl::StrCat("jobset \"", request->name(), "\" not found"));
    }
    log_.push_back(absl::StrCat("delete ", key));
    response->mutable_metadata()->set_name(request->name());
    return grpc::Status::OK;
  }

  // Called by the fake Access service, so that both share one log.
  void Note(const std::string& line) {
    absl::MutexLock lock(&mu_);
    log_.push_back(line);
  }

  int peak() {
    absl::MutexLock lock(&mu_);
    return peak_;
  }
  std::vector<std::string> log() {
    absl::MutexLock lock(&mu_);
    return log_;
  }
  int stored() {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(stored_.size());
  }

 private:
  static std::string Key(const std::string& ns, const std::string& name) {
    return absl::StrCat(ns, "/", name);
  }

  const int overlap_;
  absl::Mutex mu_;
  int arrived_ ABSL_GUARDED_BY(mu_) = 0;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int peak_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, api::JobSet> stored_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_);
};

// RBAC: nothing stored; ApplyRbac writes to the JobSets' log.
class FakeAccess final : public api::AccessService::Service {
 public:
  explicit FakeAccess(FakeJobSets* log) : log_(log) {}
  grpc::Status ApplyRbac(grpc::ServerContext*, const api::RbacObject* object,
                         api::RbacObject* response) override {
    log_->Note(absl::StrCat("rbac ", object->role().metadata().name()));
    *response = *object;
    return grpc::Status::OK;
  }
  grpc::Status ListRbac(grpc::ServerContext*, const api::ListRbacRequest*,
                        api::ListRbacResponse*) override {
    return grpc::Status::OK;
  }

 private:
  FakeJobSets* log_;
};

std::string JobSetDocument(const std::string& name,
                           const std::string& label = "a") {
  return absl::StrCat(R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: )",
                      name, "\n  labels: {tier: ", label, "}\n", R"(spec:
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

constexpr char kRole[] = R"(apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: editor}
rules:
- {apiGroups: [jobset.x-k8s.io], resources: [jobsets], verbs: [get]}
)";

class ApplyFileTest : public ::testing::Test {
 protected:
  void Start(int overlap) {
    jobsets_ = std::make_unique<FakeJobSets>(overlap);
    access_ = std::make_unique<FakeAccess>(jobsets_.get());
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(jobsets_.get());
    builder.RegisterService(access_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = absl::StrCat("127.0.0.1:", port);
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  int Run(const std::vector<std::string>& documents,
          std::vector<std::string> args) {
    std::istringstream in(absl::StrJoin(documents, "---\n"));
    out_.str("");
    err_.str("");
    args.insert(args.begin(), absl::StrCat("--server=http://", address_));
    args.insert(args.end(), {"-f", "-"});
    return Main(args, nullptr, {.in = &in, .out = &out_, .err = &err_});
  }

  std::unique_ptr<FakeJobSets> jobsets_;
  std::unique_ptr<FakeAccess> access_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::ostringstream out_, err_;
};

std::vector<std::string> Names(int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back(absl::StrCat("js-", 100 + i));
  return names;
}

TEST_F(ApplyFileTest, JobSetsOverlapAndPrintInTheFilesOrder) {
  Start(/*overlap=*/8);
  std::vector<std::string> documents;
  std::string want;
  for (const std::string& name : Names(100)) {
    documents.push_back(JobSetDocument(name));
    absl::StrAppend(&want, "jobset.jobset.x-k8s.io/", name, " created\n");
  }
  ASSERT_EQ(Run(documents, {"apply"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), want);
  EXPECT_EQ(err_.str(), "");
  EXPECT_EQ(jobsets_->peak(), 8);
  EXPECT_EQ(jobsets_->stored(), 100);

  // Again: every one exists and is unchanged; then one label changes.
  ASSERT_EQ(Run(documents, {"apply"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), absl::StrReplaceAll(want, {{"created", "unchanged"}}));
  documents[42] = JobSetDocument("js-142", "b");
  ASSERT_EQ(Run(documents, {"apply"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(),
              HasSubstr("js-141 unchanged\n"
                        "jobset.jobset.x-k8s.io/js-142 configured\n"
                        "jobset.jobset.x-k8s.io/js-143 unchanged\n"));

  // create -f of what exists: refused per document, exit 1.
  ASSERT_EQ(
      Run({JobSetDocument("js-100"), JobSetDocument("new-1")}, {"create"}),
      kExitApiError);
  EXPECT_EQ(err_.str(),
            "error: jobset.jobset.x-k8s.io \"js-100\" already exists\n");
  EXPECT_EQ(out_.str(), "jobset.jobset.x-k8s.io/new-1 created\n");

  // delete -f: in the file's order, a missing one fails alone.
  std::vector<std::string> gone = {JobSetDocument("js-100"),
                                   JobSetDocument("missing"),
                                   JobSetDocument("js-199")};
  ASSERT_EQ(Run(gone, {"delete"}), kExitApiError);
  EXPECT_EQ(out_.str(),
            "jobset.jobset.x-k8s.io \"js-100\" deleted\n"
            "jobset.jobset.x-k8s.io \"js-199\" deleted\n");
  EXPECT_THAT(err_.str(), HasSubstr("\"missing\" not found"));
  EXPECT_EQ(jobsets_->stored(), 99);
}

TEST_F(ApplyFileTest, ARefusedDocumentFailsAloneWithItsMessage) {
  Start(/*overlap=*/1);
  ASSERT_EQ(Run({JobSetDocument("ok-1"), JobSetDocument("bad-2"),
                 JobSetDocument("ok-3")},
                {"apply"}),
            kExitApiError);
  EXPECT_EQ(out_.str(),
            "jobset.jobset.x-k8s.io/ok-1 created\n"
            "jobset.jobset.x-k8s.io/ok-3 created\n");
  EXPECT_EQ(err_.str(),
            "error: jobset.jobset.x-k8s.io/bad-2: "
            "spec.replicatedJobs[0].replicas: must be >= 0\n");
  EXPECT_EQ(jobsets_->stored(), 2);
}

TEST_F(ApplyFileTest, RbacAndARepeatedNameWaitForTheDocumentsBefore) {
  // a and b hold each other up at jobsetd, so a Role sent without waiting
  // for them would be logged first.
  Start(/*overlap=*/2);
  // The Role comes after a and b and before c; the second "c" after the
  // first.
  ASSERT_EQ(Run({JobSetDocument("a"), JobSetDocument("b"), kRole,
                 JobSetDocument("c"), JobSetDocument("c", "b")},
                {"apply", "-n", "team"}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(out_.str(),
            "jobset.jobset.x-k8s.io/a created\n"
            "jobset.jobset.x-k8s.io/b created\n"
            "role.rbac.authorization.k8s.io/editor created\n"
            "jobset.jobset.x-k8s.io/c created\n"
            "jobset.jobset.x-k8s.io/c configured\n");
  std::vector<std::string> log = jobsets_->log();
  ASSERT_EQ(log.size(), 5u);
  // a and b in either order, then the Role, then c, then c's update.
  EXPECT_THAT(
      std::vector<std::string>(log.begin(), log.begin() + 2),
      ::testing::UnorderedElementsAre("create team/a", "create team/b"));
  EXPECT_EQ(log[2], "rbac editor");
  EXPECT_EQ(log[3], "create team/c");
  EXPECT_EQ(log[4], "update team/c");
  EXPECT_THAT(err_.str(), Not(HasSubstr("error")));
}

}  // namespace
}  // namespace jobset::cli
