#include "scheduler/agents/launch_stages.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "prometheus/metric_family.h"
#include "scheduler/metrics.h"

namespace jobset::scheduler {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

void SetDuration(absl::Duration d, google::protobuf::Duration* out) {
  out->set_seconds(absl::IDivDuration(d, absl::Seconds(1), &d));
  out->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(d)));
}

api::LaunchTimings Timings(absl::Duration to_started,
                           absl::Duration to_reported) {
  api::LaunchTimings t;
  SetDuration(to_reported, t.mutable_received_to_reported());
  SetDuration(to_started, t.mutable_received_to_started());
  return t;
}

// stage -> (count, sum in seconds) of jobsetd_pod_startup_stage_seconds.
std::map<std::string, std::pair<uint64_t, double>> Stages(
    SchedulerMetrics& metrics) {
  std::map<std::string, std::pair<uint64_t, double>> out;
  for (const prometheus::MetricFamily& family : metrics.registry->Collect()) {
    if (family.name != "jobsetd_pod_startup_stage_seconds") continue;
    for (const prometheus::ClientMetric& m : family.metric) {
      out[m.label.at(0).value] = {m.histogram.sample_count,
                                  m.histogram.sample_sum};
    }
  }
  return out;
}

TEST(LaunchStagesTest, SplitsTheLaunchWithoutComparingClocks) {
  SchedulerMetrics metrics;
  LaunchStages stages(&metrics);
  stages.Sent("u1", kT0 - absl::Milliseconds(4), kT0);
  // Arrives 30 ms after sending; the agent spent 20 ms of it (5 ms to the
  // start, 15 ms to its report): 10 ms were the network's.
  EXPECT_TRUE(stages.Reported(
      "u1", Timings(absl::Milliseconds(5), absl::Milliseconds(20)),
      kT0 + absl::Milliseconds(30)));
  auto s = Stages(metrics);
  EXPECT_EQ(s["bound_to_sent"].first, 1u);
  EXPECT_NEAR(s["bound_to_sent"].second, 0.004, 1e-9);
  EXPECT_NEAR(s["sent_to_received"].second, 0.010, 1e-9);
  EXPECT_NEAR(s["received_to_started"].second, 0.005, 1e-9);
  EXPECT_NEAR(s["started_to_reported"].second, 0.015, 1e-9);
  EXPECT_EQ(stages.in_flight(), 0u);
}

TEST(LaunchStagesTest, CountsOnlyTheFirstSendingAndTheFirstReport) {
  SchedulerMetrics metrics;
  LaunchStages stages(&metrics);
  stages.Sent("u1", kT0, kT0 + absl::Milliseconds(1));
  // Resent (a grown host table): not a second launch.
  stages.Sent("u1", kT0, kT0 + absl::Milliseconds(50));
  const api::LaunchTimings t =
      Timings(absl::Milliseconds(1), absl::Milliseconds(2));
  EXPECT_TRUE(stages.Reported("u1", t, kT0 + absl::Milliseconds(10)));
  EXPECT_FALSE(stages.Reported("u1", t, kT0 + absl::Milliseconds(11)));
  auto s = Stages(metrics);
  EXPECT_EQ(s["bound_to_sent"].first, 1u);
  EXPECT_NEAR(s["bound_to_sent"].second, 0.001, 1e-9);
  EXPECT_NEAR(s["sent_to_received"].second, 0.007, 1e-9);
  EXPECT_EQ(s["sent_to_received"].first, 1u);
}

TEST(LaunchStagesTest, IgnoresWhatIsNotALaunch) {
  SchedulerMetrics metrics;
  LaunchStages stages(&metrics);
  // Not a launch (a pod already running, or bound before a restart).
  stages.Sent("u1", absl::InfinitePast(), kT0);
  EXPECT_FALSE(stages.Reported(
      "u1", Timings(absl::Milliseconds(1), absl::Milliseconds(2)), kT0));
  // A report without timings (the agent restarted) ends nothing.
  stages.Sent("u2", kT0, kT0);
  EXPECT_FALSE(stages.Reported("u2", api::LaunchTimings(), kT0));
  // An agent slower than the round trip (its clock ran fast) gives zero,
  // not a negative time.
  EXPECT_TRUE(stages.Reported("u2",
                              Timings(absl::Milliseconds(1), absl::Seconds(5)),
                              kT0 + absl::Milliseconds(3)));
  auto s = Stages(metrics);
  EXPECT_EQ(s["sent_to_received"].second, 0);
  // A released pod is forgotten.
  stages.Sent("u3", kT0, kT0);
  stages.Forget("u3");
  EXPECT_EQ(stages.in_flight(), 0u);
}

TEST(LaunchStagesTest, FollowsABoundedNumberOfLaunches) {
  SchedulerMetrics metrics;
  LaunchStages stages(&metrics);
  for (size_t i = 0; i < LaunchStages::kMaxInFlight + 10; ++i)
    stages.Sent(std::to_string(i), kT0, kT0);
  EXPECT_EQ(stages.in_flight(), LaunchStages::kMaxInFlight);
}

TEST(LaunchStagesTest, MeasuresNothingWithoutMetrics) {
  LaunchStages stages(nullptr);
  stages.Sent("u1", kT0, kT0);
  EXPECT_EQ(stages.in_flight(), 0u);
}

}  // namespace
}  // namespace jobset::scheduler
