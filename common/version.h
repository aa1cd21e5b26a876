#ifndef JOBSET_COMMON_VERSION_H_
#define JOBSET_COMMON_VERSION_H_

#include "absl/strings/string_view.h"

// The version of this build of jobsetd, jobset-agent and jobsetctl, as
// `jobsetctl version` shows it (Kubernetes' version.Info fields).
namespace jobset {

inline constexpr absl::string_view kVersionMajor = "0";
inline constexpr absl::string_view kVersionMinor = "1";
inline constexpr absl::string_view kGitVersion = "v0.1.0";

#if defined(__x86_64__)
inline constexpr absl::string_view kPlatform = "linux/amd64";
#elif defined(__aarch64__)
inline constexpr absl::string_view kPlatform = "linux/arm64";
#else
inline constexpr absl::string_view kPlatform = "linux/unknown";
#endif

}  // namespace jobset

#endif  // JOBSET_COMMON_VERSION_H_
