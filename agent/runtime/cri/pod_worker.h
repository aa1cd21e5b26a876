#ifndef JOBSET_AGENT_RUNTIME_CRI_POD_WORKER_H_
#define JOBSET_AGENT_RUNTIME_CRI_POD_WORKER_H_

// One pod of the cri runtime, driven by its own thread (kubelet's pod
// worker): each sync looks at the pod's containers (their exits, probes and
// logs) and takes the next step of the lifecycle of container_lifecycle.h,
// through the parts that make the CRI calls: the sandbox (pod_sandbox.h),
// images (image_puller.h), container starts (container_start.h).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/runtime/accelerator_devices.h"
#include "agent/runtime/container_lifecycle.h"
#include "agent/runtime/cri/container_start.h"
#include "agent/runtime/cri/cri_client.h"
#include "agent/runtime/cri/cri_container.h"
#include "agent/runtime/cri/image_puller.h"
#include "agent/runtime/cri/pod_event_log.h"
#include "agent/runtime/cri/pod_sandbox.h"
#include "agent/runtime/security_context.h"
#include "common/clock.h"
#include "proto/agent.pb.h"

namespace jobset::agent::cri {

struct CriPodWorkerOptions {
  // <work_dir>/pods/<uid>: the assignment, the hosts file, the volumes,
  // the final status.
  std::string pod_dir;
  // <work_dir>/logs/<uid>: the containers' logs.
  std::string logs_dir;
  // How often the worker looks at the containers (kubelet's PLEG relist),
  // waited in real time.
  absl::Duration sync_period = absl::Seconds(1);
  // A running container's log past this size is rotated (0: never).
  int64_t log_cap_bytes = 0;
  absl::Duration pull_backoff_start = absl::Seconds(10);
  absl::Duration pull_backoff_cap = absl::Minutes(5);
  AcceleratorOptions accelerators;
  // The uid of a container that sets no runAsUser on an image that would
  // run as root, outside privileged namespaces (CriRuntime::Options).
  int64_t default_pod_uid = kDefaultPodUid;
};

// What the runtime's threads tell a pod's worker (stop, quit) and read back
// from it (the pod's status). Thread-safe.
class WorkerMailbox {
 public:
  // Asks for a stop with `grace` (the shortest grace asked for wins).
  void RequestStop(absl::Duration grace);
  // Asks the worker to end.
  void Quit();
  // The grace of the stop asked for, if one was.
  std::optional<absl::Duration> stop() const;
  bool quit() const;
  // Returns false once Quit was called; otherwise waits up to `timeout` for
  // a stop or Quit and returns whether the worker should go on.
  bool WaitForKick(absl::Duration timeout);
  // Waits for Quit.
  void AwaitQuit();

  void Publish(api::PodStatus status);
  api::PodStatus status() const;

 private:
  mutable absl::Mutex mu_;
  bool quit_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<absl::Duration> stop_grace_ ABSL_GUARDED_BY(mu_);
  bool kicked_ ABSL_GUARDED_BY(mu_) = false;
  api::PodStatus status_ ABSL_GUARDED_BY(mu_);
};

// The pod's own state as its worker keeps it, beside its containers'.
struct PodProgress {
  PodOutcome outcome;
  bool stopped = false;        // the stop has been carried out
  bool final_written = false;  // the final status is on disk
  absl::Time start_time;
  PodConditions conditions;
};

// Drives one pod. Its thread alone makes the pod's CRI calls (Shutdown
// makes the removal's once it has ended); the other methods may be called
// from any thread. Thread-safe.
class CriPodWorker {
 public:
  // The pod of `assignment` (recorded in options.pod_dir), its CRI calls
  // through `client`, its time read from `clock` (which must outlive it).
  CriPodWorker(std::shared_ptr<const CriClient> client, Clock* clock,
               CriPodWorkerOptions options, api::PodAssignment assignment);
  ~CriPodWorker();

  // Starts the thread (`adopt`: after an agent restart, first finds the
  // pod's sandbox and containers by label).
  void Run(bool adopt);
  // Publishes a final status read from disk: the worker has nothing to do
  // (and Run is not called).
  void Finished(api::PodStatus status);
  // Stops the pod's containers with `grace`, cancelling a pull.
  void RequestStop(absl::Duration grace);
  // Ends the thread; with `remove`, then removes every CRI object of the
  // pod and unmounts its volumes.
  void Shutdown(bool remove);
  // The status as of the last sync.
  api::PodStatus Status() const { return mailbox_.status(); }
  // The events since the last call (kubelet's image events), oldest first.
  std::vector<api::PodEvent> TakeEvents() { return events_.Take(); }
  const api::PodAssignment& assignment() const { return assignment_; }

 private:
  const std::string& uid() const { return assignment_.pod().metadata().uid(); }
  void Loop();
  void Adopt();
  void SyncOnce(absl::Time now);
  bool EnsureSandbox();
  // Takes in what the runtime says of each running container.
  void Refresh(absl::Time now);
  void OnExit(CriContainer& c, const runtime::v1::ContainerStatus& s,
              absl::Time now);
  // Starts what is due: the next init container, or every container.
  void Advance(absl::Time now);
  // Pulls `c`'s image if need be and starts it.
  void StartOne(CriContainer& c, absl::Time now);
  void Probe(CriContainer& c, absl::Time now);
  void StopAll(absl::Duration grace, absl::Time now);
  void Fail(absl::string_view reason, absl::string_view message);
  // A container failed for good: the pod fails, its other containers stop.
  void OnContainerFailed(std::string message, absl::Time now);
  void Publish(absl::Time now);

  const std::shared_ptr<const CriClient> client_;
  Clock* const clock_;
  const CriPodWorkerOptions options_;
  const api::PodAssignment assignment_;
  PodEventLog events_;  // thread-safe
  PodSandbox sandbox_;
  ImagePuller puller_;  // thread-safe
  ContainerStarter starter_;
  // Worker-thread state.
  PodContainers containers_;
  PodProgress progress_;
  WorkerMailbox mailbox_;  // thread-safe
  std::thread thread_;
};

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_POD_WORKER_H_
