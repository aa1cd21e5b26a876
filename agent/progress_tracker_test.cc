// One pod's progress over a sequence of inputs at given (monotonic) times:
// steps taken, decreasing steps refused and counted once, the rate over the
// window, the age of the last advance, a new instance.
#include "agent/progress_tracker.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1000);

ProgressInput Line(const std::string& text) {
  return ParseProgressTail(absl::StrCat(text, "\n"), true);
}

absl::Duration SinceLastAdvance(const api::PodProgress& p) {
  return absl::Seconds(p.since_last_advance().seconds()) +
         absl::Nanoseconds(p.since_last_advance().nanos());
}

TEST(ProgressTrackerTest, NothingReadIsNothingToSay) {
  ProgressTracker t;
  EXPECT_EQ(t.Observe(ProgressInput{}, kStart), ProgressReject::kNone);
  EXPECT_FALSE(t.has_step());
  EXPECT_EQ(t.version(), 0);
  const api::PodProgress p = t.Progress(kStart);
  EXPECT_FALSE(p.has_step());
  EXPECT_EQ(p.rejected_lines(), 0);
}

TEST(ProgressTrackerTest, StepsAndTheirRate) {
  ProgressTracker t;
  EXPECT_EQ(t.Observe(Line("step=100"), kStart), ProgressReject::kNone);
  api::PodProgress p = t.Progress(kStart);
  EXPECT_EQ(p.step(), 100);
  EXPECT_EQ(p.steps_per_second(), 0);  // One reading: no rate yet.
  // 10 steps a second for 40 s, read every second.
  for (int i = 1; i <= 40; ++i) {
    t.Observe(Line(absl::StrCat("step=", 100 + 10 * i)),
              kStart + absl::Seconds(i));
  }
  p = t.Progress(kStart + absl::Seconds(40));
  EXPECT_EQ(p.step(), 500);
  EXPECT_DOUBLE_EQ(p.steps_per_second(), 10);
  EXPECT_EQ(SinceLastAdvance(p), absl::ZeroDuration());
  // Stalled: the age grows; the rate stays that of the last advance.
  p = t.Progress(kStart + absl::Seconds(55));
  EXPECT_EQ(SinceLastAdvance(p), absl::Seconds(15));
  EXPECT_DOUBLE_EQ(p.steps_per_second(), 10);
}

TEST(ProgressTrackerTest, RateOfStepsSlowerThanTheWindow) {
  ProgressTracker t;
  t.Observe(Line("step=1"), kStart);
  t.Observe(Line("step=2"), kStart + absl::Seconds(60));
  t.Observe(Line("step=3"), kStart + absl::Seconds(120));
  EXPECT_DOUBLE_EQ(t.Progress(kStart + absl::Seconds(120)).steps_per_second(),
                   1.0 / 60);
}

TEST(ProgressTrackerTest, RateOverTheWindowOnly) {
  ProgressTracker t;
  // Fast at first (100/s for 10 s), then 1/s for 60 s: the rate is the
  // recent one.
  t.Observe(Line("step=0"), kStart);
  t.Observe(Line("step=1000"), kStart + absl::Seconds(10));
  for (int i = 1; i <= 60; ++i) {
    t.Observe(Line(absl::StrCat("step=", 1000 + i)),
              kStart + absl::Seconds(10 + i));
  }
  EXPECT_DOUBLE_EQ(t.Progress(kStart + absl::Seconds(70)).steps_per_second(),
                   1);
}

TEST(ProgressTrackerTest, DecreasingStepIsRefusedAndCountedOnce) {
  ProgressTracker t;
  t.Observe(Line("step=50"), kStart);
  const int64_t version = t.version();
  EXPECT_EQ(t.Observe(Line("step=40"), kStart + absl::Seconds(1)),
            ProgressReject::kDecreasing);
  // The same bytes read again are not a new input.
  EXPECT_EQ(t.Observe(Line("step=40"), kStart + absl::Seconds(2)),
            ProgressReject::kNone);
  EXPECT_EQ(t.rejected(), 1);
  EXPECT_GT(t.version(), version);
  api::PodProgress p = t.Progress(kStart + absl::Seconds(2));
  EXPECT_EQ(p.step(), 50);
  EXPECT_EQ(p.rejected_lines(), 1);
  // Equal is no advance and no refusal.
  EXPECT_EQ(t.Observe(Line("step=50 "), kStart + absl::Seconds(3)),
            ProgressReject::kNone);
  EXPECT_EQ(t.rejected(), 1);
  EXPECT_EQ(SinceLastAdvance(t.Progress(kStart + absl::Seconds(3))),
            absl::Seconds(3));
}

TEST(ProgressTrackerTest, ParserRefusalsAreCounted) {
  ProgressTracker t;
  t.Observe(Line("step=5"), kStart);
  EXPECT_EQ(t.Observe(Line("garbage"), kStart + absl::Seconds(1)),
            ProgressReject::kMalformed);
  EXPECT_EQ(t.Observe(Line("step=-1"), kStart + absl::Seconds(2)),
            ProgressReject::kNegative);
  EXPECT_EQ(t.rejected(), 2);
  EXPECT_EQ(t.Progress(kStart + absl::Seconds(2)).step(), 5);
  // Back to a good line: taken.
  EXPECT_EQ(t.Observe(Line("step=6"), kStart + absl::Seconds(3)),
            ProgressReject::kNone);
  EXPECT_EQ(t.Progress(kStart + absl::Seconds(3)).step(), 6);
}

TEST(ProgressTrackerTest, CheckpointIsKeptAndNeverGoesBack) {
  ProgressTracker t;
  t.Observe(Line("step=100 checkpoint_step=100"), kStart);
  t.Observe(Line("step=110"), kStart + absl::Seconds(1));
  EXPECT_EQ(t.Progress(kStart + absl::Seconds(1)).checkpoint_step(), 100);
  EXPECT_EQ(
      t.Observe(Line("step=120 checkpoint_step=50"), kStart + absl::Seconds(2)),
      ProgressReject::kDecreasing);
  const int64_t version = t.version();
  t.Observe(Line("step=120 checkpoint_step=120"), kStart + absl::Seconds(3));
  EXPECT_GT(t.version(), version);
  EXPECT_EQ(t.Progress(kStart + absl::Seconds(3)).checkpoint_step(), 120);
}

TEST(ProgressTrackerTest, NewInstanceMayStartLower) {
  ProgressTracker t;
  t.Observe(Line("step=500 checkpoint_step=400"), kStart);
  t.Observe(Line("step=510 checkpoint_step=400"), kStart + absl::Seconds(1));
  t.NewInstance();
  EXPECT_FALSE(t.has_step());
  // What the last instance left in the file is not the new one's first.
  EXPECT_EQ(t.Observe(Line("step=510 checkpoint_step=400"),
                      kStart + absl::Seconds(2)),
            ProgressReject::kNone);
  EXPECT_FALSE(t.has_step());
  // Resumed from its checkpoint: lower, taken.
  EXPECT_EQ(t.Observe(Line("step=401 checkpoint_step=400"),
                      kStart + absl::Seconds(3)),
            ProgressReject::kNone);
  const api::PodProgress p = t.Progress(kStart + absl::Seconds(3));
  EXPECT_EQ(p.step(), 401);
  EXPECT_EQ(p.steps_per_second(), 0);  // The old readings went.
  EXPECT_EQ(t.rejected(), 0);
}

}  // namespace
}  // namespace jobset::agent
