#ifndef JOBSET_SCHEDULER_PLACEMENT_PENDING_ORDER_H_
#define JOBSET_SCHEDULER_PLACEMENT_PENDING_ORDER_H_

// The order in which pending JobSets are offered to Place(), and the rule
// that keeps a big JobSet from starving behind smaller ones.
//
// Rule: pending JobSets are tried by priority (higher first), then
// submission time (older first), then key. A JobSet that does not fit is
// skipped and the ones behind it may still be placed (backfill), until it
// starves: once it has waited `max_wait` or been skipped `max_skips` times,
// nothing behind it is placed until it fits, so the capacity that frees up
// is kept for it. JobSets ahead of it (higher priority, or older) are still
// tried. A JobSet that could not fit even in an empty cluster never starves
// anyone: it is reported and skipped.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace jobset::scheduler::placement {

struct PendingJobSet {
  std::string key;  // "<namespace>/<name>"
  int32_t priority = 0;
  absl::Time submitted;  // when it became pending (creation, or restart)
  // How many times a JobSet behind it was placed while it did not fit. The
  // controller keeps this count, adding PendingPass::skipped after each pass.
  int32_t skips = 0;
};

struct PendingPolicy {
  absl::Duration max_wait = absl::Minutes(10);
  int32_t max_skips = 20;
};

// Returns the indexes of `pending` in the order to try them: priority
// descending, then submission ascending, then key.
std::vector<size_t> OrderPending(absl::Span<const PendingJobSet> pending);

// Returns whether a JobSet that does not fit now keeps everything behind it
// waiting: it has waited at least max_wait, or been skipped max_skips times.
bool IsStarving(const PendingJobSet& jobset, absl::Time now,
                const PendingPolicy& policy);

// What try_place answers for one JobSet.
enum class FitResult {
  kPlaced,     // placed; the caller has applied it to its working snapshot
  kNoRoomNow,  // does not fit now
  kNeverFits,  // would not fit even in an empty cluster
};

struct PendingPass {
  std::vector<size_t> placed;   // in the order they were placed
  std::vector<size_t> skipped;  // did not fit while one behind was placed
  // The starving JobSet that stopped the pass, if any.
  std::optional<size_t> blocked_by;
};

// Runs one scheduling pass: offers the pending JobSets to `try_place` in
// OrderPending order, applying the no-starvation rule above. Pure apart from
// try_place; `now` is the controller's clock reading.
PendingPass RunPendingPass(absl::Span<const PendingJobSet> pending,
                           absl::Time now, const PendingPolicy& policy,
                           absl::FunctionRef<FitResult(size_t)> try_place);

}  // namespace jobset::scheduler::placement

#endif  // JOBSET_SCHEDULER_PLACEMENT_PENDING_ORDER_H_
