#include "scheduler/metered_store.h"

#include "absl/time/time.h"
#include "common/clock.h"

namespace jobset::scheduler {

absl::StatusOr<int64_t> MeteredStore::Commit(const store::Batch& batch) {
  const Stopwatch commit_time;
  absl::StatusOr<int64_t> revision = ForwardingStore::Commit(batch);
  metrics_->commit_seconds.Observe(
      absl::ToDoubleSeconds(commit_time.Elapsed()));
  if (revision.ok()) {
    size_t bytes = 0;
    for (const store::Batch::Op& op : batch.ops()) {
      bytes += op.key.size() + (op.value.has_value() ? op.value->size() : 0);
    }
    metrics_->commit_bytes.Increment(static_cast<double>(bytes));
  }
  return revision;
}

}  // namespace jobset::scheduler
