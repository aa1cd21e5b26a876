#ifndef JOBSET_AGENT_RUNTIME_HOST_PATH_H_
#define JOBSET_AGENT_RUNTIME_HOST_PATH_H_

// A hostPath volume's path, checked on the host before it is used.
//
// jobsetd admits a hostPath by comparing its text with --allowed_host_paths
// (api/pod_security.h), while a bind mount follows symbolic links: with
// /datasets allowed, /datasets/x -> /etc would mount /etc. The agent
// therefore refuses a hostPath any existing component of which is a link, so
// that the path jobsetd compared is the path mounted.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace jobset::agent {

// Checks that `path` (a hostPath volume's) names the real path on this host:
// absolute, no "." or ".." component, and no component that exists is a
// symbolic link. Walks from "/" one component at a time with
// openat(O_PATH | O_NOFOLLOW) relative to the one before, so a link is never
// followed (openat2's RESOLVE_NO_SYMLINKS, by hand). The components after the
// first that does not exist are not checked: nothing is there to follow yet
// (DirectoryOrCreate makes them under the checked prefix). kInvalidArgument
// naming the path and the link, e.g.
//   hostPath "/datasets/x/y": "/datasets/x" is a symbolic link (hostPath
//   must name the real path: --allowed_host_paths compares the text)
// Thread-safe.
absl::Status CheckHostPathHasNoSymlinks(absl::string_view path);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_HOST_PATH_H_
