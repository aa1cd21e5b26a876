#ifndef JOBSET_API_RESILIENCE_ANNOTATIONS_H_
#define JOBSET_API_RESILIENCE_ANNOTATIONS_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/field_errors.h"
#include "google/protobuf/map.h"

// jobsetd's resilience annotations on a JobSet (jobsetd's addition, not
// upstream JobSet's; docs/resilience.md):
//   jobsetd.io/progress-timeout: "10m"     hang detection: fail the attempt
//                                          when no pod's step advanced for
//                                          this long (after the first step)
//   jobsetd.io/straggler-threshold: "0.7"  straggler detection: a pod whose
//                                          step rate stays below this
//                                          fraction of the gang's median...
//   jobsetd.io/straggler-window: "2m"      ...for this long is a straggler
//   jobsetd.io/straggler-action: Replace   Flag (the default: an event and a
//                                          condition) or Replace the pod
// Durations are Go durations ("90s", "1h30m"). The functions are pure.

namespace jobset::api {

inline constexpr absl::string_view kProgressTimeoutAnnotation =
    "jobsetd.io/progress-timeout";
inline constexpr absl::string_view kStragglerThresholdAnnotation =
    "jobsetd.io/straggler-threshold";
inline constexpr absl::string_view kStragglerWindowAnnotation =
    "jobsetd.io/straggler-window";
inline constexpr absl::string_view kStragglerActionAnnotation =
    "jobsetd.io/straggler-action";

// The bounds of the values above.
inline constexpr absl::Duration kMaxProgressTimeout = absl::Hours(24 * 7);
inline constexpr absl::Duration kMinStragglerWindow = absl::Seconds(10);
inline constexpr absl::Duration kMaxStragglerWindow = absl::Hours(24);
inline constexpr absl::Duration kDefaultStragglerWindow = absl::Minutes(2);

// What to do with a pod found to be a straggler.
enum class StragglerAction {
  kFlag,     // "Flag": an event and a condition on the JobSet only
  kReplace,  // "Replace": also stop the pod and place it again elsewhere
};

// Returns "Flag" or "Replace".
absl::string_view StragglerActionName(StragglerAction action);

// A JobSet's resilience settings, read from its annotations. Unset fields
// turn the detection off; the others carry their defaults.
struct ResilienceSpec {
  // Hang detection, when set: (0, kMaxProgressTimeout].
  std::optional<absl::Duration> progress_timeout{};
  // Straggler detection, when set: in (0, 1).
  std::optional<double> straggler_threshold{};
  // Meaningful with straggler_threshold: [kMinStragglerWindow,
  // kMaxStragglerWindow].
  absl::Duration straggler_window = kDefaultStragglerWindow;
  StragglerAction straggler_action = StragglerAction::kFlag;

  bool operator==(const ResilienceSpec&) const = default;
};

// Checks the four annotations in `annotations` (other keys are not looked
// at) and reports each bad one under `path` (the annotations' path,
// "metadata.annotations"), e.g.
//   metadata.annotations[jobsetd.io/progress-timeout]: Invalid value: "x":
//   must be a duration greater than 0 and at most 168h, such as "10m"
// jobsetd.io/straggler-window and jobsetd.io/straggler-action are forbidden
// without jobsetd.io/straggler-threshold (they would do nothing).
void ValidateResilienceAnnotations(
    const google::protobuf::Map<std::string, std::string>& annotations,
    absl::string_view path, FieldErrors* errors);

// Returns the settings the annotations ask for (defaults where absent), or
// kInvalidArgument with every problem ValidateResilienceAnnotations reports.
absl::StatusOr<ResilienceSpec> ParseResilienceSpec(
    const google::protobuf::Map<std::string, std::string>& annotations);

}  // namespace jobset::api

#endif  // JOBSET_API_RESILIENCE_ANNOTATIONS_H_
