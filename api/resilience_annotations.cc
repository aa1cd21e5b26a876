#include "api/resilience_annotations.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace jobset::api {
namespace {

using AnnotationMap = google::protobuf::Map<std::string, std::string>;

constexpr absl::string_view kFlag = "Flag";
constexpr absl::string_view kReplace = "Replace";
constexpr absl::string_view kActions[] = {kFlag, kReplace};
// A threshold is a short decimal ("0.7", ".75"): no exponent, sign, hex,
// "nan" or "inf", which absl::SimpleAtod would take.
constexpr size_t kMaxThresholdLength = 32;

const std::string* Find(const AnnotationMap& annotations,
                        absl::string_view key) {
  auto it = annotations.find(std::string(key));
  return it == annotations.end() ? nullptr : &it->second;
}

// Returns the Go duration `value` when it lies in [min, max] (and is not
// zero when `min` is zero: every duration here must be positive).
std::optional<absl::Duration> ParseBoundedDuration(absl::string_view value,
                                                   absl::Duration min,
                                                   absl::Duration max) {
  absl::Duration d;
  if (!absl::ParseDuration(value, &d) || d == absl::InfiniteDuration() ||
      d <= absl::ZeroDuration() || d < min || d > max) {
    return std::nullopt;
  }
  return d;
}

std::optional<double> ParseThreshold(absl::string_view value) {
  if (value.empty() || value.size() > kMaxThresholdLength) return std::nullopt;
  int digits = 0;
  int dots = 0;
  for (char c : value) {
    if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      ++digits;
    } else if (c == '.') {
      ++dots;
    } else {
      return std::nullopt;
    }
  }
  double t = 0;
  if (digits == 0 || dots > 1 || !absl::SimpleAtod(value, &t) || t <= 0 ||
      t >= 1) {
    return std::nullopt;
  }
  return t;
}

// Reads the annotations into a spec, reporting every bad one to `errors`.
ResilienceSpec Read(const AnnotationMap& annotations, absl::string_view path,
                    FieldErrors* errors) {
  ResilienceSpec spec;
  if (const std::string* v = Find(annotations, kProgressTimeoutAnnotation)) {
    spec.progress_timeout =
        ParseBoundedDuration(*v, absl::ZeroDuration(), kMaxProgressTimeout);
    if (!spec.progress_timeout) {
      errors->Invalid(Key(path, kProgressTimeoutAnnotation), *v,
                      "must be a duration greater than 0 and at most 168h, "
                      "such as \"10m\" (jobsetd's progress timeout)");
    }
  }
  const std::string* threshold =
      Find(annotations, kStragglerThresholdAnnotation);
  if (threshold != nullptr) {
    spec.straggler_threshold = ParseThreshold(*threshold);
    if (!spec.straggler_threshold) {
      errors->Invalid(Key(path, kStragglerThresholdAnnotation), *threshold,
                      "must be a decimal greater than 0 and less than 1, "
                      "such as \"0.7\" (a fraction of the gang's median step "
                      "rate)");
    }
  }
  const std::string without_threshold =
      absl::StrCat("only with ", kStragglerThresholdAnnotation);
  if (const std::string* v = Find(annotations, kStragglerWindowAnnotation)) {
    if (threshold == nullptr) {
      errors->Forbidden(Key(path, kStragglerWindowAnnotation),
                        without_threshold);
    } else if (std::optional<absl::Duration> window = ParseBoundedDuration(
                   *v, kMinStragglerWindow, kMaxStragglerWindow)) {
      spec.straggler_window = *window;
    } else {
      errors->Invalid(Key(path, kStragglerWindowAnnotation), *v,
                      "must be a duration from 10s to 24h, such as \"2m\"");
    }
  }
  if (const std::string* v = Find(annotations, kStragglerActionAnnotation)) {
    if (threshold == nullptr) {
      errors->Forbidden(Key(path, kStragglerActionAnnotation),
                        without_threshold);
    } else if (*v == kReplace) {
      spec.straggler_action = StragglerAction::kReplace;
    } else if (*v != kFlag) {
      errors->NotSupported(Key(path, kStragglerActionAnnotation), *v, kActions);
    }
  }
  return spec;
}

}  // namespace

absl::string_view StragglerActionName(StragglerAction action) {
  return action == StragglerAction::kReplace ? kReplace : kFlag;
}

void ValidateResilienceAnnotations(const AnnotationMap& annotations,
                                   absl::string_view path,
                                   FieldErrors* errors) {
  Read(annotations, path, errors);
}

absl::StatusOr<ResilienceSpec> ParseResilienceSpec(
    const AnnotationMap& annotations) {
  FieldErrors errors;
  ResilienceSpec spec = Read(annotations, "metadata.annotations", &errors);
  if (!errors.empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(
        errors.errors(), "; ", [](std::string* out, const FieldError& e) {
          out->append(e.ToString());
        }));
  }
  return spec;
}

}  // namespace jobset::api
