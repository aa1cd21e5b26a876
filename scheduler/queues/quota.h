#ifndef JOBSET_SCHEDULER_QUEUES_QUOTA_H_
#define JOBSET_SCHEDULER_QUEUES_QUOTA_H_

// Kueue's quota arithmetic over the cohort tree (kueue-semantics.md §1.4,
// SC/resource_node.go), per (flavor, resource):
//
//   ClusterQueue SubtreeQuota = nominal; Cohort SubtreeQuota = own nominal +
//     Σ children (SubtreeQuota − localQuota).
//   localQuota = max(0, SubtreeQuota − lendingLimit) if set, else 0: the part
//     a node never lends. LocalAvailable = max(0, localQuota − Usage).
//   Adding v to a node adds max(0, v − LocalAvailable) to its parent;
//     removal mirrors it.
//   Available: root SubtreeQuota − Usage; else LocalAvailable + P with
//     P = Available(parent), capped by borrowingLimit at
//     (SubtreeQuota − localQuota) − max(0, Usage − localQuota) + limit.
//   PotentialAvailable: root SubtreeQuota; else localQuota +
//     PotentialAvailable(parent), capped at SubtreeQuota + borrowingLimit.
//
// Example (DOC/cluster_queue.md): A nominal 9, B nominal 12 with lendingLimit
// 1 in one cohort ⇒ cohort SubtreeQuota 10; A can use 10, B 21.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "scheduler/queues/model.h"

namespace jobset::scheduler::queues {

// The tree of Cohorts and ClusterQueues with their quotas and usage. Build it
// once per snapshot, add the admitted workloads' usage, then query and
// simulate (AddUsage / RemoveUsage). A value type: copy it to branch a
// simulation. Thread-compatible.
class QuotaTree {
 public:
  using NodeId = int;
  static constexpr NodeId kNoNode = -1;

  // Where an added usage fits (FindHeightOfLowestSubtreeThatFits).
  struct SubtreeFit {
    // Height of the lowest subtree holding it: 0 inside the ClusterQueue (no
    // borrowing), a cohort's height otherwise; the whole tree's if none does.
    int height = 0;
    // Whether that subtree is smaller than the whole tree: reclaiming within
    // it is possible (the "mayReclaimInHierarchy" of the flavor assigner).
    bool below_root = false;
  };

  // Builds the tree with zero usage. A cohort named by a ClusterQueue or as
  // a parent without an object is a root without quota. Cohorts whose parent
  // chain has a cycle are cut from their parents and reported by InCycle
  // (Kueue deactivates their ClusterQueues). Returns kInvalidArgument for an
  // empty or repeated ClusterQueue or Cohort name.
  static absl::StatusOr<QuotaTree> Build(
      absl::Span<const Cohort> cohorts,
      absl::Span<const ClusterQueue> cluster_queues);

  // Returns the node of a ClusterQueue or Cohort, kNoNode if unknown.
  NodeId ClusterQueueNode(absl::string_view name) const;
  NodeId CohortNode(absl::string_view name) const;

  bool IsClusterQueue(NodeId node) const { return nodes_[node].is_cq; }
  const std::string& Name(NodeId node) const { return nodes_[node].name; }
  NodeId Parent(NodeId node) const { return nodes_[node].parent; }
  const std::vector<NodeId>& ChildCohorts(NodeId node) const {
    return nodes_[node].child_cohorts;
  }
  const std::vector<NodeId>& ChildClusterQueues(NodeId node) const {
    return nodes_[node].child_cqs;
  }
  // Returns the root of the node's tree (the node itself without a parent).
  NodeId Root(NodeId node) const;
  // spec.fairSharing.weight of the ClusterQueue or Cohort (1 when a cohort
  // has no object).
  double FairWeight(NodeId node) const { return nodes_[node].fair_weight; }
  // Returns whether the node's cohort chain runs into a cycle.
  bool InCycle(NodeId node) const { return nodes_[node].in_cycle; }
  // Returns "/<root>/.../<name>" as Kueue's preemption messages print it.
  std::string Path(NodeId node) const;
  // Returns the distance to the furthest leaf: 0 for a ClusterQueue, at
  // least 1 for a cohort with members (getNodeHeight).
  int Height(NodeId node) const;

  // The node's own quota for `fr`; nominal 0 and no limits if not listed.
  const ResourceQuota& Quota(NodeId node, const FlavorResource& fr) const;
  int64_t SubtreeQuota(NodeId node, const FlavorResource& fr) const;
  // Every (flavor, resource) of the node's subtree, zeros included.
  const FlavorResourceQuantities& SubtreeQuotas(NodeId node) const {
    return nodes_[node].subtree_quota;
  }
  int64_t Usage(NodeId node, const FlavorResource& fr) const;
  int64_t LocalQuota(NodeId node, const FlavorResource& fr) const;
  int64_t LocalAvailable(NodeId node, const FlavorResource& fr) const;
  // May be negative after over-admission (quota removed, queue moved).
  int64_t Available(NodeId node, const FlavorResource& fr) const;
  int64_t PotentialAvailable(NodeId node, const FlavorResource& fr) const;
  // Returns whether usage + val exceeds the node's SubtreeQuota.
  bool BorrowingWith(NodeId node, const FlavorResource& fr, int64_t val) const;
  bool Borrowing(NodeId node, const FlavorResource& fr) const {
    return BorrowingWith(node, fr, 0);
  }
  // Returns whether usage stays within SubtreeQuota for every one of `frs`
  // (IsWithinNominalInResources).
  bool IsWithinNominal(NodeId node, const std::set<FlavorResource>& frs) const;
  // Returns whether usage + request stays within SubtreeQuota for every
  // request, and sets `remaining` to what exceeds LocalAvailable, for the
  // parent (QuantitiesFitInQuota).
  bool FitsInQuota(NodeId node, const FlavorResourceQuantities& requests,
                   FlavorResourceQuantities* remaining) const;
  // Returns the lowest subtree above ClusterQueue `cq` that holds `val` more.
  SubtreeFit LowestSubtreeThatFits(NodeId cq, const FlavorResource& fr,
                                   int64_t val) const;

  // Adds or removes usage at a node, bubbling what exceeds its localQuota up.
  void AddUsage(NodeId node, const FlavorResource& fr, int64_t val);
  void RemoveUsage(NodeId node, const FlavorResource& fr, int64_t val);
  void AddUsage(NodeId node, const FlavorResourceQuantities& usage);
  void RemoveUsage(NodeId node, const FlavorResourceQuantities& usage);

 private:
  struct Node {
    std::string name;
    bool is_cq = false;
    bool in_cycle = false;
    double fair_weight = 1.0;
    NodeId parent = kNoNode;
    std::vector<NodeId> child_cohorts;
    std::vector<NodeId> child_cqs;
    std::map<FlavorResource, ResourceQuota> quotas;
    FlavorResourceQuantities subtree_quota;
    FlavorResourceQuantities usage;
  };

  QuotaTree() = default;
  void AccumulateSubtreeQuota(NodeId node);

  std::vector<Node> nodes_;
  absl::flat_hash_map<std::string, NodeId> cq_index_;
  absl::flat_hash_map<std::string, NodeId> cohort_index_;
};

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_QUOTA_H_
