// D6 of the reliability plan: one flipped bit on the disk of a stopped
// store. A single writer makes a known history (puts and deletes over a few
// dozen keys, so that table files, the write-ahead log and the MANIFEST all
// hold some of it); a bit of one of those files is flipped; the store is
// opened again. It must either refuse to open with DATA_LOSS naming the
// damaged file, or open at some revision R at most the last acknowledged
// one and hold exactly the state after commit R: every key with the value,
// create_revision and mod_revision it had then, and no other key. When R is
// below the last acknowledged revision, Open must have reported what
// RocksDB dropped (recovery().warnings). Never a value that was not written.
// The long form:
//   bazel test //store:rocksdb_corruption_test --test_arg=--runs=50
// (--seed=S replays run 0 with that seed; each run's seed is printed), and,
// on demand, every bit of one file: --test_arg=--sweep=MANIFEST (or .log,
// .sst; --test_arg=--sweep_step=N for every N-th bit).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/rocksdb_store.h"

ABSL_FLAG(int, runs, 5, "Runs, each with one flipped bit (the long form: 50)");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the first run (run i uses seed + i)");
ABSL_FLAG(std::string, sweep, "",
          "On demand: flip every bit of the file whose name holds this");
ABSL_FLAG(uint64_t, sweep_step, 1, "With --sweep: every this many bits");

namespace jobset::store {
namespace {

using ::jobset::testing::IsOk;

constexpr int kCommits = 300;
constexpr int kKeys = 48;

// The state after each commit: key -> (value, create, mod).
using State = std::map<std::string, KeyValue>;

// Commits a seeded history of puts and deletes; returns the state after each
// revision (states[r] is the state at revision r; states[0] is empty).
std::vector<State> WriteHistory(RocksDbStore& store, std::mt19937_64& random) {
  std::vector<State> states(1);
  for (int c = 0; c < kCommits; ++c) {
    State next = states.back();
    Batch batch;
    std::vector<std::string> keys;
    const int ops = 1 + static_cast<int>(random() % 3);
    for (int o = 0; o < ops; ++o) {
      std::string key = absl::StrFormat("jobsets/ns/k%02d", random() % kKeys);
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
      keys.push_back(key);
      if (random() % 5 == 0) {
        batch.Delete(key);
      } else {
        std::string value(50 + random() % 400, '\0');
        for (char& ch : value) ch = static_cast<char>(random());
        batch.Put(key, value);
      }
    }
    absl::StatusOr<int64_t> revision = store.Commit(batch);
    EXPECT_THAT(revision, IsOk());
    if (!revision.ok()) return states;
    EXPECT_EQ(*revision, static_cast<int64_t>(states.size()));
    for (const Batch::Op& op : batch.ops()) {
      if (!op.value.has_value()) {
        next.erase(op.key);
        continue;
      }
      auto old = next.find(op.key);
      const int64_t create =
          old == next.end() ? *revision : old->second.create_revision;
      next[op.key] = {op.key, *op.value, create, *revision};
    }
    states.push_back(std::move(next));
  }
  return states;
}

// The files a flip may land in: the write-ahead logs, the table files and
// the MANIFEST.
std::vector<std::string> Candidates(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if ((absl::EndsWith(name, ".log") || absl::EndsWith(name, ".sst") ||
         absl::StartsWith(name, "MANIFEST-")) &&
        entry.file_size() > 0) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void FlipBit(const std::string& path, uint64_t bit) {
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << path;
  unsigned char byte = 0;
  ASSERT_EQ(::pread(fd, &byte, 1, static_cast<off_t>(bit / 8)), 1);
  byte ^= static_cast<unsigned char>(1u << (bit % 8));
  ASSERT_EQ(::pwrite(fd, &byte, 1, static_cast<off_t>(bit / 8)), 1);
  ::close(fd);
}

// What the reopened store holds, every key read at one revision and again
// one by one.
void ExpectState(RocksDbStore& store, const State& want) {
  State got;
  absl::StatusOr<int64_t> read = store.ReadAll(
      "", [](int64_t) { return absl::OkStatus(); },
      [&](const KeyValue& kv) {
        got[kv.key] = kv;
        return absl::OkStatus();
      });
  ASSERT_THAT(read, IsOk());
  for (const auto& [key, kv] : want) {
    auto it = got.find(key);
    if (it == got.end()) {
      ADD_FAILURE() << key << " is missing";
      continue;
    }
    EXPECT_EQ(it->second.value, kv.value) << key << " holds other bytes";
    EXPECT_EQ(it->second.create_revision, kv.create_revision) << key;
    EXPECT_EQ(it->second.mod_revision, kv.mod_revision) << key;
    absl::StatusOr<std::optional<KeyValue>> one = store.Get(key);
    ASSERT_THAT(one, IsOk());
    ASSERT_TRUE(one->has_value()) << key;
    EXPECT_EQ((*one)->value, kv.value) << key;
  }
  for (const auto& [key, kv] : got) {
    EXPECT_TRUE(want.contains(key)) << key << " is there, but was not then";
  }
}

// A small memtable: most of the history is in table files, the rest in the
// log.
RocksDbStore::Options StoreOptions(const std::string& dir) {
  return {.path = dir, .memtable_bytes = 16 << 10};
}

// Writes a seeded history into a new store at `dir`; returns its states.
std::vector<State> NewStore(const std::string& dir, std::mt19937_64& random) {
  std::filesystem::remove_all(dir);
  absl::StatusOr<std::unique_ptr<RocksDbStore>> store =
      RocksDbStore::Open(StoreOptions(dir));
  EXPECT_THAT(store.status(), IsOk());
  if (!store.ok()) return {};
  std::vector<State> states = WriteHistory(**store, random);
  EXPECT_EQ(states.size(), kCommits + 1);
  return states;
}

// The outcomes of reopening a damaged store.
struct Tally {
  int refused = 0;
  int whole = 0;    // Opened at the last revision.
  int earlier = 0;  // Opened at an earlier one, and said so.
};

// Reopens the store at `dir`, whose file `name` was damaged, and checks
// that it refuses with DATA_LOSS naming the file, or opens at a revision R
// holding exactly `states[R]`, saying what it dropped when R is not the
// last. Returns what happened.
std::string ReopenAndCheck(const std::string& dir,
                           const std::vector<State>& states,
                           const std::string& name, Tally* tally) {
  const int64_t last = static_cast<int64_t>(states.size()) - 1;
  absl::StatusOr<std::unique_ptr<RocksDbStore>> store =
      RocksDbStore::Open(StoreOptions(dir));
  if (!store.ok()) {
    EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss)
        << store.status();
    EXPECT_THAT(store.status().message(), ::testing::HasSubstr(name));
    ++tally->refused;
    return absl::StrCat("refused to open (",
                        store.status().message().substr(0, 160), "...)");
  }
  const int64_t revision = (*store)->CurrentRevision();
  EXPECT_EQ((*store)->recovery().revision, revision);
  EXPECT_LE(revision, last);
  EXPECT_GE(revision, 0);
  if (revision < 0 || revision > last) return "";
  ExpectState(**store, states[revision]);
  if (revision < last) {
    EXPECT_THAT((*store)->recovery().warnings,
                ::testing::Not(::testing::IsEmpty()))
        << "recovered to revision " << revision << " of " << last
        << " without saying what it dropped";
    ++tally->earlier;
  } else {
    ++tally->whole;
  }
  // It goes on from there.
  EXPECT_THAT((*store)->Commit(Batch().Put("after", "reopen")), IsOk());
  return absl::StrCat(
      "opened at revision ", revision, " of ", last,
      (*store)->recovery().warnings.empty()
          ? ""
          : absl::StrCat(", reported: ", (*store)->recovery().warnings[0]));
}

// One run: a store, one bit of one of its files flipped, reopened.
std::string RunOnce(uint64_t seed, Tally* tally) {
  std::mt19937_64 random(seed);
  const std::string dir =
      absl::StrCat(::testing::TempDir(), "/corruption-", seed);
  const std::vector<State> states = NewStore(dir, random);
  const std::vector<std::string> files = Candidates(dir);
  EXPECT_FALSE(files.empty());
  if (states.empty() || files.empty()) return "";
  const std::string& file = files[random() % files.size()];
  const uint64_t bit = random() % (std::filesystem::file_size(file) * 8);
  const std::string name = std::filesystem::path(file).filename().string();
  SCOPED_TRACE(absl::StrCat("bit ", bit, " of ", name));
  FlipBit(file, bit);
  const std::string outcome = ReopenAndCheck(dir, states, name, tally);
  return outcome.empty()
             ? ""
             : absl::StrCat("bit ", bit, " of ", name, ": ", outcome);
}

TEST(RocksDbCorruptionTest, AFlippedBitIsRefusedOrRecoveredToAnEarlierState) {
  const int runs = absl::GetFlag(FLAGS_runs);
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  std::printf("rocksdb_corruption_test: --runs=%d --seed=%llu\n", runs,
              static_cast<unsigned long long>(seed));
  Tally tally;
  for (int run = 0; run < runs; ++run) {
    const uint64_t run_seed = seed + run;
    SCOPED_TRACE(absl::StrCat("--seed=", run_seed));
    const std::string outcome = RunOnce(run_seed, &tally);
    std::printf("  seed %llu: %s\n", static_cast<unsigned long long>(run_seed),
                outcome.empty() ? "FAILED" : outcome.c_str());
  }
  std::printf("rocksdb_corruption_test: %d refused, %d whole, %d earlier\n",
              tally.refused, tally.whole, tally.earlier);
}

// On demand: every --sweep_step-th bit of the first file whose name holds
// --sweep ("MANIFEST", ".log", ".sst") of one history, each flipped in a
// copy of the store and checked as above.
TEST(RocksDbCorruptionTest, EveryBitOfAFile) {
  const std::string which = absl::GetFlag(FLAGS_sweep);
  const uint64_t step = std::max<uint64_t>(1, absl::GetFlag(FLAGS_sweep_step));
  if (which.empty()) GTEST_SKIP() << "on demand: --sweep=MANIFEST|.log|.sst";
  const uint64_t seed = absl::GetFlag(FLAGS_seed);
  std::mt19937_64 random(seed);
  const std::string dir = absl::StrCat(::testing::TempDir(), "/sweep");
  const std::vector<State> states = NewStore(dir, random);
  ASSERT_FALSE(states.empty());
  std::string name;
  for (const std::string& file : Candidates(dir)) {
    const std::string base = std::filesystem::path(file).filename().string();
    if (name.empty() && absl::StrContains(base, which)) name = base;
  }
  ASSERT_FALSE(name.empty()) << "no file named like " << which;
  const uint64_t bits = std::filesystem::file_size(dir + "/" + name) * 8;
  const std::string copy = absl::StrCat(::testing::TempDir(), "/sweep-copy");
  Tally tally;
  for (uint64_t bit = 0; bit < bits && !HasFailure(); bit += step) {
    SCOPED_TRACE(absl::StrCat("--seed=", seed, ", bit ", bit, " of ", name));
    std::filesystem::remove_all(copy);
    std::filesystem::copy(dir, copy, std::filesystem::copy_options::recursive);
    FlipBit(absl::StrCat(copy, "/", name), bit);
    ReopenAndCheck(copy, states, name, &tally);
  }
  std::printf(
      "rocksdb_corruption_test: %s, %llu bits, every %llu: %d refused, %d "
      "whole, %d earlier\n",
      name.c_str(), static_cast<unsigned long long>(bits),
      static_cast<unsigned long long>(step), tally.refused, tally.whole,
      tally.earlier);
}

}  // namespace
}  // namespace jobset::store

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  absl::ParseCommandLine(argc, argv);
  return RUN_ALL_TESTS();
}
