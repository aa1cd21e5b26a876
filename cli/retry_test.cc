// The retry policy on a FakeClock: which failures are repeated, the
// back-off, the timeout and what the final error says.
#include "cli/retry.h"

#include <optional>
#include <string>

#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const grpc::Status kRefused(grpc::StatusCode::UNAVAILABLE,
                            "failed to connect to all addresses; last error: "
                            "UNKNOWN: ipv4:127.0.0.1:1: Connection refused");
const grpc::Status kNoLeader(
    grpc::StatusCode::UNAVAILABLE,
    "jobsetd: this replica is a follower and no leader is known yet");
const grpc::Status kReset(grpc::StatusCode::UNAVAILABLE, "Socket closed");

TEST(ClassifyFailureTest, TellsWhetherTheRequestMayHaveArrived) {
  EXPECT_EQ(ClassifyFailure(grpc::Status::OK, false), Failure::kFinal);
  EXPECT_EQ(
      ClassifyFailure(grpc::Status(grpc::StatusCode::NOT_FOUND, "x"), false),
      Failure::kFinal);
  EXPECT_EQ(ClassifyFailure(kRefused, false), Failure::kNotSent);
  EXPECT_EQ(ClassifyFailure(kNoLeader, false), Failure::kNotSent);
  EXPECT_EQ(ClassifyFailure(kNoLeader, true), Failure::kRedirect);
  EXPECT_EQ(ClassifyFailure(kReset, false), Failure::kMaybeSent);
  EXPECT_EQ(ClassifyFailure(
                grpc::Status(grpc::StatusCode::UNAVAILABLE,
                             "failed to connect to all addresses; last error: "
                             "UNKNOWN: Ssl handshake failed: SSL_ERROR_SSL"),
                false),
            Failure::kTls);
  // A connection that died during the handshake (a busy jobsetd): retried.
  EXPECT_EQ(ClassifyFailure(
                grpc::Status(grpc::StatusCode::UNAVAILABLE,
                             "failed to connect to all addresses; last error: "
                             "UNKNOWN: ipv4:127.0.0.1:1: Handshake read "
                             "failed"),
                false),
            Failure::kNotSent);
  // Nothing listening, over TLS: not a TLS failure.
  EXPECT_EQ(ClassifyFailure(
                grpc::Status(grpc::StatusCode::UNAVAILABLE,
                             "failed to connect to all addresses; last error: "
                             "UNKNOWN: ipv4:127.0.0.1:1: tcp handshaker "
                             "shutdown"),
                false),
            Failure::kNotSent);
  EXPECT_EQ(
      ClassifyFailure(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "late"),
                      false),
      Failure::kFinal);
}

TEST(BackoffTest, DoublesToTwoSecondsWithinTheUpperHalf) {
  Backoff low([] { return 0.0; });
  EXPECT_EQ(low.Next(), absl::Milliseconds(50));
  EXPECT_EQ(low.Next(), absl::Milliseconds(100));
  EXPECT_EQ(low.Next(), absl::Milliseconds(200));
  Backoff high([] { return 0.999999; });
  absl::Duration last;
  for (int i = 0; i < 10; ++i) last = high.Next();
  EXPECT_LE(last, absl::Seconds(2));
  EXPECT_GT(last, absl::Milliseconds(1999));
  Backoff real;
  for (int i = 0; i < 20; ++i) {
    const absl::Duration d = real.Next();
    EXPECT_GE(d, absl::Milliseconds(50));
    EXPECT_LE(d, absl::Seconds(2));
  }
}

// Three replicas, none reachable: each round goes round them at once, then
// backs off, until the timeout; the note names every address and the last
// error's code comes through.
TEST(AttemptsTest, BacksOffBetweenRoundsAndGivesUpAtTheTimeout) {
  FakeClock clock;
  Attempts attempts(&clock, absl::Seconds(10), Repeat::kSafe,
                    Backoff([] { return 1.0; }));
  const std::string addresses[] = {"a:1", "b:2", "c:3"};
  int attempt = 0;
  absl::Duration waited;
  while (true) {
    const std::string& address = addresses[attempt % 3];
    // Replicas::After answers "at once" until every replica failed.
    const bool at_once = attempt % 3 != 2;
    ++attempt;
    std::optional<absl::Duration> wait =
        attempts.After(kRefused, Failure::kNotSent, at_once, 3, address);
    if (!wait.has_value()) break;
    if (at_once) {
      EXPECT_EQ(*wait, absl::ZeroDuration());
    } else {
      EXPECT_GT(*wait, absl::ZeroDuration());
      EXPECT_LE(*wait, absl::Seconds(2));
    }
    clock.Advance(*wait);
    waited += *wait;
    ASSERT_LT(attempt, 100);
  }
  // 100 ms, 200, 400, 800, 1.6 s, 2 s, 2 s, 2 s: 9.1 s; the next 2 s
  // would pass the 10 s.
  EXPECT_EQ(waited, absl::Milliseconds(9100));
  EXPECT_EQ(attempt, 27);
  EXPECT_FALSE(attempts.repeated_after_maybe_sent());
  EXPECT_EQ(attempts.Note(kRefused, "GetJobSet", 3),
            " (replicas tried a:1,b:2,c:3: 27 attempts in 9.1s, the next past "
            "the 10s timeout)");
}

TEST(AttemptsTest, AFollowersRedirectGoesAtOnce) {
  FakeClock clock;
  Attempts attempts(&clock, absl::Seconds(10), Repeat::kUnsafe);
  std::optional<absl::Duration> wait =
      attempts.After(kNoLeader, Failure::kRedirect, true, 3, "a:1");
  ASSERT_TRUE(wait.has_value());
  EXPECT_EQ(*wait, absl::ZeroDuration());
  // Followers naming each other past len + 1 redirects: back off.
  wait = attempts.After(kNoLeader, Failure::kRedirect, false, 3, "b:2");
  ASSERT_TRUE(wait.has_value());
  EXPECT_GT(*wait, absl::ZeroDuration());
}

TEST(AttemptsTest, AnAmbiguousFailureIsRepeatedOnlyWhenSafe) {
  FakeClock clock;
  Attempts safe(&clock, absl::Seconds(10), Repeat::kSafe);
  EXPECT_TRUE(safe.After(kReset, Failure::kMaybeSent, true, 3, "a:1"));
  EXPECT_TRUE(safe.repeated_after_maybe_sent());

  Attempts unsafe(&clock, absl::Seconds(10), Repeat::kUnsafe);
  EXPECT_FALSE(unsafe.After(kReset, Failure::kMaybeSent, true, 3, "a:1"));
  EXPECT_FALSE(unsafe.repeated_after_maybe_sent());
  EXPECT_THAT(unsafe.Note(kReset, "DeleteJobSet", 3),
              HasSubstr("not sent again: the request may have reached "
                        "jobsetd, and DeleteJobSet is not safe to repeat"));
  // Not sent at all: an unsafe call goes again too.
  Attempts unsent(&clock, absl::Seconds(10), Repeat::kUnsafe);
  EXPECT_TRUE(unsent.After(kRefused, Failure::kNotSent, true, 3, "a:1"));
}

TEST(AttemptsTest, ATlsFailureTriesEachReplicaOnceWithoutRounds) {
  FakeClock clock;
  Attempts attempts(&clock, absl::Seconds(10), Repeat::kSafe);
  EXPECT_TRUE(attempts.After(kRefused, Failure::kTls, true, 2, "a:1"));
  EXPECT_FALSE(attempts.After(kRefused, Failure::kTls, true, 2, "b:2"));
  Attempts one(&clock, absl::Seconds(10), Repeat::kSafe);
  EXPECT_FALSE(one.After(kRefused, Failure::kTls, false, 1, "a:1"));
}

TEST(AttemptsTest, ADeadlineSaysWhatCameBefore) {
  FakeClock clock;
  Attempts attempts(&clock, absl::Seconds(10), Repeat::kSafe,
                    Backoff([] { return 0.0; }));
  EXPECT_TRUE(attempts.After(kNoLeader, Failure::kNotSent, false, 1, "a:1"));
  clock.Advance(absl::Seconds(3));
  EXPECT_EQ(attempts.Remaining(), absl::Seconds(7));
  const grpc::Status late(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline");
  EXPECT_FALSE(attempts.After(late, Failure::kFinal, false, 1, "a:1"));
  EXPECT_EQ(attempts.Note(late, "CreateJobSet", 1),
            " (replicas tried a:1: 2 attempts in 3.0s; before: UNAVAILABLE: "
            "jobsetd: this replica is a follower and no leader is known yet)");
  // A plain failure of one replica adds nothing.
  Attempts plain(&clock, absl::Seconds(10), Repeat::kSafe);
  const grpc::Status denied(grpc::StatusCode::PERMISSION_DENIED, "no");
  EXPECT_FALSE(plain.After(denied, Failure::kFinal, false, 1, "a:1"));
  EXPECT_EQ(plain.Note(denied, "GetJobSet", 1), "");
  EXPECT_THAT(plain.Note(kRefused, "GetJobSet", 1), Not(HasSubstr("tried")));
}

}  // namespace
}  // namespace jobset::cli
