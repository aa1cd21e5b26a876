#include "common/clock.h"

#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace jobset {
namespace {

TEST(RealClockTest, NowFollowsTheWallClock) {
  const absl::Time before = absl::Now();
  const absl::Time now = RealClock::Get()->Now();
  EXPECT_GE(now, before);
  EXPECT_LE(now, absl::Now());
}

TEST(RealClockTest, SleepUntilReturnsOnceTheDeadlineHasPassed) {
  RealClock* clock = RealClock::Get();
  const absl::Time deadline = clock->Now() + absl::Milliseconds(20);
  clock->SleepUntil(deadline);
  EXPECT_GE(clock->Now(), deadline);
  // A deadline already past: returns without waiting for the real time to
  // reach anything (a wait here would never end).
  clock->SleepUntil(absl::InfinitePast());
  EXPECT_GE(clock->Now(), deadline);
}

TEST(RealDeadlineTest, IsTheRealTimeAheadByTheTimeout) {
  const absl::Time before = RealClock::Get()->Now();
  const absl::Time deadline = RealDeadline(absl::Seconds(30));
  EXPECT_GE(deadline, before + absl::Seconds(30));
  EXPECT_LE(deadline, RealClock::Get()->Now() + absl::Seconds(30));
}

TEST(StopwatchTest, MeasuresTheRealTimeSinceItStarted) {
  const Stopwatch watch;
  const absl::Duration first = watch.Elapsed();
  EXPECT_GE(first, absl::ZeroDuration());
  RealClock::Get()->SleepUntil(RealDeadline(absl::Milliseconds(5)));
  EXPECT_GE(watch.Elapsed(), first + absl::Milliseconds(5));
}

TEST(FakeClockTest, StartsWhereToldAndMovesOnlyWhenAdvanced) {
  const absl::Time start = absl::FromUnixSeconds(1000);
  FakeClock clock(start);
  EXPECT_EQ(clock.Now(), start);
  EXPECT_EQ(clock.Now(), start);
  clock.Advance(absl::Seconds(5));
  EXPECT_EQ(clock.Now(), start + absl::Seconds(5));
  clock.SetTime(start + absl::Minutes(1));
  EXPECT_EQ(clock.Now(), start + absl::Minutes(1));
}

TEST(FakeClockTest, SleepUntilWakesWhenTimeReachesTheDeadline) {
  FakeClock clock;
  const absl::Time deadline = clock.Now() + absl::Seconds(10);
  absl::Notification woke;
  std::thread sleeper([&] {
    clock.SleepUntil(deadline);
    woke.Notify();
  });
  clock.Advance(absl::Seconds(9));
  // Still asleep: the deadline has not been reached. (A bounded wait; if the
  // sleeper wrongly woke, the notification would be seen here.)
  EXPECT_FALSE(woke.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  clock.Advance(absl::Seconds(1));
  EXPECT_TRUE(woke.WaitForNotificationWithTimeout(absl::Seconds(10)));
  sleeper.join();
}

TEST(FakeClockDeathTest, RefusesToGoBackwards) {
  FakeClock clock;
  EXPECT_DEATH(clock.SetTime(clock.Now() - absl::Seconds(1)), "backwards");
  EXPECT_DEATH(clock.Advance(absl::Seconds(-1)), "backwards");
}

}  // namespace
}  // namespace jobset
