#ifndef JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_CORE_H_
#define JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_CORE_H_

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/features.h"
#include "common/clock.h"
#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"
#include "scheduler/controller/agent_fleet.h"
#include "scheduler/controller/jobset_reconcile.h"
#include "scheduler/controller/node_sink.h"
#include "scheduler/metrics.h"
#include "scheduler/placement/requirements.h"
#include "scheduler/placement/snapshot.h"
#include "store/store.h"

namespace jobset::scheduler {

// How many events each JobSet keeps, and for how long.
struct EventRetention {
  size_t per_jobset = 100;
  absl::Duration max_age = absl::Hours(24);
};

// The controller's state and one reconcile pass, without threads: the
// Controller runs it on its single thread, and tests drive it directly with
// a FakeClock. Each Pass reconciles every JobSet touched since the last one
// (the Job layer, then the JobSet layer, to a fixed point), places the
// pending gangs, commits everything in one store batch, then tells the
// fleet what to run and stop. Everything needed to continue is in the
// store; Load rebuilds the state after a restart.
// Used only from the controller thread (thread-compatible).
class ControllerCore {
 public:
  ControllerCore(store::Store* store, AgentFleet* fleet, Clock* clock,
                 api::Features features);

  // Updates `metrics` from now on (null: none). It must outlive the core.
  void set_metrics(SchedulerMetrics* metrics) { metrics_ = metrics; }
  void set_event_retention(EventRetention retention) { retention_ = retention; }

  // Reads every JobSet, Job and pod from the store, replacing what the
  // controller held (nodes stay). Returns the revision read at (watch the
  // store from there).
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

  // Runs one pass. Errors are the store's: nothing of the pass reached the
  // fleet, but memory is ahead of the store, so the caller must rebuild the
  // core from the store (Controller crashes, and jobsetd's restart Loads).
  absl::Status Pass();

  // When the next timer (TTL, activeDeadlineSeconds) is due, if any.
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
  int64_t stale_reports() const { return stale_reports_; }

 private:
  // One child Job and its pods, as compact records (the full pods are built
  // only for agents and clients).
  struct JobState {
    api::Job job;
    // `job` without its status, shared with launch orders: built by Shape()
    // when first needed, and again after the Job's spec changes.
    std::shared_ptr<const api::Job> shape;
    absl::Status env;  // Whether its pods' environment resolves.
    // `job` with its labels parsed, for the JobSet layer (it points at `job`:
    // a tracked JobState never moves).
    ChildJob child;
    std::map<std::string, api::PodRecord> pods;  // By name.
    // The Job, and its JobPods record, must be written (and the JobSet is
    // in PendingWrites::staged).
    bool job_changed = false;
    bool pods_changed = false;
    // The JobSet layer deleted it and the store does not say so yet (see
    // unstored_deletions_).
    bool deletion_unstored = false;
    bool dirty = false;  // In its JobSet's dirty_jobs.
  };

  // Everything the controller holds about one JobSet.
  struct Tracked {
    std::string key;  // "<ns>/<name>"
    api::JobSet jobset;
    int64_t revision = 0;                  // The store revision of `jobset`.
    std::map<std::string, JobState> jobs;  // By name.
    // The node each Job's completion indexes last ran on: sticky restarts.
    std::map<std::string, std::vector<std::string>> last_node;
    // The most recent events, bounded, with their store sequence numbers.
    std::deque<std::pair<uint64_t, JobSetEvent>> events;
    std::optional<absl::Time> wake;
    std::string unschedulable;  // The last placement rejection, "" if none.
    // Pods whose status an agent changed since the last pass, with their
    // Jobs (only passes erase pods, and a pass takes these first).
    absl::flat_hash_map<api::PodRecord*, JobState*> reported;
    // Jobs whose pods, spec or timers changed: the Job layer looks at these
    // only (incremental: one pod report does not rescan 1,000 Jobs).
    std::set<std::string> dirty_jobs;
    bool deleted = false;       // Deleted through the API; cascade next pass.
    int32_t skips = 0;          // Placement's no-starvation count.
    int32_t gang_priority = 0;  // The priority of its pods.
    // Metrics: when the current attempt's restart was decided, and whether
    // the first attempt was seen all running.
    std::optional<absl::Time> restart_decided;
    bool first_running_seen = false;
  };

  // Where a pod lives. The maps holding them are node-based, so the
  // pointers stay valid until the pod, its Job or its JobSet is erased,
  // which removes the entry first.
  struct PodLocation {
    Tracked* jobset;
    JobState* job;
    api::PodRecord* pod;
  };

  // Writes collected during a pass, one commit.
  struct PendingWrites {
    std::map<std::string, std::optional<std::string>> keys;  // nullopt: delete
    std::set<std::string> jobsets;  // JobSet keys whose object changed
    // JobSets whose Jobs or pod records changed: staged before the commit.
    std::set<std::string> staged;
    // JobSets with pods placed in this pass: launch orders after the commit.
    std::set<std::string> launched;
    // Pods to stop, and pods whose final status is durable after the commit
    // (their records live until the pass ends: erased ones in erased_ and
    // erased_pods_).
    std::vector<const api::PodRecord*> stop;
    std::vector<const api::PodRecord*> release;
    std::map<std::string, std::vector<JobSetEvent>> events;
  };

  static std::string KeyOf(const std::string& ns, const std::string& name);
  void ReconcileOne(const std::string& key, absl::Time now, PendingWrites* w);
  // Adds `job` to `t` (new, or read by Load) and returns its state.
  JobState& AddJob(Tracked& t, api::Job job);
  // Replaces the metadata and spec of `state`'s Job (an update from the
  // JobSet layer), keeping its pods.
  void UpdateJob(JobState& state, api::Job job);
  // Creates `job`'s pods of completion indexes `indexes` (-1: NonIndexed).
  void AddPods(Tracked& t, JobState& job, const std::vector<int>& indexes,
               absl::Time now, PendingWrites* w);
  void ErasePod(Tracked& t, JobState& job, const std::string& name,
                PendingWrites* w);
  // Erases Job `name` and its stored records (its pods must be gone).
  void EraseJob(Tracked& t, const std::string& name, PendingWrites* w);
  // Queues `job` for the Job layer.
  void MarkDirty(Tracked& t, JobState& job);
  void MarkJobChanged(Tracked& t, JobState& job, PendingWrites* w);
  void MarkPodsChanged(Tracked& t, JobState& job, PendingWrites* w);
  // The Job layer, over the Jobs in t.dirty_jobs.
  void ReconcileJobs(Tracked& t, absl::Time now, PendingWrites* w);
  void RemovePod(Tracked& t, JobState& job, api::PodRecord& pod, absl::Time now,
                 PendingWrites* w);
  void DeleteJobSet(const std::string& key, PendingWrites* w);
  void PlacePending(absl::Time now, PendingWrites* w);
  // PlacePending, while a second thread builds the shapes of the Jobs of new
  // gangs and serializes the Jobs this pass changed (placement reads Jobs,
  // and changes only their pods and flags). Returns those serialized, for
  // StageChildren; none when too few to be worth the thread.
  absl::flat_hash_map<const JobState*, std::string> PlaceAlongsidePreparing(
      absl::Time now, PendingWrites* w);
  // Places every unplaced pod of JobSet `key` on `snapshot`, or none; on
  // failure marks them Unschedulable. Returns whether they were placed.
  bool TryPlace(const std::string& key, int32_t priority,
                const placement::ClusterSnapshot& snapshot, absl::Time now,
                PendingWrites* w);
  // Builds a snapshot of the nodes and the pods' usage, from the last one
  // when no node changed since; RecycleSnapshot keeps it for the next.
  absl::StatusOr<placement::ClusterSnapshot> Snapshot();
  void RecycleSnapshot(absl::StatusOr<placement::ClusterSnapshot> snapshot);
  // A node changed: the last snapshot's hosts are stale.
  void ForgetSnapshot();
  absl::StatusOr<std::shared_ptr<const placement::PodRequirements>>
  Requirements(const api::Job& job);
  // Stages every changed Job and JobPods record as store writes; Jobs in
  // `serialized_jobs` are written as serialized there.
  void StageChildren(
      PendingWrites* w,
      absl::flat_hash_map<const JobState*, std::string> serialized_jobs);
  // Appends to `orders` the orders to run the placed, current pods of `t`,
  // with the host table of all of them.
  void LaunchOrders(Tracked& t, std::vector<LaunchOrder>* orders);
  static const std::shared_ptr<const api::Job>& Shape(JobState& job);
  // Stages `w`'s events as store writes, trimming each JobSet's to the
  // retention; once a minute, trims every JobSet's by age.
  void StageEvents(absl::Time now, PendingWrites* w);
  // Deletes `t`'s events beyond the retention.
  void TrimEvents(Tracked& t, absl::Time now, PendingWrites* w);
  absl::Status Commit(PendingWrites* w);
  // Metrics of one reconcile: terminal states and restarts reached (from
  // `before`), and the attempt's pods all running.
  void RecordReconcile(Tracked& t, const api::JobSetStatus& before,
                       const std::vector<JobSetEvent>& events, absl::Time now);
  // The gauges (JobSets by state, pods by phase, pending), at most once a
  // second.
  void RecordGauges(absl::Time now);

  store::Store* const store_;
  AgentFleet* const fleet_;
  Clock* const clock_;
  const api::Features features_;

  std::map<std::string, Tracked> jobsets_;  // By "<ns>/<name>".
  std::set<std::string> dirty_;
  // JobSets with pods not yet placed, those that got new ones since the last
  // placement, and whether capacity grew (nodes, pods gone) since then.
  std::set<std::string> pending_gangs_;
  std::set<std::string> new_gangs_;
  bool capacity_grew_ = true;
  std::map<std::string, NodeInfo> nodes_;  // Never erased.
  // The last placement's snapshot, kept so that the next does not copy every
  // node's labels and index them again; empty after a node changed
  // (ForgetSnapshot). host_position_ gives each node's host id, node_at_
  // the node of each host id.
  std::optional<placement::ClusterSnapshot> last_snapshot_;
  absl::flat_hash_map<absl::string_view, size_t> host_position_;
  std::vector<const NodeInfo*> node_at_;
  // Bumped by ForgetSnapshot: a snapshot taken before a node changed is not
  // kept.
  uint64_t nodes_generation_ = 0;
  uint64_t lent_generation_ = 0;
  // Every pod by uid, for fencing reports. The keys view the records' own
  // uids (which never change), and go before their records do.
  absl::flat_hash_map<absl::string_view, PodLocation> pod_by_uid_;
  // Pod requirements per Job uid (templates never change under a Job).
  absl::flat_hash_map<std::string,
                      std::shared_ptr<const placement::PodRequirements>>
      requirements_;
  // The same, shared by every Job of one pod spec (by its deterministic
  // serialization); entries expire with the last Job, and are swept once
  // they are more than twice what was left at the last sweep.
  absl::flat_hash_map<std::string,
                      std::weak_ptr<const placement::PodRequirements>>
      requirements_by_spec_;
  size_t swept_specs_ = 0;
  int64_t stale_reports_ = 0;
  uint64_t last_event_seq_ = 0;
  SchedulerMetrics* metrics_ = nullptr;
  EventRetention retention_;
  absl::Time events_swept_ = absl::InfinitePast();
  // Events decided outside a pass (node loss), by JobSet key.
  std::map<std::string, std::vector<JobSetEvent>> queued_events_;
  absl::Time gauges_at_ = absl::InfinitePast();
  // Jobs erased in this pass, with their pods: freed at its end.
  std::vector<JobState> erased_;
  // Pods erased in this pass (their Jobs stay): freed at its end.
  std::vector<std::map<std::string, api::PodRecord>::node_type> erased_pods_;
  // Keys of Jobs and pods whose JobSet is gone (found by Load).
  std::vector<std::string> orphan_keys_;
  // JobSets with Jobs the JobSet layer deleted in the last pass, their
  // deletionTimestamp not yet stored. It is written by the next pass, which
  // runs at once: the pass that decides a restart commits only what recovery
  // needs (the JobSet's status, from which the JobSet layer deletes the
  // previous attempt's Jobs again after a crash), so that the old attempt's
  // pods are told to stop without waiting for 1,000 Jobs to be rewritten,
  // and the next pass writes them while the agents stop the pods.
  std::set<std::string> unstored_deletions_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_CORE_H_
