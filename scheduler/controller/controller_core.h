#ifndef JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_CORE_H_
#define JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_CORE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/features.h"
#include "common/clock.h"
#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"
#include "scheduler/controller/agent_fleet.h"
#include "scheduler/controller/applier.h"
#include "scheduler/controller/controller_metrics.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/event_log.h"
#include "scheduler/controller/gang_placement.h"
#include "scheduler/controller/jobset_reconcile.h"
#include "scheduler/controller/limits.h"
#include "scheduler/controller/node_quarantine.h"
#include "scheduler/controller/node_sink.h"
#include "scheduler/controller/pass_writes.h"
#include "scheduler/controller/placement_caches.h"
#include "scheduler/controller/pod_configs.h"
#include "scheduler/controller/progress_source.h"
#include "scheduler/controller/queue_admission.h"
#include "scheduler/controller/reconcile_pass.h"
#include "scheduler/resilience/node_fault.h"
#include "store/store.h"

namespace jobset::scheduler {

// The controller's state and one reconcile pass, without threads: the
// Controller runs it on its single thread, and tests drive it directly with
// a FakeClock. Each Pass reconciles every JobSet touched since the last one
// (ReconcilePass: the Job layer, then the JobSet layer, to a fixed point),
// places the pending gangs (GangPlacer), and hands what it decided to the
// Applier, which commits it in one store batch and then tells the fleet what
// to run and stop. Everything needed to continue is in the store; Load
// rebuilds the state after a restart. Used only from the controller thread
// (thread-compatible).
class ControllerCore {
 public:
  struct Options {
    api::Features features = {};
    // Updated from now on (null: none). It must outlive the core.
    ControllerMetrics* metrics = nullptr;
    EventRetention event_retention = {};
    // The most pods one attempt of a JobSet may have: a JobSet over it
    // fails with reason TooManyPods instead of being expanded.
    int64_t max_pods_per_attempt = kDefaultMaxPodsPerAttempt;
    // Pods' training progress for hang detection (null: none). It must
    // outlive the core.
    const ProgressSource* progress = nullptr;
    // Bad-host quarantine (docs/resilience.md): off unless after > 0.
    struct Quarantine {
      int after = 0;  // attributed failures within `window` to quarantine
      absl::Duration window = absl::Hours(24);
      resilience::DeviceErrorPolicy devices = {};
    } quarantine = {};
  };
  ControllerCore(store::Store* store, AgentFleet* fleet, Clock* clock,
                 Options options);

  // Reads every JobSet, Job, pod and event from the store, replacing what
  // the controller held (nodes stay). Returns the revision read at (watch
  // the store from there). JobSets whose records the store refused in an
  // earlier Pass are failed (reason CommitRefused) by the next Pass; one
  // refused again once failed is set aside (no longer managed). Errors are
  // the store's only.
  absl::StatusOr<int64_t> Load();

  // Tells the fleet what every node should run, as the store says: call
  // after Load, so that agents reconnecting to a restarted jobsetd get their
  // desired sets.
  void Announce();

  // Adds or replaces a node.
  void SetNode(NodeInfo node);

  // The node is gone (lost, or drained): every unfinished pod on it fails
  // with a DisruptionTarget condition with `reason` (as Kubernetes marks
  // pods of an unreachable node), and the pods' policies decide. The node
  // takes no new pods until SetNode says it is ready again.
  void LoseNode(const std::string& name, const std::string& reason,
                const std::string& message);

  // Takes a change of a JobSet made through the API (or by this controller:
  // such echoes are recognised by revision and ignored).
  void OnJobSetEvent(const store::Event& event);

  // Takes an agent's report.
  void OnPodReport(const PodReport& report);

  // Takes a change of a Secret or ConfigMap ("secrets/<ns>/<name>",
  // "configmaps/<ns>/<name>"; the value is not read): pods of its
  // namespace waiting for their Secrets and ConfigMaps are retried.
  void OnConfigEvent(absl::string_view key);
  // Retries every pod waiting for its Secrets and ConfigMaps (the watch of
  // them fell behind).
  void RetryConfigs() { configs_.RetryAll(); }

  // Takes a change under kueue/ (Kueue's objects; an echo of the
  // controller's own Workload writes is recognised by revision).
  // An empty key: the watch fell behind; every Kueue object is read again.
  void OnKueueEvent(const store::Event& event);

  // Runs one pass. Errors are the store's (or kAborted: the API kept
  // changing the pass's JobSets): nothing of the pass reached the fleet,
  // but memory is ahead of the store, so the caller must rebuild the core
  // from the store with Load (as after a crash) before the next pass. When
  // the store refused the batch as kInvalidArgument (a record over its
  // limits), the JobSets whose records it refused fail at that Load, and
  // the rest of the pass is redone without them.
  absl::Status Pass();

  // When the next pass is due: now when work waits, else at the next timer
  // (TTL, activeDeadlineSeconds), if any.
  std::optional<absl::Time> NextWake() const;

  // Observability (tests; clients read the store). Pods are built in full.
  const api::JobSet* FindJobSet(const std::string& ns,
                                const std::string& name) const;
  std::vector<api::Job> Jobs(const std::string& ns,
                             const std::string& name) const;
  std::vector<api::Pod> Pods(const std::string& ns,
                             const std::string& name) const;
  std::vector<JobSetEvent> Events(const std::string& ns,
                                  const std::string& name) const;
  // The Workload of JobSet `ns`/`name` (Kueue manages it), or null.
  const api::Workload* WorkloadOf(const std::string& ns,
                                  const std::string& name) const {
    return queues_.WorkloadOf(state_, ns, name);
  }
  int64_t stale_reports() const { return observed_.stale_reports; }

 private:
  // Marks Jobs the JobSet layer deleted in the last pass as changed, so that
  // this pass stores their deletionTimestamp.
  void StoreDeferredDeletions(PassWrites& writes);
  // Builds a serialized copy of each Job the pass changed, and the shapes
  // of the new gangs' Jobs, on a second thread while placement runs
  // (placement reads Jobs, and changes only their pods and flags). Returns
  // the serialized Jobs; none when too few to be worth the thread.
  absl::flat_hash_map<const JobState*, std::string> PlaceAlongsidePreparing(
      PassWrites& writes, absl::Time now);

  // Remembers the JobSets owning `keys`, which the store refused with
  // `error`: Load fails them, or sets aside those already failed for it.
  void RememberRefused(const std::vector<std::string>& keys,
                       const absl::Status& error);

  store::Store* const store_;
  Clock* const clock_;
  const api::Features features_;
  const int64_t max_pods_per_attempt_;
  const ProgressSource* const progress_;
  AgentFleet* const fleet_;
  std::optional<NodeQuarantine> quarantine_;
  // JobSets (by key) whose records the store refused, with its error: the
  // next Load fails them. They survive Load, as does what follows.
  std::map<std::string, std::string> refused_;
  // JobSets failed because the store refused their records.
  std::set<std::string> failed_for_refusal_;
  // JobSets refused again once failed: Load leaves them out.
  std::set<std::string> set_aside_;
  Applier applier_;
  ControllerState state_;
  GangQueue gangs_;
  SnapshotCache snapshots_;
  RequirementsCache requirements_;
  EventLog events_;
  DeferredJobDeletions deferred_;
  PodConfigs configs_;
  QueueAdmission queues_;
  // What the core reports about itself.
  struct Observed {
    ControllerMetrics* metrics = nullptr;         // May be null.
    absl::Time gauges_at = absl::InfinitePast();  // The last gauges.
    int64_t stale_reports = 0;
    // The reports that ended launches (their JobSet, when they arrived at
    // the hub): the commit of the pass that reconciles their JobSet ends
    // their reported_to_committed stage.
    std::vector<std::pair<std::string, absl::Time>> launch_reports;
  } observed_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_CORE_H_
