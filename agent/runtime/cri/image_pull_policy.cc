#include "agent/runtime/cri/image_pull_policy.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/image_reference.h"

namespace jobset::agent::cri {

PullPolicy PullPolicyOf(absl::string_view policy, absl::string_view image) {
  if (policy.empty()) policy = api::DefaultPullPolicy(image);
  if (policy == api::kPullAlways) return PullPolicy::kAlways;
  if (policy == api::kPullNever) return PullPolicy::kNever;
  return PullPolicy::kIfNotPresent;
}

api::PodEvent MakePodEvent(absl::string_view type, absl::string_view reason,
                           std::string message) {
  api::PodEvent e;
  e.set_type(std::string(type));
  e.set_reason(std::string(reason));
  e.set_message(std::move(message));
  return e;
}

ImagePullState::ImagePullState(std::string image, PullPolicy policy,
                               absl::Duration backoff_start,
                               absl::Duration backoff_cap)
    : image_(std::move(image)),
      policy_(policy),
      backoff_start_(backoff_start),
      backoff_cap_(backoff_cap) {}

ImageStep ImagePullState::Wait(absl::string_view reason, std::string message,
                               std::vector<api::PodEvent> events) {
  ImageStep step;
  step.action = ImageStep::Action::kWait;
  step.reason = std::string(reason);
  step.message = std::move(message);
  if (last_event_reason_ != reason) step.events = std::move(events);
  last_event_reason_ = std::string(reason);
  return step;
}

ImageStep ImagePullState::InvalidName(absl::string_view error) {
  std::string message =
      absl::StrCat("Failed to apply default image tag \"", image_,
                   "\": couldn't parse image name \"", image_, "\": ", error);
  std::vector<api::PodEvent> events = {
      MakePodEvent("Warning", "InspectFailed", message),
      MakePodEvent("Warning", "Failed", "Error: InvalidImageName")};
  return Wait("InvalidImageName", std::move(message), std::move(events));
}

ImageStep ImagePullState::InspectFailed(absl::string_view error) const {
  ImageStep step;
  step.action = ImageStep::Action::kWait;
  step.reason = "ImageInspectError";
  step.message = std::string(error);
  return step;
}

ImageStep ImagePullState::Decide(std::optional<bool> present, absl::Time now) {
  if (ChecksPresence() && present.value_or(false)) {
    ImageStep step;
    step.action = ImageStep::Action::kReady;
    if (last_event_reason_ != "Pulled") {
      step.events.push_back(
          MakePodEvent("Normal", "Pulled",
                       absl::StrCat("Container image \"", image_,
                                    "\" already present on machine")));
    }
    last_event_reason_ = "Pulled";
    return step;
  }
  if (policy_ == PullPolicy::kNever) {
    std::string message =
        absl::StrCat("Container image \"", image_,
                     "\" is not present with pull policy of Never");
    std::vector<api::PodEvent> events = {
        MakePodEvent("Warning", "ErrImageNeverPull", message),
        MakePodEvent("Warning", "Failed", "Error: ErrImageNeverPull")};
    return Wait("ErrImageNeverPull", std::move(message), std::move(events));
  }
  if (now < next_pull_) {
    return Wait(
        "ImagePullBackOff",
        absl::StrCat("Back-off pulling image \"", image_,
                     "\": ErrImagePull: ", last_error_),
        {MakePodEvent("Normal", "BackOff",
                      absl::StrCat("Back-off pulling image \"", image_, "\"")),
         MakePodEvent("Warning", "Failed", "Error: ImagePullBackOff")});
  }
  ImageStep step;
  step.action = ImageStep::Action::kPull;
  step.events.push_back(MakePodEvent(
      "Normal", "Pulling", absl::StrCat("Pulling image \"", image_, "\"")));
  return step;
}

ImageStep ImagePullState::PullFailed(absl::string_view error, absl::Time now) {
  delay_ = delay_ == absl::ZeroDuration() ? backoff_start_
                                          : std::min(2 * delay_, backoff_cap_);
  next_pull_ = now + delay_;
  last_error_ = std::string(error);
  ImageStep step;
  step.action = ImageStep::Action::kWait;
  step.reason = "ErrImagePull";
  step.message = absl::StrCat("Failed to pull image \"", image_, "\": ", error);
  // Every failed pull is told, each with its error.
  step.events = {MakePodEvent("Warning", "Failed", step.message),
                 MakePodEvent("Warning", "Failed", "Error: ErrImagePull")};
  last_event_reason_ = step.reason;
  return step;
}

ImageStep ImagePullState::Pulled(absl::Duration took) {
  delay_ = absl::ZeroDuration();
  next_pull_ = absl::InfinitePast();
  ImageStep step;
  step.action = ImageStep::Action::kReady;
  step.events.push_back(MakePodEvent(
      "Normal", "Pulled",
      absl::StrCat(
          "Successfully pulled image \"", image_, "\" in ",
          absl::FormatDuration(absl::Trunc(took, absl::Milliseconds(1))))));
  last_event_reason_ = "Pulled";
  return step;
}

ImageStep ImagePullState::MissingAfterPull() const {
  ImageStep step;
  step.action = ImageStep::Action::kWait;
  step.reason = "ErrImagePull";
  step.message =
      absl::StrCat("image \"", image_, "\" is not present after its pull");
  return step;
}

}  // namespace jobset::agent::cri
