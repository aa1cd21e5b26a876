#ifndef JOBSET_AGENT_POD_SET_H_
#define JOBSET_AGENT_POD_SET_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/device_ledger.h"
#include "agent/pod_reporter.h"
#include "agent/restart_barrier.h"
#include "agent/runtime/runtime.h"
#include "common/clock.h"
#include "proto/agent.pb.h"

namespace jobset::agent {

// The desired pod set, as kubelet's pod workers keep it: makes the runtime
// run what jobsetd wants (a Welcome's whole set, or one Run, Stop or
// Release). Every assignment is untrusted input: one that does not pass
// fails that pod (a report saying why), never the agent.
//
// - GPUs (nvidia.com/gpu) are handed out by device index (DeviceLedger).
// - restartStrategy InPlaceRestart: a later attempt of a pod here stops the
//   old one and starts the pod again under its uid, on its devices, once it
//   stopped (RestartBarrier).
// - Both ledgers are saved in state_dir ("devices", "attempts"), so that a
//   restarted agent neither gives a GPU out twice nor mistakes which attempt
//   a pod's state is of.
// Thread-safe.
class PodSet {
 public:
  struct Options {
    int gpu_capacity = 0;   // the node's nvidia.com/gpu
    std::string state_dir;  // "": the ledgers are kept in memory only
  };

  // `runtime`, `clock` and `reporter` must outlive the set; `send` sends on
  // the stream (false when there is none).
  PodSet(Options options, Runtime* runtime, Clock* clock, PodReporter* reporter,
         PodReporter::Send send);

  // The node's nvidia.com/gpu capacity as `node` registers it (0: none).
  static int GpuCapacity(const api::NodeRegistration& node);

  // Reads the ledgers in state_dir, keeping the pods the runtime has.
  void Load();

  // A Welcome: whatever the scheduler does not want goes at once (an old
  // attempt, a pod re-placed elsewhere while this node was lost); the rest
  // is started, stopped, restarted in place or given its host table.
  void Reconcile(const api::Welcome& welcome);
  // A Run: a later attempt restarts in place; a pod here gets the grown
  // host table; any other is started.
  // Either accepts the host table as jobsetd sends it (hosts_table) or as
  // jobsetds before it did (hosts).
  void Run(const api::PodAssignment& order);
  // A Stop: within the pod's termination grace period.
  void Stop(const std::string& uid);
  // A Release: the pod goes, with its devices and ledger entries.
  void Release(const std::string& uid);
  // Restarts the pods of `pods` whose restart waited for their old attempt.
  void FinishRestarts(const std::vector<PodState>& pods);

  // The restart in place attempt the runtime's pod `uid` is of (0: none).
  int32_t AttemptRunning(const std::string& uid);
  // AttemptRunning of every pod, as it is now: read before the runtime is
  // listed, it stamps each listed status with the attempt it is of or an
  // earlier one (which jobsetd fences), never a later one. A restart in
  // place records its new attempt after removing the old one's state, so a
  // list taken before the restart, stamped with the attempt read after it,
  // would tell jobsetd that the new attempt failed.
  PodReporter::AttemptOf Attempts();

 private:
  // Expands `assignment`'s host table (ExpandHostTable) on receipt. Returns
  // false, having handled the order, when the table does not decode: a pod
  // here keeps running with its table, any other fails (InvalidAssignment),
  // as for a `hosts` that does not pass.
  bool ExpandHosts(api::PodAssignment* assignment);
  void StartPod(api::PodAssignment assignment);
  // Hands `assignment` to the runtime, on GPUs `gpus`, recording its
  // restart in place attempt.
  void Launch(api::PodAssignment assignment, const std::vector<int>& gpus);
  // restartStrategy InPlaceRestart: `assignment` is of a later attempt than
  // the pod here runs. Stops it if it still runs, then starts it again under
  // its uid (FinishRestart). Returns false when it is not such an order.
  bool RestartInPlace(const api::PodAssignment& assignment);
  void FinishRestart(const std::string& uid);
  // The pods the runtime has that finished (every container gone).
  std::set<std::string> FinishedPods();
  void ReportFailure(const api::PodAssignment& a, const std::string& reason,
                     const std::string& message);
  void SaveLedger() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  Runtime* const runtime_;
  Clock* const clock_;
  PodReporter* const reporter_;
  const PodReporter::Send send_;

  absl::Mutex mu_;
  std::map<std::string, absl::Duration> grace_ ABSL_GUARDED_BY(mu_);
  DeviceLedger devices_ ABSL_GUARDED_BY(mu_);
  RestartBarrier barrier_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_POD_SET_H_
