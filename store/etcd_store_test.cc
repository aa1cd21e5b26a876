// EtcdStore against a private etcd: what the contract suite cannot show
// (etcd's limits, compaction, etcd restarts, member failover).
#include "store/etcd_store.h"

#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/etcd/etcd_test_server.h"
#include "store/store.h"

namespace jobset::store {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using EtcdServer = ::jobset::store::testing::EtcdTestServer;

class EtcdStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!EtcdServer::Available()) GTEST_SKIP() << EtcdServer::Why();
  }

  std::unique_ptr<EtcdServer> StartEtcd(int members = 1) {
    const std::string dir = absl::StrCat(
        ::testing::TempDir(), "/",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    auto etcd = EtcdServer::Start({.dir = dir, .members = members});
    EXPECT_THAT(etcd.status(), IsOk());
    return etcd.ok() ? *std::move(etcd) : nullptr;
  }

  static std::unique_ptr<EtcdStore> OpenStore(const EtcdServer& etcd) {
    auto store = EtcdStore::Open({.endpoints = etcd.endpoints(),
                                  .dial_timeout = absl::Seconds(1),
                                  .request_timeout = absl::Seconds(3)});
    EXPECT_THAT(store.status(), IsOk());
    return store.ok() ? *std::move(store) : nullptr;
  }
};

TEST_F(EtcdStoreTest, RefusesBadOptions) {
  EXPECT_THAT(
      EtcdStore::Open({}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("endpoints")));
  EXPECT_THAT(EtcdStore::Open({.endpoints = {"ftp://127.0.0.1:1"}}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("endpoints[0] \"ftp://127.0.0.1:1\"")));
  EXPECT_THAT(EtcdStore::Open({.endpoints = {"http://127.0.0.1:1"},
                               .ca_file = "/nonexistent/ca.pem"})
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ca_file \"/nonexistent/ca.pem\"")));
  EXPECT_THAT(
      EtcdStore::Open(
          {.endpoints = {"http://127.0.0.1:1"}, .cert_file = "/x.pem"})
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("key_file")));
}

TEST_F(EtcdStoreTest, NoEndpointAnsweringIsUnavailableNamingThem) {
  auto etcd = StartEtcd();
  ASSERT_NE(etcd, nullptr);
  const std::string endpoint = etcd->endpoints()[0];
  ASSERT_THAT(etcd->Kill(0), IsOk());
  auto store = EtcdStore::Open(
      {.endpoints = {endpoint}, .dial_timeout = absl::Milliseconds(300)});
  EXPECT_THAT(store.status(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr(endpoint)));
}

TEST_F(EtcdStoreTest, BatchesOverEtcdLimitsAreRefusedBeforeSending) {
  auto etcd = StartEtcd();
  ASSERT_NE(etcd, nullptr);
  auto store = OpenStore(*etcd);
  ASSERT_NE(store, nullptr);
  const int64_t before = store->CurrentRevision();

  Batch fits;
  for (int i = 0; i < 128; ++i) fits.Put(absl::StrCat("k/", i), "v");
  EXPECT_THAT(store->Commit(fits).status(), IsOk());

  Batch too_many;
  for (int i = 0; i < 129; ++i) too_many.Put(absl::StrCat("k/", i), "w");
  EXPECT_THAT(store->Commit(too_many).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("129 operations exceeds etcd's max_txn_ops "
                                 "128; the caller must split it")));

  Batch too_big;
  too_big.Put("big/a", std::string(1 << 20, 'a'))
      .Put("big/b", std::string(1 << 20, 'b'));
  EXPECT_THAT(store->Commit(too_big).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("exceeds etcd's max_request_bytes 1572864")));
  // Only the batch that fits was applied.
  EXPECT_EQ(store->CurrentRevision(), before + 1);
  EXPECT_EQ((*store->Get("k/5"))->value, "v");
  EXPECT_FALSE(store->Get("big/a")->has_value());
}

// Limits() is what callers split by: a batch that fills it exactly, in
// operations and in bytes, conditions included, is one etcd accepts.
TEST_F(EtcdStoreTest, ABatchFillingItsLimitsIsAccepted) {
  auto etcd = StartEtcd();
  ASSERT_NE(etcd, nullptr);
  auto store = OpenStore(*etcd);
  ASSERT_NE(store, nullptr);
  const CommitLimits limits = store->Limits();
  EXPECT_EQ(limits.max_ops, 127u);
  EXPECT_LT(limits.max_bytes, 1536u * 1024);
  Batch seed;
  for (size_t i = 0; i < limits.max_ops; ++i)
    seed.Put(absl::StrCat("full/", i), "v");
  auto revision = store->Commit(seed);
  ASSERT_THAT(revision.status(), IsOk());
  Batch full;
  size_t bytes = 0;
  for (size_t i = 0; i < limits.max_ops; ++i) {
    const std::string key = absl::StrCat("full/", i);
    full.Update(key, "", *revision);
    bytes += limits.Cost(key, std::string(), true);
  }
  // The values take what is left, spread over every operation.
  const size_t each = (limits.max_bytes - bytes) / limits.max_ops;
  Batch exact;
  for (const Batch::Op& op : full.ops())
    exact.Update(op.key, std::string(each, 'x'), *revision);
  ASSERT_THAT(CheckLimits(exact, limits), IsOk());
  EXPECT_THAT(store->Commit(exact).status(), IsOk());
}

TEST_F(EtcdStoreTest, EtcdCompactionSendsWatchersToListAgain) {
  auto etcd = StartEtcd(/*members=*/3);
  ASSERT_NE(etcd, nullptr);
  // `behind` talks to member 0 only; `writer` to the other two.
  auto behind = EtcdStore::Open({.endpoints = {etcd->endpoints()[0]},
                                 .dial_timeout = absl::Seconds(1),
                                 .request_timeout = absl::Seconds(3)});
  ASSERT_THAT(behind.status(), IsOk());
  auto writer = EtcdStore::Open(
      {.endpoints = {etcd->endpoints()[1], etcd->endpoints()[2]}});
  ASSERT_THAT(writer.status(), IsOk());
  const int64_t base = (*behind)->CurrentRevision();
  ASSERT_THAT((*writer)->Commit(Batch().Put("c", "0")).status(), IsOk());
  auto events =
      (*behind)->WaitForEvents("", base, absl::Now() + absl::Seconds(10), 10);
  ASSERT_THAT(events.status(), IsOk());
  ASSERT_THAT(*events, SizeIs(1));
  const int64_t seen = (*events)[0].kv.mod_revision;

  // While member 0 is down, the others write on and compact everything:
  // `behind`'s watch resumes from a revision etcd no longer has.
  ASSERT_THAT(etcd->Kill(0), IsOk());
  int64_t last = 0;
  for (int i = 1; i <= 5; ++i) {
    auto r = (*writer)->Commit(Batch().Put("c", absl::StrCat(i)));
    ASSERT_THAT(r.status(), IsOk());
    last = *r;
  }
  ASSERT_THAT((*writer)->Compact(last), IsOk());
  ASSERT_THAT(etcd->Restart(0), IsOk());

  // Bounded: the watch reconnects within its backoff and dial timeout.
  absl::Status status;
  for (int i = 0; i < 100; ++i) {
    status = (*behind)
                 ->WaitForEvents("", seen, absl::Now() + absl::Seconds(1), 10)
                 .status();
    if (status.code() == absl::StatusCode::kOutOfRange) break;
  }
  EXPECT_THAT(status,
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("list again")));
  // Listing again gives the compacted state; the watch goes on from there.
  auto c = (*behind)->Get("c");
  ASSERT_THAT(c.status(), IsOk());
  EXPECT_EQ((*c)->value, "5");
  const int64_t listed = (*behind)->CurrentRevision();
  ASSERT_THAT((*writer)->Commit(Batch().Put("c", "after")).status(), IsOk());
  events =
      (*behind)->WaitForEvents("", listed, absl::Now() + absl::Seconds(10), 10);
  ASSERT_THAT(events.status(), IsOk());
  ASSERT_THAT(*events, SizeIs(1));
  EXPECT_EQ((*events)[0].kv.value, "after");
}

TEST_F(EtcdStoreTest, WatchResumesAndCommitsSucceedAfterEtcdRestarts) {
  auto etcd = StartEtcd();
  ASSERT_NE(etcd, nullptr);
  auto store = OpenStore(*etcd);
  ASSERT_NE(store, nullptr);
  const int64_t base = store->CurrentRevision();
  ASSERT_THAT(store->Commit(Batch().Put("r/a", "1")).status(), IsOk());
  // Once the watch has delivered r/a it is running.
  auto first =
      store->WaitForEvents("r/", base, absl::Now() + absl::Seconds(10), 10);
  ASSERT_THAT(first.status(), IsOk());
  ASSERT_THAT(*first, SizeIs(1));
  const int64_t starts = store->WatchStarts();
  EXPECT_GE(starts, 1);

  ASSERT_THAT(etcd->Kill(0), IsOk());
  EXPECT_THAT(store->Commit(Batch().Put("r/b", "2")).status(),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr(etcd->endpoints()[0])));
  ASSERT_THAT(etcd->Restart(0), IsOk());

  // Bounded: the channel reconnects within its 1 s backoff.
  absl::StatusOr<int64_t> r = absl::UnavailableError("not tried");
  for (int i = 0; i < 50 && !r.ok(); ++i) {
    r = store->Commit(Batch().Put("r/c", "3"));
    if (!r.ok()) absl::SleepFor(absl::Milliseconds(200));
  }
  ASSERT_THAT(r.status(), IsOk());
  auto events = store->WaitForEvents("r/", base, absl::InfinitePast(), 100);
  ASSERT_THAT(events.status(), IsOk());
  ASSERT_THAT(*events, SizeIs(2));
  EXPECT_EQ((*events)[0].kv.key, "r/a");
  EXPECT_EQ((*events)[1].kv.key, "r/c");
  EXPECT_GT(store->WatchStarts(), starts);
}

TEST_F(EtcdStoreTest, KillingOneOfThreeMembersGoesUnnoticed) {
  auto etcd = StartEtcd(/*members=*/3);
  ASSERT_NE(etcd, nullptr);
  auto store = OpenStore(*etcd);
  ASSERT_NE(store, nullptr);
  const int64_t base = store->CurrentRevision();
  ASSERT_THAT(store->Commit(Batch().Create("f/0", "v")).status(), IsOk());
  // The store talks to the first endpoint first: kill that member.
  ASSERT_THAT(etcd->Kill(0), IsOk());
  for (int i = 1; i < 20; ++i) {
    ASSERT_THAT(
        store->Commit(Batch().Create(absl::StrCat("f/", i), "v")).status(),
        IsOk())
        << i;
  }
  auto page = store->Scan("f/", "", 100);
  ASSERT_THAT(page.status(), IsOk());
  EXPECT_THAT(page->kvs, SizeIs(20));
  auto events = store->WaitForEvents("f/", base, absl::InfinitePast(), 100);
  ASSERT_THAT(events.status(), IsOk());
  EXPECT_THAT(*events, SizeIs(20));
}

TEST_F(EtcdStoreTest, LeasesAreGrantedRenewedAndRevoked) {
  auto etcd = StartEtcd();
  ASSERT_NE(etcd, nullptr);
  auto store = OpenStore(*etcd);
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(store->GrantLease(absl::Milliseconds(500)).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1 s")));
  auto id = store->GrantLease(absl::Seconds(5));
  ASSERT_THAT(id.status(), IsOk());
  EXPECT_NE(*id, 0);
  auto ttl = store->KeepAliveLease(*id);
  ASSERT_THAT(ttl.status(), IsOk());
  EXPECT_EQ(*ttl, absl::Seconds(5));
  ASSERT_THAT(store->RevokeLease(*id), IsOk());
  EXPECT_THAT(store->KeepAliveLease(*id).status(),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr(absl::StrCat("lease ", *id))));
  EXPECT_THAT(store->RevokeLease(*id), StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(EtcdStoreTest, MutualTlsClusterServesOnlyClientsWithACertificate) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/tls");
  auto etcd = EtcdServer::Start({.dir = dir, .members = 3, .tls = true});
  ASSERT_THAT(etcd.status(), IsOk());
  const std::vector<std::string> endpoints = (*etcd)->endpoints();
  ASSERT_TRUE(absl::StartsWith(endpoints[0], "https://")) << endpoints[0];

  auto store = EtcdStore::Open({.endpoints = endpoints,
                                .ca_file = (*etcd)->ca_file(),
                                .cert_file = (*etcd)->client_cert_file(),
                                .key_file = (*etcd)->client_key_file()});
  ASSERT_THAT(store.status(), IsOk());
  const int64_t base = (*store)->CurrentRevision();
  ASSERT_THAT((*store)->Commit(Batch().Create("t/a", "1")).status(), IsOk());
  EXPECT_EQ((*(*store)->Get("t/a"))->value, "1");
  auto events =
      (*store)->WaitForEvents("t/", base, absl::Now() + absl::Seconds(10), 10);
  ASSERT_THAT(events.status(), IsOk());
  EXPECT_THAT(*events, SizeIs(1));

  // The CA but no client certificate, and plaintext: refused.
  EXPECT_THAT(EtcdStore::Open({.endpoints = endpoints,
                               .ca_file = (*etcd)->ca_file(),
                               .dial_timeout = absl::Milliseconds(500)})
                  .status(),
              StatusIs(absl::StatusCode::kUnavailable));
  std::vector<std::string> plaintext;
  for (const std::string& e : endpoints) {
    plaintext.push_back(absl::StrCat("http://", e.substr(strlen("https://"))));
  }
  EXPECT_THAT(EtcdStore::Open({.endpoints = plaintext,
                               .dial_timeout = absl::Milliseconds(500),
                               .request_timeout = absl::Seconds(1)})
                  .status(),
              StatusIs(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace jobset::store
