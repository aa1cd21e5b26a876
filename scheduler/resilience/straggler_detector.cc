#include "scheduler/resilience/straggler_detector.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace jobset::scheduler::resilience {
namespace {

// The median of `rates` (not empty); reorders them.
double Median(std::vector<double>& rates) {
  const size_t mid = rates.size() / 2;
  std::nth_element(rates.begin(), rates.begin() + mid, rates.end());
  const double upper = rates[mid];
  if (rates.size() % 2 == 1) return upper;
  // The lower middle is the largest of the lower half.
  const double lower = *std::max_element(rates.begin(), rates.begin() + mid);
  return lower / 2 + upper / 2;
}

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%SZ", t, absl::UTCTimeZone());
}

}  // namespace

StragglerPass DetectStragglers(const StragglerState& state,
                               absl::Span<const PodProgress> pods,
                               const StragglerConfig& config, absl::Time now) {
  StragglerPass pass;
  now = std::max(now, state.last_pass);
  pass.state.last_pass = now;
  StragglerVerdict& verdict = pass.verdict;
  if (!(config.threshold > 0 && config.threshold < 1) ||
      config.window <= absl::ZeroDuration()) {
    verdict.not_judged = "straggler detection is off";
    return pass;
  }
  if (pods.size() < 2) {
    verdict.not_judged =
        pods.empty() ? "no pods" : "1 pod has no gang to compare with";
    return pass;
  }
  std::vector<double> rates;
  rates.reserve(pods.size());
  for (const PodProgress& pod : pods) {
    if (pod.steps_per_second.has_value() &&
        now - pod.reported_at <= config.window) {
      rates.push_back(*pod.steps_per_second);
    }
  }
  if (rates.size() < pods.size()) {
    verdict.not_judged =
        absl::StrCat(pods.size() - rates.size(), " of ", pods.size(),
                     " pods report no fresh step rate");
    return pass;
  }
  verdict.median = Median(rates);
  if (!(verdict.median > 0)) {
    verdict.median = 0;
    verdict.not_judged = "the median step rate is 0";
    return pass;
  }
  verdict.judged = true;

  const double limit = config.threshold * verdict.median;
  for (const PodProgress& pod : pods) {
    const double rate = *pod.steps_per_second;
    if (rate >= limit) continue;  // back above (or never below): forgotten
    auto it = state.below.find(pod.pod);
    StragglerState::Below below;
    below.since = now;
    if (it != state.below.end()) below = it->second;
    if (now - below.since >= config.window) {
      verdict.flagged.push_back(StragglerFinding{
          pod.pod, rate, below.since, /*newly_flagged=*/!below.flagged});
      below.flagged = true;
    } else {
      verdict.next_check =
          std::min(verdict.next_check, below.since + config.window);
    }
    pass.state.below[pod.pod] = below;
  }
  if (verdict.flagged.empty()) return pass;

  std::sort(verdict.flagged.begin(), verdict.flagged.end(),
            [](const StragglerFinding& a, const StragglerFinding& b) {
              return std::tie(a.steps_per_second, a.pod) <
                     std::tie(b.steps_per_second, b.pod);
            });
  std::vector<std::string> listed;
  for (const StragglerFinding& f : verdict.flagged) {
    if (listed.size() == static_cast<size_t>(kMaxListedPods)) break;
    listed.push_back(absl::StrCat(f.pod, " at ", FormatRate(f.steps_per_second),
                                  " since ", Rfc3339(f.below_since)));
  }
  verdict.message = absl::StrCat(
      "step rate below ", config.threshold, " x the gang's median ",
      FormatRate(verdict.median), " for ", absl::FormatDuration(config.window),
      ": ", JoinListed(listed, static_cast<int64_t>(verdict.flagged.size())));
  return pass;
}

}  // namespace jobset::scheduler::resilience
