#ifndef JOBSET_SCHEDULER_CONTROLLER_PLACEMENT_CACHES_H_
#define JOBSET_SCHEDULER_CONTROLLER_PLACEMENT_CACHES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/cluster.pb.h"
#include "scheduler/controller/node_sink.h"
#include "scheduler/placement/requirements.h"
#include "scheduler/placement/snapshot.h"

namespace jobset::scheduler {

// The nodes as placement sees them, kept from one placement to the next so
// that the next does not copy every node's labels and index them again:
// only the usage is rebuilt. Forget() after any node changes. Used only
// from the controller thread.
class SnapshotCache {
 public:
  // A node changed: the kept snapshot's nodes are stale.
  void Forget();

  // A builder holding the kept snapshot's nodes with their usage cleared,
  // or every node of `nodes` afresh after Forget (node ids follow the
  // nodes' name order).
  placement::ClusterSnapshotBuilder TakeBuilder(
      const std::map<std::string, NodeInfo>& nodes);
  // Keeps `snapshot` (built from TakeBuilder's) for the next TakeBuilder,
  // unless a node changed since.
  void Recycle(absl::StatusOr<placement::ClusterSnapshot> snapshot);

  // The node id of node `name`, if it is in the snapshot.
  std::optional<size_t> NodeOf(absl::string_view name) const;
  // The node of node id `id`.
  const NodeInfo& NodeAt(size_t id) const { return *node_at_[id]; }

 private:
  std::optional<placement::ClusterSnapshot> last_;
  absl::flat_hash_map<absl::string_view, size_t> node_of_;
  std::vector<const NodeInfo*> node_at_;
  // Bumped by Forget: a snapshot lent before a node changed is not kept.
  uint64_t generation_ = 0;
  uint64_t lent_generation_ = 0;
};

// Placement requirements of each Job's pod template (templates never change
// under a Job), shared by every Job of one pod spec, so that placement
// evaluates a ReplicatedJob's template once, not once per Job. Used only
// from the controller thread.
class RequirementsCache {
 public:
  // The requirements of `job`'s pods; kInvalidArgument when its template
  // asks for something placement cannot read.
  absl::StatusOr<std::shared_ptr<const placement::PodRequirements>> Get(
      const api::Job& job);
  // Job `uid` is gone.
  void Erase(const std::string& uid) { by_job_.erase(uid); }

 private:
  absl::flat_hash_map<std::string,
                      std::shared_ptr<const placement::PodRequirements>>
      by_job_;
  // By the pod spec's deterministic serialization; entries expire with the
  // last Job, and are swept once they are more than twice what was left at
  // the last sweep.
  absl::flat_hash_map<std::string,
                      std::weak_ptr<const placement::PodRequirements>>
      by_spec_;
  size_t swept_specs_ = 0;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_PLACEMENT_CACHES_H_
