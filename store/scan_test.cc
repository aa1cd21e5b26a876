#include "store/scan.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/forwarding_store.h"
#include "store/memory_store.h"

namespace jobset::store {
namespace {

using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Counts the Scan calls that reach the store.
class CountingStore final : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  absl::StatusOr<ScanResult> Scan(absl::string_view prefix,
                                  absl::string_view start_after,
                                  size_t limit) override {
    ++scans;
    return ForwardingStore::Scan(prefix, start_after, limit);
  }
  int scans = 0;
};

class ScanAllTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Batch batch;
    for (int i = 0; i < 5; ++i) batch.Put(absl::StrCat("a/", i), "v");
    batch.Put("b/0", "other prefix");
    ASSERT_TRUE(memory_.Commit(batch).ok());
  }
  MemoryStore memory_;
  CountingStore store_{&memory_};
};

TEST_F(ScanAllTest, VisitsEveryKeyUnderThePrefixPageByPage) {
  std::vector<std::string> keys;
  ASSERT_TRUE(ScanAll(
                  store_, "a/",
                  [&](const KeyValue& kv) {
                    keys.push_back(kv.key);
                    return absl::OkStatus();
                  },
                  /*page_size=*/2)
                  .ok());
  EXPECT_THAT(keys, ElementsAre("a/0", "a/1", "a/2", "a/3", "a/4"));
  EXPECT_EQ(store_.scans, 3);
}

TEST_F(ScanAllTest, StopsAtTheFirstErrorOfTheCallback) {
  int seen = 0;
  EXPECT_THAT(ScanAll(store_, "a/",
                      [&](const KeyValue& kv) {
                        ++seen;
                        return kv.key == "a/1" ? absl::DataLossError("bad a/1")
                                               : absl::OkStatus();
                      }),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("a/1")));
  EXPECT_EQ(seen, 2);
}

TEST_F(ScanAllTest, AnEmptyPrefixRangeCallsNothing) {
  int seen = 0;
  ASSERT_TRUE(ScanAll(store_, "c/", [&](const KeyValue&) {
                ++seen;
                return absl::OkStatus();
              }).ok());
  EXPECT_EQ(seen, 0);
}

TEST_F(ScanAllTest, ReturnsTheRevisionOfTheFirstPage) {
  const int64_t before = memory_.CurrentRevision();
  std::vector<std::string> keys;
  absl::StatusOr<int64_t> revision = ScanAllWithRevision(
      store_, "a/",
      [&](const KeyValue& kv) {
        keys.push_back(kv.key);
        // A commit between pages: later pages are read at a later revision.
        Batch batch;
        batch.Put(absl::StrCat("z/", kv.key), "v");
        return memory_.Commit(batch).status();
      },
      /*page_size=*/2);
  ASSERT_TRUE(revision.ok()) << revision.status();
  EXPECT_EQ(*revision, before);
  EXPECT_EQ(keys.size(), 5u);
  EXPECT_GT(memory_.CurrentRevision(), before);
}

}  // namespace
}  // namespace jobset::store
