#include "store/snapshot.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/forwarding_store.h"
#include "store/memory_store.h"

namespace jobset::store {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

std::string Write(int64_t revision,
                  const std::vector<std::pair<std::string, std::string>>& kvs) {
  std::string out;
  SnapshotWriter writer([&](absl::string_view bytes) {
    out.append(bytes.data(), bytes.size());
    return absl::OkStatus();
  });
  JOBSET_CHECK(writer.Begin(revision).ok());
  for (const auto& [k, v] : kvs) JOBSET_CHECK(writer.Add(k, v).ok());
  absl::StatusOr<SnapshotInfo> info = writer.Finish();
  JOBSET_CHECK(info.ok());
  JOBSET_CHECK(info->bytes == out.size());
  return out;
}

absl::StatusOr<SnapshotInfo> Read(const std::string& bytes,
                                  std::vector<KeyValue>* kvs = nullptr) {
  std::istringstream in(bytes);
  return ReadSnapshot(in, [&](const KeyValue& kv) {
    if (kvs != nullptr) kvs->push_back(kv);
    return absl::OkStatus();
  });
}

std::string U32(uint32_t v) {
  std::string s;
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}

const std::vector<std::pair<std::string, std::string>> kSample = {
    {"auth/tokens/a", std::string("\0secret\xff", 8)},
    {"jobsets/default/train", std::string(70000, 'x')},
    {"namespaces/default", ""},
};

TEST(SnapshotTest, RoundTrips) {
  const std::string bytes = Write(1234, kSample);
  std::vector<KeyValue> kvs;
  absl::StatusOr<SnapshotInfo> info = Read(bytes, &kvs);
  ASSERT_THAT(info.status(), IsOk());
  EXPECT_EQ(info->revision, 1234);
  EXPECT_EQ(info->keys, 3u);
  EXPECT_EQ(info->bytes, bytes.size());
  ASSERT_EQ(kvs.size(), kSample.size());
  for (size_t i = 0; i < kvs.size(); ++i) {
    EXPECT_EQ(kvs[i].key, kSample[i].first);
    EXPECT_EQ(kvs[i].value, kSample[i].second);
  }
  EXPECT_EQ(bytes.substr(0, 10), "JOBSETSNAP");
}

TEST(SnapshotTest, EmptyStoreRoundTrips) {
  absl::StatusOr<SnapshotInfo> info = Read(Write(0, {}));
  ASSERT_THAT(info.status(), IsOk());
  EXPECT_EQ(info->keys, 0u);
}

TEST(SnapshotTest, EveryTruncationIsRefusedBeforeAnyRecordIsTrusted) {
  const std::string bytes = Write(7, {{"a", "1"}, {"b", "22"}, {"c", "333"}});
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_THAT(Read(bytes.substr(0, n)).status(),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("offset")))
        << "truncated to " << n;
  }
}

TEST(SnapshotTest, EveryFlippedByteIsRefused) {
  const std::string bytes = Write(7, {{"a", "1"}, {"b", "22"}});
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] ^= 0x20;
    EXPECT_FALSE(Read(bad).ok()) << "byte " << i;
  }
  std::string bad = bytes;
  bad[bad.size() - 42] ^= 1;  // In the last value: only the checksum tells.
  EXPECT_THAT(Read(bad).status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("checksum")));
}

TEST(SnapshotTest, TrailingBytesAreRefused) {
  EXPECT_THAT(Read(Write(1, {{"a", "1"}}) + "x").status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("after")));
}

TEST(SnapshotTest, AbsurdLengthsAreRefusedWithoutAllocatingThem) {
  const std::string header = Write(5, {}).substr(0, 22);
  // A key length of 4 GiB - 1.
  EXPECT_THAT(Read(header + "\x01" + U32(0xffffffff)).status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("record 1 at offset 22: key length "
                                 "4294967295 is not 1..1024")));
  EXPECT_THAT(Read(header + "\x01" + U32(0)).status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("key length 0")));
  // A value length past the limit.
  EXPECT_THAT(Read(header + "\x01" + U32(1) + "k" + U32(0xfffffff0)).status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("value length")));
  // A value length within the limit but past the file's end: truncated,
  // read in pieces as they arrive, never allocated up front.
  EXPECT_THAT(
      Read(header + "\x01" + U32(1) + "k" + U32(Store::kMaxValueBytes) + "abc")
          .status(),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("truncated")));
  EXPECT_THAT(Read(header + "\x07").status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("tag 7")));
}

TEST(SnapshotTest, BadMagicVersionAndOrderAreRefused) {
  std::string bytes = Write(5, {{"a", "1"}, {"b", "2"}});
  std::string bad = bytes;
  bad[0] = 'X';
  EXPECT_THAT(Read(bad).status(), StatusIs(absl::StatusCode::kDataLoss,
                                           HasSubstr("not a jobsetd")));
  bad = bytes;
  bad[10] = 9;
  EXPECT_THAT(Read(bad).status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("version 9")));
  // Records out of order (a well-formed file otherwise).
  std::string out;
  SnapshotWriter writer([&](absl::string_view b) {
    out.append(b.data(), b.size());
    return absl::OkStatus();
  });
  ASSERT_THAT(writer.Begin(1), IsOk());
  ASSERT_THAT(writer.Add("b", "1"), IsOk());
  ASSERT_THAT(writer.Add("a", "1"), IsOk());
  ASSERT_THAT(writer.Finish().status(), IsOk());
  EXPECT_THAT(Read(out).status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("record 2")));
}

TEST(SnapshotTest, WriterRefusesKeysAndValuesPastTheLimits) {
  SnapshotWriter writer([](absl::string_view) { return absl::OkStatus(); });
  ASSERT_THAT(writer.Begin(1), IsOk());
  EXPECT_THAT(writer.Add(std::string(Store::kMaxKeyBytes + 1, 'k'), "v"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("1024")));
  EXPECT_THAT(
      writer.Add("k", std::string(Store::kMaxValueBytes + 1, 'v')),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("exceeds")));
}

TEST(SnapshotTest, ReadStopsAtTheCallersError) {
  std::istringstream in(Write(1, {{"a", "1"}}));
  EXPECT_THAT(ReadSnapshot(in,
                           [](const KeyValue&) {
                             return absl::ResourceExhaustedError("full");
                           })
                  .status(),
              StatusIs(absl::StatusCode::kResourceExhausted));
}

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/", name);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

// Counts the commits and their sizes that reach the store.
class CountingStore : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<int64_t> Commit(const Batch& batch) override {
    ++commits;
    max_ops = std::max(max_ops, batch.ops().size());
    for (const Batch::Op& op : batch.ops()) {
      EXPECT_EQ(op.expect, Batch::Expect::kAbsent) << op.key;
    }
    return ForwardingStore::Commit(batch);
  }
  int commits = 0;
  size_t max_ops = 0;
};

TEST(RestoreSnapshotTest, WritesEverythingInBatchesThatFitTheStore) {
  std::vector<std::pair<std::string, std::string>> kvs;
  for (int i = 0; i < 300; ++i) {
    kvs.emplace_back(absl::StrCat("jobsets/ns/", absl::Dec(i, absl::kZeroPad3)),
                     std::string(100, 'v'));
  }
  kvs.emplace_back("leader/1234", "replica-a:7070");
  const std::string path = WriteTemp("restore.snap", Write(99, kvs));
  MemoryStore memory;
  CommitLimits limits;
  limits.max_ops = 127;
  limits.max_bytes = 10'000;
  limits.op_overhead = 64;
  memory.SetLimits(limits);
  CountingStore store(&memory);
  absl::StatusOr<SnapshotInfo> info = RestoreSnapshot(path, &store, "memory");
  ASSERT_THAT(info.status(), IsOk());
  EXPECT_EQ(info->revision, 99);
  EXPECT_EQ(info->keys, 301u);
  EXPECT_GT(store.commits, 3);  // Bytes, not only operations, split them.
  EXPECT_LE(store.max_ops, 127u);
  auto all = memory.Scan("", "", 1000);
  ASSERT_THAT(all.status(), IsOk());
  EXPECT_EQ(all->kvs.size(), 300u);  // The leader key is left out.
  EXPECT_EQ(all->kvs[7].key, "jobsets/ns/007");

  // Not into a store that holds anything.
  EXPECT_THAT(RestoreSnapshot(path, &store, "the memory store").status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("the memory store is not empty")));
}

TEST(RestoreSnapshotTest, ABadFileWritesNothing) {
  std::string bytes = Write(5, {{"a", "1"}, {"b", "2"}, {"c", "3"}});
  bytes[bytes.size() - 42] ^= 0x40;  // The last record's value.
  MemoryStore store;
  EXPECT_THAT(
      RestoreSnapshot(WriteTemp("bad.snap", bytes), &store, "memory").status(),
      StatusIs(absl::StatusCode::kDataLoss, HasSubstr("checksum")));
  EXPECT_THAT(RestoreSnapshot(WriteTemp("short.snap", bytes.substr(0, 30)),
                              &store, "memory")
                  .status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("truncated")));
  EXPECT_THAT(
      RestoreSnapshot(::testing::TempDir() + "/none.snap", &store, "memory")
          .status(),
      StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(store.CurrentRevision(), 0);
}

}  // namespace
}  // namespace jobset::store
