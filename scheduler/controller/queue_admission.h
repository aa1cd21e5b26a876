#ifndef JOBSET_SCHEDULER_CONTROLLER_QUEUE_ADMISSION_H_
#define JOBSET_SCHEDULER_CONTROLLER_QUEUE_ADMISSION_H_

// Kueue's queues as the controller runs them (issue 41;
// kueue-semantics.md §2-§4): the JobSet integration (a Workload per managed
// JobSet, kept suspended until admitted) and the admission cycles of
// scheduler/queues/, over Kueue's objects as stored under kueue/.
//
// Before each pass's reconcile, Run() decides, for every JobSet Kueue
// manages and every pending Workload, what changes, and commits it in ONE
// store batch, each JobSet compared at the revision the controller holds:
//   - a Workload is created for a managed JobSet that has none (and the
//     JobSet suspended if it runs unadmitted);
//   - the admission cycles: an admitted Workload gets status.admission and
//     QuotaReserved/Admitted True in the same commit as its JobSet gets its
//     flavors injected and spec.suspend false; a preempted one gets
//     Evicted/Preempted True with its JobSet suspended and its templates
//     restored from the Workload; a pending one its QuotaReserved False
//     reason and message (written when they change);
//   - an evicted Workload whose JobSet has no pod left releases its quota
//     (Requeued); a finished JobSet finishes its Workload; a deleted one
//     deletes it.
// So an admission is durable in one commit (the Workload's reservation and
// the unsuspend together), quota is never booked twice (one writer; the
// cycle books each admission on its snapshot at once), and a kill -9 at any
// point leaves either both or neither. The reconcile that follows in the
// same pass starts or stops the JobSets' pods as for any resume or suspend.
//
// Used only from the controller thread.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/features.h"
#include "proto/jobset.pb.h"
#include "proto/kueue.pb.h"
#include "scheduler/controller/controller_metrics.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/event_log.h"
#include "scheduler/queues/fair_sharing.h"
#include "scheduler/queues/model.h"
#include "store/store.h"

namespace jobset::scheduler {

// Kueue's condition types and reasons written on Workloads.
inline constexpr absl::string_view kWorkloadQuotaReserved = "QuotaReserved";
inline constexpr absl::string_view kWorkloadAdmitted = "Admitted";
inline constexpr absl::string_view kWorkloadEvicted = "Evicted";
inline constexpr absl::string_view kWorkloadPreempted = "Preempted";
inline constexpr absl::string_view kWorkloadRequeued = "Requeued";
inline constexpr absl::string_view kWorkloadFinished = "Finished";
inline constexpr absl::string_view kWorkloadPodsReady = "PodsReady";
// Evicted's reasons when a stopPolicy HoldAndDrain drains a queue.
inline constexpr absl::string_view kClusterQueueStopped = "ClusterQueueStopped";
inline constexpr absl::string_view kLocalQueueStopped = "LocalQueueStopped";
// PodsReady False's reason before the pods were first all ready, and its
// message (Kueue's generatePodsReadyCondition).
inline constexpr absl::string_view kWaitForStart = "WaitForStart";
inline constexpr absl::string_view kNotReadyMessage =
    "Not all pods are ready or succeeded";

// Returns whether `jobset` has ended (its Completed or Failed condition is
// True), and in `succeeded` (when not null) whether it completed.
bool JobSetFinished(const api::JobSet& jobset, bool* succeeded = nullptr);

// Kueue's JobSet PodsReady: as many Jobs ready or succeeded as the JobSet
// has (the sum of its replicas), by its status (queue_pods_ready.cc).
bool JobSetPodsReady(const api::JobSet& jobset);

// Kueue's fairSharing configuration as the admission core reads it; nullopt
// when off. Strategies are as validated by jobsetd's flags.
std::optional<queues::FairSharing> FairSharingOf(
    const api::FairSharingConfig& config);

class QueueAdmission {
 public:
  struct Options {
    // Kueue's manageJobsWithoutQueueName (jobsetd
    // --manage_jobs_without_queue_name).
    bool manage_jobs_without_queue_name = false;
    // Kueue's waitForPodsReady (queue_pods_ready.cc).
    api::WaitForPodsReady wait_for_pods_ready = {};
    // Kueue's fairSharing; unset: off (classical order and preemption).
    std::optional<queues::FairSharing> fair_sharing;
    // The most admission cycles one Run() runs (each admits at most one
    // Workload per ClusterQueue); the rest wait for the next pass, which
    // comes at once.
    int max_cycles = 64;
    // Where Kueue's metrics go (docs/metrics.md); may be null.
    ControllerMetrics* metrics = nullptr;
  };

  QueueAdmission(store::Store* store, Options options);

  // Reads every Kueue object from the store, replacing what was held. A
  // record that does not decode is logged and left out. Store errors only.
  absl::Status Load();

  // A change under kueue/ (through the API, or an echo of Run's own commit,
  // recognised by revision).
  void OnEvent(const store::Event& event);

  // Something Run() reads changed (a JobSet, a pod's end, a node): Run()
  // looks again at the next pass.
  void Touch() { dirty_ = true; }
  // A JobSet the reconcile just looked at: Run() looks again at the next
  // pass where Kueue may act on it (a managed one that finished, or is
  // suspended and may release its quota as its pods end; one whose pods'
  // readiness is not what its Workload's PodsReady says).
  void Reconciled(const ControllerState& state, const TrackedJobSet& t);
  bool dirty() const { return dirty_; }
  // When Run() must look again though nothing changed (a minimum runtime
  // that held a preemption back ends); nullopt: on changes only.
  std::optional<absl::Time> NextWake() const { return wake_; }

  // The stage described above, at `now`. Changed JobSets are updated in
  // `state` (object and revision) and marked dirty; events are queued in
  // `events`. A JobSet the API changed meanwhile (the commit is ABORTED)
  // leaves everything as it was: the stage runs again at the next pass.
  // Other store errors are returned (the caller reloads).
  absl::Status Run(ControllerState& state, EventLog& events, absl::Time now);

  // Observability (tests): the Workload of JobSet `ns`/`name`, as held.
  const api::Workload* WorkloadOf(const ControllerState& state,
                                  const std::string& ns,
                                  const std::string& name) const;
  const api::Workload* FindWorkload(const std::string& ns,
                                    const std::string& name) const;

 private:
  struct Held {
    api::KueueObject object;
    int64_t revision = 0;
    // A Workload's model for the admission core, made when first needed,
    // in the ClusterQueue it was last asked for; the cycles' input shares
    // it (QueueAdmission::Stage::Model).
    std::shared_ptr<const absl::StatusOr<queues::Workload>> model;
    // Whether a Workload's Finished condition is True, read when first
    // needed: each run asks it of every Workload.
    std::optional<bool> finished;
  };
  class Stage;  // One Run's decisions (queue_admission.cc).

  store::Store* const store_;
  const Options options_;
  // Every Kueue object by store key.
  std::map<std::string, Held> objects_;
  // Workloads in the inadmissible set (BestEffortFIFO parking), by
  // "<ns>/<name>", until capacity in their cohort tree may have changed.
  std::set<std::string> parked_;
  // Each ClusterQueue's sticky head (the uid of a preemptor waiting for its
  // victims).
  std::map<std::string, std::string> sticky_;
  // JobSets told once that their priority class does not exist.
  std::set<std::string> warned_;
  bool dirty_ = true;
  std::optional<absl::Time> wake_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_QUEUE_ADMISSION_H_
