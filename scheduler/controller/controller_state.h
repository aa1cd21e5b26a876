#ifndef JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_STATE_H_
#define JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_STATE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/pod_config.h"
#include "api/pod_phase.h"
#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"
#include "scheduler/controller/agent_fleet.h"
#include "scheduler/controller/child_jobs.h"
#include "scheduler/controller/job_reconcile.h"
#include "scheduler/controller/node_sink.h"
#include "scheduler/controller/pod_events.h"
#include "scheduler/resilience/goodput_ledger.h"
#include "scheduler/resilience/straggler_detector.h"
#include "store/store.h"

namespace jobset::scheduler {

// A placed pod.
inline bool Placed(const api::PodRecord& pod) {
  return !pod.node_name().empty();
}

// A placed pod that is not finished: it holds its node's resources.
inline bool OnNode(const api::PodRecord& pod) {
  return Placed(pod) && !PodFinished(pod);
}

// Whether an agent has said anything about `pod` (it was sent and
// started, or stopped for a restart in place).
inline bool PodStarted(const api::PodRecord& pod) {
  const api::PodStatus& s = pod.status();
  return s.phase() != api::kPodPending || s.container_statuses_size() > 0 ||
         s.init_container_statuses_size() > 0 || s.has_start_time() ||
         pod.in_place_stopped();
}

// One child Job and its pods, as compact records (the full pods are built
// only for agents and clients).
//
// A Job being deleted (the JobSet layer removed it: a previous attempt's, or
// one still active when the JobSet finished) goes in the foreground: it and
// its pods keep their names until every pod has stopped, and then go
// together. Three shortcuts follow from that, each marked "foreground" where
// it is taken: its pods' stop is not written to their records (the store
// shows the Job's deletionTimestamp, and Load stops them again); a stopped
// pod of it is not reported on its own (OnPodReport), nor erased alone
// (ReconcilePass), since the Job layer erases the Job with all its pods.
struct JobState {
  api::Job job;
  // `job` without its status, shared with assignments: built by Shape()
  // when first needed, and again after the Job's spec changes; dropped once
  // the Job finished with none of its pods on a node (ReconcilePass).
  std::shared_ptr<const api::Job> shape;
  absl::Status env;  // Whether its pods' environment resolves.
  // What its pods take from Secrets and ConfigMaps (api/pod_config.h),
  // resolved by PodConfigs when its pods are first sent and shared by their
  // assignments; null until then, and again after its spec changes.
  std::shared_ptr<const api::PodConfig> config;
  // Why that failed ("" when it did not): its pods not yet started wait
  // (PodRecord.waiting_for_config) and `config` has what did resolve.
  std::string config_error;
  // `job` with its labels parsed, for the JobSet layer (it points at `job`:
  // a tracked JobState never moves).
  ChildJob child;
  std::map<std::string, api::PodRecord> pods;  // By name.
  // The Job, and its JobPods record, must be written (and its JobSet is
  // staged in the pass's PassWrites).
  bool job_changed = false;
  bool pods_changed = false;
  // How many chunks its pods take in the store (records'
  // JobPodsChunkKey): rewriting them in fewer, or erasing the Job, deletes
  // the rest.
  int stored_chunks = 0;
  bool dirty = false;  // In its JobSet's dirty_jobs.
  // None of its pods was on a node when placement last walked them, and
  // nothing changed them since: every change that can put a pod on a node
  // (a binding, a restart in place) goes through PassWrites::PodsChanged or
  // MarkJobDirty, which clear it. Placement's walk skips such Jobs, so that
  // finished JobSets kept for their TTL cost it nothing.
  bool idle = false;

  // Whether the JobSet layer deleted it (see above).
  bool deleting() const { return job.metadata().has_deletion_timestamp(); }
  // Returns `shape`, building it first if needed.
  const std::shared_ptr<const api::Job>& Shape();
  // Replaces the Job's metadata and spec (new, read by Load, or an update
  // from the JobSet layer), keeping its pods.
  void SetJob(api::Job new_job);
};

// A JobSet's place in the queue of gangs waiting for placement.
struct GangState {
  int32_t skips = 0;          // Placement's no-starvation count.
  int32_t priority = 0;       // The priority of its pods.
  std::string unschedulable;  // The last placement rejection, "" if none.
  // For the pod startup stages, in this jobsetd's memory: when placement
  // first tried the waiting pods (the pass that created them), and when it
  // last placed the gang (the launch orders' bound time).
  std::optional<absl::Time> waiting;
  std::optional<absl::Time> placed;
};

// What the metrics follow of a JobSet's attempts: when this jobsetd first
// saw it (its creation's commit, to the clock's precision rather than
// creationTimestamp's second), when the current attempt's restart was
// decided, and whether the first attempt was seen all running.
struct AttemptTiming {
  std::optional<absl::Time> accepted;
  std::optional<absl::Time> restart_decided;
  bool first_running_seen = false;
  // When status.restarts last grew (kept; in memory, so unknown after the
  // controller restarts): Kueue's preemption prefers the victim that loses
  // the least work since then.
  std::optional<absl::Time> last_restart;
};

// Everything the controller holds about one JobSet.
struct TrackedJobSet {
  std::string key;  // "<ns>/<name>"
  api::JobSet jobset;
  int64_t revision = 0;                  // The store revision of `jobset`.
  std::map<std::string, JobState> jobs;  // By name.
  // The node each Job's completion indexes last ran on: sticky restarts.
  std::map<std::string, std::vector<std::string>> last_node;
  // When a timer of it (a requeue, a deadline, a progress check) is due:
  // set through ControllerState::WakeAt, which indexes it; cleared here.
  std::optional<absl::Time> wake;
  // Pods whose status an agent changed since the last pass, with their
  // Jobs (only passes erase pods, and a pass takes these first).
  absl::flat_hash_map<api::PodRecord*, JobState*> reported;
  // Events agents reported for its pods since the last pass (image pulls),
  // bounded; the pass adds them to the JobSet's events.
  PendingPodEvents pod_events;
  // Jobs whose pods, spec or timers changed: the Job layer looks at these
  // only (incremental: one pod report does not rescan 1,000 Jobs).
  std::set<std::string> dirty_jobs;
  bool deleted = false;  // Deleted through the API; cascade next pass.
  // Set when the JobSet must fail instead of running (the store refused its
  // records): the next pass marks it Failed with this reason and message.
  struct Failure {
    std::string reason, message;
  };
  std::optional<Failure> fail;
  GangState gang;
  AttemptTiming timing;
  // Straggler detection's memory between passes (progress_checks.cc), and
  // the nodes its Replace action took from this JobSet: placement gives
  // them none of its pods. In memory only: a jobsetd restart forgets both.
  resilience::StragglerState stragglers;
  std::set<std::string> excluded_nodes;
  // It lost a host (LoseNode): its next attempts may use hot spares
  // (placement's use_spares). In memory only.
  bool use_spares = false;
  // Its goodput (goodput_tracking.cc), read from status.goodput when first
  // needed and written back there.
  std::optional<resilience::GoodputLedger> goodput;
  // Which of its earlier attempts' pods are stored (attempt_pods.h), as
  // stored at attempts/<ns>/<name>; read by Load.
  api::AttemptHistory attempt_history;

  // Queues `job` for the Job layer.
  void MarkJobDirty(JobState& job);
  // Remembers that completion index `index` of Job `job` ran on `node`.
  void RememberNode(const std::string& job, int index, const std::string& node);
  // The node completion index `index` of Job `job` last ran on, or "".
  const std::string& LastNode(const std::string& job, int index) const;
  // Appends to `orders` the orders to run the placed, current pods, with the
  // host table of all of them and their Jobs' configs; pods waiting for
  // their Secrets and ConfigMaps (and those not started of a Job whose
  // config failed) are not sent.
  void AppendAssignments(std::vector<Assignment>* orders);
};

// Where a pod lives. The maps holding them are node-based, so the pointers
// stay valid until the pod, its Job or its JobSet is erased, which removes
// the entry first.
struct PodLocation {
  TrackedJobSet* jobset;
  JobState* job;
  api::PodRecord* pod;
};

// The controller's view of the cluster: every JobSet with its Jobs and pods,
// the pods by uid (for fencing reports), the nodes, and which JobSets a pass
// must look at. Rebuilt from the store by Load. Used only from the
// controller thread.
class ControllerState {
 public:
  // "<ns>/<name>", the key of a tracked JobSet.
  static std::string KeyOf(absl::string_view ns, absl::string_view name);

  // Reads every JobSet, Job and pod record from `store`, replacing what was
  // held (nodes stay). Records whose JobSet is gone are remembered for the
  // next pass to delete (TakeOrphanKeys). A record that does not decode is
  // set aside (TakeUndecodable), left in the store and skipped, and so are
  // what depends on it: the children of an undecodable JobSet (never taken
  // for orphans), and a Job whose record or pods do not decode, whose
  // JobSet then fails (TrackedJobSet::fail, reason UndecodableRecord):
  // what it runs is unknown. Errors are the store's only. Returns the
  // revision read at.
  absl::StatusOr<int64_t> Load(store::Store& store);

  // A record Load set aside: its key, the error, and the JobSet it belongs
  // to ("" when none is tracked).
  struct Undecodable {
    std::string key;
    absl::Status error;
    std::string jobset;
  };
  std::vector<Undecodable> TakeUndecodable();
  void AddUndecodable(Undecodable u) { undecodable_.push_back(std::move(u)); }
  // Whether JobSet `key`'s own record did not decode at the last Load (its
  // children are neither loaded nor orphans).
  bool IsUndecodable(const std::string& key) const {
    return undecodable_jobsets_.contains(key);
  }

  std::map<std::string, TrackedJobSet>& jobsets() { return jobsets_; }
  const std::map<std::string, TrackedJobSet>& jobsets() const {
    return jobsets_;
  }
  TrackedJobSet* Find(const std::string& key);
  const TrackedJobSet* Find(const std::string& key) const;
  // Adds (or replaces) JobSet `key` and returns it.
  TrackedJobSet& Track(const std::string& key);
  // Forgets JobSet `key`; its pods must be unindexed already (EraseJob).
  void Untrack(const std::string& key);
  // Forgets JobSet `key` with its Jobs and pods (and their index) without
  // touching the store: the controller stops managing it.
  void SetAside(const std::string& key);

  // Adds `job` to `t` and returns its state.
  static JobState& AddJob(TrackedJobSet& t, api::Job job);

  // The pod index: every tracked pod by uid.
  void IndexPod(TrackedJobSet& t, JobState& job, api::PodRecord& pod);
  void UnindexPod(const api::PodRecord& pod);
  const PodLocation* FindPod(absl::string_view uid) const;

  // Nodes, never erased, in name order.
  const std::map<std::string, NodeInfo>& nodes() const { return nodes_; }
  void SetNode(NodeInfo node);
  // Marks node `name` not ready; false when it is unknown.
  bool SetNodeNotReady(const std::string& name);

  // JobSets the next pass reconciles.
  void MarkDirty(const std::string& key) { dirty_.insert(key); }
  // Wakes `t` at `at` unless it wakes earlier already.
  void WakeAt(TrackedJobSet& t, absl::Time at);
  // Marks dirty, with all their Jobs, the JobSets whose wake is due at `now`.
  void MarkDue(absl::Time now);
  // The earliest wake of any JobSet.
  std::optional<absl::Time> NextWake() const;
  // How many wakes are indexed, stale ones included (tests).
  size_t wakes_indexed() const { return wakes_.size(); }
  bool HasDirty() const { return !dirty_.empty(); }
  // Takes up to `max` of them, in key order.
  std::set<std::string> TakeDirty(size_t max);

  // Keys of Jobs, pods and events whose JobSet is gone (found by Load).
  std::vector<std::string> TakeOrphanKeys();
  void AddOrphanKey(std::string key) { orphan_keys_.push_back(std::move(key)); }

 private:
  std::map<std::string, TrackedJobSet> jobsets_;  // By KeyOf.
  // Its keys view the records' own uids (which never change), and go before
  // their records do.
  absl::flat_hash_map<absl::string_view, PodLocation> pod_by_uid_;
  std::map<std::string, NodeInfo> nodes_;
  std::set<std::string> dirty_;
  // (time, key) of every JobSet's wake, earliest first, so that no pass
  // looks at every JobSet for its timers. Entries go stale (a wake cleared
  // or moved, a JobSet gone) and are dropped when they reach the top.
  using Wake = std::pair<absl::Time, std::string>;
  mutable std::priority_queue<Wake, std::vector<Wake>, std::greater<Wake>>
      wakes_;
  // Whether the top of wakes_ is some JobSet's wake now.
  bool WakeCurrent(const Wake& w) const;
  std::vector<std::string> orphan_keys_;
  std::vector<Undecodable> undecodable_;
  // JobSets (KeyOf) and Jobs ("<ns>/<jobset>/<job>") whose records did not
  // decode: what is stored under them is left alone.
  std::set<std::string> undecodable_jobsets_;
  std::set<std::string> undecodable_jobs_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_STATE_H_
