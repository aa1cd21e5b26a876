#ifndef JOBSET_SCHEDULER_METERED_STORE_H_
#define JOBSET_SCHEDULER_METERED_STORE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "scheduler/metrics.h"
#include "store/forwarding_store.h"
#include "store/store.h"

namespace jobset::scheduler {

// A Store that times every commit and counts its bytes; every other call
// goes to `inner` unchanged. Thread-safe when `inner` is.
class MeteredStore final : public store::ForwardingStore {
 public:
  MeteredStore(store::Store* inner, SchedulerMetrics* metrics)
      : ForwardingStore(inner), metrics_(metrics) {}

  absl::StatusOr<int64_t> Commit(const store::Batch& batch) override;

 private:
  SchedulerMetrics* const metrics_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_METERED_STORE_H_
