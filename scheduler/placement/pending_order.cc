#include "scheduler/placement/pending_order.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <tuple>
#include <vector>

namespace jobset::scheduler::placement {

std::vector<size_t> OrderPending(absl::Span<const PendingJobSet> pending) {
  std::vector<size_t> order(pending.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const PendingJobSet& x = pending[a];
    const PendingJobSet& y = pending[b];
    return std::tie(y.priority, x.submitted, x.key) <
           std::tie(x.priority, y.submitted, y.key);
  });
  return order;
}

bool IsStarving(const PendingJobSet& jobset, absl::Time now,
                const PendingPolicy& policy) {
  return now - jobset.submitted >= policy.max_wait ||
         jobset.skips >= policy.max_skips;
}

PendingPass RunPendingPass(absl::Span<const PendingJobSet> pending,
                           absl::Time now, const PendingPolicy& policy,
                           absl::FunctionRef<FitResult(size_t)> try_place) {
  PendingPass pass;
  std::vector<size_t> waiting;  // did not fit, so far nothing placed behind
  for (size_t index : OrderPending(pending)) {
    const FitResult fit = try_place(index);
    if (fit == FitResult::kPlaced) {
      pass.placed.push_back(index);
      // Everything still waiting ahead of it was overtaken.
      pass.skipped.insert(pass.skipped.end(), waiting.begin(), waiting.end());
      waiting.clear();
      continue;
    }
    if (fit == FitResult::kNeverFits) continue;
    if (IsStarving(pending[index], now, policy)) {
      pass.blocked_by = index;
      break;
    }
    waiting.push_back(index);
  }
  return pass;
}

}  // namespace jobset::scheduler::placement
