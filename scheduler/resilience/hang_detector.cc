#include "scheduler/resilience/hang_detector.h"

#include <algorithm>
#include <cstddef>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace jobset::scheduler::resilience {

HangVerdict DetectHang(absl::Span<const PodProgress> pods,
                       absl::Duration timeout, absl::Time now) {
  HangVerdict verdict;
  if (timeout <= absl::ZeroDuration()) return verdict;
  for (const PodProgress& pod : pods) {
    if (pod.step.has_value()) {
      verdict.armed = true;
      verdict.last_progress = std::max(verdict.last_progress, pod.advanced_at);
    }
  }
  if (!verdict.armed) return verdict;
  const absl::Time deadline = verdict.last_progress + timeout;
  if (now < deadline) {
    verdict.next_check = deadline;
    return verdict;
  }
  verdict.stalled = true;

  // Only the listed pods are sorted: a 15,000-pod gang costs one partial
  // sort, not a full one.
  std::vector<const PodProgress*> order;
  order.reserve(pods.size());
  for (const PodProgress& pod : pods) order.push_back(&pod);
  const size_t listed =
      std::min(order.size(), static_cast<size_t>(kMaxListedPods));
  std::partial_sort(order.begin(), order.begin() + listed, order.end(),
                    [](const PodProgress* a, const PodProgress* b) {
                      return std::tie(a->step, a->pod) <
                             std::tie(b->step, b->pod);
                    });
  std::vector<std::string> names;
  for (size_t i = 0; i < listed; ++i) {
    const PodProgress& pod = *order[i];
    verdict.pods.push_back(StalledPod{pod.pod, pod.step});
    names.push_back(pod.step.has_value()
                        ? absl::StrCat(pod.pod, " at step ", *pod.step)
                        : absl::StrCat(pod.pod, " with no step"));
  }
  verdict.more_pods = static_cast<int64_t>(order.size() - listed);
  verdict.message =
      absl::StrCat("no pod's step advanced for ",
                   absl::FormatDuration(absl::Trunc(now - verdict.last_progress,
                                                    absl::Milliseconds(1))),
                   " (progress timeout ", absl::FormatDuration(timeout),
                   "): ", JoinListed(names, static_cast<int64_t>(pods.size())));
  return verdict;
}

}  // namespace jobset::scheduler::resilience
