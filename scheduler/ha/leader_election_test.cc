#include "scheduler/ha/leader_election.h"

#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/notification.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/etcd/etcd_test_server.h"
#include "store/etcd/tcp_proxy.h"
#include "store/etcd_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::store::testing::EtcdTestServer;
using ::jobset::store::testing::TcpProxy;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

class LeaderElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EtcdTestServer::Available()) GTEST_SKIP() << EtcdTestServer::Why();
    auto etcd = EtcdTestServer::Start(
        {.dir = absl::StrCat(
             ::testing::TempDir(), "/",
             ::testing::UnitTest::GetInstance()->current_test_info()->name())});
    ASSERT_THAT(etcd.status(), IsOk());
    etcd_ = *std::move(etcd);
  }

  std::unique_ptr<store::EtcdStore> Open(const std::string& endpoint = "") {
    auto s = store::EtcdStore::Open(
        {.endpoints = {endpoint.empty() ? etcd_->endpoints()[0] : endpoint},
         .dial_timeout = absl::Seconds(1),
         .request_timeout = absl::Seconds(1)});
    EXPECT_THAT(s.status(), IsOk());
    return s.ok() ? *std::move(s) : nullptr;
  }

  // A candidate whose losses are counted, with when the first came.
  struct Candidate {
    std::unique_ptr<store::EtcdStore> store;
    std::unique_ptr<LeaderElection> election;
    std::atomic<int> lost = 0;
    absl::Notification lost_once;
  };

  void Campaign(Candidate& c, const std::string& address,
                absl::Duration lease = absl::Seconds(3)) {
    auto e = LeaderElection::Campaign(c.store.get(),
                                      {.lease = lease, .address = address},
                                      [&c](const absl::Status&) {
                                        if (c.lost.fetch_add(1) == 0)
                                          c.lost_once.Notify();
                                      });
    ASSERT_THAT(e.status(), IsOk());
    c.election = *std::move(e);
  }

  std::unique_ptr<EtcdTestServer> etcd_;
};

TEST_F(LeaderElectionTest, RefusesBadOptions) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  EXPECT_THAT(LeaderElection::Campaign(
                  s.get(), {.lease = absl::Seconds(1), .address = "a:1"}, {})
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lease")));
  EXPECT_THAT(
      LeaderElection::Campaign(s.get(), {}, {}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("address")));
}

TEST_F(LeaderElectionTest, OneLeadsTheOtherFollowsAndTakesOverWhenItResigns) {
  Candidate a, b;
  a.store = Open();
  b.store = Open();
  ASSERT_NE(a.store, nullptr);
  ASSERT_NE(b.store, nullptr);
  Campaign(a, "10.0.0.1:7070");
  ASSERT_TRUE(a.election->AwaitLeadership(absl::Now() + absl::Seconds(5)));
  Campaign(b, "10.0.0.2:7070");
  EXPECT_FALSE(b.election->AwaitLeadership(absl::Now() + absl::Seconds(1)));
  EXPECT_EQ(b.election->leader(), "10.0.0.1:7070");
  EXPECT_EQ(b.election->epoch(), 0);
  const int64_t epoch_a = a.election->epoch();
  EXPECT_GT(epoch_a, 0);
  // The leader's writes carry the fence and land; the follower's store is
  // not fenced (it writes nothing).
  EXPECT_THAT(a.store->Commit(store::Batch().Put("x", "by a")).status(),
              IsOk());

  // A clean stop resigns: the follower leads at once, not after the lease.
  const absl::Time resigned = absl::Now();
  a.election.reset();
  ASSERT_TRUE(b.election->AwaitLeadership(absl::Now() + absl::Seconds(2)));
  EXPECT_LT(absl::Now() - resigned, absl::Seconds(2));
  EXPECT_GT(b.election->epoch(), epoch_a);
  EXPECT_EQ(b.election->leader(), "10.0.0.2:7070");
  // The old leader's store is still fenced on its old epoch: nothing lands.
  EXPECT_THAT(
      a.store->Commit(store::Batch().Put("x", "by a, deposed")).status(),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("not the leader")));
  auto x = b.store->Get("x");
  ASSERT_TRUE(x.ok() && x->has_value());
  EXPECT_EQ((*x)->value, "by a");
  EXPECT_EQ(a.lost.load(), 0);  // It resigned; it did not lose.
}

TEST_F(LeaderElectionTest, ALeaderWhoseLeaseIsGoneWritesNothingAndSaysSo) {
  Candidate a;
  a.store = Open();
  ASSERT_NE(a.store, nullptr);
  Campaign(a, "10.0.0.1:7070");
  ASSERT_TRUE(a.election->AwaitLeadership(absl::Now() + absl::Seconds(5)));
  // Someone revokes the leader's lease (as its expiry would): its key goes.
  auto other = Open();
  auto keys = other->Scan("leader/", "", 10);
  ASSERT_TRUE(keys.ok() && keys->kvs.size() == 1);
  uint64_t lease = 0;
  ASSERT_TRUE(absl::SimpleHexAtoi(keys->kvs[0].key.substr(7), &lease));
  ASSERT_THAT(other->RevokeLease(static_cast<int64_t>(lease)), IsOk());
  EXPECT_THAT(a.store->Commit(store::Batch().Put("y", "deposed")).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("nothing was written")));
  EXPECT_TRUE(a.lost_once.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_FALSE(a.election->leading());
  auto y = other->Get("y");
  ASSERT_TRUE(y.ok());
  EXPECT_FALSE(y->has_value());
}

// The split-brain case: the leader is alive but cut off from etcd. It must
// hold itself deposed before etcd can expire its lease and elect another,
// and none of its writes may land afterwards.
TEST_F(LeaderElectionTest, ALeaderCutOffFromEtcdStopsBeforeASuccessorLeads) {
  auto proxy = TcpProxy::Start(
      std::string(absl::StripPrefix(etcd_->endpoints()[0], "http://")));
  ASSERT_THAT(proxy.status(), IsOk());
  Candidate a, b;
  a.store = Open(absl::StrCat("http://", (*proxy)->address()));
  b.store = Open();
  ASSERT_NE(a.store, nullptr);
  ASSERT_NE(b.store, nullptr);
  const absl::Duration lease = absl::Seconds(3);
  Campaign(a, "10.0.0.1:7070", lease);
  ASSERT_TRUE(a.election->AwaitLeadership(absl::Now() + absl::Seconds(5)));
  Campaign(b, "10.0.0.2:7070", lease);
  EXPECT_FALSE(b.election->AwaitLeadership(absl::Now() + absl::Seconds(1)));

  const absl::Time cut = absl::Now();
  (*proxy)->Cut(true);
  ASSERT_TRUE(a.lost_once.WaitForNotificationWithTimeout(absl::Seconds(10)));
  const absl::Time a_stopped = absl::Now();
  ASSERT_TRUE(b.election->AwaitLeadership(absl::Now() + absl::Seconds(10)));
  const absl::Time b_leads = absl::Now();
  EXPECT_LT(a_stopped, b_leads);
  // At most lease - margin after the last renewal, which was at most a
  // third of the lease before the cut.
  EXPECT_LE(a_stopped - cut, lease);

  // Healed, the old leader's writes are refused by the fence.
  (*proxy)->Cut(false);
  EXPECT_THAT(a.store->Commit(store::Batch().Put("z", "split brain")).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  auto z = b.store->Get("z");
  ASSERT_TRUE(z.ok());
  EXPECT_FALSE(z->has_value());
  EXPECT_THAT(b.store->Commit(store::Batch().Put("z", "new leader")).status(),
              IsOk());
}

}  // namespace
}  // namespace jobset::scheduler
