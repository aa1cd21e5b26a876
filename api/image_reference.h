#ifndef JOBSET_API_IMAGE_REFERENCE_H_
#define JOBSET_API_IMAGE_REFERENCE_H_

// Container image references as Kubernetes reads them (the grammar of
// distribution's reference package, with Docker's normalization):
//   [domain[:port]/]path[/path...][:tag][@algorithm:hex]
// A name without a domain is on docker.io, and a one-component docker.io name
// is under library/ ("busybox" is "docker.io/library/busybox"). A reference
// with neither tag nor digest means ":latest" (kubelet's applyDefaultImageTag).

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jobset::api {

inline constexpr absl::string_view kPullAlways = "Always";
inline constexpr absl::string_view kPullIfNotPresent = "IfNotPresent";
inline constexpr absl::string_view kPullNever = "Never";
inline constexpr absl::string_view kPullPolicies[] = {
    kPullAlways, kPullIfNotPresent, kPullNever};

// The longest repository name (domain and path) the grammar allows.
inline constexpr size_t kMaxImageNameLength = 255;

struct ImageReference {
  std::string domain;  // "docker.io", "127.0.0.1:5000", "nvcr.io".
  std::string path;    // "library/busybox", "nvidia/pytorch".
  std::string tag;     // "" when the reference names none.
  std::string digest;  // "sha256:<64 hex>", or "".

  // domain/path.
  std::string Name() const;
  // The fully qualified reference kubelet hands the runtime: Name() with the
  // tag ("latest" when neither tag nor digest was given) and the digest.
  std::string Normalized() const;
};

// Parses `image`. INVALID_ARGUMENT names what is wrong ("invalid reference
// format: repository name must be lowercase"); kubelet reports such an image
// as InvalidImageName.
absl::StatusOr<ImageReference> ParseImageReference(absl::string_view image);

// Kubernetes' default imagePullPolicy (SetDefaults_Container): Always when the
// tag is "latest" (or implied: no tag and no digest), else IfNotPresent. An
// image that does not parse gets IfNotPresent, as upstream's does.
absl::string_view DefaultPullPolicy(absl::string_view image);

}  // namespace jobset::api

#endif  // JOBSET_API_IMAGE_REFERENCE_H_
