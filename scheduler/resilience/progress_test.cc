#include "scheduler/resilience/progress.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace jobset::scheduler::resilience {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

TEST(ObserveProgressTest, FirstStepIsProgress) {
  PodProgress p{.pod = "w-0"};
  ASSERT_TRUE(ObserveProgress({.step = 0}, kT0, &p));
  EXPECT_EQ(p.step, 0);
  EXPECT_EQ(p.advanced_at, kT0);
  EXPECT_EQ(p.reported_at, kT0);
  EXPECT_EQ(p.steps_per_second, std::nullopt);
}

TEST(ObserveProgressTest, SameStepIsNotProgress) {
  PodProgress p{.pod = "w-0"};
  ASSERT_TRUE(ObserveProgress({.step = 5}, kT0, &p));
  ASSERT_TRUE(ObserveProgress({.step = 5, .steps_per_second = 2.0},
                              kT0 + absl::Seconds(30), &p));
  EXPECT_EQ(p.advanced_at, kT0);
  EXPECT_EQ(p.reported_at, kT0 + absl::Seconds(30));
  EXPECT_EQ(p.steps_per_second, 2.0);
}

TEST(ObserveProgressTest, HigherAndLowerStepsAreProgress) {
  PodProgress p{.pod = "w-0"};
  ASSERT_TRUE(ObserveProgress({.step = 100, .checkpoint_step = 50}, kT0, &p));
  ASSERT_TRUE(ObserveProgress({.step = 101}, kT0 + absl::Seconds(1), &p));
  EXPECT_EQ(p.advanced_at, kT0 + absl::Seconds(1));
  EXPECT_EQ(p.checkpoint_step, 50);  // kept when a report omits it
  // The trainer went back to its checkpoint in place: alive, so progress.
  ASSERT_TRUE(ObserveProgress({.step = 50}, kT0 + absl::Seconds(2), &p));
  EXPECT_EQ(p.step, 50);
  EXPECT_EQ(p.advanced_at, kT0 + absl::Seconds(2));
}

TEST(ObserveProgressTest, ClockGoingBackIsTakenAsTheLastReport) {
  PodProgress p{.pod = "w-0"};
  ASSERT_TRUE(ObserveProgress({.step = 1}, kT0, &p));
  ASSERT_TRUE(ObserveProgress({.step = 2}, kT0 - absl::Minutes(5), &p));
  EXPECT_EQ(p.step, 2);
  EXPECT_EQ(p.advanced_at, kT0);
  EXPECT_EQ(p.reported_at, kT0);
}

TEST(ObserveProgressTest, HugeStepsAreFine) {
  PodProgress p{.pod = "w-0"};
  const int64_t max = std::numeric_limits<int64_t>::max();
  ASSERT_TRUE(ObserveProgress({.step = max, .checkpoint_step = max}, kT0, &p));
  EXPECT_EQ(p.step, max);
}

struct BadReport {
  std::string name;
  ProgressReport report;
};

class ObserveProgressRejectsTest : public ::testing::TestWithParam<BadReport> {
};

TEST_P(ObserveProgressRejectsTest, ChangesNothing) {
  PodProgress p{.pod = "w-0"};
  ASSERT_TRUE(ObserveProgress({.step = 7, .steps_per_second = 1.0}, kT0, &p));
  const PodProgress before = p;
  EXPECT_FALSE(ObserveProgress(GetParam().report, kT0 + absl::Seconds(1), &p));
  EXPECT_EQ(p.step, before.step);
  EXPECT_EQ(p.advanced_at, before.advanced_at);
  EXPECT_EQ(p.reported_at, before.reported_at);
  EXPECT_EQ(p.steps_per_second, before.steps_per_second);
}

INSTANTIATE_TEST_SUITE_P(
    Reports, ObserveProgressRejectsTest,
    ::testing::Values(
        BadReport{"NegativeStep", {.step = -1}},
        BadReport{"NegativeCheckpoint", {.step = 8, .checkpoint_step = -1}},
        BadReport{"CheckpointBeyondStep", {.step = 8, .checkpoint_step = 9}},
        BadReport{"NegativeRate", {.step = 8, .steps_per_second = -0.5}},
        BadReport{
            "NanRate",
            {.step = 8,
             .steps_per_second = std::numeric_limits<double>::quiet_NaN()}},
        BadReport{
            "InfiniteRate",
            {.step = 8,
             .steps_per_second = std::numeric_limits<double>::infinity()}}),
    [](const ::testing::TestParamInfo<BadReport>& info) {
      return info.param.name;
    });

TEST(JoinListedTest, Table) {
  EXPECT_EQ(JoinListed({}, 0), "");
  EXPECT_EQ(JoinListed({"a"}, 1), "a");
  EXPECT_EQ(JoinListed({"a", "b"}, 2), "a, b");
  EXPECT_EQ(JoinListed({"a", "b"}, 7), "a, b and 5 more");
  EXPECT_EQ(JoinListed({}, 3), "3 more");
  // A total below the listed count is no "more".
  EXPECT_EQ(JoinListed({"a", "b"}, 1), "a, b");
}

TEST(FormatRateTest, ThreeSignificantDigits) {
  EXPECT_EQ(FormatRate(1.25), "1.25 steps/s");
  EXPECT_EQ(FormatRate(0.123456), "0.123 steps/s");
  EXPECT_EQ(FormatRate(0), "0 steps/s");
}

}  // namespace
}  // namespace jobset::scheduler::resilience
