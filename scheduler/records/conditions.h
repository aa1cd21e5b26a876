#ifndef JOBSET_SCHEDULER_RECORDS_CONDITIONS_H_
#define JOBSET_SCHEDULER_RECORDS_CONDITIONS_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "proto/k8s.pb.h"

namespace jobset::scheduler {

using Conditions = google::protobuf::RepeatedPtrField<api::Condition>;

// Returns the condition of `type`, or nullptr.
const api::Condition* FindCondition(const Conditions& conditions,
                                    absl::string_view type);

// Returns whether the condition of `type` exists with status "True".
bool IsConditionTrue(const Conditions& conditions, absl::string_view type);

// Applies upstream's updateCondition to `conditions` and returns whether
// anything changed:
//   - a condition with status "False" is never added, only transitions an
//     existing one;
//   - a status change replaces the entry and sets lastTransitionTime to `now`;
//   - the same status with another reason or message updates those and keeps
//     lastTransitionTime;
//   - an identical condition is a no-op.
bool UpdateCondition(Conditions* conditions, absl::string_view type,
                     bool status, absl::string_view reason,
                     absl::string_view message, absl::Time now);

// Sets a condition the way Kubernetes' core controllers do for pods: like
// UpdateCondition, except that a condition with status "False" is added
// when absent.
bool SetCondition(Conditions* conditions, absl::string_view type, bool status,
                  absl::string_view reason, absl::string_view message,
                  absl::Time now);

// Returns the lastTransitionTime of `condition` as absl::Time.
absl::Time TransitionTime(const api::Condition& condition);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_RECORDS_CONDITIONS_H_
