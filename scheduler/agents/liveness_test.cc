#include "scheduler/agents/liveness.h"

#include <optional>
#include <string>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace jobset::scheduler {
namespace {

constexpr absl::Duration kTimeout = absl::Seconds(5);
constexpr absl::Duration kGrace = absl::Seconds(10);
const absl::Time kStarted = absl::FromUnixSeconds(1'000);
constexpr absl::Time kNever = absl::InfinitePast();

absl::Time At(int seconds) { return kStarted + absl::Seconds(seconds); }

TEST(LivenessTest, WhoIsLostWhen) {
  const LivenessRules rules{.node_lost_timeout = kTimeout,
                            .restart_grace = kGrace,
                            .started = kStarted};
  struct Case {
    std::string name;
    bool ready;
    absl::Time last_seen;
    absl::Time now;
    std::optional<absl::Duration> silent;  // nullopt: not lost.
  };
  const Case cases[] = {
      {"connected here, within the timeout", true, At(0), At(4), std::nullopt},
      // Commit 3d105be: a node that connected to this jobsetd is under the
      // timeout at once, even within the restart grace.
      {"connected here, timed out within the grace", true, At(0), At(5),
       absl::Seconds(5)},
      {"connected here later, silent since", true, At(20), At(26),
       absl::Seconds(6)},
      {"heard just now", true, At(30), At(30), std::nullopt},
      {"known from the store, within the grace", true, kNever, At(9),
       std::nullopt},
      {"known from the store, the grace just over", true, kNever, At(10),
       absl::Seconds(10)},
      {"known from the store, long after", true, kNever, At(60),
       absl::Seconds(60)},
      {"already lost: lost once", false, At(0), At(60), std::nullopt},
      {"already lost, never connected", false, kNever, At(60), std::nullopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(SilentTooLong(rules, c.ready, c.last_seen, c.now), c.silent)
        << c.name;
  }
}

TEST(LivenessTest, AGraceShorterThanTheTimeoutStillWaitsTheTimeout) {
  const LivenessRules rules{.node_lost_timeout = kTimeout,
                            .restart_grace = absl::ZeroDuration(),
                            .started = kStarted};
  EXPECT_EQ(SilentTooLong(rules, true, kNever, At(4)), std::nullopt);
  EXPECT_EQ(SilentTooLong(rules, true, kNever, At(5)), absl::Seconds(5));
}

TEST(LivenessTest, TheLossSaysHowLongTheNodeWasSilent) {
  EXPECT_EQ(NodeLostMessage("n1", absl::Seconds(11), kTimeout),
            "node n1 sent no heartbeat for 11s (timeout 5s)");
}

TEST(LivenessTest, TheTickIsATenthOfTheTimeoutWithinBounds) {
  EXPECT_EQ(LivenessTick(absl::Seconds(1)), absl::Milliseconds(100));
  EXPECT_EQ(LivenessTick(absl::Milliseconds(50)), absl::Milliseconds(20));
  EXPECT_EQ(LivenessTick(absl::Minutes(1)), absl::Milliseconds(500));
}

TEST(LivenessMonitorTest, ChecksUntilStopped) {
  LivenessMonitor monitor;
  absl::Notification checked;
  int checks = 0;  // The monitor's thread only, until Stop returns.
  monitor.Start(absl::Milliseconds(1), [&] {
    if (++checks == 3) checked.Notify();
  });
  checked.WaitForNotification();
  monitor.Stop();
  const int after_stop = checks;
  monitor.Stop();  // Stopping again does nothing.
  EXPECT_GE(after_stop, 3);
  EXPECT_EQ(checks, after_stop);
}

}  // namespace
}  // namespace jobset::scheduler
