#ifndef JOBSET_SCHEDULER_AGENTS_REFUSALS_H_
#define JOBSET_SCHEDULER_AGENTS_REFUSALS_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace jobset::scheduler {

struct SchedulerMetrics;  // scheduler/metrics.h

// The hub's count of what it turned away: refused input (agent_input.h: a
// report or registration over a limit or malformed, a foreign pod) counted
// by reason and logged at most once per kWarningInterval, and fenced
// reports (about pods not in the node's desired set). Thread-compatible
// (the hub guards it with its lock).
class Refusals {
 public:
  static constexpr absl::Duration kWarningInterval = absl::Seconds(10);

  // Null `metrics`: counted here only.
  explicit Refusals(SchedulerMetrics* metrics) : metrics_(metrics) {}

  // Counts a refusal by `reason` at `now` and logs it, rate-limited.
  void Refused(absl::string_view reason, absl::string_view detail,
               absl::Time now);
  // Counts a fenced report.
  void Fenced();

  int64_t refused() const { return refused_; }
  int64_t fenced() const { return fenced_; }
  // Refusals not logged since the last line.
  int64_t unlogged() const { return unlogged_; }

 private:
  SchedulerMetrics* const metrics_;
  int64_t refused_ = 0;
  int64_t fenced_ = 0;
  absl::Time last_warning_ = absl::InfinitePast();
  int64_t unlogged_ = 0;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_REFUSALS_H_
