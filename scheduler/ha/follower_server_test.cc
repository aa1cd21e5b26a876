#include "scheduler/ha/follower_server.h"

#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "common/leader_redirect.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/jobset_service.grpc.pb.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::testing::HasSubstr;

TEST(FollowerServerTest, EveryCallIsSentToTheLeader) {
  absl::Mutex mu;
  std::string leader = "10.1.2.3:7070";
  auto server =
      FollowerServer::Start({.listen = "127.0.0.1:0",
                             .credentials = grpc::InsecureServerCredentials(),
                             .leader = [&] {
                               absl::MutexLock lock(&mu);
                               return leader;
                             }});
  ASSERT_THAT(server.status(), IsOk());
  const std::string address = (*server)->address();
  auto stub = api::JobSetService::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext context;
    api::GetJobSetRequest request;
    api::JobSet response;
    const grpc::Status s = stub->GetJobSet(&context, request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_THAT(s.error_message(), HasSubstr("the leader is at 10.1.2.3:7070"));
    EXPECT_EQ(RedirectedLeader(context, s), "10.1.2.3:7070");
  }
  {
    absl::MutexLock lock(&mu);
    leader.clear();
  }
  {
    grpc::ClientContext context;
    api::GetJobSetRequest request;
    api::JobSet response;
    const grpc::Status s = stub->GetJobSet(&context, request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_THAT(s.error_message(), HasSubstr("no leader is elected yet"));
    EXPECT_EQ(RedirectedLeader(context, s), std::nullopt);
  }
  // Stopped, it frees its port for the server of a replica that now leads.
  server->reset();
  auto again =
      FollowerServer::Start({.listen = address,
                             .credentials = grpc::InsecureServerCredentials(),
                             .leader = nullptr});
  EXPECT_THAT(again.status(), IsOk());
}

}  // namespace
}  // namespace jobset::scheduler
