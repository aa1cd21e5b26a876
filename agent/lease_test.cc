// The agent's lease, by a FakeClock: pods stop once jobsetd is not heard
// from for the lease, once, and the runtime's lease is renewed as it is.
#include "agent/lease.h"

#include <string>
#include <vector>

#include "agent/fake_runtime.h"
#include "api/pod_phase.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;

// A FakeRuntime's pods, with the lease calls counted.
class LeaseRecorder final : public Runtime {
 public:
  absl::Status Start(const api::PodAssignment& a) override {
    return pods.Start(a);
  }
  absl::Status Stop(const std::string& uid, absl::Duration grace) override {
    stops.push_back(uid);
    return pods.Stop(uid, grace);
  }
  absl::Status Remove(const std::string& uid) override {
    return pods.Remove(uid);
  }
  std::vector<PodState> List() override { return pods.List(); }
  absl::Status UpdateHosts(
      const std::string& uid,
      const google::protobuf::RepeatedPtrField<api::HostEntry>& hosts)
      override {
    return pods.UpdateHosts(uid, hosts);
  }
  std::string LogPath(const std::string&, const std::string&) const override {
    return "";
  }
  absl::Status SetLease(absl::Duration lease) override {
    leases.push_back(lease);
    return absl::OkStatus();
  }
  absl::Status RenewLease() override {
    ++renewals;
    return absl::OkStatus();
  }

  FakeRuntime pods;
  std::vector<std::string> stops;
  std::vector<absl::Duration> leases;
  int renewals = 0;
};

class SchedulerLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* uid : {"p1", "p2"}) {
      api::PodAssignment a;
      a.mutable_pod()->mutable_metadata()->set_uid(uid);
      ASSERT_THAT(runtime_.Start(a), IsOk());
    }
    runtime_.pods.Exit("p2", 0);  // Finished: nothing to stop.
  }

  FakeClock clock_;
  LeaseRecorder runtime_;
};

TEST_F(SchedulerLeaseTest, PodsStopOnceWhenJobsetdIsNotHeardFrom) {
  SchedulerLease lease(absl::Seconds(5), &runtime_, &clock_);
  ASSERT_THAT(lease.Install(), IsOk());
  EXPECT_EQ(runtime_.leases, std::vector<absl::Duration>{absl::Seconds(5)});
  clock_.Advance(absl::Seconds(5));
  EXPECT_FALSE(lease.Enforce(clock_.Now(), runtime_.List()));  // Not past it.
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_TRUE(lease.Enforce(clock_.Now(), runtime_.List()));
  EXPECT_EQ(runtime_.stops, std::vector<std::string>{"p1"});
  EXPECT_EQ(runtime_.List()[0].status.phase(), api::kPodFailed);
  // Once per silence.
  clock_.Advance(absl::Minutes(1));
  EXPECT_FALSE(lease.Enforce(clock_.Now(), runtime_.List()));
  EXPECT_EQ(runtime_.stops.size(), 1u);
}

TEST_F(SchedulerLeaseTest, WordFromJobsetdStartsTheLeaseOver) {
  SchedulerLease lease(absl::Seconds(5), &runtime_, &clock_);
  clock_.Advance(absl::Seconds(4));
  lease.Heard(clock_.Now());
  clock_.Advance(absl::Seconds(4));
  EXPECT_FALSE(lease.Enforce(clock_.Now(), runtime_.List()));
  clock_.Advance(absl::Seconds(2));
  EXPECT_TRUE(lease.Enforce(clock_.Now(), runtime_.List()));
  // Welcomed again: a later silence counts again.
  lease.Heard(clock_.Now());
  lease.Welcomed();
  clock_.Advance(absl::Seconds(6));
  EXPECT_TRUE(lease.Enforce(clock_.Now(), runtime_.List()));
}

TEST_F(SchedulerLeaseTest, TheRuntimesLeaseIsRenewedAtMostEvery100Ms) {
  SchedulerLease lease(absl::Seconds(5), &runtime_, &clock_);
  lease.Heard(clock_.Now());
  lease.Heard(clock_.Now());
  clock_.Advance(absl::Milliseconds(99));
  lease.Heard(clock_.Now());
  EXPECT_EQ(runtime_.renewals, 1);
  clock_.Advance(absl::Milliseconds(1));
  lease.Heard(clock_.Now());
  EXPECT_EQ(runtime_.renewals, 2);
  // A new stream's first message renews it.
  lease.StreamOpened();
  lease.Heard(clock_.Now());
  EXPECT_EQ(runtime_.renewals, 3);
}

TEST_F(SchedulerLeaseTest, AZeroLeaseIsOff) {
  SchedulerLease lease(absl::ZeroDuration(), &runtime_, &clock_);
  ASSERT_THAT(lease.Install(), IsOk());
  EXPECT_EQ(runtime_.leases, std::vector<absl::Duration>{absl::ZeroDuration()});
  lease.Heard(clock_.Now());
  EXPECT_EQ(runtime_.renewals, 0);
  clock_.Advance(absl::Hours(1));
  EXPECT_FALSE(lease.Enforce(clock_.Now(), runtime_.List()));
  EXPECT_TRUE(runtime_.stops.empty());
}

}  // namespace
}  // namespace jobset::agent
