#include "scheduler/resilience/proto_time.h"

#include <optional>

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace jobset::scheduler::resilience {
namespace {

TEST(ProtoTimeTest, RoundTripsToTheNanosecond) {
  for (absl::Time t :
       {absl::UnixEpoch(), absl::FromUnixNanos(1'700'000'000'123'456'789),
        absl::FromUnixNanos(-1),  // before the epoch: nanos stay positive
        absl::FromUnixSeconds(-62135596800),
        absl::FromUnixSeconds(253402300799) + absl::Nanoseconds(999999999)}) {
    google::protobuf::Timestamp ts = ToProtoTime(t);
    EXPECT_GE(ts.nanos(), 0);
    EXPECT_EQ(FromProtoTime(ts), t);
  }
  EXPECT_EQ(ToProtoTime(absl::FromUnixNanos(-1)).seconds(), -1);
  EXPECT_EQ(ToProtoTime(absl::FromUnixNanos(-1)).nanos(), 999999999);
}

TEST(ProtoTimeTest, InfiniteTimesAreClamped) {
  EXPECT_EQ(ToProtoTime(absl::InfiniteFuture()).seconds(), 253402300799);
  EXPECT_EQ(ToProtoTime(absl::InfinitePast()).seconds(), -62135596800);
}

TEST(ProtoTimeTest, BadTimestampsAreRefused) {
  google::protobuf::Timestamp ts;
  ts.set_nanos(-1);
  EXPECT_EQ(FromProtoTime(ts), std::nullopt);
  ts.set_nanos(1000000000);
  EXPECT_EQ(FromProtoTime(ts), std::nullopt);
  ts.set_nanos(0);
  ts.set_seconds(253402300800);
  EXPECT_EQ(FromProtoTime(ts), std::nullopt);
  ts.set_seconds(-62135596801);
  EXPECT_EQ(FromProtoTime(ts), std::nullopt);
}

TEST(ProtoDurationTest, RoundTripsToTheNanosecond) {
  for (absl::Duration d :
       {absl::ZeroDuration(), absl::Nanoseconds(1), -absl::Nanoseconds(1),
        absl::Hours(24 * 365) + absl::Nanoseconds(7),
        -(absl::Seconds(3) + absl::Milliseconds(250))}) {
    google::protobuf::Duration out = ToProtoDuration(d);
    EXPECT_FALSE(out.seconds() > 0 && out.nanos() < 0);
    EXPECT_FALSE(out.seconds() < 0 && out.nanos() > 0);
    EXPECT_EQ(FromProtoDuration(out), d);
  }
}

TEST(ProtoDurationTest, BadDurationsAreRefused) {
  google::protobuf::Duration d;
  d.set_seconds(1);
  d.set_nanos(-1);
  EXPECT_EQ(FromProtoDuration(d), std::nullopt);
  d.set_seconds(-1);
  d.set_nanos(1);
  EXPECT_EQ(FromProtoDuration(d), std::nullopt);
  d.set_seconds(0);
  d.set_nanos(1000000000);
  EXPECT_EQ(FromProtoDuration(d), std::nullopt);
  d.set_nanos(0);
  d.set_seconds(315576000001);
  EXPECT_EQ(FromProtoDuration(d), std::nullopt);
  EXPECT_EQ(ToProtoDuration(absl::InfiniteDuration()).seconds(), 315576000000);
}

}  // namespace
}  // namespace jobset::scheduler::resilience
