// Client against several replicas: a follower's redirect is followed, an
// unreachable replica is passed over, and the call keeps one deadline.
#include "cli/client.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/leader_redirect.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/jobset_service.grpc.pb.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;

// A replica: the leader answers GetJobSet with the name asked for; a
// follower answers UNAVAILABLE naming `leader` ("" names none).
class Replica final : public api::JobSetService::Service {
 public:
  explicit Replica(std::string leader) : leader_(std::move(leader)) {}
  void set_leader(std::string leader) {
    absl::MutexLock lock(&mu_);
    leader_ = std::move(leader);
  }
  int calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

  grpc::Status GetJobSet(grpc::ServerContext* context,
                         const api::GetJobSetRequest* request,
                         api::JobSet* response) override {
    absl::MutexLock lock(&mu_);
    ++calls_;
    if (leader_ == "self") {
      response->mutable_metadata()->set_name(request->name());
      return grpc::Status::OK;
    }
    if (!leader_.empty())
      context->AddTrailingMetadata(kLeaderMetadataKey, leader_);
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "a follower");
  }

 private:
  absl::Mutex mu_;
  std::string leader_ ABSL_GUARDED_BY(mu_);
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
};

struct Served {
  explicit Served(std::string leader) : replica(std::move(leader)) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&replica);
    server = builder.BuildAndStart();
  }
  std::string address() const { return absl::StrCat("127.0.0.1:", port); }
  Replica replica;
  int port = 0;
  std::unique_ptr<grpc::Server> server;
};

// A loopback port nobody listens on (bound, then closed).
std::string ClosedPort() {
  Served gone("");
  const std::string address = gone.address();
  gone.server->Shutdown();
  return address;
}

absl::StatusOr<api::JobSet> GetNamed(Client& client, const std::string& name) {
  api::GetJobSetRequest request;
  request.set_name(name);
  return client.Get(request);
}

TEST(ClientReplicasTest, AFollowerSendsTheCallToTheLeader) {
  Served leader("self");
  Served follower(leader.address());
  Client client(absl::StrCat(follower.address(), ",", leader.address()),
                absl::Seconds(10));
  absl::StatusOr<api::JobSet> got = GetNamed(client, "one");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->metadata().name(), "one");
  EXPECT_EQ(client.address(), leader.address());
  // The next call goes straight to the leader.
  ASSERT_TRUE(GetNamed(client, "two").ok());
  EXPECT_EQ(follower.replica.calls(), 1);
  EXPECT_EQ(leader.replica.calls(), 2);
}

TEST(ClientReplicasTest, AnUnreachableReplicaIsPassedOver) {
  Served leader("self");
  Client client(absl::StrCat(ClosedPort(), ",", leader.address()),
                absl::Seconds(10));
  absl::StatusOr<api::JobSet> got = GetNamed(client, "one");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(client.address(), leader.address());
}

TEST(ClientReplicasTest, WithNoLeaderTheErrorSaysSo) {
  Served follower("");  // Campaigning: no leader known.
  const std::string closed = ClosedPort();
  Client client(absl::StrCat(follower.address(), ",", closed),
                absl::Seconds(10));
  absl::StatusOr<api::JobSet> got = GetNamed(client, "one");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(got.status().message(), HasSubstr("cannot reach jobsetd at"));
  // Each replica was tried once for the call.
  EXPECT_EQ(follower.replica.calls(), 1);
}

TEST(ClientReplicasTest, FollowersNamingEachOtherDoNotLoopForever) {
  Served a("");
  Served b(a.address());
  a.replica.set_leader(b.address());
  Client client(absl::StrCat(a.address(), ",", b.address()), absl::Seconds(10));
  absl::StatusOr<api::JobSet> got = GetNamed(client, "one");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_LE(a.replica.calls() + b.replica.calls(), 6);
}

TEST(ClientReplicasTest, ABadListIsAnErrorOnEveryCall) {
  Client client("127.0.0.1:1,,x", absl::Seconds(1));
  absl::StatusOr<api::JobSet> got = GetNamed(client, "one");
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("entry 1 \"\" is empty"));
}

}  // namespace
}  // namespace jobset::cli
