#ifndef JOBSET_SCHEDULER_AGENTS_AGENT_INPUT_H_
#define JOBSET_SCHEDULER_AGENTS_AGENT_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/agent.pb.h"
#include "proto/cluster.pb.h"

namespace jobset::scheduler {

// What jobsetd accepts from an agent, which it does not trust: the limits
// and checks the hub applies to registrations and pod reports before
// anything reaches the controller or the store.

// Pod and container messages longer than this are cut (on a UTF-8
// boundary), as Kubernetes cuts a termination message to 4096 bytes.
inline constexpr size_t kMaxReportMessageBytes = 4096;
// A reason (the pod's, a container's, a condition's) longer than this is
// refused (metav1.Condition's reason is at most 1024 characters).
inline constexpr size_t kMaxReportReasonBytes = 1024;
// A pod report with more conditions than this is refused.
inline constexpr int kMaxReportConditions = 16;
// A condition type longer than this is refused (metav1.Condition: 316).
inline constexpr size_t kMaxConditionTypeBytes = 316;
// A pod report larger than this, serialized, is refused before any of it
// is read (what it may hold once cut is far smaller).
inline constexpr size_t kMaxPodReportBytes = 1 << 20;

// Pod events (PodReport.events): at most this many in one report; a type
// other than Normal or Warning, or a reason that is not 1-128 letters and
// digits (kubelet's are CamelCase), is refused; a message is cut to
// kMaxEventMessageBytes (events.k8s.io/v1's note: 1 kB).
inline constexpr int kMaxReportEvents = 16;
inline constexpr size_t kMaxEventReasonBytes = 128;
inline constexpr size_t kMaxEventMessageBytes = 1024;

// A report's launch timings (PodReport.launch) must be valid Durations from
// zero to this; receivedToStarted at most receivedToReported.
inline constexpr absl::Duration kMaxLaunchDuration = absl::Hours(24);

// A report whose pod uid is longer than this is refused (no pod has one).
inline constexpr size_t kMaxPodUidBytes = 128;

// Node registration (Hello) bounds.
inline constexpr int kMaxNodeLabels = 256;
inline constexpr int kMaxNodeTaints = 64;
inline constexpr int kMaxNodeResources = 64;
inline constexpr int kMaxNodeAccelerators = 64;
inline constexpr size_t kMaxRegistrationStringBytes = 256;
// The most of any one resource a node may declare: 2^50 (a PiB of memory;
// 2^50 cores, GPUs, ...). Placement sums these without overflowing.
inline constexpr int64_t kMaxNodeResourceValue = int64_t{1} << 50;

// Returns `text` cut to at most `max_bytes`, never inside a UTF-8 sequence.
absl::string_view CutUtf8(absl::string_view text, size_t max_bytes);

// Why a report was refused: `reason` labels the refusal counter
// ("too_large", "phase", "reason_too_long", "unknown_container",
// "duplicate_container", "too_many_conditions", "condition_type",
// "too_many_events", "event_type", "event_reason", "launch_timings"),
// `detail` says what was wrong, naming the field.
struct Refusal {
  std::string reason;
  std::string detail;
};

// Checks an agent's report of a pod whose spec is `spec`, and cuts its
// messages to kMaxReportMessageBytes in place. Container statuses must name
// containers of `spec` (init container statuses its init containers), at
// most one each. Returns why it is refused, or nothing when it may be used.
std::optional<Refusal> CheckPodReport(const api::PodSpec& spec,
                                      api::PodReport& report);

// Checks a node registration: name a DNS-1123 subdomain, address an IP
// literal, labels valid Kubernetes labels, taints valid, capacity valid
// quantities within kMaxNodeResourceValue, each list bounded.
// kInvalidArgument naming the field ("hello.node.labels[...]") otherwise.
absl::Status ValidateRegistration(const api::NodeRegistration& node);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_AGENT_INPUT_H_
