#include "scheduler/controller/ttl.h"

#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"

namespace jobset::scheduler {

std::optional<absl::Time> TtlExpiry(const api::JobSet& jobset) {
  if (!jobset.spec().has_ttl_seconds_after_finished()) return std::nullopt;
  for (const char* type : {kConditionCompleted, kConditionFailed}) {
    const api::Condition* c = FindCondition(jobset.status().conditions(), type);
    if (c != nullptr && c->status() == "True") {
      return TransitionTime(*c) +
             absl::Seconds(jobset.spec().ttl_seconds_after_finished());
    }
  }
  return std::nullopt;
}

}  // namespace jobset::scheduler
