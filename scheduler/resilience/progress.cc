#include "scheduler/resilience/progress.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace jobset::scheduler::resilience {

bool ObserveProgress(const ProgressReport& report, absl::Time now,
                     PodProgress* progress) {
  if (report.step < 0) return false;
  if (report.checkpoint_step.has_value() &&
      (*report.checkpoint_step < 0 || *report.checkpoint_step > report.step)) {
    return false;
  }
  if (report.steps_per_second.has_value() &&
      (!std::isfinite(*report.steps_per_second) ||
       *report.steps_per_second < 0)) {
    return false;
  }
  now = std::max(now, progress->reported_at);
  if (progress->step != report.step) {
    progress->step = report.step;
    progress->advanced_at = now;
  }
  if (report.checkpoint_step.has_value()) {
    progress->checkpoint_step = report.checkpoint_step;
  }
  if (report.steps_per_second.has_value()) {
    progress->steps_per_second = report.steps_per_second;
  }
  progress->reported_at = now;
  return true;
}

std::string JoinListed(absl::Span<const std::string> listed, int64_t total) {
  std::string out = absl::StrJoin(listed, ", ");
  const int64_t more = total - static_cast<int64_t>(listed.size());
  if (more > 0)
    absl::StrAppend(&out, listed.empty() ? "" : " and ", more, " more");
  return out;
}

std::string FormatRate(double steps_per_second) {
  return absl::StrFormat("%.3g steps/s", steps_per_second);
}

}  // namespace jobset::scheduler::resilience
