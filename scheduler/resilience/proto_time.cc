#include "scheduler/resilience/proto_time.h"

#include <algorithm>
#include <cstdint>

namespace jobset::scheduler::resilience {
namespace {

// protobuf's Timestamp range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
constexpr int64_t kMinSeconds = -62135596800;
constexpr int64_t kMaxSeconds = 253402300799;
// protobuf's Duration range: about 10,000 years.
constexpr int64_t kMaxDurationSeconds = 315576000000;
constexpr int32_t kNanosPerSecond = 1000000000;

}  // namespace

google::protobuf::Timestamp ToProtoTime(absl::Time t) {
  const absl::Time lo = absl::FromUnixSeconds(kMinSeconds);
  const absl::Time hi = absl::FromUnixSeconds(kMaxSeconds) +
                        absl::Nanoseconds(kNanosPerSecond - 1);
  t = std::clamp(t, lo, hi);
  // Floor to whole seconds, so that nanos are never negative.
  const int64_t seconds = absl::ToUnixSeconds(t);
  google::protobuf::Timestamp ts;
  ts.set_seconds(seconds);
  ts.set_nanos(static_cast<int32_t>(
      absl::ToInt64Nanoseconds(t - absl::FromUnixSeconds(seconds))));
  return ts;
}

std::optional<absl::Time> FromProtoTime(const google::protobuf::Timestamp& ts) {
  if (ts.seconds() < kMinSeconds || ts.seconds() > kMaxSeconds ||
      ts.nanos() < 0 || ts.nanos() >= kNanosPerSecond) {
    return std::nullopt;
  }
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

google::protobuf::Duration ToProtoDuration(absl::Duration d) {
  const absl::Duration max = absl::Seconds(kMaxDurationSeconds);
  d = std::clamp(d, -max, max);
  // Truncates toward zero, so that seconds and nanos share a sign.
  const int64_t seconds = absl::IDivDuration(d, absl::Seconds(1), &d);
  google::protobuf::Duration out;
  out.set_seconds(seconds);
  out.set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(d)));
  return out;
}

std::optional<absl::Duration> FromProtoDuration(
    const google::protobuf::Duration& d) {
  if (d.seconds() < -kMaxDurationSeconds || d.seconds() > kMaxDurationSeconds ||
      d.nanos() <= -kNanosPerSecond || d.nanos() >= kNanosPerSecond ||
      (d.seconds() > 0 && d.nanos() < 0) ||
      (d.seconds() < 0 && d.nanos() > 0)) {
    return std::nullopt;
  }
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

}  // namespace jobset::scheduler::resilience
