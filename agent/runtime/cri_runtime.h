#ifndef JOBSET_AGENT_RUNTIME_CRI_RUNTIME_H_
#define JOBSET_AGENT_RUNTIME_CRI_RUNTIME_H_

#include <cstdint>
#include <map>
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

namespace cri {
class CriClient;
class CriPodWorker;
}  // namespace cri

// A Runtime that runs pods as containers of a CRI runtime (containerd,
// CRI-O) over runtime.v1 gRPC, the way kubelet does: one sandbox per pod on
// the host network, registry images pulled by the runtime under Kubernetes'
// pull policies and waiting reasons, and the lifecycle rules of
// container_lifecycle.h applied by a worker thread per pod (kubelet's pod
// workers, cri/pod_worker.h). The assignment and a pod's final status are kept
// under <work_dir>/pods/<uid>/; everything else is the CRI runtime's, found
// again by label after an agent restart (containers keep running meanwhile).
// See agent/runtime/README.md. Thread-safe; one CriRuntime per work_dir.
class CriRuntime : public Runtime {
 public:
  struct Options {
    std::string work_dir;
    // "unix:///run/containerd/containerd.sock".
    std::string endpoint;
    // How often each pod's worker looks at its containers (kubelet's PLEG
    // relist).
    absl::Duration sync_period = absl::Seconds(1);
    // Deadline of every CRI call but PullImage (kubelet's
    // --runtime-request-timeout).
    absl::Duration request_timeout = absl::Minutes(2);
    // Deadline of one PullImage (kubelet has none; a stop cancels it).
    absl::Duration pull_timeout = absl::Minutes(30);
    // Image pull back-off: doubling from start to cap (kubelet's 10 s, 300 s).
    absl::Duration pull_backoff_start = absl::Seconds(10);
    absl::Duration pull_backoff_cap = absl::Minutes(5);
    // Where a pod's accelerators' device nodes, NVIDIA driver and CDI specs
    // are (PodAssignment.devices); tests give stand-ins.
    AcceleratorOptions accelerators;
    // A running container's log found past this size by a sync is renamed
    // to <name>.log.1 (replacing the older one) and reopened by the CRI
    // runtime (kubelet's container log rotation, keeping one old file as
    // the shim does). It can pass the size by what one sync period writes.
    // 0: never rotated.
    int64_t log_cap_bytes = 10 << 20;
    // The uid (and, without runAsGroup, gid) of a container that sets no
    // runAsUser and whose image names no user or root, outside privileged
    // namespaces (the agent's --default_pod_uid; DefaultUserFor). An image
    // that names a non-root user runs as it, as under kubelet. 0: such
    // containers run as root, as before.
    int64_t default_pod_uid = kDefaultPodUid;
    // The pods' time (their start, back-offs, probes, pull durations);
    // nullptr: RealClock. It must outlive the runtime.
    Clock* clock = nullptr;
  };

  // Connects, checks that the endpoint speaks runtime.v1 (Version), creates
  // <work_dir>/pods and <work_dir>/logs, and takes up every pod found there.
  // kInvalidArgument for missing options, kUnavailable naming the endpoint
  // when it does not answer.
  static absl::StatusOr<std::unique_ptr<CriRuntime>> Create(
      const Options& options);

  absl::Status Start(const api::PodAssignment& assignment) override;
  absl::Status Stop(const std::string& uid, absl::Duration grace) override;
  absl::Status Remove(const std::string& uid) override;
  std::vector<PodState> List() override;
  std::map<std::string, std::vector<api::PodEvent>> TakeEvents() override;
  absl::Status UpdateHosts(
      const std::string& uid,
      const google::protobuf::RepeatedPtrField<api::HostEntry>& hosts) override;
  std::string LogPath(const std::string& uid,
                      const std::string& container) const override;
  // <work_dir>/pods/<uid>/progress, made by Start and mounted at
  // /var/run/jobset/progress in every container (progress_dir.h).
  std::string ProgressDir(const std::string& uid) const override;
  bool CriLogFormat() const override { return true; }
  // kUnimplemented for a lease: the CRI runtime keeps pods running while the
  // agent is down, and nothing of the agent's outlives it to stop them.
  absl::Status SetLease(absl::Duration lease) override;

  ~CriRuntime() override;

 private:
  CriRuntime(Options options, std::shared_ptr<const cri::CriClient> client,
             Clock* clock);
  std::string PodDir(const std::string& uid) const;
  // The worker of pod `assignment`, not running yet.
  std::unique_ptr<cri::CriPodWorker> NewWorker(
      api::PodAssignment assignment) const;
  // Starts the worker of a pod whose directory holds its assignment.
  void TakeUp(const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const std::shared_ptr<const cri::CriClient> client_;
  Clock* const clock_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<cri::CriPodWorker>> pods_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_CRI_RUNTIME_H_
