#ifndef JOBSET_AGENT_RUNTIME_SUB_PATH_H_
#define JOBSET_AGENT_RUNTIME_SUB_PATH_H_

// Resolving a volume mount's subPath beneath its volume, so that a symlink a
// container planted in the volume (an emptyDir an init container wrote)
// cannot redirect a later mount out of it. Thread-compatible.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace jobset::agent {

enum class BeneathResolver {
  // openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS): symlinks that stay
  // inside the volume are followed; falls back to kWalk on ENOSYS.
  kOpenat2,
  // One component at a time with O_NOFOLLOW: every symlink is refused.
  kWalk,
};

// Opens `sub_path` beneath directory `root` (an O_PATH fd, close-on-exec,
// the caller's to close), creating missing components as directories (mode
// 0700), as the kubelet creates a missing subPath. kInvalidArgument naming
// `field` when the path is not a relative path beneath `root` or resolves out
// of it; kNotFound / kInternal for what the file system says.
absl::StatusOr<int> OpenBeneath(
    const std::string& root, absl::string_view sub_path,
    absl::string_view field,
    BeneathResolver resolver = BeneathResolver::kOpenat2);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_SUB_PATH_H_
