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
// Between runs it keeps, beside the objects, what a run reads of them: each
// held Workload filed as it is held (admitted in a ClusterQueue, with its
// usage; pending in a LocalQueue; neither), what each queue's admitted
// hold, and each queue's part of the cycle's input as the last run made it.
// A run so reads the queues and what changed, not every Workload; what it
// decides is the same as from everything read afresh
// (queue_kept_input_test).
//
// Used only from the controller thread.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
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
#include "scheduler/queues/queue_order.h"
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
  // Whether Kueue manages `jobset` (a queue name, or
  // --manage_jobs_without_queue_name): only such JobSets' changes concern
  // Run(), which otherwise walks every JobSet for nothing.
  bool Manages(const api::JobSet& jobset) const;
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
  // What the cycles make of a held Workload, decided when it is held (Hold):
  // finished, inactive or without a queue (kNone), holding quota (kAdmitted)
  // or waiting in a LocalQueue (kPending).
  enum class Role { kNone, kAdmitted, kPending };
  struct Held {
    api::KueueObject object;
    int64_t revision = 0;
    // A Workload's model for the admission core, made when first needed,
    // in the ClusterQueue it was last asked for; the cycles' input shares
    // it (QueueAdmission::Stage::Model). An admitted one's is made when it
    // is held, in its admission's ClusterQueue.
    std::shared_ptr<const absl::StatusOr<queues::Workload>> model;
    // A ClusterQueue's model, made when it is held.
    std::shared_ptr<const absl::StatusOr<queues::ClusterQueue>> cluster_queue;
    // The rest, for Workloads only, set by Hold.
    Role role = Role::kNone;
    // kPending: "<ns>/<LocalQueue>"; kAdmitted: the same of its
    // spec.queueName, for the LocalQueue's tally.
    std::string local_queue;
    // kAdmitted: its admission's ClusterQueue and what it holds
    // (queues::AdmittedUsage of its model).
    std::string admitted_in;
    queues::FlavorResourceQuantities usage;
    std::string job_uid;  // its kueue.x-k8s.io/job-uid label; "" for none
  };
  // What the admitted Workloads of one queue hold: their number and their
  // usage summed, with how many hold each (flavor, resource), so that one
  // taken away leaves the sum as if it had never been added.
  struct Tally {
    int32_t workloads = 0;
    std::map<queues::FlavorResource, std::pair<int64_t, int32_t>> usage;
    void Add(const queues::FlavorResourceQuantities& u, int sign);
  };
  // A ClusterQueue's admitted Workloads (Role::kAdmitted), and what the
  // cycles read of them as the last run made it, kept until one changes.
  struct Holding {
    std::map<std::string, Held*> workloads;  // by key
    Tally tally;
    bool kept = false;  // `models` and `usage` are the workloads' now
    std::vector<std::shared_ptr<const queues::Workload>> models;  // shared
    queues::FlavorResourceQuantities usage;  // summed, as the cycle adds it
  };
  // A LocalQueue's pending Workloads (Role::kPending), and their entries in
  // a ClusterQueue's heap as the last run made them, kept until one changes
  // or the LocalQueue points at another ClusterQueue.
  struct Waiting {
    std::map<std::string, Held*> workloads;  // by key
    bool kept = false;  // the rest is the workloads' now, in cluster_queue
    std::string cluster_queue;
    // Not parked, not backing off: a run sets those on its copy.
    std::vector<queues::PendingWorkload> entries;
    // Entries with a requeueState.requeueAt (a run asks Backoff): their
    // index, key and held Workload.
    struct BackingOff {
      size_t index = 0;
      std::string key;
      const Held* held = nullptr;
    };
    std::vector<BackingOff> backing_off;
    // Those whose model failed: key and why (a run writes it, as Pending).
    std::vector<std::pair<std::string, std::string>> failed;
  };
  class Stage;  // One Run's decisions (queue_admission.cc).

  // Holds `object` at `key` (read at `revision`), replacing what was held
  // there, and keeps the index below in step.
  void Hold(const std::string& key, api::KueueObject object, int64_t revision);
  // Drops what is held at `key`, if anything.
  void Drop(const std::string& key);
  void Index(const std::string& key, Held& held);
  void Unindex(const std::string& key, const Held& held);

  store::Store* const store_;
  const Options options_;
  // Every Kueue object by store key, changed only through Hold and Drop
  // (and Load, which starts again). Looked up, never walked: what a run
  // walks is indexed below. A node map: the index points into it.
  absl::node_hash_map<std::string, Held> objects_;
  // Derived from objects_ as it changes, so that a run reads what it needs
  // without walking every held Workload (DESIGN.md: no full rescans):
  // the objects other than Workloads, by key;
  std::map<std::string, const Held*> config_;
  // Workload keys by their job-uid label;
  std::map<std::string, std::set<std::string>> job_uids_;
  // the admitted Workloads by ClusterQueue (their admission's);
  std::map<std::string, Holding> admitted_;
  // the pending ones by "<ns>/<LocalQueue>" (their spec.queueName);
  std::map<std::string, Waiting> pending_;
  // what the admitted hold by "<ns>/<LocalQueue>".
  std::map<std::string, Tally> admitted_by_lq_;
  // A ClusterQueue's or LocalQueue's status as a run found it already
  // written (held at `revision`), with what it was made from: while all of
  // it stays the same, the status would come out the same and is not made
  // again. By store key.
  struct StatusSeen {
    int64_t revision = 0;
    int64_t flavors = 0;                // flavors_changed_ then
    bool cluster_queue_exists = false;  // a LocalQueue's
    int32_t pending = 0;
    int32_t reserving = 0;
    queues::FlavorResourceQuantities usage;
  };
  std::map<std::string, StatusSeen> statuses_seen_;
  // Counts the changes of ResourceFlavors (a ClusterQueue's Active reads
  // them).
  int64_t flavors_changed_ = 0;
  // Workloads in the inadmissible set (BestEffortFIFO parking), by
  // "<ns>/<name>", until capacity in their cohort tree may have changed.
  absl::flat_hash_set<std::string> parked_;
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
