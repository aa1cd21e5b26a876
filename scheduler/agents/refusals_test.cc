#include "scheduler/agents/refusals.h"

#include "gtest/gtest.h"
#include "scheduler/metrics.h"

namespace jobset::scheduler {
namespace {

TEST(RefusalsTest, CountsByReasonAndLogsAtMostOncePerInterval) {
  SchedulerMetrics metrics;
  Refusals refusals(&metrics);
  const absl::Time t0 = absl::FromUnixSeconds(1'700'000'000);
  refusals.Refused("too_large", "node n1, pod a: 3500000 bytes", t0);
  EXPECT_EQ(refusals.unlogged(), 0);  // Logged.
  refusals.Refused("too_large", "again", t0 + absl::Seconds(1));
  refusals.Refused("unknown_container", "x", t0 + absl::Seconds(9));
  EXPECT_EQ(refusals.unlogged(), 2);  // Within the interval: counted only.
  refusals.Refused("too_large", "later", t0 + Refusals::kWarningInterval);
  EXPECT_EQ(refusals.unlogged(), 0);  // Logged, with the two before.
  EXPECT_EQ(refusals.refused(), 4);
  EXPECT_EQ(metrics.refused_reports.Add({{"reason", "too_large"}}).Value(), 3);
  EXPECT_EQ(
      metrics.refused_reports.Add({{"reason", "unknown_container"}}).Value(),
      1);
  refusals.Fenced();
  EXPECT_EQ(refusals.fenced(), 1);
  EXPECT_EQ(metrics.fenced_reports.Value(), 1);
}

TEST(RefusalsTest, CountsWithoutMetrics) {
  Refusals refusals(nullptr);
  refusals.Refused("pod_uid", "long", absl::UnixEpoch());
  refusals.Fenced();
  EXPECT_EQ(refusals.refused(), 1);
  EXPECT_EQ(refusals.fenced(), 1);
}

}  // namespace
}  // namespace jobset::scheduler
