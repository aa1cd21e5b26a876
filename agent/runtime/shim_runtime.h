#ifndef JOBSET_AGENT_RUNTIME_SHIM_RUNTIME_H_
#define JOBSET_AGENT_RUNTIME_SHIM_RUNTIME_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/runtime/accelerator_devices.h"
#include "agent/runtime/runtime.h"
#include "agent/runtime/security_context.h"
#include "common/clock.h"

namespace jobset::agent {

// The real Runtime: every pod is supervised by its own jobset-pod-shim
// process, started fully detached (double fork + setsid), so pods and their
// final statuses outlive the agent. All state is on disk under
// <work_dir>/pods/<uid>/ (see agent/runtime/README.md); a new ShimRuntime on
// the same work_dir re-attaches to whatever is there. Thread-safe; one
// ShimRuntime per work_dir at a time.
class ShimRuntime : public Runtime {
 public:
  enum class Mode { kProcess, kOci };

  struct Options {
    std::string work_dir;
    // The jobset-pod-shim binary.
    std::string shim_path;
    Mode mode = Mode::kProcess;
    // oci: a container's image names <image_dir>/<image>/rootfs.
    std::string image_dir;
    // oci: the runc binary (a bare name is searched in the default PATH).
    std::string runc_path = "runc";
    // oci: where a pod's accelerators' (PodAssignment.devices) nodes,
    // NVIDIA driver and CDI specs are; tests give stand-ins.
    AcceleratorOptions accelerators;
    // Pod cgroups go to <root>/<uid>/<container>: relative to the agent's own
    // cgroup in each hierarchy, or absolute.
    std::string cgroup_root = "jobset-pods";
    // A container log is rotated to .log.1 at this size.
    int64_t log_cap_bytes = 10 << 20;
    // pids.max of each pod's cgroup (0: none).
    int64_t pids_max = 4096;
    // The uid (and gid) of a container that sets no runAsUser, outside
    // privileged namespaces (the agent's --default_pod_uid; 0: the shim's).
    int64_t default_pod_uid = kDefaultPodUid;
    // Process mode: host directories bound read-write into every pod (the
    // agent's --pod_host_mounts, checked by CheckPodHostMounts).
    std::vector<std::string> pod_host_mounts = {};
    // What stamps a status the agent writes itself (a lost shim's).
    Clock* clock = RealClock::Get();
  };

  // Creates <work_dir>/pods and <work_dir>/logs. kInvalidArgument for a
  // missing work_dir or shim_path, kNotFound when the shim is not executable.
  static absl::StatusOr<std::unique_ptr<ShimRuntime>> Create(
      const Options& options);

  absl::Status Start(const api::PodAssignment& assignment) override;
  absl::Status Stop(const std::string& uid, absl::Duration grace) override;
  absl::Status Remove(const std::string& uid) override;
  std::vector<PodState> List() override;
  std::string LogPath(const std::string& uid,
                      const std::string& container) const override;
  // <work_dir>/pods/<uid>/progress, made by Start (progress_dir.h).
  std::string ProgressDir(const std::string& uid) const override;
  // The lease lives in <work_dir>/lease: its content is the lease in
  // milliseconds, its mtime the last renewal. Every shim checks it.
  absl::Status UpdateHosts(
      const std::string& uid,
      const google::protobuf::RepeatedPtrField<api::HostEntry>& hosts) override;
  absl::Status SetLease(absl::Duration lease) override;
  // A pod's logs are <work_dir>/logs/<uid>/; their age is the newest mtime
  // in that directory (the directory's own included).
  absl::StatusOr<int> PruneLogs(absl::Time now,
                                const LogRetention& retention) override;
  absl::Status RenewLease() override;
  // Wakes on inotify events in the pods' directories (a status written by
  // rename), so the agent reports an exit or a start without waiting for its
  // next tick. Without inotify (or past the watch limit) it only sleeps.
  bool WaitForChange(absl::Duration timeout) override;

  ~ShimRuntime() override;

 private:
  std::string LeasePath() const;
  explicit ShimRuntime(Options options);

  std::string PodDir(const std::string& uid) const;
  // Watches pod `uid`'s directory for WaitForChange (idempotent).
  void WatchPod(const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string LogsDir(const std::string& uid) const;
  absl::Status SpawnShim(const std::string& uid, int lock_fd)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reaps the shims this runtime spawned that have exited (each List).
  void ReapShims() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The pod's status as on disk; a pod whose shim is gone without a final
  // status is marked Failed/SupervisorLost (and that is persisted).
  absl::StatusOr<api::PodStatus> ReadStatus(const std::string& uid)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  absl::Mutex mu_;
  // inotify(7) descriptor, -1 when unavailable. Its watches are the pods'
  // directories; the kernel drops a watch when its directory goes.
  const int changes_fd_;
  // The shims this runtime spawned and has not reaped yet.
  std::vector<pid_t> shims_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_SHIM_RUNTIME_H_
