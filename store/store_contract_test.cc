// The Store contract, run against every implementation (TEST_P): what
// MemoryStore does in fast tests is what RocksDbStore does in jobsetd.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/etcd/etcd_test_server.h"
#include "store/etcd_store.h"
#include "store/memory_store.h"
#include "store/rocksdb_store.h"
#include "store/snapshot.h"
#include "store/store.h"

namespace jobset::store {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

struct Implementation {
  std::string name;
  // Opens a store of its own: its `dir`, or keys of its own under one shared
  // server's.
  std::function<std::unique_ptr<Store>(const std::string& dir,
                                       size_t history_events)>
      open;
  // Non-empty: why this implementation cannot run here (the test skips).
  std::function<std::string()> skip = [] { return std::string(); };
  // A new store's revision is 0. etcd's starts at its cluster's revision
  // (1 for a new cluster, more for one shared by several tests); every
  // expected revision below counts from the store's revision at Open.
  bool starts_at_zero = true;
};

// The etcd the Etcd instantiation shares, started at first use under
// TEST_TMPDIR and killed at exit: three members with mutual TLS, as
// production runs it, so every contract holds across members and TLS.
testing::EtcdTestServer* SharedEtcd() {
  static const std::unique_ptr<testing::EtcdTestServer> server = [] {
    auto started = testing::EtcdTestServer::Start(
        {.dir = absl::StrCat(::testing::TempDir(), "/contract-etcd"),
         .members = 3,
         .tls = true});
    JOBSET_CHECK(started.ok()) << started.status();
    return *std::move(started);
  }();
  return server.get();
}

void PrintTo(const Implementation& impl, std::ostream* os) { *os << impl.name; }

class StoreContractTest : public ::testing::TestWithParam<Implementation> {
 protected:
  void SetUp() override {
    if (std::string why = GetParam().skip(); !why.empty()) GTEST_SKIP() << why;
  }

  std::unique_ptr<Store> Open(size_t history_events = 10'000) {
    const ::testing::TestInfo* info =
        ::testing::UnitTest::GetInstance()->current_test_info();
    std::string dir = absl::StrCat(::testing::TempDir(), "/contract-",
                                   GetParam().name, "-", info->name());
    std::replace(dir.begin() + ::testing::TempDir().size(), dir.end(), '/',
                 '-');
    std::filesystem::remove_all(dir);
    std::unique_ptr<Store> store = GetParam().open(dir, history_events);
    base_ = store->CurrentRevision();
    return store;
  }

  int64_t base_ = 0;  // The store's revision when it was opened.
};

std::vector<std::string> Keys(const std::vector<KeyValue>& kvs) {
  std::vector<std::string> keys;
  for (const KeyValue& kv : kvs) keys.push_back(kv.key);
  return keys;
}

TEST_P(StoreContractTest, GetOfMissingKeyIsEmpty) {
  auto store = Open();
  auto got = store->Get("nope");
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_FALSE(got->has_value());
  if (GetParam().starts_at_zero) {
    EXPECT_EQ(base_, 0);
  }
  EXPECT_EQ(store->CurrentRevision(), base_);
}

TEST_P(StoreContractTest, CommitAssignsIncreasingRevisions) {
  auto store = Open();
  auto r1 = store->Commit(Batch().Put("a", "1"));
  ASSERT_THAT(r1.status(), IsOk());
  EXPECT_EQ(*r1, base_ + 1);
  auto r2 = store->Commit(Batch().Put("a", "2").Put("b", "x"));
  ASSERT_THAT(r2.status(), IsOk());
  EXPECT_EQ(*r2, base_ + 2);
  EXPECT_EQ(store->CurrentRevision(), base_ + 2);

  auto a = store->Get("a");
  ASSERT_THAT(a.status(), IsOk());
  ASSERT_TRUE(a->has_value());
  EXPECT_EQ((*a)->value, "2");
  EXPECT_EQ((*a)->create_revision, base_ + 1);
  EXPECT_EQ((*a)->mod_revision, base_ + 2);
  auto b = store->Get("b");
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ((*b)->create_revision, base_ + 2);

  // An empty batch changes nothing and reports the current revision.
  EXPECT_EQ(*store->Commit(Batch()), base_ + 2);
}

TEST_P(StoreContractTest, CreateRequiresAbsentKey) {
  auto store = Open();
  ASSERT_THAT(store->Commit(Batch().Create("k", "v")).status(), IsOk());
  EXPECT_THAT(store->Commit(Batch().Create("k", "w")).status(),
              StatusIs(absl::StatusCode::kAborted, HasSubstr("\"k\"")));
  EXPECT_EQ((*store->Get("k"))->value, "v");
}

TEST_P(StoreContractTest, UpdateComparesRevision) {
  auto store = Open();
  const int64_t r1 = *store->Commit(Batch().Put("k", "v1"));
  const int64_t r2 = *store->Commit(Batch().Update("k", "v2", r1));
  EXPECT_GT(r2, r1);
  EXPECT_THAT(store->Commit(Batch().Update("k", "v3", r1)).status(),
              StatusIs(absl::StatusCode::kAborted,
                       HasSubstr(absl::StrCat("at revision ", r2))));
  EXPECT_THAT(
      store->Commit(Batch().Update("missing", "v", 1)).status(),
      StatusIs(absl::StatusCode::kAborted, HasSubstr("does not exist")));
  EXPECT_EQ((*store->Get("k"))->value, "v2");
}

TEST_P(StoreContractTest, FailedConditionAppliesNothing) {
  auto store = Open();
  ASSERT_THAT(store->Commit(Batch().Put("taken", "x")).status(), IsOk());
  EXPECT_THAT(
      store->Commit(Batch().Put("a", "1").Delete("taken").Create("taken", "y"))
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("twice")));
  EXPECT_THAT(
      store->Commit(Batch().Put("a", "1").Create("taken", "y")).status(),
      StatusIs(absl::StatusCode::kAborted));
  EXPECT_FALSE(store->Get("a")->has_value());
  EXPECT_EQ((*store->Get("taken"))->value, "x");
  EXPECT_EQ(store->CurrentRevision(), base_ + 1);
}

TEST_P(StoreContractTest, DeleteAndDeleteAt) {
  auto store = Open();
  const int64_t r1 = *store->Commit(Batch().Put("a", "1").Put("b", "2"));
  EXPECT_THAT(store->Commit(Batch().DeleteAt("a", r1 + 5)).status(),
              StatusIs(absl::StatusCode::kAborted));
  ASSERT_THAT(store->Commit(Batch().DeleteAt("a", r1)).status(), IsOk());
  ASSERT_THAT(store->Commit(Batch().Delete("b")).status(), IsOk());
  EXPECT_FALSE(store->Get("a")->has_value());
  EXPECT_FALSE(store->Get("b")->has_value());
  // Deleting an absent key without a condition is not an error.
  EXPECT_THAT(store->Commit(Batch().Delete("b")).status(), IsOk());
}

TEST_P(StoreContractTest, RejectsBadKeysAndValues) {
  auto store = Open();
  EXPECT_THAT(store->Commit(Batch().Put("", "v")).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty")));
  EXPECT_THAT(
      store->Commit(Batch().Put(std::string(Store::kMaxKeyBytes + 1, 'k'), "v"))
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1024")));
  EXPECT_THAT(
      store
          ->Commit(
              Batch().Put("k", std::string(Store::kMaxValueBytes + 1, 'v')))
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("exceeds")));
  EXPECT_EQ(store->CurrentRevision(), base_);
}

TEST_P(StoreContractTest, ScanPagesThroughAPrefix) {
  auto store = Open();
  ASSERT_THAT(store
                  ->Commit(Batch()
                               .Put("p/a", "1")
                               .Put("p/b", "2")
                               .Put("p/c", "3")
                               .Put("q/a", "4")
                               .Put("p", "5"))
                  .status(),
              IsOk());
  auto page = store->Scan("p/", "", 2);
  ASSERT_THAT(page.status(), IsOk());
  EXPECT_THAT(Keys(page->kvs), ElementsAre("p/a", "p/b"));
  EXPECT_TRUE(page->more);
  EXPECT_EQ(page->revision, base_ + 1);
  page = store->Scan("p/", "p/b", 2);
  ASSERT_THAT(page.status(), IsOk());
  EXPECT_THAT(Keys(page->kvs), ElementsAre("p/c"));
  EXPECT_FALSE(page->more);
  EXPECT_EQ(page->kvs[0].value, "3");

  page = store->Scan("", "", 100);
  EXPECT_THAT(Keys(page->kvs), ElementsAre("p", "p/a", "p/b", "p/c", "q/a"));
  page = store->Scan("z/", "", 100);
  EXPECT_THAT(page->kvs, IsEmpty());
}

TEST_P(StoreContractTest, WatchResumesFromARevision) {
  auto store = Open();
  const int64_t r1 = *store->Commit(Batch().Put("w/a", "1"));
  const int64_t r2 = *store->Commit(Batch().Put("w/a", "2").Put("other", "x"));
  const int64_t r3 = *store->Commit(Batch().Delete("w/a"));

  auto events = store->WaitForEvents("w/", base_, absl::InfinitePast(), 100);
  ASSERT_THAT(events.status(), IsOk());
  ASSERT_THAT(*events, SizeIs(3));
  EXPECT_EQ((*events)[0].type, Event::Type::kPut);
  EXPECT_EQ((*events)[0].kv.mod_revision, r1);
  EXPECT_EQ((*events)[1].kv.value, "2");
  EXPECT_EQ((*events)[1].kv.mod_revision, r2);
  EXPECT_EQ((*events)[1].kv.create_revision, r1);
  // A delete carries the last value it removed.
  EXPECT_EQ((*events)[2].type, Event::Type::kDelete);
  EXPECT_EQ((*events)[2].kv.value, "2");
  EXPECT_EQ((*events)[2].kv.mod_revision, r3);

  events = store->WaitForEvents("w/", r2, absl::InfinitePast(), 100);
  ASSERT_THAT(events.status(), IsOk());
  EXPECT_THAT(*events, SizeIs(1));

  // Nothing new: the wait ends at the deadline with no events.
  events =
      store->WaitForEvents("w/", r3, absl::Now() + absl::Milliseconds(20), 100);
  ASSERT_THAT(events.status(), IsOk());
  EXPECT_THAT(*events, IsEmpty());
}

// A watcher of a quiet prefix learns how far the history was looked at, and
// resumes from there without missing the next event of its prefix.
TEST_P(StoreContractTest, AQuietPrefixsWatcherResumesFromWhatWasLookedAt) {
  auto store = Open();
  const int64_t r1 = *store->Commit(Batch().Put("w/a", "1"));
  ASSERT_THAT(store->Commit(Batch().Put("other", "x")).status(), IsOk());
  const int64_t r3 = *store->Commit(Batch().Put("other", "y"));
  int64_t looked_at = 0;
  auto events =
      store->WaitForEvents("w/", base_, absl::InfinitePast(), 100, &looked_at);
  ASSERT_THAT(events.status(), IsOk());
  ASSERT_THAT(*events, SizeIs(1));
  EXPECT_GE(looked_at, r1);
  events =
      store->WaitForEvents("w/", r1, absl::InfinitePast(), 100, &looked_at);
  ASSERT_THAT(events.status(), IsOk());
  EXPECT_THAT(*events, IsEmpty());
  EXPECT_EQ(looked_at, r3);
  const int64_t r4 = *store->Commit(Batch().Put("w/b", "2"));
  events = store->WaitForEvents("w/", looked_at, absl::InfinitePast(), 100,
                                &looked_at);
  ASSERT_THAT(events.status(), IsOk());
  ASSERT_THAT(*events, SizeIs(1));
  EXPECT_EQ((*events)[0].kv.key, "w/b");
  EXPECT_EQ(looked_at, r4);
}

TEST_P(StoreContractTest, WatchNeverSplitsACommit) {
  auto store = Open();
  ASSERT_THAT(
      store->Commit(Batch().Put("a", "1").Put("b", "2").Put("c", "3")).status(),
      IsOk());
  ASSERT_THAT(store->Commit(Batch().Put("d", "4")).status(), IsOk());
  auto events = store->WaitForEvents("", base_, absl::InfinitePast(), 1);
  ASSERT_THAT(events.status(), IsOk());
  EXPECT_THAT(*events, SizeIs(3));
}

TEST_P(StoreContractTest, WatchWakesWhenACommitArrives) {
  auto store = Open();
  std::thread writer([&] {
    absl::SleepFor(absl::Milliseconds(20));
    ASSERT_THAT(store->Commit(Batch().Put("other", "x")).status(), IsOk());
    ASSERT_THAT(store->Commit(Batch().Put("w/k", "v")).status(), IsOk());
  });
  auto events =
      store->WaitForEvents("w/", base_, absl::Now() + absl::Seconds(30), 10);
  writer.join();
  ASSERT_THAT(events.status(), IsOk());
  ASSERT_THAT(*events, SizeIs(1));
  EXPECT_EQ((*events)[0].kv.key, "w/k");
}

TEST_P(StoreContractTest, WatchFromACompactedRevisionSaysListAgain) {
  auto store = Open(/*history_events=*/3);
  for (int i = 0; i < 10; ++i) {
    ASSERT_THAT(store->Commit(Batch().Put("k", absl::StrCat(i))).status(),
                IsOk());
  }
  EXPECT_THAT(
      store->WaitForEvents("", base_ + 2, absl::InfinitePast(), 10).status(),
      StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("list again")));
  // Values 0..9 were written at revisions base_ + 1..10.
  auto recent = store->WaitForEvents("", base_ + 9, absl::InfinitePast(), 10);
  ASSERT_THAT(recent.status(), IsOk());
  EXPECT_THAT(*recent,
              ElementsAre(Field(&Event::kv, Field(&KeyValue::value, "9"))));
}

// Many concurrent read-modify-write clients: conflicts are kAborted and
// retried, and no increment is lost.
TEST_P(StoreContractTest, OptimisticConcurrencyLosesNoUpdate) {
  auto store = Open();
  ASSERT_THAT(store->Commit(Batch().Put("counter", "0")).status(), IsOk());
  constexpr int kThreads = 8;
  constexpr int kIncrements = 50;
  std::atomic<int> conflicts = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements;) {
        auto kv = store->Get("counter");
        ASSERT_TRUE(kv.ok() && kv->has_value());
        int n;
        ASSERT_TRUE(absl::SimpleAtoi((*kv)->value, &n));
        auto r = store->Commit(Batch().Update("counter", absl::StrCat(n + 1),
                                              (*kv)->mod_revision));
        if (r.ok()) {
          ++i;
        } else {
          ASSERT_EQ(r.status().code(), absl::StatusCode::kAborted)
              << r.status();
          ++conflicts;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ((*store->Get("counter"))->value,
            absl::StrCat(kThreads * kIncrements));
  EXPECT_EQ(store->CurrentRevision(), base_ + 1 + kThreads * kIncrements);
  ::testing::Test::RecordProperty("conflicts", conflicts.load());
}

TEST_P(StoreContractTest, ConcurrentCreatesAllLandWithDistinctRevisions) {
  auto store = Open();
  constexpr int kThreads = 8;
  constexpr int kCreates = 40;
  std::vector<std::vector<int64_t>> revisions(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCreates; ++i) {
        auto r =
            store->Commit(Batch().Create(absl::StrCat("c/", t, "/", i), "v"));
        ASSERT_THAT(r.status(), IsOk());
        revisions[t].push_back(*r);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<int64_t> all;
  for (const auto& v : revisions) {
    // Each client sees its own revisions increase.
    EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
    all.insert(all.end(), v.begin(), v.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
  EXPECT_EQ(store->Scan("c/", "", 1000)->kvs.size(), kThreads * kCreates);
}

TEST_P(StoreContractTest, ReadAllSeesOneRevisionUnderConcurrentCommits) {
  auto store = Open();
  // 100 keys: more than one page of etcd's (64), one Txn's worth (< 127).
  constexpr int kKeys = 100;
  auto rewrite = [&](absl::string_view value) {
    Batch batch;
    for (int i = 0; i < kKeys; ++i) {
      batch.Put(absl::StrCat("r/", absl::Dec(i, absl::kZeroPad3)), value);
    }
    return store->Commit(batch);
  };
  ASSERT_THAT(store->Commit(Batch().Put("other", "x")).status(), IsOk());
  absl::StatusOr<int64_t> written = rewrite("0");
  ASSERT_THAT(written.status(), IsOk());

  // A writer in another thread, and one inside the read itself (between its
  // pages), rewrite every key and add one: the read sees none of it.
  std::atomic<bool> stop = false;
  std::atomic<int> background = 0;
  std::thread writer([&] {
    for (int n = 1; !stop; ++n) {
      if (rewrite(absl::StrCat("w", n)).ok()) ++background;
    }
  });
  while (background < 2) std::this_thread::yield();
  // Whatever the writer committed before the read, the read's values are
  // all from one commit.
  std::vector<KeyValue> seen;
  int begins = 0;
  int64_t begun_at = 0;
  absl::StatusOr<int64_t> revision = store->ReadAll(
      "r/",
      [&](int64_t at) {
        ++begins;
        begun_at = at;
        seen.clear();
        return absl::OkStatus();
      },
      [&](const KeyValue& kv) {
        seen.push_back(kv);
        if (seen.size() == 1) {
          absl::Status status = rewrite("inside").status();
          if (!status.ok()) return status;
          return store->Commit(Batch().Put("r/zzz", "new")).status();
        }
        return absl::OkStatus();
      });
  stop = true;
  writer.join();
  ASSERT_THAT(revision.status(), IsOk());
  EXPECT_EQ(begins, 1);
  EXPECT_EQ(begun_at, *revision);
  EXPECT_GT(*revision, *written);
  ASSERT_THAT(seen, SizeIs(kKeys));
  for (int i = 0; i < kKeys; ++i) {
    EXPECT_EQ(seen[i].key, absl::StrCat("r/", absl::Dec(i, absl::kZeroPad3)));
    EXPECT_EQ(seen[i].value, seen[0].value) << seen[i].key;
    EXPECT_EQ(seen[i].mod_revision, seen[0].mod_revision) << seen[i].key;
    EXPECT_LE(seen[i].mod_revision, *revision);
  }
  EXPECT_NE(seen[0].value, "inside");
  // The store moved on meanwhile.
  auto now = store->Get("r/zzz");
  ASSERT_THAT(now.status(), IsOk());
  EXPECT_TRUE(now->has_value());
}

TEST_P(StoreContractTest, ReadAllStopsAtTheCallersError) {
  auto store = Open();
  ASSERT_THAT(
      store->Commit(Batch().Put("p/a", "1").Put("p/b", "2").Put("q", "3"))
          .status(),
      IsOk());
  std::vector<std::string> keys;
  auto all = store->ReadAll(
      "p/", [](int64_t) { return absl::OkStatus(); },
      [&](const KeyValue& kv) {
        keys.push_back(kv.key);
        return absl::OkStatus();
      });
  ASSERT_THAT(all.status(), IsOk());
  EXPECT_EQ(*all, base_ + 1);
  EXPECT_THAT(keys, ElementsAre("p/a", "p/b"));
  keys.clear();
  EXPECT_THAT(store
                  ->ReadAll(
                      "p/", [](int64_t) { return absl::OkStatus(); },
                      [&](const KeyValue& kv) {
                        keys.push_back(kv.key);
                        return absl::CancelledError("enough");
                      })
                  .status(),
              StatusIs(absl::StatusCode::kCancelled, HasSubstr("enough")));
  EXPECT_THAT(keys, ElementsAre("p/a"));
  EXPECT_THAT(
      store
          ->ReadAll(
              "p/", [](int64_t) { return absl::AbortedError("no restart"); },
              [](const KeyValue&) { return absl::OkStatus(); })
          .status(),
      StatusIs(absl::StatusCode::kAborted));
}

// A snapshot (store/snapshot.h) of one store restores into every other,
// through Commit, in batches that fit the target's limits (etcd's 127
// operations and request bytes included).
TEST_P(StoreContractTest, SnapshotRestoresIntoAnEmptyStoreOnly) {
  MemoryStore source;
  Batch batch;
  for (int i = 0; i < 300; ++i) {
    batch.Put(absl::StrCat("jobsets/ns/", absl::Dec(i, absl::kZeroPad3)),
              std::string(20'000, static_cast<char>('a' + i % 26)));
  }
  ASSERT_THAT(source.Commit(batch).status(), IsOk());
  const std::string path = absl::StrCat(::testing::TempDir(), "/contract-",
                                        GetParam().name, ".snap");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    SnapshotWriter writer([&](absl::string_view bytes) {
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      return absl::OkStatus();
    });
    ASSERT_THAT(
        source
            .ReadAll(
                "", [&](int64_t revision) { return writer.Begin(revision); },
                [&](const KeyValue& kv) {
                  return writer.Add(kv.key, kv.value);
                })
            .status(),
        IsOk());
    ASSERT_THAT(writer.Finish().status(), IsOk());
  }
  auto store = Open();
  absl::StatusOr<SnapshotInfo> restored =
      RestoreSnapshot(path, store.get(), GetParam().name);
  ASSERT_THAT(restored.status(), IsOk());
  EXPECT_EQ(restored->keys, 300u);
  std::vector<KeyValue> got;
  ASSERT_THAT(store
                  ->ReadAll(
                      "", [&](int64_t) { return absl::OkStatus(); },
                      [&](const KeyValue& kv) {
                        got.push_back(kv);
                        return absl::OkStatus();
                      })
                  .status(),
              IsOk());
  ASSERT_THAT(got, SizeIs(300));
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(got[i].key,
              absl::StrCat("jobsets/ns/", absl::Dec(i, absl::kZeroPad3)));
    EXPECT_EQ(got[i].value,
              std::string(20'000, static_cast<char>('a' + i % 26)));
  }
  EXPECT_THAT(RestoreSnapshot(path, store.get(), GetParam().name).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("is not empty")));
}

INSTANTIATE_TEST_SUITE_P(
    AllStores, StoreContractTest,
    ::testing::Values(
        Implementation{"Memory",
                       [](const std::string&, size_t history_events) {
                         return std::make_unique<MemoryStore>(history_events);
                       }},
        Implementation{"RocksDb",
                       [](const std::string& dir,
                          size_t history_events) -> std::unique_ptr<Store> {
                         auto store = RocksDbStore::Open(
                             {.path = dir, .history_events = history_events});
                         JOBSET_CHECK(store.ok()) << store.status();
                         return *std::move(store);
                       }},
        Implementation{"Etcd",
                       [](const std::string& dir,
                          size_t history_events) -> std::unique_ptr<Store> {
                         // One etcd for the whole suite; each test's keys under
                         // a prefix of its own (the directory name is unique
                         // per test).
                         auto store = EtcdStore::Open(
                             {.endpoints = SharedEtcd()->endpoints(),
                              .ca_file = SharedEtcd()->ca_file(),
                              .cert_file = SharedEtcd()->client_cert_file(),
                              .key_file = SharedEtcd()->client_key_file(),
                              .prefix = absl::StrCat(
                                  "/contract", dir.substr(dir.rfind('/')), "/"),
                              .history_events = history_events});
                         JOBSET_CHECK(store.ok()) << store.status();
                         return *std::move(store);
                       },
                       [] {
                         return testing::EtcdTestServer::Available()
                                    ? std::string()
                                    : testing::EtcdTestServer::Why();
                       },
                       /*starts_at_zero=*/false}),
    [](const ::testing::TestParamInfo<Implementation>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace jobset::store
