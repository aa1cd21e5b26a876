// The stream's own rules, without a connection: which messages are handed
// on (leader epochs, deposed leaders), when it counts as welcomed, and what
// counts as a revoked certificate. The connection itself is agent_test's.
#include "agent/scheduler_stream.h"

#include <string>
#include <vector>

#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

api::SchedulerMessage Welcome(int64_t epoch) {
  api::SchedulerMessage msg;
  msg.mutable_welcome()->set_leader_epoch(epoch);
  return msg;
}

api::SchedulerMessage Release(const std::string& uid) {
  api::SchedulerMessage msg;
  msg.mutable_release()->set_pod_uid(uid);
  return msg;
}

class SchedulerStreamTest : public ::testing::Test {
 protected:
  // Never dialled: Start is not called.
  static SchedulerStream::Options Unused() {
    SchedulerStream::Options options;
    options.scheduler = "127.0.0.1:1";
    return options;
  }
  SchedulerStream::Handler Recorder() {
    SchedulerStream::Handler h;
    h.hello = [] { return api::AgentMessage(); };
    h.hello_sent = [](const api::AgentMessage&) {};
    h.heard = [](absl::Time) {};
    h.handle = [this](const api::SchedulerMessage& msg) {
      handled_.push_back(msg.kind_case());
    };
    return h;
  }

  FakeClock clock_;
  std::vector<api::SchedulerMessage::KindCase> handled_;
};

TEST_F(SchedulerStreamTest, AWelcomeOfAnOlderEpochIsADeposedLeaders) {
  SchedulerStream stream(Unused(), Recorder(), &clock_);
  EXPECT_FALSE(stream.welcomed());
  stream.Dispatch(Welcome(7));
  EXPECT_TRUE(stream.welcomed());
  stream.Dispatch(Release("p1"));
  stream.Dispatch(Welcome(0));  // A jobsetd alone claims no epoch.
  EXPECT_EQ(handled_.size(), 3u);
  stream.Dispatch(Welcome(5));
  // Nothing from the deposed leader is handed on, not even a Release.
  stream.Dispatch(Release("p1"));
  EXPECT_EQ(handled_, (std::vector<api::SchedulerMessage::KindCase>{
                          api::SchedulerMessage::kWelcome,
                          api::SchedulerMessage::kRelease,
                          api::SchedulerMessage::kWelcome}));
}

TEST_F(SchedulerStreamTest, HeartbeatAcksAreTheStreamsOwn) {
  SchedulerStream stream(Unused(), Recorder(), &clock_);
  api::SchedulerMessage ack;
  ack.mutable_heartbeat_ack()->set_seq(1);
  stream.Dispatch(ack);
  EXPECT_TRUE(handled_.empty());
  EXPECT_FALSE(stream.Tick(clock_.Now()));  // Not welcomed: no heartbeat.
  stream.Dispatch(Welcome(1));
  EXPECT_TRUE(stream.Tick(clock_.Now()));
}

// A frozen agent (SIGSTOP) finds, once it runs again, what jobsetd sent
// before the gap: it may be stale (the node declared lost, its pods placed
// elsewhere), so it is not obeyed; the stream is dropped for a Welcome.
TEST_F(SchedulerStreamTest, AMessageReadAfterASilenceIsNotObeyed) {
  SchedulerStream stream(Unused(), Recorder(), &clock_);
  EXPECT_TRUE(stream.Receive(Welcome(1), clock_.Now()));
  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(stream.Receive(Release("p1"), clock_.Now()));
  clock_.Advance(absl::Seconds(3) + absl::Milliseconds(1));  // 3 intervals
  EXPECT_FALSE(stream.Receive(Release("p2"), clock_.Now()));
  EXPECT_EQ(handled_, (std::vector<api::SchedulerMessage::KindCase>{
                          api::SchedulerMessage::kWelcome,
                          api::SchedulerMessage::kRelease}));
}

// Before the Welcome nothing counts as silence: the Hello's answer may take.
TEST_F(SchedulerStreamTest, SilenceCountsOnlyOnceWelcomed) {
  SchedulerStream stream(Unused(), Recorder(), &clock_);
  clock_.Advance(absl::Seconds(9));
  EXPECT_TRUE(stream.Receive(Welcome(1), clock_.Now()));
  EXPECT_EQ(handled_.size(), 1u);
}

TEST(IsRevokedCertificateTest, Table) {
  EXPECT_TRUE(IsRevokedCertificate(grpc::Status(
      grpc::StatusCode::UNAUTHENTICATED, "certificate has been revoked")));
  // jobsetd down, restarting, or refusing for another reason: retried.
  EXPECT_FALSE(IsRevokedCertificate(
      grpc::Status(grpc::StatusCode::UNAVAILABLE, "failed to connect")));
  EXPECT_FALSE(IsRevokedCertificate(grpc::Status(
      grpc::StatusCode::UNAUTHENTICATED, "certificate has expired")));
  EXPECT_FALSE(IsRevokedCertificate(grpc::Status(
      grpc::StatusCode::PERMISSION_DENIED, "certificate has been revoked")));
  EXPECT_FALSE(IsRevokedCertificate(grpc::Status::OK));
}

}  // namespace
}  // namespace jobset::agent
