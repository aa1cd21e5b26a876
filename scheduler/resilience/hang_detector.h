#ifndef JOBSET_SCHEDULER_RESILIENCE_HANG_DETECTOR_H_
#define JOBSET_SCHEDULER_RESILIENCE_HANG_DETECTOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "scheduler/resilience/progress.h"

// Hang detection (jobsetd.io/progress-timeout): a restart attempt is
// stalled when no pod's step advanced for the timeout. The rule is armed
// only once some pod of the attempt has reported a step, so that a slow
// start (image pulls, loading a checkpoint, compiling) is never a hang; a
// trainer that reports nothing is never judged.

namespace jobset::scheduler::resilience {

// The reason of the JobSet condition and event for a stalled attempt.
inline constexpr absl::string_view kProgressStalledReason = "ProgressStalled";

// A pod of a stalled attempt and the step it stopped at.
struct StalledPod {
  std::string pod{};
  std::optional<int64_t> step{};  // unset: it never reported one
  bool operator==(const StalledPod&) const = default;
};

struct HangVerdict {
  // Some pod reported a step and the timeout is positive.
  bool armed = false;
  // Armed, and `now` is at least last_progress + timeout.
  bool stalled = false;
  // The latest time any pod's step advanced (InfinitePast when not armed).
  absl::Time last_progress = absl::InfinitePast();
  // When to look again if no report comes first: last_progress + timeout
  // while armed and not stalled; InfiniteFuture otherwise (only a report
  // can change the verdict).
  absl::Time next_check = absl::InfiniteFuture();
  // When stalled: the first kMaxListedPods pods, lowest step first (no step
  // lowest), then by name; `more_pods` counts the rest.
  std::vector<StalledPod> pods{};
  int64_t more_pods = 0;
  // When stalled: the condition's and event's message, e.g.
  //   no pod's step advanced for 12m (progress timeout 10m): w-1 at step 7,
  //   w-0 at step 8 and 14 more
  std::string message{};
};

// Judges one attempt from its pods' progress (PodProgress::step and
// advanced_at are read) at `now`. A timeout of zero or less disarms it.
// A `now` before the last progress (the clock went back) is not stalled.
HangVerdict DetectHang(absl::Span<const PodProgress> pods,
                       absl::Duration timeout, absl::Time now);

}  // namespace jobset::scheduler::resilience

#endif  // JOBSET_SCHEDULER_RESILIENCE_HANG_DETECTOR_H_
