#ifndef JOBSET_AGENT_RUNTIME_PROGRESS_DIR_H_
#define JOBSET_AGENT_RUNTIME_PROGRESS_DIR_H_

// A pod's progress directory (docs/agent.md, "Progress heartbeats"; our
// addition): <pod_dir>/progress, private to the pod, where its containers
// write their training progress to the file $JOBSET_PROGRESS_FILE names and
// the agent reads it. The runtime makes it before the pod starts and shows
// it to every container: at /var/run/jobset/progress (oci, cri), or at its
// own host path (process mode, bound there in the pod's private root, as
// the pod's work dir is). Thread-compatible free functions.

#include <string>

#include "absl/status/status.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {

// The variable every container of a pod gets: the progress file's path as
// the container sees it.
inline constexpr char kProgressEnv[] = "JOBSET_PROGRESS_FILE";
// The directory, inside the pod's directory, and the file inside it.
inline constexpr char kProgressDirName[] = "progress";
inline constexpr char kProgressFileName[] = "progress";
// Where the oci and cri runtimes mount the directory in each container.
inline constexpr char kProgressMountPath[] = "/var/run/jobset/progress";

// <pod_dir>/progress.
std::string ProgressDirOf(const std::string& pod_dir);

// The progress file's path in a container: under kProgressMountPath when
// `mounted`, else under `pod_dir`'s progress directory (process mode).
std::string ProgressFileInPod(const std::string& pod_dir, bool mounted);

// Makes <pod_dir>/progress unless it exists, private (0700), then, as root,
// owned as the pod's emptyDirs are (OwnPodWritableDir: fsGroup's group, or
// writable by a pod whose containers may run as another user than root).
// Not root: the agent's user's, as the pod's.
absl::Status MakeProgressDir(const std::string& pod_dir,
                             const api::PodSpec& pod);

// Sets kProgressEnv to `file` in every container and init container of
// `pod`, replacing a value the spec gives: the agent reads only that file.
void SetProgressEnv(const std::string& file, api::PodSpec* pod);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_PROGRESS_DIR_H_
