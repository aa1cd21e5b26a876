#ifndef JOBSET_TESTS_E2E_SUPPORT_H_
#define JOBSET_TESTS_E2E_SUPPORT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "proto/jobset.pb.h"

namespace jobset::testing {

// What the end-to-end tests that run jobsetd and agents as processes share.

// The path of `path` (e.g. "agent/jobset-agent") in this test's runfiles.
std::string Runfile(const std::string& path);

// Polls `done` every `poll` until it is true or `timeout` passes; its last
// answer.
bool Eventually(const std::function<bool()>& done,
                absl::Duration timeout = absl::Seconds(30),
                absl::Duration poll = absl::Milliseconds(50));

// Runs `command` through the shell, appending its stdout to `*out` (add
// " 2>&1" for stderr too); its exit code, -1 if it did not exit.
int RunCommand(const std::string& command, std::string* out);

// The number of lines of the file at `path` (0 if it cannot be read).
int CountLines(const std::string& path);

// A pod command that appends its pid to the file `started` and then runs
// until the file `gate` exists: a test counts starts (CountLines) and says
// when pods may end.
std::vector<std::string> GatedPodCommand(const std::string& started,
                                         const std::string& gate);

// A directory where a test and its pods exchange files (GatedPodCommand's),
// TempDir()/pod-io, made writable by every user (pods without runAsUser run
// as the agents' --default_pod_uid). jobsetd must allow it as a hostPath
// (--allowed_host_paths=PodIoDir()).
std::string PodIoDir();

// Mounts the host directory `dir` at its own path in every container of
// `js`: a process-mode pod sees only the host's system directories
// (agent/runtime/pod_root.h), so a test's files reach it this way.
void MountHostDir(api::JobSet* js, const std::string& dir);

// Polls `jobsetctl get nodes` (`jobsetctl`: the binary and its flags) until
// it lists each of `nodes` and none is NotReady, or `timeout` passes; what
// it printed last in `*out`.
bool AwaitNodesReady(const std::string& jobsetctl,
                     const std::vector<std::string>& nodes,
                     absl::Duration timeout, std::string* out);

// Stops and removes, through the shim runtime, every pod under each agent
// work dir: killed agents leave their pods' supervisors running, and no pod
// a test started may outlive it.
void RemovePods(const std::vector<std::string>& work_dirs);

}  // namespace jobset::testing

#endif  // JOBSET_TESTS_E2E_SUPPORT_H_
