#include "scheduler/records/conditions.h"

namespace jobset::scheduler {

const api::Condition* FindCondition(const Conditions& conditions,
                                    absl::string_view type) {
  for (const api::Condition& c : conditions) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

bool IsConditionTrue(const Conditions& conditions, absl::string_view type) {
  const api::Condition* c = FindCondition(conditions, type);
  return c != nullptr && c->status() == "True";
}

bool UpdateCondition(Conditions* conditions, absl::string_view type,
                     bool status, absl::string_view reason,
                     absl::string_view message, absl::Time now) {
  const char* status_text = status ? "True" : "False";
  api::Condition* existing = nullptr;
  for (api::Condition& c : *conditions) {
    if (c.type() == type) existing = &c;
  }
  if (existing == nullptr) {
    if (!status) return false;
    existing = conditions->Add();
    existing->set_type(std::string(type));
  } else if (existing->status() == status_text &&
             existing->reason() == reason && existing->message() == message) {
    return false;
  }
  // An empty text stays unset, which costs no allocation (a pod's
  // PodScheduled condition, for one, has neither).
  if (!reason.empty() || !existing->reason().empty())
    existing->set_reason(std::string(reason));
  if (!message.empty() || !existing->message().empty())
    existing->set_message(std::string(message));
  if (existing->status() == status_text) return true;
  existing->set_status(status_text);
  existing->mutable_last_transition_time()->set_seconds(
      absl::ToUnixSeconds(now));
  existing->mutable_last_transition_time()->set_nanos(0);
  return true;
}

bool SetCondition(Conditions* conditions, absl::string_view type, bool status,
                  absl::string_view reason, absl::string_view message,
                  absl::Time now) {
  if (!status && FindCondition(*conditions, type) == nullptr) {
    api::Condition* c = conditions->Add();
    c->set_type(std::string(type));
    c->set_status("False");
    c->set_reason(std::string(reason));
    c->set_message(std::string(message));
    c->mutable_last_transition_time()->set_seconds(absl::ToUnixSeconds(now));
    return true;
  }
  return UpdateCondition(conditions, type, status, reason, message, now);
}

absl::Time TransitionTime(const api::Condition& condition) {
  return absl::FromUnixSeconds(condition.last_transition_time().seconds()) +
         absl::Nanoseconds(condition.last_transition_time().nanos());
}

}  // namespace jobset::scheduler
