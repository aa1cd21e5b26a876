#ifndef JOBSET_SCHEDULER_RESILIENCE_PROGRESS_H_
#define JOBSET_SCHEDULER_RESILIENCE_PROGRESS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

// What jobsetd knows of a pod's training progress: the step, checkpoint step
// and step rate its trainer reports through the agent, and when jobsetd saw
// them, on jobsetd's clock. The controller keeps one PodProgress per pod of
// the current restart attempt (a new attempt starts from nothing) and hands
// them to the detectors (hang_detector.h, straggler_detector.h).

namespace jobset::scheduler::resilience {

// One progress heartbeat of one pod, as the agent relays it.
struct ProgressReport {
  int64_t step = 0;
  // The step of the last checkpoint the trainer saved, when it says.
  std::optional<int64_t> checkpoint_step{};
  // The step rate the agent measured, in steps per second, when it did.
  std::optional<double> steps_per_second{};
};

// One pod's progress in the current restart attempt.
struct PodProgress {
  std::string pod{};
  // The last step reported; unset until the pod reports one.
  std::optional<int64_t> step{};
  std::optional<int64_t> checkpoint_step{};
  // When jobsetd saw `step` change last (set with the first step): the
  // pod's last progress.
  absl::Time advanced_at = absl::InfinitePast();
  // The last rate reported, finite and at least 0.
  std::optional<double> steps_per_second{};
  // When the last report arrived.
  absl::Time reported_at = absl::InfinitePast();
};

// Folds `report`, received at `now`, into `progress`. A step that differs
// from the last one is progress (a lower one too: the trainer went back to
// a checkpoint without a new attempt, and is alive). A `now` before the last
// report is taken as the last report's time (jobsetd's clock went back; no
// time runs backwards here). Returns false, changing nothing, for a report
// that cannot be true: a negative step or checkpoint step, a checkpoint
// beyond the step, or a rate that is negative, NaN or infinite.
bool ObserveProgress(const ProgressReport& report, absl::Time now,
                     PodProgress* progress);

// How many items a message lists before "and N more".
inline constexpr int kMaxListedPods = 10;

// Joins `listed` (the first items of a longer list) with ", " and, when
// `total` is larger, appends " and N more" (N = total - listed.size()):
// "a, b and 5 more".
std::string JoinListed(absl::Span<const std::string> listed, int64_t total);

// Formats a step rate for a message: "1.25 steps/s".
std::string FormatRate(double steps_per_second);

}  // namespace jobset::scheduler::resilience

#endif  // JOBSET_SCHEDULER_RESILIENCE_PROGRESS_H_
