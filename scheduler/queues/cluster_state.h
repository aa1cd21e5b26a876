#ifndef JOBSET_SCHEDULER_QUEUES_CLUSTER_STATE_H_
#define JOBSET_SCHEDULER_QUEUES_CLUSTER_STATE_H_

// The cluster as one scheduling cycle sees it (SC's Snapshot): the quota
// tree with every admitted workload's usage added, the ClusterQueues and
// flavors by name, and the admitted workloads of each ClusterQueue.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "scheduler/queues/flavor_assigner.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/quota.h"

namespace jobset::scheduler::queues {

// A workload holding quota, with what it holds.
struct AdmittedWorkload {
  const Workload* workload = nullptr;  // admission set
  QuotaTree::NodeId cq = QuotaTree::kNoNode;
  FlavorResourceQuantities usage;  // AdmittedUsage(*workload)
};

// Built from the snapshot's parts; refers to the ClusterQueues and admitted
// workloads passed to Build, which must outlive it. Preemption simulates by
// removing and re-adding workloads' usage and restores it before returning.
// Thread-compatible, but Admitted() makes a queue's entries when first asked
// for them: const calls are not safe from several threads at once.
class ClusterState {
 public:
  // Returns kInvalidArgument for repeated names (QuotaTree::Build) or a
  // repeated flavor. An admitted workload whose ClusterQueue is not in the
  // snapshot (deleted while it runs) holds quota nowhere and is left out.
  static absl::StatusOr<ClusterState> Build(
      absl::Span<const ResourceFlavor> flavors,
      absl::Span<const Cohort> cohorts,
      absl::Span<const ClusterQueue> cluster_queues,
      absl::Span<const Workload> admitted);
  // The same without admitted workloads; add them with AddAdmitted.
  static absl::StatusOr<ClusterState> Build(
      absl::Span<const ResourceFlavor> flavors,
      absl::Span<const Cohort> cohorts,
      absl::Span<const ClusterQueue> cluster_queues);

  QuotaTree& tree() { return tree_; }
  const QuotaTree& tree() const { return tree_; }
  const FlavorIndex& flavors() const { return flavors_; }
  // Returns the ClusterQueue, or nullptr if it is not in the snapshot.
  const ClusterQueue* FindClusterQueue(absl::string_view name) const;
  // Returns the workloads admitted to ClusterQueue `name`, in input order.
  const std::vector<AdmittedWorkload>& Admitted(absl::string_view name) const;

  // Adds `w` (admission set), admitted after Build, as Build would have
  // added it last: its usage, and its place at the end of its
  // ClusterQueue's workloads. Left out as Build leaves it out when its
  // ClusterQueue is not in the snapshot. `w` must outlive the state.
  void AddAdmitted(const Workload& w);
  // Adds `admitted`, the workloads admitted to ClusterQueue `cq`, in this
  // order, as AddAdmitted of each would, given `usage`: the sum of their
  // AdmittedUsage, with an entry for every (flavor, resource) any of them
  // holds, which the caller keeps as they change. Their usage is added at
  // once; each one's entry in Admitted(cq), with its own usage, is made
  // when first asked for (preemption asks of few queues). Left out when
  // `cq` is not in the snapshot. The workloads must outlive the state.
  void AddAdmitted(absl::string_view cq,
                   absl::Span<const std::shared_ptr<const Workload>> admitted,
                   const FlavorResourceQuantities& usage);

  // Removes or re-adds an admitted workload's usage (simulation only).
  void RemoveUsage(const AdmittedWorkload& w) {
    tree_.RemoveUsage(w.cq, w.usage);
  }
  void AddUsage(const AdmittedWorkload& w) { tree_.AddUsage(w.cq, w.usage); }

 private:
  explicit ClusterState(QuotaTree tree) : tree_(std::move(tree)) {}

  QuotaTree tree_;
  FlavorIndex flavors_;
  absl::flat_hash_map<std::string, const ClusterQueue*> cluster_queues_;
  // A ClusterQueue's admitted workloads: those whose entries are made, then
  // those added by the bulk AddAdmitted whose entries are not yet.
  struct AdmittedQueue {
    std::vector<AdmittedWorkload> made;
    std::vector<const Workload*> unmade;
  };
  mutable absl::flat_hash_map<std::string, AdmittedQueue> admitted_;
};

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_CLUSTER_STATE_H_
