#include "scheduler/resilience/straggler_detector.h"

#include <optional>
#include <string>
#include <utility>
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
const StragglerConfig kConfig{.threshold = 0.7, .window = absl::Minutes(2)};

// A pod whose rate was reported at `reported` (kT0 when not given); no rate:
// it never reported one.
PodProgress Pod(std::string name, std::optional<double> rate,
                absl::Time reported = kT0) {
  PodProgress p;
  p.pod = std::move(name);
  p.step = 1;
  p.steps_per_second = rate;
  p.reported_at = reported;
  return p;
}

// Four pods: median of {1, 1, 1, rate} for w-3.
std::vector<PodProgress> Gang(double w3_rate, absl::Time reported) {
  return {Pod("w-0", 1.0, reported), Pod("w-1", 1.0, reported),
          Pod("w-2", 1.0, reported), Pod("w-3", w3_rate, reported)};
}

struct NotJudgedCase {
  std::string name;
  std::vector<PodProgress> pods;
  std::string why;
};

class NotJudgedTest : public ::testing::TestWithParam<NotJudgedCase> {};

TEST_P(NotJudgedTest, NoFindingsAndStateForgotten) {
  StragglerState state;
  state.below["w-1"] = StragglerState::Below{.since = kT0 - absl::Hours(1)};
  StragglerPass pass = DetectStragglers(state, GetParam().pods, kConfig, kT0);
  EXPECT_FALSE(pass.verdict.judged);
  EXPECT_EQ(pass.verdict.not_judged, GetParam().why);
  EXPECT_THAT(pass.verdict.flagged, IsEmpty());
  EXPECT_THAT(pass.state.below, IsEmpty());
  EXPECT_EQ(pass.state.last_pass, kT0);
  EXPECT_EQ(pass.verdict.next_check, absl::InfiniteFuture());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NotJudgedTest,
    ::testing::Values(
        NotJudgedCase{"Empty", {}, "no pods"},
        NotJudgedCase{"SinglePod",
                      {Pod("w-0", 0.1)},
                      "1 pod has no gang to compare with"},
        NotJudgedCase{
            "OneNotReporting",
            {Pod("w-0", 1.0), Pod("w-1", std::nullopt), Pod("w-2", 0.1)},
            "1 of 3 pods report no fresh step rate"},
        NotJudgedCase{
            "OneStale",
            {Pod("w-0", 1.0), Pod("w-1", 1.0),
             Pod("w-2", 0.1, kT0 - absl::Minutes(2) - absl::Nanoseconds(1))},
            "1 of 3 pods report no fresh step rate"},
        NotJudgedCase{"MedianZero",
                      {Pod("w-0", 0.0), Pod("w-1", 0.0), Pod("w-2", 5.0)},
                      "the median step rate is 0"}),
    [](const ::testing::TestParamInfo<NotJudgedCase>& info) {
      return info.param.name;
    });

TEST(DetectStragglersTest, OffForABadConfig) {
  for (StragglerConfig config :
       {StragglerConfig{.threshold = 0, .window = absl::Minutes(2)},
        StragglerConfig{.threshold = 1, .window = absl::Minutes(2)},
        StragglerConfig{.threshold = 0.5, .window = absl::ZeroDuration()}}) {
    StragglerPass pass = DetectStragglers({}, Gang(0.1, kT0), config, kT0);
    EXPECT_FALSE(pass.verdict.judged);
    EXPECT_EQ(pass.verdict.not_judged, "straggler detection is off");
  }
}

TEST(DetectStragglersTest, RateAtExactlyWindowOldIsFresh) {
  StragglerPass pass =
      DetectStragglers({}, Gang(1.0, kT0 - absl::Minutes(2)), kConfig, kT0);
  EXPECT_TRUE(pass.verdict.judged);
  EXPECT_EQ(pass.verdict.median, 1.0);
}

TEST(DetectStragglersTest, EvenGangMedianIsTheMiddlesAverage) {
  std::vector<PodProgress> pods = {Pod("a", 4.0), Pod("b", 1.0), Pod("c", 2.0),
                                   Pod("d", 8.0)};
  StragglerPass pass = DetectStragglers({}, pods, kConfig, kT0);
  EXPECT_EQ(pass.verdict.median, 3.0);
  // 1.0 < 0.7 x 3 = 2.1 and 2.0 < 2.1: both below.
  EXPECT_THAT(pass.state.below,
              ElementsAre(std::pair<const std::string, StragglerState::Below>(
                              "b", {kT0, false}),
                          std::pair<const std::string, StragglerState::Below>(
                              "c", {kT0, false})));
}

TEST(DetectStragglersTest, FlaggedAfterTheWholeWindowExactly) {
  StragglerState state;
  // Pass 1: w-3 goes below; the window starts.
  StragglerPass pass = DetectStragglers(state, Gang(0.5, kT0), kConfig, kT0);
  EXPECT_TRUE(pass.verdict.judged);
  EXPECT_THAT(pass.verdict.flagged, IsEmpty());
  EXPECT_EQ(pass.verdict.next_check, kT0 + absl::Minutes(2));
  EXPECT_EQ(pass.state.below.at("w-3").since, kT0);

  // One nanosecond short of the window: not yet.
  const absl::Time almost = kT0 + absl::Minutes(2) - absl::Nanoseconds(1);
  pass = DetectStragglers(pass.state, Gang(0.5, almost), kConfig, almost);
  EXPECT_THAT(pass.verdict.flagged, IsEmpty());
  EXPECT_EQ(pass.verdict.next_check, kT0 + absl::Minutes(2));

  // Exactly the window: flagged, newly.
  const absl::Time at = kT0 + absl::Minutes(2);
  pass = DetectStragglers(pass.state, Gang(0.5, at), kConfig, at);
  EXPECT_THAT(pass.verdict.flagged,
              ElementsAre(StragglerFinding{"w-3", 0.5, kT0, true}));
  EXPECT_EQ(pass.verdict.median, 1.0);
  EXPECT_EQ(pass.verdict.next_check, absl::InfiniteFuture());
  EXPECT_EQ(pass.verdict.message,
            "step rate below 0.7 x the gang's median 1 steps/s for 2m: w-3 "
            "at 0.5 steps/s since 2023-11-14T22:13:20Z");

  // Still below: flagged again, not newly.
  const absl::Time later = at + absl::Minutes(1);
  pass = DetectStragglers(pass.state, Gang(0.4, later), kConfig, later);
  EXPECT_THAT(pass.verdict.flagged,
              ElementsAre(StragglerFinding{"w-3", 0.4, kT0, false}));

  // Back above: cleared.
  pass = DetectStragglers(pass.state, Gang(0.9, later), kConfig, later);
  EXPECT_THAT(pass.verdict.flagged, IsEmpty());
  EXPECT_THAT(pass.state.below, IsEmpty());
}

TEST(DetectStragglersTest, ExactlyAtTheThresholdIsNotBelow) {
  // median of {1, 1, 1, 0.7} is 1; 0.7 is not below 0.7 x 1.
  StragglerPass pass = DetectStragglers({}, Gang(0.7, kT0), kConfig, kT0);
  EXPECT_TRUE(pass.verdict.judged);
  EXPECT_THAT(pass.state.below, IsEmpty());
}

TEST(DetectStragglersTest, ComingBackAboveRestartsTheWindow) {
  StragglerPass pass = DetectStragglers({}, Gang(0.5, kT0), kConfig, kT0);
  const absl::Time t1 = kT0 + absl::Seconds(90);
  pass = DetectStragglers(pass.state, Gang(1.0, t1), kConfig, t1);
  const absl::Time t2 = kT0 + absl::Seconds(100);
  pass = DetectStragglers(pass.state, Gang(0.5, t2), kConfig, t2);
  const absl::Time t3 = kT0 + absl::Minutes(3);  // 2m after kT0, not after t2
  pass = DetectStragglers(pass.state, Gang(0.5, t3), kConfig, t3);
  EXPECT_THAT(pass.verdict.flagged, IsEmpty());
  EXPECT_EQ(pass.verdict.next_check, t2 + absl::Minutes(2));
}

TEST(DetectStragglersTest, AMissingReportRestartsTheWindow) {
  StragglerPass pass = DetectStragglers({}, Gang(0.5, kT0), kConfig, kT0);
  std::vector<PodProgress> gap = Gang(0.5, kT0);
  gap[0].steps_per_second.reset();
  const absl::Time t1 = kT0 + absl::Minutes(1);
  pass = DetectStragglers(pass.state, gap, kConfig, t1);
  EXPECT_FALSE(pass.verdict.judged);
  const absl::Time t2 = kT0 + absl::Minutes(2);
  pass = DetectStragglers(pass.state, Gang(0.5, t2), kConfig, t2);
  EXPECT_THAT(pass.verdict.flagged, IsEmpty());
  EXPECT_EQ(pass.state.below.at("w-3").since, t2);
}

TEST(DetectStragglersTest, ClockGoingBackIsTakenAsTheLastPass) {
  StragglerPass pass = DetectStragglers({}, Gang(0.5, kT0), kConfig, kT0);
  const absl::Time at = kT0 + absl::Minutes(2);
  pass = DetectStragglers(pass.state, Gang(0.5, at), kConfig, at);
  ASSERT_EQ(pass.verdict.flagged.size(), 1u);
  // A pass stamped an hour earlier is judged at the last pass's time: the
  // pod stays flagged, nothing goes negative, last_pass does not move back.
  pass =
      DetectStragglers(pass.state, Gang(0.5, at), kConfig, at - absl::Hours(1));
  EXPECT_EQ(pass.state.last_pass, at);
  EXPECT_THAT(pass.verdict.flagged,
              ElementsAre(StragglerFinding{"w-3", 0.5, kT0, false}));
}

TEST(DetectStragglersTest, PodsGoneFromTheAttemptAreForgotten) {
  StragglerState state;
  state.below["gone"] = StragglerState::Below{.since = kT0};
  StragglerPass pass = DetectStragglers(state, Gang(1.0, kT0), kConfig, kT0);
  EXPECT_THAT(pass.state.below, IsEmpty());
}

TEST(DetectStragglersTest, ManyStragglersSlowestFirstListedTen) {
  std::vector<PodProgress> pods;
  for (int i = 0; i < 100; ++i) {
    // 30 slow pods at 0.1 + i/1000, the other 70 at 1.
    pods.push_back(Pod(absl::StrCat("w-", i), i < 30 ? 0.1 + i / 1000.0 : 1.0));
  }
  StragglerPass pass = DetectStragglers({}, pods, kConfig, kT0);
  const absl::Time at = kT0 + absl::Minutes(2);
  for (PodProgress& p : pods) p.reported_at = at;
  pass = DetectStragglers(pass.state, pods, kConfig, at);
  ASSERT_EQ(pass.verdict.flagged.size(), 30u);
  EXPECT_EQ(pass.verdict.flagged[0].pod, "w-0");
  EXPECT_EQ(pass.verdict.flagged[29].pod, "w-29");
  EXPECT_THAT(pass.verdict.message, ::testing::EndsWith(" and 20 more"));
}

TEST(DetectStragglersTest, TwoPodsCompareWithTheirAverage) {
  // median of {1, 0.4} is 0.7; 0.4 < 0.49.
  std::vector<PodProgress> pods = {Pod("a", 1.0), Pod("b", 0.4)};
  StragglerPass pass = DetectStragglers({}, pods, kConfig, kT0);
  EXPECT_TRUE(pass.verdict.judged);
  EXPECT_EQ(pass.state.below.count("b"), 1u);
  EXPECT_EQ(pass.state.below.count("a"), 0u);
}

}  // namespace
}  // namespace jobset::scheduler::resilience
