#include "agent/device_ledger.h"

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOkAndHolds;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(DeviceLedgerTest, HandsOutTheLowestFreeIndices) {
  DeviceLedger ledger;
  EXPECT_THAT(ledger.Allocate("a", 4, 8, {}),
              IsOkAndHolds(ElementsAre(0, 1, 2, 3)));
  EXPECT_THAT(ledger.Allocate("b", 4, 8, {}),
              IsOkAndHolds(ElementsAre(4, 5, 6, 7)));
  EXPECT_THAT(ledger.Allocate("c", 4, 8, {}),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("asks for 4 devices; 0 of 8 are free")));
  EXPECT_FALSE(ledger.Contains("c"));
}

TEST(DeviceLedgerTest, AFinishedPodsDevicesAreFreeBeforeItsRelease) {
  // The queued GPU pod: two 4-GPU pods finished, their Release not yet here.
  DeviceLedger ledger;
  ASSERT_TRUE(ledger.Allocate("a", 4, 8, {}).ok());
  ASSERT_TRUE(ledger.Allocate("b", 4, 8, {}).ok());
  EXPECT_THAT(ledger.Allocate("c", 4, 8, {"a"}),
              IsOkAndHolds(ElementsAre(0, 1, 2, 3)));
  // "b" still runs: its devices are not given out.
  EXPECT_THAT(ledger.Allocate("d", 4, 8, {"a"}),
              StatusIs(absl::StatusCode::kResourceExhausted));
  // "a" is contested now; "c" is not, while "a" counts as finished.
  EXPECT_TRUE(ledger.Contested("a", {"a"}));
  EXPECT_FALSE(ledger.Contested("c", {"a"}));
  EXPECT_FALSE(ledger.Contested("b", {"a"}));
  EXPECT_TRUE(ledger.Erase("a"));
  EXPECT_FALSE(ledger.Erase("a"));
  EXPECT_THAT(ledger.Of("c"), ElementsAre(0, 1, 2, 3));
}

TEST(DeviceLedgerTest, APodIsNeverGivenDevicesTwice) {
  DeviceLedger ledger;
  ASSERT_TRUE(ledger.Allocate("a", 2, 8, {}).ok());
  EXPECT_THAT(ledger.Allocate("a", 2, 8, {}),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(ledger.Of("a"), ElementsAre(0, 1));
}

TEST(DeviceLedgerTest, SerializeAndParseKeepOnlyLivePods) {
  DeviceLedger ledger;
  ASSERT_TRUE(ledger.Allocate("a", 2, 8, {}).ok());
  ASSERT_TRUE(ledger.Allocate("b", 0, 8, {}).ok());
  ASSERT_TRUE(ledger.Allocate("gone", 1, 8, {}).ok());
  EXPECT_EQ(ledger.Serialize(), "a 0,1\nb -\ngone 2\n");
  DeviceLedger read = DeviceLedger::Parse(ledger.Serialize(), {"a", "b"});
  EXPECT_EQ(read.Serialize(), "a 0,1\nb -\n");
}

TEST(DeviceLedgerTest, ParseSkipsDamagedLinesAndIndices) {
  DeviceLedger read = DeviceLedger::Parse(
      "a 0,x,-3,2\nlonely\nb 1 extra\n\nc 5\n", {"a", "b", "c", "lonely"});
  EXPECT_EQ(read.Serialize(), "a 0,2\nc 5\n");
}

}  // namespace
}  // namespace jobset::agent
