#include "scheduler/placement/pending_order.h"

#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

const absl::Time kEpoch = absl::FromUnixSeconds(1'700'000'000);

PendingJobSet Pending(std::string key, int32_t priority, int minute,
                      int32_t skips = 0) {
  return {std::move(key), priority, kEpoch + absl::Minutes(minute), skips};
}

TEST(OrderPendingTest, PriorityThenSubmissionThenKey) {
  const std::vector<PendingJobSet> pending = {
      Pending("ns/late-low", 0, 5), Pending("ns/early-low", 0, 1),
      Pending("ns/high", 10, 9),    Pending("ns/b", 0, 3),
      Pending("ns/a", 0, 3),
  };
  EXPECT_THAT(OrderPending(pending), ElementsAre(2, 1, 4, 3, 0));
}

struct StarvingCase {
  std::string name;
  int waited_minutes;
  int32_t skips;
  bool starving;
};

class IsStarvingTest : public ::testing::TestWithParam<StarvingCase> {};

TEST_P(IsStarvingTest, WaitOrSkipsReachTheLimit) {
  const StarvingCase& c = GetParam();
  const PendingPolicy policy{absl::Minutes(10), 20};
  EXPECT_EQ(IsStarving(Pending("ns/x", 0, 0, c.skips),
                       kEpoch + absl::Minutes(c.waited_minutes), policy),
            c.starving);
}

INSTANTIATE_TEST_SUITE_P(
    Rule, IsStarvingTest,
    ::testing::Values(StarvingCase{"Fresh", 0, 0, false},
                      StarvingCase{"AlmostTooLong", 9, 19, false},
                      StarvingCase{"WaitedTooLong", 10, 0, true},
                      StarvingCase{"SkippedTooOften", 1, 20, true}),
    [](const ::testing::TestParamInfo<StarvingCase>& info) {
      return info.param.name;
    });

// A fake cluster of `free` nodes; each JobSet needs `size[i]` of them.
struct FakeCluster {
  int free;
  std::vector<int> size;
  int total;

  FitResult TryPlace(size_t i) {
    if (size[i] > total) return FitResult::kNeverFits;
    if (size[i] > free) return FitResult::kNoRoomNow;
    free -= size[i];
    return FitResult::kPlaced;
  }
};

TEST(RunPendingPassTest, SmallJobSetsBackfillPastOneThatDoesNotFit) {
  const std::vector<PendingJobSet> pending = {Pending("ns/big", 0, 0),
                                              Pending("ns/small-1", 0, 1),
                                              Pending("ns/small-2", 0, 2)};
  FakeCluster cluster{4, {8, 2, 2}, 16};
  PendingPass pass =
      RunPendingPass(pending, kEpoch + absl::Minutes(3), PendingPolicy{},
                     [&](size_t i) { return cluster.TryPlace(i); });
  EXPECT_THAT(pass.placed, ElementsAre(1, 2));
  EXPECT_THAT(pass.skipped, ElementsAre(0));  // counted once per pass
  EXPECT_EQ(pass.blocked_by, std::nullopt);
}

TEST(RunPendingPassTest, StarvingJobSetReservesCapacity) {
  // Skipped 20 times already: nothing behind it is placed any more, so the
  // capacity that frees up goes to it.
  const std::vector<PendingJobSet> pending = {Pending("ns/small", 0, 1),
                                              Pending("ns/big", 0, 0, 20)};
  FakeCluster cluster{4, {2, 8}, 16};
  std::vector<size_t> tried;
  PendingPass pass = RunPendingPass(pending, kEpoch + absl::Minutes(2),
                                    PendingPolicy{}, [&](size_t i) {
                                      tried.push_back(i);
                                      return cluster.TryPlace(i);
                                    });
  EXPECT_THAT(pass.placed, IsEmpty());
  EXPECT_THAT(pass.blocked_by, Optional(1));
  EXPECT_THAT(tried, ElementsAre(1));

  // Once capacity frees up, it goes first.
  cluster.free = 10;
  pass = RunPendingPass(pending, kEpoch + absl::Minutes(3), PendingPolicy{},
                        [&](size_t i) { return cluster.TryPlace(i); });
  EXPECT_THAT(pass.placed, ElementsAre(1, 0));
}

TEST(RunPendingPassTest, HigherPriorityIsStillTriedAheadOfAStarvingOne) {
  const std::vector<PendingJobSet> pending = {Pending("ns/old", 0, 0),
                                              Pending("ns/urgent", 5, 30),
                                              Pending("ns/young", 0, 20)};
  FakeCluster cluster{4, {8, 2, 1}, 16};
  PendingPass pass =
      RunPendingPass(pending, kEpoch + absl::Minutes(31), PendingPolicy{},
                     [&](size_t i) { return cluster.TryPlace(i); });
  EXPECT_THAT(pass.placed, ElementsAre(1));   // urgent, ahead of old
  EXPECT_THAT(pass.blocked_by, Optional(0));  // old waited 31 minutes
}

TEST(RunPendingPassTest, AJobSetThatNeverFitsBlocksNobody) {
  const std::vector<PendingJobSet> pending = {Pending("ns/huge", 0, 0, 100),
                                              Pending("ns/small", 0, 1)};
  FakeCluster cluster{4, {64, 2}, 16};
  PendingPass pass =
      RunPendingPass(pending, kEpoch + absl::Hours(1), PendingPolicy{},
                     [&](size_t i) { return cluster.TryPlace(i); });
  EXPECT_THAT(pass.placed, ElementsAre(1));
  EXPECT_THAT(pass.skipped, IsEmpty());
  EXPECT_EQ(pass.blocked_by, std::nullopt);
}

}  // namespace
}  // namespace jobset::scheduler::placement
