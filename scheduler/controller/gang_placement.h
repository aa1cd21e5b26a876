#ifndef JOBSET_SCHEDULER_CONTROLLER_GANG_PLACEMENT_H_
#define JOBSET_SCHEDULER_CONTROLLER_GANG_PLACEMENT_H_

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "scheduler/controller/controller_metrics.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/pass_writes.h"
#include "scheduler/controller/placement_caches.h"
#include "scheduler/placement/snapshot.h"

namespace jobset::scheduler {

// The JobSets whose current attempt has pods waiting for a node, and what
// decides whether trying again is worth it: a gang that did not fit is tried
// again only once capacity has grown (nodes, pods gone), since placing
// others only shrinks it. A gang restarting in place is held while its
// barrier is up (its new pods start with the others) and tried again as new
// once it is down. Used only from the controller thread.
class GangQueue {
 public:
  // JobSet `key` got new pods to place.
  void Add(const std::string& key) {
    pending_.insert(key);
    fresh_.insert(key);
  }
  // JobSet `key` is placed, or gone.
  void Remove(const std::string& key) {
    pending_.erase(key);
    fresh_.erase(key);
    held_.erase(key);
  }
  // JobSet `key` waits at a restart in place's barrier: not tried until
  // Release.
  void Hold(const std::string& key) {
    held_.insert(key);
    fresh_.erase(key);
  }
  // JobSet `key`'s barrier is down: the next round tries it as if new.
  void Release(const std::string& key) {
    if (held_.erase(key) > 0 && pending_.contains(key)) fresh_.insert(key);
  }
  // JobSet `key` may place now (a previous attempt's Job it waited for is
  // gone): its next round tries it as if new.
  void Retry(const std::string& key) {
    if (pending_.contains(key) && !held_.contains(key)) fresh_.insert(key);
  }
  void CapacityGrew() { capacity_grew_ = true; }

  const std::set<std::string>& pending() const { return pending_; }
  const std::set<std::string>& held() const { return held_; }
  // Gangs added since the last round.
  const std::set<std::string>& fresh() const { return fresh_; }
  // Whether a placement round could place anything now.
  bool Worthwhile() const { return capacity_grew_ || !fresh_.empty(); }
  // Starts a round: whether capacity grew, and the gangs added since the
  // last round.
  std::pair<bool, std::set<std::string>> TakeRound() {
    return {std::exchange(capacity_grew_, false), std::exchange(fresh_, {})};
  }

 private:
  std::set<std::string> pending_;
  std::set<std::string> fresh_;
  std::set<std::string> held_;  // a subset of pending_
  bool capacity_grew_ = true;
};

// One pass's placement: every pending gang in placement's pending order
// (priority, then submission, with its no-starvation rule), each placed
// whole on a snapshot of the nodes and their usage, or not at all (its pods
// then say why, once per new reason). Used only from the controller thread,
// for one pass.
class GangPlacer {
 public:
  GangPlacer(ControllerState& state, GangQueue& gangs, SnapshotCache& snapshots,
             RequirementsCache& requirements, ControllerMetrics* metrics,
             PassWrites& writes, absl::Time now)
      : state_(state),
        gangs_(gangs),
        snapshots_(snapshots),
        requirements_(requirements),
        metrics_(metrics),
        writes_(writes),
        now_(now) {}

  // Places what can be placed now.
  void PlacePending();

  // Whether the unplaced pods of `t` may take hot spares (placement's
  // use_spares): `t` lost a host (TrackedJobSet::use_spares), or one of
  // `last_nodes` (where the pods to place last ran) is lost (not ready, or
  // no longer registered), quarantined (taint jobsetd.io/quarantined), or
  // a spare itself (the gang keeps the spare it took). Derived from the
  // nodes and the pods' records, so a jobsetd restart forgets none of it.
  bool MayUseSpares(const TrackedJobSet& t,
                    const std::vector<std::string>& last_nodes) const;

 private:
  // Pods just bound to nodes, with their Jobs.
  using BoundPods = std::vector<
      std::pair<const JobState*, std::vector<const api::PodRecord*>>>;

  // The nodes with every placed, unfinished pod's usage: a walk of every
  // tracked pod but those of idle Jobs (JobState::idle, which it sets), once
  // a pass.
  absl::StatusOr<placement::ClusterSnapshot> Snapshot();
  // `snapshot` with the usage of `bound` added, for the gangs placed after
  // them in the same pass: what the walk would find, at the cost of the
  // nodes' usage rather than every pod's.
  absl::StatusOr<placement::ClusterSnapshot> AddBound(
      placement::ClusterSnapshot snapshot, const BoundPods& bound);
  // Adds to `builder` what `pods` (of `job`, each on a node) take: capacity
  // and host ports (those of pods still stopping too), a place among their
  // nodes' Jobs, and the Job's one exclusive hold if it has none yet.
  void Charge(const JobState& job,
              const std::vector<const api::PodRecord*>& pods,
              placement::ClusterSnapshotBuilder& builder);
  // Places every unplaced pod of JobSet `key` on `snapshot`, or none; on
  // failure marks them Unschedulable. Returns whether they were placed, and
  // appends the pods bound to nodes to `bound`.
  bool TryPlace(const std::string& key, int32_t priority,
                const placement::ClusterSnapshot& snapshot, BoundPods* bound);

  ControllerState& state_;
  GangQueue& gangs_;
  SnapshotCache& snapshots_;
  RequirementsCache& requirements_;
  ControllerMetrics* const metrics_;
  PassWrites& writes_;
  const absl::Time now_;
  // The Jobs (by "<ns>/<name>") holding an exclusive domain in the snapshot.
  absl::flat_hash_set<std::string> holding_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_GANG_PLACEMENT_H_
