#ifndef JOBSET_SCHEDULER_RESILIENCE_PROTO_TIME_H_
#define JOBSET_SCHEDULER_RESILIENCE_PROTO_TIME_H_

#include <optional>

#include "absl/time/time.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"

// Exact conversions between absl's time types and protobuf's, for the
// ledgers' persisted form: nanoseconds survive the round trip.

namespace jobset::scheduler::resilience {

// Returns `t` as a Timestamp (finite times only; an infinite one is
// clamped to protobuf's range).
google::protobuf::Timestamp ToProtoTime(absl::Time t);

// Returns the time `ts` names, or nullopt when it is outside protobuf's
// documented range (years 1 to 9999) or its nanos are not in [0, 1e9).
std::optional<absl::Time> FromProtoTime(const google::protobuf::Timestamp& ts);

// Returns `d` as a Duration (finite durations only; an infinite one is
// clamped).
google::protobuf::Duration ToProtoDuration(absl::Duration d);

// Returns the duration `d` names, or nullopt when its seconds and nanos
// disagree in sign, nanos are out of range, or it exceeds 10,000 years.
std::optional<absl::Duration> FromProtoDuration(
    const google::protobuf::Duration& d);

}  // namespace jobset::scheduler::resilience

#endif  // JOBSET_SCHEDULER_RESILIENCE_PROTO_TIME_H_
