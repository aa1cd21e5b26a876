#include "common/replicas.h"

#include <string>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

const grpc::Status kUnavailable(grpc::StatusCode::UNAVAILABLE, "down");

TEST(ReplicasTest, OneAddressIsAlwaysCurrent) {
  auto replicas = Replicas::Parse("--server", "127.0.0.1:7070");
  ASSERT_THAT(replicas.status(), IsOk());
  EXPECT_EQ(replicas->current(), "127.0.0.1:7070");
  EXPECT_FALSE(replicas->After(kUnavailable, std::nullopt));
  EXPECT_EQ(replicas->current(), "127.0.0.1:7070");
}

TEST(ReplicasTest, AnUnreachableReplicaMovesToTheNext) {
  auto replicas = Replicas::Parse("--scheduler", "a:1,b:2,c:3");
  ASSERT_THAT(replicas.status(), IsOk());
  EXPECT_EQ(replicas->all(), "a:1,b:2,c:3");
  EXPECT_EQ(replicas->current(), "a:1");
  // The next ones at once; a backoff after a whole round failed.
  EXPECT_TRUE(replicas->After(kUnavailable, std::nullopt));
  EXPECT_EQ(replicas->current(), "b:2");
  EXPECT_TRUE(replicas->After(
      grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "slow"), std::nullopt));
  EXPECT_EQ(replicas->current(), "c:3");
  EXPECT_FALSE(replicas->After(kUnavailable, std::nullopt));
  EXPECT_EQ(replicas->current(), "a:1");
  EXPECT_TRUE(replicas->After(kUnavailable, std::nullopt));  // A new round.
  EXPECT_EQ(replicas->current(), "b:2");
  replicas->After(kUnavailable, std::nullopt);
  replicas->After(kUnavailable, std::nullopt);
  // An answer that is not about reaching it (a refusal) keeps the replica.
  EXPECT_FALSE(replicas->After(
      grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "no"), std::nullopt));
  EXPECT_EQ(replicas->current(), "a:1");
}

TEST(ReplicasTest, ARedirectGoesToTheLeaderAtOnce) {
  auto replicas = Replicas::Parse("--scheduler", "a:1,b:2,c:3");
  ASSERT_THAT(replicas.status(), IsOk());
  EXPECT_TRUE(replicas->After(kUnavailable, "c:3"));
  EXPECT_EQ(replicas->current(), "c:3");
  // The leader named may be an address the list does not hold.
  EXPECT_TRUE(replicas->After(kUnavailable, "leader.example:7070"));
  EXPECT_EQ(replicas->current(), "leader.example:7070");
  // When it is gone, the list is tried again.
  EXPECT_TRUE(replicas->After(kUnavailable, std::nullopt));
  EXPECT_EQ(replicas->current(), "b:2");
}

TEST(ReplicasTest, RedirectsInALoopBackOff) {
  auto replicas = Replicas::Parse("--scheduler", "a:1,b:2");
  ASSERT_THAT(replicas.status(), IsOk());
  // Two followers naming each other: followed 3 times, then back off.
  EXPECT_TRUE(replicas->After(kUnavailable, "b:2"));
  EXPECT_TRUE(replicas->After(kUnavailable, "a:1"));
  EXPECT_TRUE(replicas->After(kUnavailable, "b:2"));
  EXPECT_FALSE(replicas->After(kUnavailable, "a:1"));
  EXPECT_EQ(replicas->current(), "a:1");
  replicas->Reached();
  EXPECT_TRUE(replicas->After(kUnavailable, "b:2"));
}

TEST(ReplicasTest, AHostileRedirectIsNotFollowed) {
  auto replicas = Replicas::Parse("--scheduler", "a:1,b:2");
  ASSERT_THAT(replicas.status(), IsOk());
  for (const std::string& bad :
       {std::string("no-port"), std::string("h:0"), std::string("h:99999"),
        std::string("h :1"), std::string("h\n:1"), std::string("unix:/x"),
        std::string(300, 'h') + ":1", std::string("a:1,b:2")}) {
    SCOPED_TRACE(bad);
    const std::string before = replicas->current();
    replicas->After(kUnavailable, bad);
    EXPECT_NE(replicas->current(), bad);
    EXPECT_NE(replicas->current(), before);  // Moved on, as if unreachable.
  }
}

TEST(ReplicasTest, ABadListNamesTheFlagAndTheEntry) {
  EXPECT_THAT(
      Replicas::Parse("--scheduler", "a:1,,b:2"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("--scheduler=a:1,,b:2: entry 1 \"\" is empty")));
  EXPECT_THAT(Replicas::Parse("--server", "a:1,b"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("entry 1 \"b\" is not HOST:PORT")));
  EXPECT_THAT(
      Replicas::Parse("--server", "a:70000"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("port 1-65535")));
  EXPECT_THAT(Replicas::Parse("--server", ""),
              StatusIs(absl::StatusCode::kInvalidArgument));
  std::string many = "a:1";
  for (int i = 0; i < 16; ++i) many += ",a:1";
  EXPECT_THAT(Replicas::Parse("--server", many),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("more than 16 addresses")));
  // IPv6 literals and DNS names are addresses.
  EXPECT_THAT(Replicas::Parse("--server", "[::1]:7070,jobsetd-0.svc:7070"),
              IsOk());
}

TEST(ReplicasTest, ACopyKeepsWhereItWas) {
  auto replicas = Replicas::Parse("--scheduler", "a:1,b:2");
  ASSERT_THAT(replicas.status(), IsOk());
  replicas->After(kUnavailable, std::nullopt);
  Replicas copy = *replicas;
  EXPECT_EQ(copy.current(), "b:2");
  copy.After(kUnavailable, std::nullopt);
  EXPECT_EQ(copy.current(), "a:1");
  EXPECT_EQ(replicas->current(), "b:2");
}

}  // namespace
}  // namespace jobset
