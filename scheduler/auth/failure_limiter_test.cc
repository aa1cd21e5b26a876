#include "scheduler/auth/failure_limiter.h"

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

TEST(FailureLimiterTest, RefusesAnAddressOnlyAfterItsFailuresAndForAWindow) {
  FailureLimiter limiter({.max_failures = 3, .window = absl::Minutes(1)});
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(limiter.Check("10.0.0.1", kStart), IsOk());
    limiter.Failed("10.0.0.1", kStart + absl::Seconds(i));
  }
  EXPECT_THAT(limiter.Check("10.0.0.1", kStart + absl::Seconds(10)),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("from 10.0.0.1; try again in 50s")));
  EXPECT_THAT(limiter.Check("10.0.0.2", kStart + absl::Seconds(10)), IsOk());
  EXPECT_THAT(limiter.Check("10.0.0.1", kStart + absl::Minutes(1)), IsOk());
  // A new window starts afresh.
  limiter.Failed("10.0.0.1", kStart + absl::Minutes(1));
  EXPECT_THAT(limiter.Check("10.0.0.1", kStart + absl::Minutes(1)), IsOk());
}

TEST(FailureLimiterTest, TracksABoundedNumberOfAddresses) {
  FailureLimiter limiter(
      {.max_failures = 1, .window = absl::Minutes(1), .max_addresses = 2});
  limiter.Failed("a", kStart);
  limiter.Failed("b", kStart);
  limiter.Failed("c", kStart);  // Drops the others.
  EXPECT_THAT(limiter.Check("c", kStart),
              StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_THAT(limiter.Check("a", kStart), IsOk());
}

}  // namespace
}  // namespace jobset::scheduler
