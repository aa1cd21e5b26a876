#ifndef JOBSET_AGENT_RUNTIME_HOST_PATH_H_
#define JOBSET_AGENT_RUNTIME_HOST_PATH_H_

// A hostPath volume's path, checked on the host before it is used.
//
// jobsetd admits a hostPath by comparing its text with --allowed_host_paths
// (api/pod_security.h), while a bind mount follows symbolic links: with
// /datasets allowed, /datasets/x -> /etc would mount /etc. The agent
// therefore refuses a hostPath any existing component of which is a link, so
// that the path jobsetd compared is the path mounted; and, since another pod
// may replace a component with a link once it has been checked, it mounts
// the object it opened while checking (OpenHostPath), never the path again.

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/runtime/scoped_fd.h"

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

// Walks `path` as CheckHostPathHasNoSymlinks does, with the same refusals,
// and returns its last component open with O_PATH | O_CLOEXEC: the object
// checked, whatever becomes of the path later (a mount made from it binds
// that object; see ChildMount). kNotFound naming the first component that
// does not exist, e.g.
//   hostPath "/datasets/x/y": "/datasets/x" does not exist
// Thread-safe.
absl::StatusOr<ScopedFd> OpenHostPath(absl::string_view path);

// What OpenHostPath's walk makes where a component is missing.
enum class HostPathCreate {
  kDirectories,  // DirectoryOrCreate: each missing one, 0755 (os.MkdirAll)
  kFile,         // FileOrCreate: the last one, an empty 0644 file; its
                 // parents must exist (os.OpenFile), kInternal otherwise
};

// OpenHostPath that makes what is missing as it walks, each with mkdirat or
// openat(O_CREAT | O_EXCL | O_NOFOLLOW) in the directory it has open, so
// nothing is ever made through a link another pod swapped in (a link found
// after a race is refused as above). Returns the last component open.
// Thread-safe.
absl::StatusOr<ScopedFd> OpenOrCreateHostPath(absl::string_view path,
                                              HostPathCreate create);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_HOST_PATH_H_
