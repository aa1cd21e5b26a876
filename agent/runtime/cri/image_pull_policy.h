#ifndef JOBSET_AGENT_RUNTIME_CRI_IMAGE_PULL_POLICY_H_
#define JOBSET_AGENT_RUNTIME_CRI_IMAGE_PULL_POLICY_H_

// kubelet's image manager decisions for one container's image
// (k8s:pkg/kubelet/images/image_manager.go, EnsureImageExists), as pure
// functions of what the CRI runtime said and of `now`: the pull policy, the
// pull back-off, the waiting reason and message, and the events a pod shows
// for them. ImagePuller (image_puller.h) does the I/O they decide. No I/O, no
// clock. Thread-compatible.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/agent.pb.h"

namespace jobset::agent::cri {

enum class PullPolicy { kAlways, kIfNotPresent, kNever };

// Returns the pull policy of a container with `image` and imagePullPolicy
// `policy`: Always, Never, IfNotPresent (any other value reads as
// IfNotPresent); "" is Kubernetes' default for the image (Always for a
// ":latest" or untagged image, else IfNotPresent).
PullPolicy PullPolicyOf(absl::string_view policy, absl::string_view image);

// Returns an event of `type` ("Normal", "Warning") for `reason`.
api::PodEvent MakePodEvent(absl::string_view type, absl::string_view reason,
                           std::string message);

// What to do next about a container's image.
struct ImageStep {
  enum class Action {
    kReady,  // the image is present: the container may be created
    kWait,   // the container waits, with `reason` and `message`
    kPull,   // pull the image (then PullFailed or Pulled)
  };
  Action action = Action::kWait;
  std::string reason;
  std::string message;
  // The events to record, oldest first.
  std::vector<api::PodEvent> events;
};

// One container's image as kubelet's image manager tracks it: its pull
// policy, its pull back-off (per pod and image: after a failed pull none
// until `backoff_start` has passed, doubling with each failure in a row to
// `backoff_cap`; a pull that works resets it), and the waiting reason (or
// "Pulled") its events last told of, so that an event is recorded once per
// change (a failed pull's every time). Thread-compatible.
class ImagePullState {
 public:
  // `image` as the container spec gives it (what messages quote).
  ImagePullState(std::string image, PullPolicy policy,
                 absl::Duration backoff_start, absl::Duration backoff_cap);

  // Whether Decide needs to know if the image is present (every policy but
  // Always, which pulls without looking).
  bool ChecksPresence() const { return policy_ != PullPolicy::kAlways; }

  // The image reference does not parse (`error` says why): waits with
  // InvalidImageName; events InspectFailed and Failed.
  ImageStep InvalidName(absl::string_view error);
  // ImageStatus failed with `error`: waits with ImageInspectError (no event).
  ImageStep InspectFailed(absl::string_view error) const;
  // Decides at `now`, `present` saying whether the image is on the node
  // (nullopt when not looked: ChecksPresence is false). Present: kReady
  // (event Pulled "already present"). Absent under Never: waits with
  // ErrImageNeverPull. In back-off: waits with ImagePullBackOff (events
  // BackOff and Failed). Otherwise kPull (event Pulling).
  ImageStep Decide(std::optional<bool> present, absl::Time now);
  // The pull ended at `now` with `error`: waits with ErrImagePull (events
  // Failed, Failed), the back-off doubled.
  ImageStep PullFailed(absl::string_view error, absl::Time now);
  // The pull worked in `took`: kReady (event Pulled "Successfully pulled"),
  // the back-off reset.
  ImageStep Pulled(absl::Duration took);
  // The pulled image is not there when looked at: waits with ErrImagePull
  // (no event).
  ImageStep MissingAfterPull() const;

  // When the back-off lets the next pull start (InfinitePast: now).
  absl::Time next_pull() const { return next_pull_; }

 private:
  // A kWait step with `reason` and `message`; `events` only when the
  // reason differs from the last one told.
  ImageStep Wait(absl::string_view reason, std::string message,
                 std::vector<api::PodEvent> events);

  std::string image_;
  PullPolicy policy_;
  absl::Duration backoff_start_;
  absl::Duration backoff_cap_;
  absl::Time next_pull_ = absl::InfinitePast();
  absl::Duration delay_ = absl::ZeroDuration();
  std::string last_error_;
  std::string last_event_reason_;
};

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_IMAGE_PULL_POLICY_H_
