#include "scheduler/controller/pass_journal.h"

#include <map>
#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/cluster.pb.h"
#include "scheduler/controller/commit_split.h"
#include "store/etcd/etcd_test_server.h"
#include "store/etcd_store.h"
#include "store/forwarding_store.h"
#include "store/keys.h"
#include "store/memory_store.h"
#include "store/scan.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::IsOkAndHolds;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// A store that dies (refuses every commit) after `allowed` commits, as a
// jobsetd killed between two transactions, or one losing its store, would.
class DyingStore : public store::ForwardingStore {
 public:
  DyingStore(store::Store* inner, int allowed)
      : ForwardingStore(inner), allowed_(allowed) {}

  absl::StatusOr<int64_t> Commit(const store::Batch& batch) override {
    if (allowed_ == 0) return absl::UnavailableError("jobsetd died here");
    --allowed_;
    ++commits_;
    return ForwardingStore::Commit(batch);
  }
  int commits() const { return commits_; }

 private:
  int allowed_;
  int commits_ = 0;
};

// Every key and value in `s`.
std::map<std::string, std::string> Contents(store::Store& s) {
  std::map<std::string, std::string> out;
  EXPECT_THAT(store::ScanAll(s, "",
                             [&](const store::KeyValue& kv) {
                               out[kv.key] = kv.value;
                               return absl::OkStatus();
                             }),
              IsOk());
  return out;
}

constexpr char kJobSet[] = "jobsets/default/train";

class PassJournalTest : public ::testing::Test {
 protected:
  // A JobSet with 30 Jobs and their pods, on a store that takes at most 8
  // operations and 2 KiB a transaction.
  void SetUp() override {
    Seed(store_);
    store_.SetLimits({.max_ops = 8, .max_bytes = 2048, .op_overhead = 16});
  }

  static void Seed(store::MemoryStore& s) {
    store::Batch seed;
    seed.Put(kJobSet, "status: attempt 0");
    for (int i = 0; i < 30; ++i) {
      seed.Put(absl::StrCat("jobs/default/train/w-", i), "attempt 0");
      seed.Put(absl::StrCat("pods/default/train/w-", i), "pods of attempt 0");
    }
    ASSERT_THAT(s.Commit(seed).status(), IsOk());
  }

  // A restart: the JobSet's status compared and swapped, every Job and its
  // pods rewritten, ten events added and Job 29 deleted.
  store::Batch Restart(int64_t jobset_revision) {
    store::Batch b;
    b.Update(kJobSet, "status: attempt 1", jobset_revision);
    for (int i = 0; i < 29; ++i) {
      b.Put(absl::StrCat("jobs/default/train/w-", i), "attempt 1");
      b.Put(absl::StrCat("pods/default/train/w-", i), std::string(100, 'p'));
    }
    for (int i = 0; i < 10; ++i)
      b.Put(absl::StrCat("events/default/train/", i), "restarted");
    b.Delete("jobs/default/train/w-29");
    b.Delete("pods/default/train/w-29");
    return b;
  }

  int64_t JobSetRevision(store::Store& s) {
    auto kv = s.Get(kJobSet);
    EXPECT_TRUE(kv.ok() && kv->has_value());
    return (*kv)->mod_revision;
  }

  store::MemoryStore store_;
};

TEST_F(PassJournalTest, ABatchOverTheLimitsCommitsWholeInTransactionsThatFit) {
  const std::map<std::string, std::string> before = Contents(store_);
  const store::Batch restart = Restart(JobSetRevision(store_));
  ASSERT_THAT(store::CheckLimits(restart, store_.Limits()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  DyingStore counting(&store_, 1'000);
  PassJournal journal(&counting);
  absl::StatusOr<int64_t> revision = journal.Commit(restart);
  ASSERT_THAT(revision.status(), IsOk());
  // Parts stored, the mark, parts applied, the mark deleted.
  EXPECT_GT(counting.commits(), 10);

  std::map<std::string, std::string> after = Contents(store_);
  EXPECT_EQ(after[kJobSet], "status: attempt 1");
  EXPECT_EQ(JobSetRevision(store_), *revision);
  EXPECT_EQ(after["jobs/default/train/w-3"], "attempt 1");
  EXPECT_EQ(after["events/default/train/9"], "restarted");
  EXPECT_FALSE(after.contains("jobs/default/train/w-29"));
  EXPECT_FALSE(after.contains("pods/default/train/w-29"));
  for (const auto& [key, value] : after)
    EXPECT_FALSE(absl::StartsWith(key, store::keys::kJournal)) << key;
  EXPECT_THAT(journal.Recover(), IsOkAndHolds(0));
  EXPECT_EQ(Contents(store_), after);
  EXPECT_NE(before, after);
}

// The property the controller's commit rests on: wherever the writer dies,
// the store, once recovered, holds the batch whole or not at all.
TEST_F(PassJournalTest, DyingBetweenAnyTwoTransactionsRecoversToBeforeOrAfter) {
  const std::map<std::string, std::string> before = Contents(store_);
  std::map<std::string, std::string> after;
  int total = 0;
  {
    store::MemoryStore s;
    Seed(s);
    s.SetLimits(store_.Limits());
    DyingStore counting(&s, 1'000);
    ASSERT_THAT(PassJournal(&counting).Commit(Restart(JobSetRevision(s))),
                IsOk());
    after = Contents(s);
    total = counting.commits();
  }
  int saw_before = 0;
  int saw_after = 0;
  for (int allowed = 0; allowed < total; ++allowed) {
    store::MemoryStore s;
    Seed(s);
    s.SetLimits(store_.Limits());
    DyingStore dying(&s, allowed);
    EXPECT_FALSE(PassJournal(&dying).Commit(Restart(JobSetRevision(s))).ok())
        << "dying after " << allowed << " commits";
    // The next leader, or jobsetd restarted, recovers before it loads.
    ASSERT_THAT(PassJournal(&s).Recover().status(), IsOk());
    const std::map<std::string, std::string> recovered = Contents(s);
    if (recovered == before) {
      ++saw_before;
      // Once the mark has landed, never before again.
      EXPECT_EQ(saw_after, 0) << "dying after " << allowed << " commits";
    } else {
      EXPECT_EQ(recovered, after) << "dying after " << allowed << " commits";
      ++saw_after;
    }
  }
  EXPECT_GT(saw_before, 1);
  EXPECT_GT(saw_after, 1);
}

TEST_F(PassJournalTest, AFailedConditionAppliesNothingAndLeavesNoJournal) {
  const std::map<std::string, std::string> before = Contents(store_);
  PassJournal journal(&store_);
  EXPECT_THAT(journal.Commit(Restart(JobSetRevision(store_) + 7)).status(),
              StatusIs(absl::StatusCode::kAborted, HasSubstr(kJobSet)));
  EXPECT_EQ(Contents(store_), before);
}

TEST_F(PassJournalTest, AWriteThatFitsNoTransactionIsRefusedByName) {
  store::Batch b = Restart(JobSetRevision(store_));
  b.Put("pods/default/train/huge", std::string(4096, 'x'));
  const std::map<std::string, std::string> before = Contents(store_);
  absl::Status s = PassJournal(&store_).Commit(b).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                          HasSubstr("\"pods/default/train/huge\"")));
  EXPECT_EQ(Contents(store_), before);
}

TEST_F(PassJournalTest, RecoveryDeletesUnappliedPartsThatAreNotChildWrites) {
  // Parts as a crashed writer, or a corrupted disk, would leave them:
  // committed (a mark), one writing the JobSet object itself, one garbage,
  // one good.
  api::JournalCommit mark;
  mark.set_parts(3);
  api::JournalPart bad;
  api::JournalPart::Write* w = bad.add_writes();
  w->set_key(kJobSet);
  w->set_value("forged");
  api::JournalPart good;
  w = good.add_writes();
  w->set_key("jobs/default/train/w-0");
  w->set_value("from the journal");
  ASSERT_THAT(
      store_
          .Commit(store::Batch()
                      .Put("journal/00ab", mark.SerializeAsString())
                      .Put("journal/00ab/000000", bad.SerializeAsString())
                      .Put("journal/00ab/000001", "\xff\xff garbage")
                      .Put("journal/00ab/000002", good.SerializeAsString())
                      .Put("journal/77/000000", good.SerializeAsString()))
          .status(),
      IsOk());
  EXPECT_THAT(PassJournal(&store_).Recover(), IsOkAndHolds(1));
  std::map<std::string, std::string> after = Contents(store_);
  EXPECT_EQ(after[kJobSet], "status: attempt 0");
  EXPECT_EQ(after["jobs/default/train/w-0"], "from the journal");
  for (const auto& [key, value] : after)
    EXPECT_FALSE(absl::StartsWith(key, store::keys::kJournal)) << key;
}

// On a real etcd (128 operations, 1.5 MiB a transaction): a restart's
// worth of writes, 3 MiB in 300 operations, lands whole, and every
// transaction the journal sends fits what etcd accepts.
TEST(PassJournalOnEtcdTest, ACommitOverEtcdsLimitsLandsWhole) {
  using store::testing::EtcdTestServer;
  if (!EtcdTestServer::Available()) GTEST_SKIP() << EtcdTestServer::Why();
  auto etcd =
      EtcdTestServer::Start({.dir = absl::StrCat(::testing::TempDir(), "/e")});
  ASSERT_THAT(etcd.status(), IsOk());
  auto s = store::EtcdStore::Open({.endpoints = (*etcd)->endpoints()});
  ASSERT_THAT(s.status(), IsOk());
  store::Store& etcd_store = **s;
  ASSERT_THAT(
      etcd_store.Commit(store::Batch().Put(kJobSet, "attempt 0")).status(),
      IsOk());
  auto js = etcd_store.Get(kJobSet);
  ASSERT_TRUE(js.ok() && js->has_value());
  store::Batch restart;
  restart.Update(kJobSet, "attempt 1", (*js)->mod_revision);
  for (int i = 0; i < 300; ++i) {
    restart.Put(absl::StrCat("pods/default/train/w-", i),
                std::string(10'000, 'a' + i % 26));
  }
  ASSERT_THAT(etcd_store.Commit(restart).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_THAT(PassJournal(&etcd_store).Commit(restart).status(), IsOk());
  std::map<std::string, std::string> after = Contents(etcd_store);
  EXPECT_EQ(after[kJobSet], "attempt 1");
  EXPECT_EQ(after["pods/default/train/w-299"], std::string(10'000, 'n'));
  EXPECT_THAT(after, SizeIs(301));
}

TEST(CommitSplitTest, OwnerOfNamesTheJobSetOfEachControllerKey) {
  EXPECT_EQ(OwnerOf("jobsets/ns/train"), "ns/train");
  EXPECT_EQ(OwnerOf("jobs/ns/train/train-w-0"), "ns/train");
  EXPECT_EQ(OwnerOf("pods/ns/train/train-w-0/3"), "ns/train");
  EXPECT_EQ(OwnerOf("events/ns/train/00000000000000000001"), "ns/train");
  EXPECT_EQ(OwnerOf("nodes/n1"), "");
  EXPECT_EQ(OwnerOf("jobs/ns"), "");
  EXPECT_EQ(OwnerOf("jobs//x"), "");
}

TEST(CommitSplitTest, AnUnlimitedStoreGetsOneTransaction) {
  store::Batch b;
  for (int i = 0; i < 500; ++i)
    b.Put(absl::StrCat("jobs/ns/js-", i % 7, "/j-", i), "v");
  std::vector<PlannedTxn> txns = SplitByJobSet(b, store::CommitLimits());
  ASSERT_THAT(txns, SizeIs(1));
  EXPECT_THAT(txns[0].batch.ops(), SizeIs(500));
  EXPECT_THAT(txns[0].owners, SizeIs(7));
  EXPECT_FALSE(txns[0].journaled);
  EXPECT_THAT(SplitByJobSet(store::Batch(), {.max_ops = 4}), IsEmpty());
}

TEST(CommitSplitTest, JobSetsStayWholeAndPackIntoTransactionsThatFit) {
  const store::CommitLimits limits{.max_ops = 10, .max_bytes = 4096};
  store::Batch b;
  // Twelve small JobSets of three writes each, and one of forty.
  for (int js = 0; js < 12; ++js) {
    b.Update(absl::StrCat("jobsets/ns/small-", js), "status", 4);
    b.Put(absl::StrCat("jobs/ns/small-", js, "/a"), "job");
    b.Put(absl::StrCat("pods/ns/small-", js, "/a"), "pods");
  }
  for (int i = 0; i < 40; ++i) b.Put(absl::StrCat("jobs/ns/big/j", i), "job");
  std::vector<PlannedTxn> txns = SplitByJobSet(b, limits);
  std::map<std::string, int> seen;
  size_t ops = 0;
  for (const PlannedTxn& txn : txns) {
    ops += txn.batch.ops().size();
    for (const std::string& owner : txn.owners) ++seen[owner];
    for (const store::Batch::Op& op : txn.batch.ops()) {
      EXPECT_NE(
          std::find(txn.owners.begin(), txn.owners.end(), OwnerOf(op.key)),
          txn.owners.end());
    }
    if (txn.journaled) {
      EXPECT_EQ(txn.owners, std::vector<std::string>{"ns/big"});
    } else {
      EXPECT_THAT(store::CheckLimits(txn.batch, limits), IsOk());
    }
  }
  EXPECT_EQ(ops, b.ops().size());
  EXPECT_THAT(seen, SizeIs(13));
  for (const auto& [owner, times] : seen) EXPECT_EQ(times, 1) << owner;
  // 36 small writes, three JobSets (nine writes) to a transaction.
  EXPECT_THAT(txns, SizeIs(5));
}

}  // namespace
}  // namespace jobset::scheduler
