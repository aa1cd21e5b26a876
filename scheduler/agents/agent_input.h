#ifndef JOBSET_SCHEDULER_AGENTS_AGENT_INPUT_H_
#define JOBSET_SCHEDULER_AGENTS_AGENT_INPUT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// A pod's progress (PodReport.progress, our addition; docs/agent.md,
// "Progress heartbeats"): its step and checkpoint step from 0 to
// kMaxProgressStep (the checkpoint at most the step), its rate finite, from 0
// to kMaxProgressStepsPerSecond, its sinceLastAdvance a valid Duration from 0
// to kMaxProgressAge, its rejectedLines not negative.
inline constexpr int64_t kMaxProgressStep = int64_t{1} << 62;
inline constexpr double kMaxProgressStepsPerSecond = 1e9;
inline constexpr absl::Duration kMaxProgressAge = absl::Hours(24 * 366);

// A report whose pod uid is longer than this is refused (no pod has one).
inline constexpr size_t kMaxPodUidBytes = 128;

// Node registration (Hello) bounds.
inline constexpr int kMaxNodeLabels = 256;
inline constexpr int kMaxNodeTaints = 64;
inline constexpr int kMaxNodeResources = 64;
inline constexpr int kMaxNodeAcceleratorNames = 64;
inline constexpr size_t kMaxRegistrationStringBytes = 256;
// The most of any one resource a node may declare: 2^50 (a PiB of memory;
// 2^50 cores, GPUs, ...). Placement sums these without overflowing.
inline constexpr int64_t kMaxNodeResourceValue = int64_t{1} << 50;

// NodeRestriction: the most of one resource a node may declare. Per
// resource: cpu 8192 cores (Linux's largest NR_CPUS); memory and
// hugepages-* 256 TiB; ephemeral-storage kMaxNodeResourceValue; an
// accelerator (nvidia.com/gpu, amd.com/gpu, google.com/tpu, any
// `<domain>/gpu` or `<domain>/tpu`, habana.ai/gaudi, aws.amazon.com/neuron*)
// 256 devices; any other extended resource 2^20 units (shared-device
// plugins count in the thousands). A node (a stolen key, a join token)
// cannot claim a fleet's worth of GPUs to draw every team's pods.
inline constexpr int64_t kMaxNodeCpuCores = 8192;
inline constexpr int64_t kMaxNodeMemoryBytes = int64_t{256} << 40;
inline constexpr int64_t kMaxNodeAccelerators = 256;
inline constexpr int64_t kMaxNodeExtendedResource = int64_t{1} << 20;
// Returns the limit above for resource `name`, in the quantity's units
// (cores for cpu, bytes for memory).
int64_t MaxNodeResource(absl::string_view name);

// NodeRestriction (Kubernetes' admission plugin of that name): a node may
// not set labels under these prefixes; only an admin does (jobsetctl label
// node). jobset-agent sets none of them itself.
inline constexpr char kNodeRestrictionLabelPrefix[] =
    "node-restriction.kubernetes.io/";
inline constexpr char kJobsetdLabelPrefix[] = "jobsetd.io/";
// Whether label `key` is one a node may not set on itself.
bool IsRestrictedNodeLabel(absl::string_view key);

// Removes from `node`'s labels those a node may not set
// (IsRestrictedNodeLabel); returns their keys, sorted.
std::vector<std::string> DropRestrictedLabels(api::NodeRegistration& node);

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

// Checks an agent's report of a pod's progress against the limits above.
// Returns why it is refused ("progress_step", "progress_checkpoint",
// "progress_rate", "progress_age", "progress_rejected_lines"; `detail`
// names the field), or nothing. A refused progress is dropped alone: the
// report's status still counts.
std::optional<Refusal> CheckPodProgress(const api::PodProgress& progress);

// Checks a node registration: name a DNS-1123 subdomain, address an IP
// literal, labels valid Kubernetes labels, taints valid, capacity valid
// quantities within MaxNodeResource (the message names the resource, the
// value and the limit), each list bounded. Restricted labels are not
// refused here: the hub drops them (DropRestrictedLabels).
// kInvalidArgument naming the field ("hello.node.labels[...]") otherwise.
absl::Status ValidateRegistration(const api::NodeRegistration& node);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_AGENT_INPUT_H_
