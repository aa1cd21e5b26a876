#include "scheduler/controller/controller_state.h"

#include <set>
#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::Optional;

// Timers: the earliest wake of any JobSet, found without looking at every
// JobSet, and only the due ones marked dirty.
TEST(ControllerStateTest, JobSetsWakeAtTheirOwnTimes) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  ControllerState state;
  EXPECT_EQ(state.NextWake(), std::nullopt);
  TrackedJobSet& a = state.Track("ns/a");
  TrackedJobSet& b = state.Track("ns/b");
  state.WakeAt(a, t0 + absl::Seconds(10));
  state.WakeAt(b, t0 + absl::Seconds(5));
  EXPECT_THAT(state.NextWake(), Optional(t0 + absl::Seconds(5)));
  // A later wake does not move an earlier one.
  state.WakeAt(b, t0 + absl::Seconds(20));
  EXPECT_THAT(b.wake, Optional(t0 + absl::Seconds(5)));
  // b is reconciled (its wake cleared): a's is next.
  b.wake.reset();
  EXPECT_THAT(state.NextWake(), Optional(t0 + absl::Seconds(10)));

  state.MarkDue(t0 + absl::Seconds(9));
  EXPECT_FALSE(state.HasDirty());
  api::Job job;
  job.mutable_metadata()->set_name("a-workers-0");
  ControllerState::AddJob(a, job);
  state.MarkDue(t0 + absl::Seconds(10));
  EXPECT_THAT(state.TakeDirty(10), ElementsAre("ns/a"));
  EXPECT_THAT(a.dirty_jobs, ElementsAre("a-workers-0"));

  // A JobSet gone takes its wake with it.
  TrackedJobSet& c = state.Track("ns/c");
  state.WakeAt(c, t0 + absl::Seconds(30));
  EXPECT_THAT(state.NextWake(), Optional(t0 + absl::Seconds(30)));
  state.Untrack("ns/c");
  EXPECT_EQ(state.NextWake(), std::nullopt);
  state.MarkDue(t0 + absl::Seconds(60));
  EXPECT_FALSE(state.HasDirty());
}

// A JobSet whose wake moves every pass does not grow the index without end.
TEST(ControllerStateTest, MovedWakesDoNotPileUp) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  ControllerState state;
  TrackedJobSet& a = state.Track("ns/a");
  for (int i = 0; i < 10'000; ++i) {
    a.wake.reset();  // reconciled
    state.WakeAt(a, t0 + absl::Hours(24) + absl::Seconds(i));
  }
  EXPECT_LE(state.wakes_indexed(), 2 + 64u);
  EXPECT_THAT(state.NextWake(),
              Optional(t0 + absl::Hours(24) + absl::Seconds(9'999)));
}

}  // namespace
}  // namespace jobset::scheduler
