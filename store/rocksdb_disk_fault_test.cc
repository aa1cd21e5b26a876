// D5 of the reliability plan: a disk that fails. Writers commit through the
// Store interface; the n-th write or sync of the store's files fails with
// IOError or NoSpace (store/fault_file_system.h), once or from then on. The
// commit it fails returns an error, never a revision; once any commit has
// returned an error none that begins later is acknowledged; the store
// refuses every commit (UNAVAILABLE, naming the failure) until it is
// reopened; reopened with the disk healthy (and what was not synced lost, as
// after a reboot), it holds every acknowledged commit. The long form:
//   bazel test //store:rocksdb_disk_fault_test --test_arg=--runs=100
// (--seed=S replays run 0 with that seed; each run's seed is printed).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/fault_file_system.h"
#include "store/fault_workload.h"
#include "store/rocksdb_store.h"

ABSL_FLAG(int, runs, 10, "Runs, each with one fault (the long form: 100)");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the first run (run i uses seed + i)");

namespace jobset::store {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using Fault = FaultFileSystem::Fault;

constexpr int kWriters = 4;

std::string Describe(const Fault& fault) {
  return absl::StrCat(
      fault.error == FaultFileSystem::Error::kNoSpace ? "NoSpace" : "IOError",
      " on write/sync #", fault.nth, " (",
      fault.op == Fault::Op::kWrite ? "write" : "sync", ")",
      fault.sticky ? ", and every change after it" : "");
}

// One run: a store with some commits, the fault armed, writers until each
// has had an error, then the checks. Returns the outcome for the summary.
void RunOnce(uint64_t seed, std::string* outcome) {
  std::mt19937_64 random(seed);
  const std::string dir = absl::StrCat(::testing::TempDir(), "/disk-", seed);
  std::filesystem::remove_all(dir);
  auto fs = std::make_shared<FaultFileSystem>();
  // A small memtable: flushes and compactions meet the fault too.
  const RocksDbStore::Options options = {
      .path = dir, .memtable_bytes = 32 << 10, .file_system = fs};
  FaultWorkload workload(kWriters, seed);

  absl::StatusOr<std::unique_ptr<RocksDbStore>> opened =
      RocksDbStore::Open(options);
  ASSERT_THAT(opened.status(), IsOk());
  std::unique_ptr<RocksDbStore> store = *std::move(opened);
  const int64_t before = std::uniform_int_distribution<int64_t>(0, 60)(random);
  ASSERT_TRUE(workload.Run(*store, before).errors.empty());

  Fault fault;
  fault.op = random() % 2 == 0 ? Fault::Op::kWrite : Fault::Op::kSync;
  // Writes outnumber syncs a little (table files are written in pieces and
  // synced once); a run of up to 1,000 commits has a few hundred of each.
  fault.nth = std::uniform_int_distribution<int64_t>(1, 150)(random);
  fault.error = random() % 2 == 0 ? FaultFileSystem::Error::kIOError
                                  : FaultFileSystem::Error::kNoSpace;
  fault.sticky = random() % 2 == 0;
  SCOPED_TRACE(Describe(fault));
  fs->InjectFault(fault);
  const FaultWorkload::RunResult run = workload.Run(*store, before + 1'000);
  const std::optional<std::string> fired = fs->FaultFired();
  ASSERT_TRUE(fired.has_value())
      << "the fault never fired in " << run.acknowledged << " commits";
  SCOPED_TRACE(absl::StrCat("it failed the ", *fired));

  EXPECT_THAT(run.acknowledged_after_error, ::testing::IsEmpty())
      << absl::StrJoin(run.acknowledged_after_error, "\n");
  EXPECT_EQ(run.errors.size(), kWriters)
      << "a writer reached the run's end without an error";
  for (const absl::Status& error : run.errors) {
    EXPECT_THAT(error, StatusIs(absl::StatusCode::kUnavailable));
  }
  // A flush or compaction fails in the background: the store learns of it
  // when RocksDB reports it, and stops then.
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (store->WriteFailure().ok() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_THAT(store->WriteFailure(),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr(dir), HasSubstr("injected fault"))));
  // And it stays stopped: RocksDB resumes writes by itself after some
  // errors (out of space, once a flush succeeds), the store does not.
  for (int probe = 0; probe < 10; ++probe) {
    ASSERT_THAT(store->Commit(Batch().Put("after", "the fault")),
                StatusIs(absl::StatusCode::kUnavailable,
                         AllOf(HasSubstr("accepts no commits"),
                               HasSubstr("injected fault"))))
        << "probe " << probe;
    absl::SleepFor(absl::Milliseconds(5));
  }
  // Reads go on.
  absl::StatusOr<std::optional<KeyValue>> after = store->Get("after");
  ASSERT_THAT(after, IsOk());
  EXPECT_FALSE(after->has_value());

  // The machine reboots with the disk replaced or cleaned up: what was not
  // synced is gone. Everything acknowledged is there.
  store.reset();
  fs->ClearFault();
  fs->CutPower();
  ASSERT_THAT(fs->DropUnsyncedData().status(), IsOk());
  opened = RocksDbStore::Open(options);
  ASSERT_THAT(opened.status(), IsOk());
  EXPECT_THAT(workload.Verify(**opened), IsOk());
  EXPECT_THAT((*opened)->Commit(Batch().Put("after", "the repair")), IsOk());
  *outcome = absl::StrCat(Describe(fault), ": failed the ", *fired, "; ",
                          run.acknowledged, " acknowledged before it");
}

TEST(RocksDbDiskFaultTest, NoCommitIsAcknowledgedOnceTheDiskFailed) {
  const int runs = absl::GetFlag(FLAGS_runs);
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  std::printf("rocksdb_disk_fault_test: --runs=%d --seed=%llu\n", runs,
              static_cast<unsigned long long>(seed));
  for (int run = 0; run < runs; ++run) {
    const uint64_t run_seed = seed + run;
    SCOPED_TRACE(absl::StrCat("--seed=", run_seed));
    std::string outcome;
    RunOnce(run_seed, &outcome);
    std::printf("  seed %llu: %s\n", static_cast<unsigned long long>(run_seed),
                outcome.empty() ? "FAILED" : outcome.c_str());
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace jobset::store

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  absl::ParseCommandLine(argc, argv);
  return RUN_ALL_TESTS();
}
