#include "scheduler/server/stream_limiter.h"

#include <optional>
#include <utility>
#include <vector>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(StreamLimiterTest, EachUserHasTheLimitAndSlotsComeBack) {
  StreamLimiter streams(2);
  std::vector<StreamLimiter::Slot> alice;
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<StreamLimiter::Slot> slot = streams.Acquire("alice");
    ASSERT_THAT(slot.status(), IsOk());
    alice.push_back(*std::move(slot));
  }
  EXPECT_EQ(streams.Open("alice"), 2);
  EXPECT_THAT(streams.Acquire("alice").status(),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       AllOf(HasSubstr("user \"alice\" has 2 streams open"),
                             HasSubstr("--max_streams_per_user=2"))));
  // Another user is not held back by alice.
  absl::StatusOr<StreamLimiter::Slot> bob = streams.Acquire("bob");
  EXPECT_THAT(bob.status(), IsOk());
  EXPECT_EQ(streams.Open("bob"), 1);
  // A slot given back (destroyed) makes room; a moved-from one gives back
  // nothing twice.
  alice.pop_back();
  EXPECT_EQ(streams.Open("alice"), 1);
  EXPECT_THAT(streams.Acquire("alice").status(), IsOk());
  EXPECT_EQ(streams.Open("alice"), 1);  // The temporary's slot is back too.
  alice.clear();
  EXPECT_EQ(streams.Open("alice"), 0);
}

TEST(StreamLimiterTest, ZeroMeansNoLimitAndNamesAreQuoted) {
  StreamLimiter unlimited(0);
  std::vector<StreamLimiter::Slot> slots;
  for (int i = 0; i < 1000; ++i) {
    absl::StatusOr<StreamLimiter::Slot> slot = unlimited.Acquire("u");
    ASSERT_THAT(slot.status(), IsOk());
    slots.push_back(*std::move(slot));
  }
  EXPECT_EQ(unlimited.Open("u"), 1000);
  StreamLimiter one(1);
  absl::StatusOr<StreamLimiter::Slot> held = one.Acquire("a\nb");
  ASSERT_THAT(held.status(), IsOk());
  EXPECT_THAT(one.Acquire("a\nb").status(),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("user \"a\\nb\"")));
}

}  // namespace
}  // namespace jobset::scheduler
