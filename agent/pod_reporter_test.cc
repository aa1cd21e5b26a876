#include "agent/pod_reporter.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/pod_phase.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

// A Running pod whose one container started at `started`.
PodState RunningPod(const std::string& uid, absl::Time started) {
  PodState pod;
  pod.uid = uid;
  pod.status.set_phase(api::kPodRunning);
  api::ContainerStatus* c = pod.status.add_container_statuses();
  c->set_name("main");
  const absl::Duration since = started - absl::UnixEpoch();
  c->mutable_started_at()->set_seconds(absl::ToInt64Seconds(since));
  c->mutable_started_at()->set_nanos(
      static_cast<int32_t>(absl::ToInt64Nanoseconds(since % absl::Seconds(1))));
  return pod;
}

// The reports `reporter` sends for `pods` at `now`.
std::vector<api::PodReport> Reports(PodReporter& reporter,
                                    std::vector<PodState> pods,
                                    absl::Time now) {
  std::vector<api::PodReport> out;
  reporter.Report(
      std::move(pods), {}, now, [](const std::string&) { return 0; },
      [&](const api::AgentMessage& m) {
        out.push_back(m.pod_update());
        return true;
      });
  return out;
}

int64_t Millis(const google::protobuf::Duration& d) {
  return d.seconds() * 1000 + d.nanos() / 1'000'000;
}

const absl::Time kOrdered = absl::FromUnixSeconds(1'000'000);

TEST(PodReporterTest, TheFirstRunningReportTimesTheLaunch) {
  PodReporter reporter(nullptr);
  reporter.Launched("p", kOrdered);
  std::vector<api::PodReport> r =
      Reports(reporter, {RunningPod("p", kOrdered + absl::Milliseconds(30))},
              kOrdered + absl::Milliseconds(100));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Millis(r[0].launch().received_to_reported()), 100);
  EXPECT_EQ(Millis(r[0].launch().received_to_started()), 30);
  // Only the first.
  r = Reports(reporter,
              {RunningPod("p", kOrdered + absl::Milliseconds(30)),
               RunningPod("q", kOrdered)},
              kOrdered + absl::Seconds(1));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].has_launch());
}

// A tick reads its time before it lists the pods; a pod started in between
// is timed to its start, not left without its start (the stage it belongs
// to was missing from jobsetd's metrics).
TEST(PodReporterTest, APodStartedAfterTheTicksTimeIsTimedToItsStart) {
  PodReporter reporter(nullptr);
  reporter.Launched("p", kOrdered);
  const std::vector<api::PodReport> r =
      Reports(reporter, {RunningPod("p", kOrdered + absl::Milliseconds(40))},
              kOrdered + absl::Milliseconds(25));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Millis(r[0].launch().received_to_reported()), 40);
  EXPECT_EQ(Millis(r[0].launch().received_to_started()), 40);
}

// A start far past the tick is another clock's: the launch is timed without
// it.
TEST(PodReporterTest, AStartFromAnotherClockIsNotTimed) {
  PodReporter reporter(nullptr);
  reporter.Launched("p", kOrdered);
  const std::vector<api::PodReport> r =
      Reports(reporter, {RunningPod("p", kOrdered + absl::Hours(1))},
              kOrdered + absl::Milliseconds(25));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Millis(r[0].launch().received_to_reported()), 25);
  EXPECT_FALSE(r[0].launch().has_received_to_started());
}

}  // namespace
}  // namespace jobset::agent
