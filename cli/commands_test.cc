// jobsetctl's commands against a fake JobSetService in this process: how
// lists are paged and how a watch that falls behind goes on.
#include "cli/commands.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "proto/jobset_service.grpc.pb.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

api::JobSet NamedJobSet(const std::string& name, int64_t version) {
  api::JobSet jobset;
  jobset.mutable_metadata()->set_name(name);
  jobset.mutable_metadata()->set_namespace_("default");
  jobset.mutable_metadata()->set_resource_version(absl::StrCat(version));
  return jobset;
}

// Serves `jobsets` two per page, and watches as jobsetd would after falling
// behind: a watch from a resourceVersion sends one change and then ends with
// OUT_OF_RANGE; one without lists (ADDED) and sends one more change.
class FakeJobSets final : public api::JobSetService::Service {
 public:
  explicit FakeJobSets(int count) {
    for (int i = 0; i < count; ++i) {
      jobsets_.push_back(NamedJobSet(absl::StrCat("js-", i), 10 + i));
    }
  }

  grpc::Status ListJobSets(grpc::ServerContext*,
                           const api::ListJobSetsRequest* request,
                           api::ListJobSetsResponse* response) override {
    absl::MutexLock lock(&mu_);
    ++list_calls_;
    size_t start = 0;
    if (!request->continue_().empty()) start = std::stoul(request->continue_());
    for (size_t i = start; i < jobsets_.size() && i < start + 2; ++i) {
      *response->add_items() = jobsets_[i];
    }
    if (start + 2 < jobsets_.size()) {
      response->set_continue_(absl::StrCat(start + 2));
    }
    response->set_resource_version("100");
    return grpc::Status::OK;
  }

  grpc::Status WatchJobSets(
      grpc::ServerContext*, const api::WatchJobSetsRequest* request,
      grpc::ServerWriter<api::WatchEvent>* writer) override {
    api::WatchEvent event;
    if (!request->resource_version().empty()) {
      event.set_type("MODIFIED");
      *event.mutable_object() = NamedJobSet("js-0", 101);
      writer->Write(event);
      return grpc::Status(grpc::StatusCode::OUT_OF_RANGE,
                          "revision 101 is compacted: list again");
    }
    // The relist: js-0 as last sent, js-1 unchanged, then a new change.
    for (const api::JobSet& jobset :
         {NamedJobSet("js-0", 101), NamedJobSet("js-1", 11)}) {
      event.set_type("ADDED");
      *event.mutable_object() = jobset;
      writer->Write(event);
    }
    event.set_type("MODIFIED");
    *event.mutable_object() = NamedJobSet("js-1", 102);
    writer->Write(event);
    return grpc::Status::OK;
  }

  int list_calls() {
    absl::MutexLock lock(&mu_);
    return list_calls_;
  }

 private:
  std::vector<api::JobSet> jobsets_;
  absl::Mutex mu_;
  int list_calls_ ABSL_GUARDED_BY(mu_) = 0;
};

class CommandsTest : public ::testing::Test {
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

  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), absl::StrCat("--server=", address_));
    return Main(args, nullptr, {.out = &out_, .err = &err_});
  }

  FakeJobSets service_{5};
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::ostringstream out_, err_;
};

TEST_F(CommandsTest, GetPagesThroughTheList) {
  ASSERT_EQ(Run({"get", "jobsets", "-o", "name"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "jobset.jobset.x-k8s.io/js-0\njobset.jobset.x-k8s.io/js-1\n"
            "jobset.jobset.x-k8s.io/js-2\njobset.jobset.x-k8s.io/js-3\n"
            "jobset.jobset.x-k8s.io/js-4\n");
  EXPECT_EQ(service_.list_calls(), 3);
}

// A watch that falls behind is told OUT_OF_RANGE; `get -w` watches again
// from the current state and shows only what it has not shown.
TEST_F(CommandsTest, GetWatchRelistsAndGoesOn) {
  ASSERT_EQ(Run({"get", "jobsets", "-w", "--timeout=10s", "-o", "json"}),
            kExitOk)
      << err_.str();
  const std::string out = out_.str();
  // The list (five), js-0 at 101 once (not again after the relist), js-1 at
  // 11 once (listed first), then js-1 at 102.
  auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = out.find(text); at != std::string::npos;
         at = out.find(text, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("\"resourceVersion\": \"101\""), 1u) << out;
  EXPECT_EQ(count("\"resourceVersion\": \"11\""), 1u) << out;
  EXPECT_EQ(count("\"resourceVersion\": \"102\""), 1u) << out;
  EXPECT_THAT(err_.str(), Not(HasSubstr("error")));
}

}  // namespace
}  // namespace jobset::cli
