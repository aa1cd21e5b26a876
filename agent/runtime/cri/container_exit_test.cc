#include "agent/runtime/cri/container_exit.h"

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace jobset::agent::cri {
namespace {

namespace v1 = ::runtime::v1;

v1::ContainerStatus Exited(int code, const std::string& reason,
                           const std::string& message = "") {
  v1::ContainerStatus s;
  s.set_state(v1::CONTAINER_EXITED);
  s.set_exit_code(code);
  s.set_reason(reason);
  s.set_message(message);
  return s;
}

TEST(ExitOfTest, ReasonAndSignal) {
  struct Case {
    int code;
    std::string reason;
    std::string want_reason;
    int want_signal;
  };
  const Case cases[] = {
      {0, "", "Completed", 0},
      {1, "", "Error", 0},
      {137, "", "Error", 9},
      {137, "OOMKilled", "OOMKilled", 9},
      {143, "Error", "Error", 15},
      {128, "StartError", "StartError", 0},
      {129, "", "Error", 1},
      {192, "", "Error", 64},
      {193, "", "Error", 0},
      // A runtime's own reason wins, even for code 0.
      {0, "Completed", "Completed", 0},
      {137, "Completed", "Completed", 0},
  };
  for (const Case& c : cases) {
    const ContainerExit exit = ExitOf(Exited(c.code, c.reason, "why"));
    EXPECT_EQ(exit.exit_code, c.code);
    EXPECT_EQ(exit.reason, c.want_reason) << c.code << " " << c.reason;
    EXPECT_EQ(exit.signal, c.want_signal) << c.code << " " << c.reason;
    EXPECT_EQ(exit.message, "why");
  }
}

TEST(ExitSettledTest, SigkillWithoutReasonWaitsForTheOomEvent) {
  const absl::Time t0 = absl::FromUnixSeconds(1'700'000'000);
  struct Case {
    int code;
    std::string reason;
    absl::Time first_seen;  // InfiniteFuture: not seen before
    absl::Duration now;     // after t0
    bool want;
    absl::Time want_seen;
  };
  const absl::Time never = absl::InfiniteFuture();
  const Case cases[] = {
      // Settled at once: a reason, or no SIGKILL.
      {137, "OOMKilled", never, absl::ZeroDuration(), true, never},
      {0, "", never, absl::ZeroDuration(), true, never},
      {143, "", never, absl::ZeroDuration(), true, never},
      {1, "Error", never, absl::ZeroDuration(), true, never},
      // A SIGKILL without a reason waits kOomGrace from its first sight.
      {137, "", never, absl::ZeroDuration(), false, t0},
      {137, "Error", never, absl::ZeroDuration(), false, t0},
      {137, "", t0, absl::Seconds(1), false, t0},
      {137, "", t0, kOomGrace - absl::Nanoseconds(1), false, t0},
      {137, "", t0, kOomGrace, true, never},
      {137, "Error", t0, absl::Minutes(1), true, never},
      // The OOM event landed meanwhile.
      {137, "OOMKilled", t0, absl::Seconds(1), true, never},
  };
  for (const Case& c : cases) {
    absl::Time seen = c.first_seen;
    EXPECT_EQ(ExitSettled(Exited(c.code, c.reason), t0 + c.now, &seen), c.want)
        << c.code << " " << c.reason << " " << c.now;
    EXPECT_EQ(seen, c.want_seen) << c.code << " " << c.reason << " " << c.now;
  }
}

TEST(FromCriNanosTest, NoneIsInfinitePast) {
  EXPECT_EQ(FromCriNanos(0), absl::InfinitePast());
  EXPECT_EQ(FromCriNanos(-5), absl::InfinitePast());
  EXPECT_EQ(FromCriNanos(1'700'000'000'000'000'001),
            absl::FromUnixNanos(1'700'000'000'000'000'001));
}

}  // namespace
}  // namespace jobset::agent::cri
