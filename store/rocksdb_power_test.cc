// D4 of the reliability plan: power cuts under load. Writers commit through
// the Store interface; the power is cut at a random operation on the disk
// (store/fault_file_system.h drops what was not synced, and puts back names
// whose directory was not synced); the store reopens and must hold every
// acknowledged commit, byte for byte, at its revision. The long form:
//   bazel test //store:rocksdb_power_test --test_arg=--cycles=50
// (--seed=S replays a run's cut points; the seed is printed).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/fault_file_system.h"
#include "store/fault_workload.h"
#include "store/rocksdb_store.h"

ABSL_FLAG(int, cycles, 5, "Power cuts under load (the long form: 50)");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the cut points and the values");

namespace jobset::store {
namespace {

using ::jobset::testing::IsOk;

constexpr int kWriters = 4;

std::string TestDir(absl::string_view name) {
  std::string dir = absl::StrCat(::testing::TempDir(), "/power-", name);
  std::filesystem::remove_all(dir);
  return dir;
}

// A small memtable, so that cycles also flush table files and compact them
// (their writes, syncs, renames and deletions are cut too).
RocksDbStore::Options StoreOptions(const std::string& dir,
                                   std::shared_ptr<FaultFileSystem> fs) {
  return {
      .path = dir, .memtable_bytes = 64 << 10, .file_system = std::move(fs)};
}

// Opens the store, which must open whatever the cut left.
std::unique_ptr<RocksDbStore> OpenOrFail(const RocksDbStore::Options& options) {
  absl::StatusOr<std::unique_ptr<RocksDbStore>> store =
      RocksDbStore::Open(options);
  EXPECT_THAT(store.status(), IsOk()) << "the store did not open after a cut";
  return store.ok() ? *std::move(store) : nullptr;
}

TEST(RocksDbPowerTest, AcknowledgedCommitsSurviveEveryCut) {
  const int cycles = absl::GetFlag(FLAGS_cycles);
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  std::printf("rocksdb_power_test: --cycles=%d --seed=%llu\n", cycles,
              static_cast<unsigned long long>(seed));
  std::mt19937_64 random(seed);
  auto fs = std::make_shared<FaultFileSystem>();
  const RocksDbStore::Options options = StoreOptions(TestDir("cycles"), fs);
  FaultWorkload workload(kWriters, seed);
  int64_t dropped_bytes = 0;
  int dropped_names = 0;
  for (int cycle = 0; cycle <= cycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("--seed=", seed, ", cycle ", cycle));
    std::unique_ptr<RocksDbStore> store = OpenOrFail(options);
    ASSERT_NE(store, nullptr);
    ASSERT_THAT(workload.Verify(*store), IsOk());
    // Truncation to the last sync leaves whole log records: nothing torn.
    EXPECT_THAT(store->recovery().warnings, ::testing::IsEmpty());
    EXPECT_GE(store->recovery().revision, workload.LastAcknowledgedRevision());
    if (cycle == cycles) break;

    // About 50 to 300 commits (a commit group is a write and a sync; table
    // files add theirs).
    const int64_t cut_at =
        std::uniform_int_distribution<int64_t>(100, 600)(random);
    fs->CutPowerAt(cut_at);
    const FaultWorkload::RunResult run = workload.Run(*store, 1'000'000);
    ASSERT_TRUE(fs->PowerIsCut())
        << "the cut at operation " << cut_at << " never came";
    EXPECT_THAT(run.acknowledged_after_error, ::testing::IsEmpty());
    EXPECT_EQ(run.errors.size(), kWriters);  // Each writer stops at its first.
    store.reset();
    absl::StatusOr<FaultFileSystem::Dropped> dropped = fs->DropUnsyncedData();
    ASSERT_THAT(dropped.status(), IsOk());
    dropped_bytes += dropped->bytes_dropped;
    dropped_names += dropped->names_removed + dropped->names_restored;
  }
  std::printf(
      "rocksdb_power_test: %d cuts, %lld commits acknowledged, 0 lost; "
      "%lld unsynced bytes dropped, %d names put back\n",
      cycles, static_cast<long long>(workload.Acknowledged()),
      static_cast<long long>(dropped_bytes), dropped_names);
}

// A cut at each operation of an open (its new MANIFEST, CURRENT renamed to
// it, the directory synced, the replayed log flushed, old files deleted)
// and of the first commits after it: the next open still succeeds with
// every acknowledged commit.
TEST(RocksDbPowerTest, ACutAtAnyOperationOfAnOpenLosesNothing) {
  auto fs = std::make_shared<FaultFileSystem>();
  const RocksDbStore::Options options = StoreOptions(TestDir("open"), fs);
  FaultWorkload workload(1, absl::GetFlag(FLAGS_seed));
  {
    std::unique_ptr<RocksDbStore> store = OpenOrFail(options);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(workload.Run(*store, 5).errors.empty());
  }
  // How many operations an open and two commits take.
  int64_t span = 0;
  {
    const int64_t before = fs->Operations();
    std::unique_ptr<RocksDbStore> store = OpenOrFail(options);
    ASSERT_NE(store, nullptr);
    ASSERT_THAT(workload.Verify(*store), IsOk());
    ASSERT_TRUE(
        workload.Run(*store, workload.Acknowledged() + 2).errors.empty());
    span = fs->Operations() - before;
  }
  ASSERT_GT(span, 10);
  for (int64_t cut_at = 1; cut_at <= span; ++cut_at) {
    SCOPED_TRACE(absl::StrCat("cut at operation ", cut_at, " of ", span));
    fs->CutPowerAt(cut_at);
    {
      absl::StatusOr<std::unique_ptr<RocksDbStore>> store =
          RocksDbStore::Open(options);
      if (store.ok()) {
        ASSERT_THAT(workload.Verify(**store), IsOk());
        workload.Run(**store, workload.Acknowledged() + 2);
      }
    }
    ASSERT_THAT(fs->DropUnsyncedData().status(), IsOk());
    std::unique_ptr<RocksDbStore> store = OpenOrFail(options);
    ASSERT_NE(store, nullptr);
    ASSERT_THAT(workload.Verify(*store), IsOk());
  }
  std::printf("rocksdb_power_test: a cut at each of %lld operations\n",
              static_cast<long long>(span));
}

}  // namespace
}  // namespace jobset::store

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  absl::ParseCommandLine(argc, argv);
  return RUN_ALL_TESTS();
}
