#include "scheduler/resilience/hang_detector.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler::resilience {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);
constexpr absl::Duration kTimeout = absl::Minutes(10);

// A pod at `step` that last advanced `minutes` after kT0; no step: never
// reported one.
PodProgress Pod(std::string name, std::optional<int64_t> step,
                int minutes = 0) {
  PodProgress p;
  p.pod = std::move(name);
  p.step = step;
  if (step.has_value()) p.advanced_at = kT0 + absl::Minutes(minutes);
  return p;
}

TEST(DetectHangTest, EmptyIsNotArmed) {
  HangVerdict v = DetectHang({}, kTimeout, kT0 + absl::Hours(5));
  EXPECT_FALSE(v.armed);
  EXPECT_FALSE(v.stalled);
  EXPECT_EQ(v.next_check, absl::InfiniteFuture());
}

TEST(DetectHangTest, NoStepYetIsNotArmed) {
  // A slow start (pulling images, loading a checkpoint) is not a hang.
  std::vector<PodProgress> pods = {Pod("w-0", std::nullopt),
                                   Pod("w-1", std::nullopt)};
  HangVerdict v = DetectHang(pods, kTimeout, kT0 + absl::Hours(5));
  EXPECT_FALSE(v.armed);
  EXPECT_FALSE(v.stalled);
  EXPECT_EQ(v.next_check, absl::InfiniteFuture());
}

TEST(DetectHangTest, ZeroTimeoutDisarms) {
  std::vector<PodProgress> pods = {Pod("w-0", 5)};
  EXPECT_FALSE(
      DetectHang(pods, absl::ZeroDuration(), kT0 + absl::Hours(1)).armed);
  EXPECT_FALSE(DetectHang(pods, -kTimeout, kT0 + absl::Hours(1)).armed);
}

struct Case {
  std::string name;
  absl::Duration after_latest;  // now - the latest advance
  bool stalled;
};

class DetectHangBoundaryTest : public ::testing::TestWithParam<Case> {};

TEST_P(DetectHangBoundaryTest, StalledExactlyAtTheTimeout) {
  // The latest advance (w-1, minute 3) decides; w-0 stopped earlier.
  std::vector<PodProgress> pods = {Pod("w-0", 10, 0), Pod("w-1", 12, 3)};
  const absl::Time latest = kT0 + absl::Minutes(3);
  HangVerdict v = DetectHang(pods, kTimeout, latest + GetParam().after_latest);
  EXPECT_TRUE(v.armed);
  EXPECT_EQ(v.stalled, GetParam().stalled);
  EXPECT_EQ(v.last_progress, latest);
  EXPECT_EQ(v.next_check,
            GetParam().stalled ? absl::InfiniteFuture() : latest + kTimeout);
}

INSTANTIATE_TEST_SUITE_P(
    Times, DetectHangBoundaryTest,
    ::testing::Values(Case{"JustAdvanced", absl::ZeroDuration(), false},
                      Case{"OneNanosecondShort",
                           kTimeout - absl::Nanoseconds(1), false},
                      Case{"Exactly", kTimeout, true},
                      Case{"Long", absl::Hours(100), true},
                      // jobsetd's clock went back before the last advance.
                      Case{"ClockWentBack", -absl::Minutes(30), false}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(DetectHangTest, OnePodAdvancingKeepsTheGangAlive) {
  // Only one pod reports steps (a rank-0 logger): its progress counts.
  std::vector<PodProgress> pods = {Pod("w-0", 500, 20),
                                   Pod("w-1", std::nullopt)};
  HangVerdict v = DetectHang(pods, kTimeout, kT0 + absl::Minutes(25));
  EXPECT_TRUE(v.armed);
  EXPECT_FALSE(v.stalled);
  EXPECT_EQ(v.next_check, kT0 + absl::Minutes(30));
}

TEST(DetectHangTest, StalledListsLowestStepFirstAndNeverReportedLowest) {
  std::vector<PodProgress> pods = {Pod("w-2", 12, 1), Pod("w-0", 11, 0),
                                   Pod("w-1", std::nullopt), Pod("w-3", 11, 1)};
  HangVerdict v = DetectHang(pods, kTimeout, kT0 + absl::Minutes(13));
  ASSERT_TRUE(v.stalled);
  EXPECT_THAT(v.pods, ElementsAre(StalledPod{"w-1", std::nullopt},
                                  StalledPod{"w-0", 11}, StalledPod{"w-3", 11},
                                  StalledPod{"w-2", 12}));
  EXPECT_EQ(v.more_pods, 0);
  EXPECT_EQ(v.message,
            "no pod's step advanced for 12m (progress timeout 10m): w-1 with "
            "no step, w-0 at step 11, w-3 at step 11, w-2 at step 12");
}

TEST(DetectHangTest, LargeGangListsTenAndCountsTheRest) {
  std::vector<PodProgress> pods;
  for (int i = 0; i < 15000; ++i) {
    pods.push_back(Pod(absl::StrCat("w-", i), 1000 + (i % 7), 0));
  }
  HangVerdict v = DetectHang(pods, kTimeout, kT0 + kTimeout);
  ASSERT_TRUE(v.stalled);
  ASSERT_EQ(v.pods.size(), 10u);
  EXPECT_EQ(v.more_pods, 14990);
  for (const StalledPod& p : v.pods) EXPECT_EQ(p.step, 1000);
  EXPECT_EQ(v.pods[0].pod, "w-0");
  EXPECT_EQ(v.pods[1].pod, "w-10003");  // names sort as strings
  EXPECT_THAT(v.message, ::testing::EndsWith(" and 14990 more"));
}

TEST(DetectHangTest, NotStalledHasNoList) {
  std::vector<PodProgress> pods = {Pod("w-0", 1, 0)};
  HangVerdict v = DetectHang(pods, kTimeout, kT0 + absl::Minutes(1));
  EXPECT_THAT(v.pods, IsEmpty());
  EXPECT_EQ(v.message, "");
}

}  // namespace
}  // namespace jobset::scheduler::resilience
