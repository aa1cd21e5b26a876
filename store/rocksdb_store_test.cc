// What only the durable store does: survive reopening, refuse foreign or
// newer data, report corruption with what and where, group commits.
#include "store/rocksdb_store.h"

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"

namespace jobset::store {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

class RocksDbStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(
        ::testing::TempDir(), "/rocksdb-",
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<RocksDbStore> OpenOrDie() {
    auto store = RocksDbStore::Open({.path = dir_});
    EXPECT_THAT(store.status(), IsOk());
    return store.ok() ? *std::move(store) : nullptr;
  }

  // Writes raw bytes into the database behind the store's back.
  void RawPut(const std::string& key, const std::string& value) {
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, value).ok());
  }

  std::string RawGet(const std::string& key) {
    rocksdb::DB* raw = nullptr;
    EXPECT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string value;
    EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), key, &value).ok());
    return value;
  }

  // Commits a=1 (revision 1), then a=2 and b=3 (revision 2), and closes
  // the store.
  void WriteTwoRevisions() {
    auto store = OpenOrDie();
    ASSERT_THAT(store->Commit(Batch().Put("a", "1")).status(), IsOk());
    ASSERT_THAT(store->Commit(Batch().Put("a", "2").Put("b", "3")).status(),
                IsOk());
  }

  std::string dir_;
};

TEST_F(RocksDbStoreTest, ReopenKeepsDataAndRevision) {
  WriteTwoRevisions();
  auto store = OpenOrDie();
  EXPECT_EQ(store->CurrentRevision(), 2);
  auto a = store->Get("a");
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->value, "2");
  EXPECT_EQ((*a)->create_revision, 1);
  EXPECT_EQ((*a)->mod_revision, 2);
  EXPECT_EQ(*store->Commit(Batch().Put("c", "4")), 3);
  // History starts at the revision the store opened at.
  EXPECT_THAT(store->WaitForEvents("", 1, absl::InfinitePast(), 10).status(),
              StatusIs(absl::StatusCode::kOutOfRange));
  EXPECT_THAT(store->WaitForEvents("", 2, absl::InfinitePast(), 10).status(),
              IsOk());
}

// Puts take the old revisions from memory, which Open rebuilds: conditions
// and create revisions hold across a reopen.
TEST_F(RocksDbStoreTest, ReopenKeepsRevisionsForConditionalWrites) {
  WriteTwoRevisions();
  auto store = OpenOrDie();
  EXPECT_THAT(
      store->Commit(Batch().Create("b", "x")).status(),
      StatusIs(absl::StatusCode::kAborted, HasSubstr("already exists")));
  EXPECT_THAT(store->Commit(Batch().Update("a", "x", 1)).status(),
              StatusIs(absl::StatusCode::kAborted, HasSubstr("revision 2")));
  ASSERT_THAT(store->Commit(Batch().Update("a", "x", 2)).status(), IsOk());
  auto a = store->Get("a");
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->create_revision, 1);
  EXPECT_EQ((*a)->mod_revision, 3);
  ASSERT_THAT(store->Commit(Batch().Delete("b")).status(), IsOk());
  ASSERT_THAT(store->Commit(Batch().Create("b", "again")).status(), IsOk());
  auto b = store->Get("b");
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ((*b)->create_revision, 5);
}

TEST_F(RocksDbStoreTest, CreatesMissingParentDirectories) {
  dir_ = absl::StrCat(dir_, "/nested/data");
  EXPECT_NE(OpenOrDie(), nullptr);
}

// Modes (st_mode & 07777) of `dir` and of everything under it, by path.
std::map<std::string, int> ModesUnder(const std::string& dir) {
  std::map<std::string, int> modes;
  struct stat st;
  if (::lstat(dir.c_str(), &st) == 0) modes[dir] = st.st_mode & 07777;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (::lstat(entry.path().c_str(), &st) == 0) {
      modes[entry.path().string()] = st.st_mode & 07777;
    }
  }
  return modes;
}

// The store holds Secrets in plaintext: its directory is 0700 and every file
// RocksDB writes (tables, log, manifest, LOG, LOCK, OPTIONS) 0600, whatever
// the umask; an existing directory made with looser modes is tightened.
TEST_F(RocksDbStoreTest, DirectoryAndFilesArePrivate) {
  const mode_t old_umask = ::umask(022);
  {
    // A small memtable: the writes are flushed into table files too.
    auto store = RocksDbStore::Open({.path = dir_, .memtable_bytes = 64 << 10});
    ASSERT_THAT(store.status(), IsOk());
    const std::string value(4096, 'x');
    for (int i = 0; i < 200; ++i) {
      ASSERT_THAT(
          (*store)->Commit(Batch().Put(absl::StrCat("k", i), value)).status(),
          IsOk());
    }
  }
  {
    auto store = RocksDbStore::Open({.path = dir_});
    ASSERT_THAT(store.status(), IsOk());
    ASSERT_THAT((*store)->Commit(Batch().Put("after", "reopen")).status(),
                IsOk());
  }
  const std::map<std::string, int> modes = ModesUnder(dir_);
  bool table = false;
  for (const auto& [path, mode] : modes) {
    const bool is_dir = std::filesystem::is_directory(path);
    EXPECT_EQ(mode, is_dir ? 0700 : 0600) << path;
    table = table || absl::EndsWith(path, ".sst");
  }
  EXPECT_TRUE(table) << "no table file was written";
  EXPECT_GE(modes.size(), 5u);
  // A directory that exists with 0755 and a 0644 file in it (as an older
  // jobsetd left them) is tightened when opened.
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  const std::string current = absl::StrCat(dir_, "/CURRENT");
  ASSERT_EQ(::chmod(current.c_str(), 0644), 0);
  ASSERT_NE(OpenOrDie(), nullptr);
  EXPECT_EQ(ModesUnder(dir_)[dir_], 0700);
  EXPECT_EQ(ModesUnder(dir_)[current], 0600);
  ::umask(old_umask);
}

TEST_F(RocksDbStoreTest, RefusesANewerSchema) {
  OpenOrDie();
  RawPut("m/schema", "3");
  EXPECT_THAT(RocksDbStore::Open({.path = dir_}).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("schema version 3"), HasSubstr(dir_),
                             HasSubstr("newer jobsetd"))));
}

TEST_F(RocksDbStoreTest, RefusesADatabaseThatIsNotOurs) {
  RawPut("somebody-else", "x");
  EXPECT_THAT(RocksDbStore::Open({.path = dir_}).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("not a jobsetd data directory")));
}

TEST_F(RocksDbStoreTest, RefusesAGarbledRevision) {
  OpenOrDie();
  RawPut("m/revision", "seven");
  EXPECT_THAT(RocksDbStore::Open({.path = dir_}).status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("m/revision"), HasSubstr("seven"))));
  // Echoed as every message echoes input: Go's %q (common/quote.h).
  RawPut("m/revision", "7\"\xe2\x80\xa8");
  EXPECT_THAT(RocksDbStore::Open({.path = dir_}).status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr(R"(key "m/revision" in )")));
  EXPECT_THAT(RocksDbStore::Open({.path = dir_}).status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr(R"(holds "7\"\u2028", not)")));
}

TEST_F(RocksDbStoreTest, RefusesASecondOpenOfTheSameDirectory) {
  auto first = OpenOrDie();
  EXPECT_THAT(
      RocksDbStore::Open({.path = dir_}).status(),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("another jobsetd")));
}

TEST_F(RocksDbStoreTest, ReportsACorruptValueWithKeyAndPath) {
  {
    auto store = OpenOrDie();
    ASSERT_THAT(store->Commit(Batch().Put("jobsets/a", "payload")).status(),
                IsOk());
  }
  std::string raw = RawGet("djobsets/a");
  raw.back() ^= 0x01;  // One flipped bit in the payload.
  RawPut("djobsets/a", raw);
  RawPut("djobsets/b", "xy");  // Shorter than any header.
  auto store = OpenOrDie();
  EXPECT_THAT(store->Get("jobsets/a").status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       AllOf(HasSubstr("\"jobsets/a\""), HasSubstr(dir_),
                             HasSubstr("checksum mismatch"))));
  EXPECT_THAT(store->Get("jobsets/b").status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("header")));
  EXPECT_THAT(store->Scan("jobsets/", "", 10).status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("jobsets/a")));
  // A write conditioned on the corrupt key is refused, not applied blindly.
  EXPECT_THAT(store->Commit(Batch().Update("jobsets/a", "new", 1)).status(),
              StatusIs(absl::StatusCode::kDataLoss));
}

// Concurrent synced commits share fsyncs: fewer RocksDB writes than commits.
TEST_F(RocksDbStoreTest, GroupCommitSharesWrites) {
  auto store = OpenOrDie();
  constexpr int kThreads = 16;
  constexpr int kCommits = 40;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCommits; ++i) {
        ASSERT_THAT(store->Commit(Batch().Create(absl::StrCat(t, "/", i), "v"))
                        .status(),
                    IsOk());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(store->CurrentRevision(), kThreads * kCommits);
  EXPECT_LT(store->WriteCount(), kThreads * kCommits);
  ::testing::Test::RecordProperty("writes", store->WriteCount());
}

}  // namespace
}  // namespace jobset::store
