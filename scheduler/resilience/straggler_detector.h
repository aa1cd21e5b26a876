#ifndef JOBSET_SCHEDULER_RESILIENCE_STRAGGLER_DETECTOR_H_
#define JOBSET_SCHEDULER_RESILIENCE_STRAGGLER_DETECTOR_H_

#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "scheduler/resilience/progress.h"

// Straggler detection (jobsetd.io/straggler-threshold, -window): a pod whose
// step rate stays below threshold x the gang's median rate for the whole
// window is a straggler. The gang is judged only when every pod of the
// attempt reports a fresh rate (one at most `window` old) and the median is
// above 0; a pass that cannot judge forgets who was below, so that a window
// is always observed whole. One pod alone has no gang and is never judged.
//
// The detector is a function of (state, pods, now) to (new state, verdict);
// the controller keeps the state per JobSet in memory between passes (it is
// not persisted: after a jobsetd restart a window starts again) and drops it
// with the attempt.

namespace jobset::scheduler::resilience {

// The reason of the JobSet condition and event for stragglers.
inline constexpr absl::string_view kStragglerReason = "Straggler";

struct StragglerConfig {
  // In (0, 1): api::ResilienceSpec::straggler_threshold.
  double threshold = 0.7;
  // Positive: api::ResilienceSpec::straggler_window.
  absl::Duration window = absl::Minutes(2);
};

// What the detector remembers between passes: the pods now below the
// threshold, since when, and whether they were reported. Small: one entry
// per pod below. Thread-compatible.
struct StragglerState {
  struct Below {
    absl::Time since{};
    bool flagged = false;
    bool operator==(const Below&) const = default;
  };
  std::map<std::string, Below> below{};
  // The latest `now` seen; an earlier one is taken as this.
  absl::Time last_pass = absl::InfinitePast();

  bool operator==(const StragglerState&) const = default;
};

struct StragglerFinding {
  std::string pod{};
  double steps_per_second = 0;
  // When it went below threshold x median.
  absl::Time below_since{};
  // Flagged in this pass for the first time (emit the event once).
  bool newly_flagged = false;
  bool operator==(const StragglerFinding&) const = default;
};

struct StragglerVerdict {
  // Every pod reported a fresh rate and the median is above 0.
  bool judged = false;
  // Why not judged: "no pods", "1 pod has no gang to compare with", "2 of
  // 8 pods report no fresh step rate", "the median step rate is 0".
  std::string not_judged{};
  double median = 0;
  // The stragglers, slowest first (then by name).
  std::vector<StragglerFinding> flagged{};
  // When a pod below the threshold completes its window, if no report
  // comes first; InfiniteFuture when none is on its way.
  absl::Time next_check = absl::InfiniteFuture();
  // When `flagged` is not empty, e.g.
  //   step rate below 0.7 x the gang's median 2 steps/s for 2m: w-3 at
  //   0.5 steps/s since 2024-05-01T10:00:00Z
  // (the first kMaxListedPods, then "and N more").
  std::string message{};
};

struct StragglerPass {
  StragglerState state;
  StragglerVerdict verdict;
};

// Judges the attempt's `pods` (one entry per pod of the attempt; steps_per_
// second and reported_at are read) at `now`, from `state` of the last pass.
StragglerPass DetectStragglers(const StragglerState& state,
                               absl::Span<const PodProgress> pods,
                               const StragglerConfig& config, absl::Time now);

}  // namespace jobset::scheduler::resilience

#endif  // JOBSET_SCHEDULER_RESILIENCE_STRAGGLER_DETECTOR_H_
