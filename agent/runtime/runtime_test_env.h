#ifndef JOBSET_AGENT_RUNTIME_RUNTIME_TEST_ENV_H_
#define JOBSET_AGENT_RUNTIME_RUNTIME_TEST_ENV_H_

// Test and benchmark helpers for the runtimes: runfiles, a busybox test
// image, pod builders and bounded waits. Test-only; thread-compatible.

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/runtime/runtime.h"
#include "proto/agent.pb.h"

namespace jobset::agent::testing {

// Returns the path of `rel` (e.g. "agent/runtime/jobset-pod-shim") in the
// test's runfiles, or beside the binary for a `bazel run`.
std::string RunfilePath(const std::string& rel);

// The image tests use: <image_dir>/testimg/rootfs holds /bin/busybox (static),
// its applets as relative symlinks, and `helper` (the static test helper)
// as /bin/helper.
inline constexpr char kTestImage[] = "testimg:1";
absl::Status BuildTestImage(const std::string& image_dir,
                            const std::string& helper);

// OK when oci mode can run here (root, runc and /bin/busybox present);
// otherwise the reason it cannot.
absl::Status OciAvailable();

// Builds a PodAssignment. Its pod is admitted "privileged" unless
// SecurityLevel says otherwise: most runtime tests run the helper from
// Bazel's runfiles (under /root, 0700), which the agent's default pod uid
// cannot reach.
class PodBuilder {
 public:
  explicit PodBuilder(const std::string& uid);
  // PodAssignment.pod_security_level ("": what an older jobsetd sends).
  PodBuilder& SecurityLevel(const std::string& level);
  PodBuilder& Container(const std::string& name,
                        const std::vector<std::string>& command);
  PodBuilder& InitContainer(const std::string& name,
                            const std::vector<std::string>& command);
  // Applies to the last container added.
  PodBuilder& Env(const std::string& name, const std::string& value);
  PodBuilder& WorkingDir(const std::string& dir);
  PodBuilder& MemoryLimit(const std::string& quantity);
  PodBuilder& ReadinessProbe(const api::Probe& probe);
  PodBuilder& HostPathVolume(const std::string& path);
  // Adds emptyDir volume `name` to the pod (no mount).
  PodBuilder& EmptyDirVolume(const std::string& name);
  // Mounts volume `name` at `path` (its `sub_path`, if any) in the last
  // container added.
  PodBuilder& Mount(const std::string& name, const std::string& path,
                    const std::string& sub_path = "");
  PodBuilder& RestartPolicy(const std::string& policy);
  PodBuilder& Hostname(const std::string& hostname);
  PodBuilder& Grace(int seconds);
  PodBuilder& Host(const std::string& address,
                   const std::vector<std::string>& names);
  api::PodAssignment Build() const { return assignment_; }

 private:
  api::Container* last_ = nullptr;
  api::PodAssignment assignment_;
};

// Polls runtime.List() every 10 ms until pod `uid` satisfies `done` or
// `timeout` passes (kDeadlineExceeded naming the last status).
absl::StatusOr<PodState> WaitForPod(
    Runtime& runtime, const std::string& uid,
    const std::function<bool(const api::PodStatus&)>& done,
    absl::Duration timeout);

bool IsFinal(const api::PodStatus& status);
bool IsRunning(const api::PodStatus& status);

}  // namespace jobset::agent::testing

#endif  // JOBSET_AGENT_RUNTIME_RUNTIME_TEST_ENV_H_
