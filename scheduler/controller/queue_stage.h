#ifndef JOBSET_SCHEDULER_CONTROLLER_QUEUE_STAGE_H_
#define JOBSET_SCHEDULER_CONTROLLER_QUEUE_STAGE_H_

// One QueueAdmission::Run (queue_admission.h), internal to it: what the run
// read from the held objects, what it decided, and the commit. Its parts are
// defined by what they decide, one file each:
//   queue_admission.cc    reading the held objects, and the one commit;
//   queue_integration.cc  the JobSet integration (kueue-semantics §2.4):
//                         Workloads created, finished, deleted; JobSets
//                         started, stopped, released after an eviction;
//   queue_cycles.cc       the admission cycles (§3, §4): the input built from
//                         the objects, each decision applied;
//   queue_status.cc       ClusterQueue and LocalQueue status (§5);
//   queue_pods_ready.cc   waitForPodsReady (§3.6): PodsReady, the timeout's
//                         eviction, the requeue backoff;
//   queue_execution_time.cc  maximumExecutionTimeSeconds (scenario 37).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/status_macros.h"
#include "proto/jobset.pb.h"
#include "proto/kueue.pb.h"
#include "scheduler/controller/controller_metrics.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/event_log.h"
#include "scheduler/controller/queue_admission.h"
#include "scheduler/queues/cycle.h"
#include "scheduler/queues/flavor_assigner.h"
#include "scheduler/queues/model.h"
#include "store/keys.h"

namespace jobset::scheduler {

// The RBAC plural of Workloads: their keys are kueue/workloads/<ns>/<name>.
inline constexpr absl::string_view kWorkloads = "workloads";

// Returns the store key of Workload `ns`/`name`.
inline std::string WorkloadStoreKey(absl::string_view ns,
                                    absl::string_view name) {
  return store::keys::KueueKey(kWorkloads, ns, name);
}

inline absl::Time FromTimestamp(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}
// Whole seconds, as Kubernetes' metav1.Time.
inline google::protobuf::Timestamp ToTimestamp(absl::Time t) {
  google::protobuf::Timestamp ts;
  ts.set_seconds(absl::ToUnixSeconds(t));
  return ts;
}

// Whether `wl`'s status.reclaimablePods is `pods`.
inline bool SameReclaimable(const std::vector<api::ReclaimablePod>& pods,
                            const api::Workload& wl) {
  if (static_cast<int>(pods.size()) != wl.status().reclaimable_pods_size())
    return false;
  for (size_t i = 0; i < pods.size(); ++i) {
    const api::ReclaimablePod& held = wl.status().reclaimable_pods(i);
    if (held.name() != pods[i].name() || held.count() != pods[i].count())
      return false;
  }
  return true;
}

// Returns "<ns>/<name>" of `wl`, as the admission core names workloads.
inline std::string ShortKey(const api::Workload& wl) {
  return absl::StrCat(wl.metadata().namespace_(), "/", wl.metadata().name());
}

class QueueAdmission::Stage {
 public:
  Stage(QueueAdmission& qa, ControllerState& state, EventLog& events,
        absl::Time now)
      : qa_(qa), state_(state), events_(events), now_(now) {}

  absl::Status Run() {
    IndexObjects();
    for (auto& [key, t] : state_.jobsets()) Integrate(key, t);
    DeleteOrphans();
    JOBSET_RETURN_IF_ERROR(Cycles());
    QueueStatuses();
    qa_.wake_ = wake_;
    return Commit();
  }

 private:
  // ---- Reading ----

  void IndexObjects();

  // The Workload at `key` as this stage has it (staged over held), or null.
  const api::Workload* Current(const std::string& key) const;

  // A copy of the Workload at `key` staged for writing.
  api::Workload* Edit(const std::string& key);

  // A copy of JobSet `t` staged for writing.
  api::JobSet* EditJobSet(TrackedJobSet& t);
  const api::JobSet& JobSetNow(const TrackedJobSet& t) const;

  void Event(const std::string& jobset_key, absl::string_view type,
             absl::string_view reason, std::string message);

  // The ClusterQueue a LocalQueue `ns`/`lq` points at; "" when there is no
  // such LocalQueue.
  std::string ClusterQueueOf(absl::string_view ns, absl::string_view lq) const;

  // ---- The JobSet integration (§2.4) ----

  void Integrate(const std::string& key, TrackedJobSet& t);

  void CreateWorkload(const std::string& key, const TrackedJobSet& t,
                      const std::string& wl_key);

  // Injects the admission into the JobSet and unsuspends it.
  void Start(TrackedJobSet& t, const api::Workload& wl);

  // An evicted Workload whose pods are gone gives its quota back and
  // queues again (§2.4 step 6).
  void ReleaseEvicted(const std::string& wl_key);

  // Workloads of JobSets that are gone (Kueue's owner reference).
  void DeleteOrphans();

  // Kueue's stopPolicy HoldAndDrain: an admitted Workload of a stopped
  // ClusterQueue or LocalQueue is evicted (ClusterQueueStopped,
  // LocalQueueStopped); returns whether it was.
  bool Drain(TrackedJobSet& t, const std::string& wl_key,
             const api::Workload& wl);

  // A drained, pending Workload whose queue runs again: Requeued True
  // (ClusterQueueRestarted, LocalQueueRestarted).
  void Restarted(const std::string& wl_key, const api::Workload& wl);

  // An admitted Workload's status.reclaimablePods follows its JobSet's
  // succeeded Jobs (queues::ReclaimablePods): their quota is given back.
  void Reclaim(const TrackedJobSet& t, const std::string& wl_key,
               const api::Workload& wl);

  // Evicts the Workload at `wl_key` (Evicted True `reason`, `message`;
  // kueue_evicted_workloads_total with `cause`) and suspends its JobSet `t`
  // with its templates restored. Its quota is released once its pods end
  // (ReleaseEvicted).
  void Stop(TrackedJobSet& t, const std::string& wl_key,
            absl::string_view reason, absl::string_view message,
            absl::string_view cause);

  // ---- Maximum execution time (§6 scenario 37), queue_execution_time.cc

  // Deactivates an admitted Workload past its maximumExecutionTimeSeconds
  // (its JobSet stopped); returns whether it did. Else wakes at the end.
  bool MaximumExecutionTime(TrackedJobSet& t, const std::string& wl_key,
                            const api::Workload& wl);

  // Adds the time since its admission to an admitted Workload's
  // accumulatedPastExexcutionTimeSeconds; called as its Admitted turns
  // False.
  void AccumulateExecution(api::Workload* w);

  // ---- The cycles (§3) ----

  queues::FlavorIndex Flavors() const;

  // The labels of Namespace `ns` as a ClusterQueue's namespaceSelector
  // reads them (every Namespace carries kubernetes.io/metadata.name).
  const google::protobuf::Map<std::string, std::string>& NamespaceLabels(
      const std::string& ns);

  // Writes a pending Workload's QuotaReserved False, when it differs.
  void Pending(const std::string& wl_key, absl::string_view reason,
               absl::string_view message);

  // The admission core's model of Workload `wl` in ClusterQueue `cq`:
  // made anew when `held` is null (a Workload this stage staged); else the
  // held one's, converted once per stored revision and kept with it (shared,
  // not copied, while its ClusterQueue stays the same), since pod templates
  // are costly to read and 50,000 models costly to copy.
  absl::StatusOr<std::shared_ptr<const queues::Workload>> Model(
      Held* held, const api::Workload& wl, const std::string& cq);

  absl::Status BuildInput(queues::CycleInput& in);

  // Sets jobsetd's two preemption times on admitted Workload `m` (its
  // JobSet's last restart; its minimum runtime, the longer of its
  // ClusterQueue's and its WorkloadPriorityClass's
  // api::kMinimumRuntimeAnnotation, from its quota reservation).
  // A shared model is copied only where its times change.
  void SetPreemptionTimes(std::shared_ptr<const queues::Workload>& m);

  absl::Status Cycles();

  // The pending queue of ClusterQueue `cq` in `in`, or null.
  queues::PendingQueue* QueueOf(queues::CycleInput& in, const std::string& cq);

  // The pending entry of the workload with `uid` in ClusterQueue `cq`.
  std::vector<queues::PendingWorkload>::iterator FindPending(
      queues::PendingQueue& q, const std::string& uid);

  // Applies one decision; returns whether the next cycle may decide
  // something new.
  bool Apply(const queues::Decision& d, queues::CycleInput& in);

  void Admit(const std::string& wl_key, const queues::Admission& admission);

  // Evicts `v` for a Workload of ClusterQueue `preempting_cq`.
  void Evict(const queues::Victim& v, const std::string& preempting_cq);

  // ---- waitForPodsReady (§3.6) ----

  // An admitted Workload whose JobSet runs: its PodsReady condition as
  // Kueue writes it, and its eviction once the timeout passed.
  void WaitForPodsReady(TrackedJobSet& t, const std::string& wl_key);

  // Evicts the Workload at `wl_key` for PodsReadyTimeout (`cause`:
  // WaitForStart or WaitForRecovery): its requeueState's count and
  // requeueAt, or past backoffLimitCount its deactivation; its JobSet
  // suspended with its templates restored.
  void EvictNotReady(TrackedJobSet& t, const std::string& wl_key,
                     absl::string_view cause);

  // A pending Workload's requeueAt (InfinitePast when none); once it has
  // passed, the Requeued condition its eviction set False turns True
  // (BackoffFinished).
  absl::Time Backoff(const std::string& wl_key, const api::Workload& wl);

  // The next Run() comes at `t` at the latest (QueueAdmission::NextWake).
  void WakeAt(absl::Time t) {
    if (!wake_ || t < *wake_) wake_ = t;
  }

  // ---- ClusterQueue and LocalQueue status (§5) ----

  // Counts and usage of one queue.
  struct QueueTally {
    int32_t pending = 0;
    int32_t parked = 0;  // of `pending`, in the inadmissible set
    int32_t reserving = 0;
    queues::FlavorResourceQuantities usage;
    // Summing up `usage`: each sum and how many Workloads hold some of it.
    std::map<queues::FlavorResource, std::pair<int64_t, int32_t>> holders;
  };

  // Writes each ClusterQueue's and LocalQueue's status where it changed:
  // pendingWorkloads (queued and inadmissible), reservingWorkloads and
  // admittedWorkloads (the same here: jobsetd has no admission checks),
  // what they hold by flavor and resource, and the Active condition.
  void QueueStatuses();
  // With fair sharing: the quota tree with the admitted usage (`by_cq`, by
  // ClusterQueue), for the shares in ClusterQueue and Cohort status;
  // nullopt without.
  std::optional<queues::QuotaTree> SharesTree(
      const std::map<std::string, QueueTally>& by_cq) const;
  // Writes each Cohort's status.fairSharing where it changed.
  void CohortStatuses(const std::optional<queues::QuotaTree>& tree);

  // Stages `object` with `status` when it differs from the held one;
  // returns whether it did.
  template <typename Status>
  bool StageStatus(const std::string& key, const api::KueueObject& object,
                   const Status& status);
  // Whether the status of the queue at `key`, held at `revision`, was found
  // written from the same inputs (QueueAdmission::StatusSeen): it would
  // come out the same. See() records that it was.
  bool Seen(const std::string& key, int64_t revision, bool cluster_queue_exists,
            const QueueTally& tally) const;
  void See(const std::string& key, int64_t revision, bool cluster_queue_exists,
           const QueueTally& tally);

  // ---- The commit ----

  absl::Status Commit();

  void FlushEvents();

  // ---- Kueue's metrics: measured during the run, reported after ----

  // Keeps `measure` for ReportMetrics (dropped without metrics).
  void Measure(std::function<void(ControllerMetrics&)> measure) {
    if (qa_.options_.metrics != nullptr)
      measured_.push_back(std::move(measure));
  }

  // The ClusterQueue a Workload's counters name: its admission's, else its
  // LocalQueue's; "" when it has neither.
  std::string MetricQueueOf(const api::Workload& wl) const;

  // Reports the gauges and what was measured: called once the commit
  // succeeded (or when there was nothing to commit).
  void ReportMetrics();

  QueueAdmission& qa_;
  ControllerState& state_;
  EventLog& events_;
  const absl::Time now_;
  // Read from the held objects.
  std::map<std::string, const api::LocalQueue*> local_queues_;  // "ns/name"
  std::map<std::string, const api::ClusterQueue*> cluster_queues_;
  std::map<std::string, int32_t> priority_classes_;
  // Minimum runtimes (api::kMinimumRuntimeAnnotation) of ClusterQueues and
  // WorkloadPriorityClasses that give one, by name.
  std::map<std::string, absl::Duration> queue_runtimes_;
  std::map<std::string, absl::Duration> class_runtimes_;
  // The earliest end of a minimum runtime that protects an admitted
  // Workload now.
  std::optional<absl::Time> protected_until_;
  // When the next Run() must come though nothing changed (WakeAt).
  std::optional<absl::Time> wake_;
  std::map<std::string, google::protobuf::Map<std::string, std::string>>
      namespace_labels_;
  std::set<std::string> live_job_uids_;
  // When each JobSet (by uid) last restarted, where the controller saw it.
  std::map<std::string, absl::Time> restarts_;
  // in_.admitted beside the held admitted Workloads (qa_.admitted_): held
  // ones left out (read as this stage staged them), and those added (staged
  // ones, and the cycles' admissions). The queues' status adds them to
  // the held tallies (QueueAdmission::Holding, admitted_by_lq_).
  std::vector<const Held*> admitted_out_;
  std::vector<std::shared_ptr<const queues::Workload>> admitted_in_;
  // in_.admitted as BuildInput made it, in ranges: a ClusterQueue's held
  // admitted Workloads, unchanged, with `usage` their sum (the snapshot adds
  // it at once), or Workloads to add one by one (`usage` null).
  struct AdmittedGroup {
    std::string cluster_queue;
    size_t begin = 0;
    size_t end = 0;
    const queues::FlavorResourceQuantities* usage = nullptr;
  };
  std::vector<AdmittedGroup> admitted_groups_;
  // The cycle's pending entry per ClusterQueue.
  absl::flat_hash_map<std::string, size_t> pending_index_;
  // The last cycle's input, as the cycles left it.
  queues::CycleInput in_;
  // Decided: Kueue objects (nullopt: delete) and JobSets to write.
  std::map<std::string, std::optional<api::KueueObject>> staged_;
  std::map<std::string, api::JobSet> jobsets_;
  std::vector<std::pair<std::string, JobSetEvent>> pending_events_;
  bool capacity_changed_ = false;
  // Pending Workloads held back before the cycle, by ClusterQueue (a
  // stopped LocalQueue, a namespace not selected, a model that failed).
  std::map<std::string, int64_t> held_back_;
  // Kueue's metrics of this run (QueueStatuses' gauges, Measure's events).
  std::vector<ClusterQueueGauges> queue_gauges_;
  std::vector<CohortGauges> cohort_gauges_;
  std::vector<std::function<void(ControllerMetrics&)>> measured_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_QUEUE_STAGE_H_
