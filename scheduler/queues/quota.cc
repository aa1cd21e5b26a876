#include "scheduler/queues/quota.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "scheduler/queues/model.h"

namespace jobset::scheduler::queues {
namespace {

int64_t Get(const FlavorResourceQuantities& m, const FlavorResource& fr) {
  auto it = m.find(fr);
  return it == m.end() ? 0 : it->second;
}

void AddQuotas(absl::Span<const ResourceGroup> groups,
               std::map<FlavorResource, ResourceQuota>& quotas) {
  for (const ResourceGroup& group : groups) {
    for (const FlavorQuotas& flavor : group.flavors) {
      for (const ResourceQuota& quota : flavor.resources) {
        quotas[FlavorResource{flavor.name, quota.name}] = quota;
      }
    }
  }
}

}  // namespace

absl::StatusOr<QuotaTree> QuotaTree::Build(
    absl::Span<const Cohort> cohorts,
    absl::Span<const ClusterQueue> cluster_queues) {
  QuotaTree tree;
  auto cohort_node = [&tree](const std::string& name) {
    auto [it, inserted] =
        tree.cohort_index_.try_emplace(name, tree.nodes_.size());
    if (inserted) {
      tree.nodes_.emplace_back();
      tree.nodes_.back().name = name;
    }
    return it->second;
  };
  absl::flat_hash_set<std::string> defined;
  for (const Cohort& cohort : cohorts) {
    if (cohort.name.empty()) {
      return absl::InvalidArgumentError("cohorts: empty name");
    }
    if (!defined.insert(cohort.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("cohorts: duplicate name \"", cohort.name, "\""));
    }
    const NodeId node = cohort_node(cohort.name);
    AddQuotas(cohort.resource_groups, tree.nodes_[node].quotas);
    tree.nodes_[node].fair_weight = cohort.fair_weight;
    if (!cohort.parent.empty()) {
      const NodeId parent = cohort_node(cohort.parent);
      tree.nodes_[node].parent = parent;
    }
  }
  for (const ClusterQueue& cq : cluster_queues) {
    if (cq.name.empty()) {
      return absl::InvalidArgumentError("clusterQueues: empty name");
    }
    if (tree.cq_index_.contains(cq.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("clusterQueues: duplicate name \"", cq.name, "\""));
    }
    const NodeId node = tree.nodes_.size();
    tree.cq_index_[cq.name] = node;
    tree.nodes_.emplace_back();
    tree.nodes_.back().name = cq.name;
    tree.nodes_.back().is_cq = true;
    tree.nodes_.back().fair_weight = cq.fair_weight;
    AddQuotas(cq.resource_groups, tree.nodes_[node].quotas);
    if (!cq.cohort.empty()) tree.nodes_[node].parent = cohort_node(cq.cohort);
  }

  // A cohort whose parent chain revisits a node is in a cycle, and so is
  // every cohort below it. Cut the cycle members loose so that the
  // arithmetic below terminates; their queues are reported inactive.
  const int count = tree.nodes_.size();
  std::vector<NodeId> cut;
  for (NodeId start = 0; start < count; ++start) {
    if (tree.nodes_[start].is_cq) continue;
    absl::flat_hash_set<NodeId> seen;
    NodeId n = start;
    while (n != kNoNode && seen.insert(n).second) n = tree.nodes_[n].parent;
    if (n == kNoNode) continue;
    tree.nodes_[start].in_cycle = true;
    // n is on the cycle: the first node reached twice.
    cut.push_back(n);
  }
  for (NodeId n : cut) tree.nodes_[n].parent = kNoNode;
  for (NodeId n = 0; n < count; ++n) {
    Node& node = tree.nodes_[n];
    if (node.is_cq && node.parent != kNoNode) {
      node.in_cycle = tree.nodes_[node.parent].in_cycle;
    }
    if (node.parent == kNoNode) continue;
    Node& parent = tree.nodes_[node.parent];
    (node.is_cq ? parent.child_cqs : parent.child_cohorts).push_back(n);
  }
  for (NodeId n = 0; n < count; ++n) {
    if (tree.nodes_[n].parent == kNoNode) tree.AccumulateSubtreeQuota(n);
  }
  return tree;
}

void QuotaTree::AccumulateSubtreeQuota(NodeId id) {
  Node& node = nodes_[id];
  node.subtree_quota.clear();
  for (const auto& [fr, quota] : node.quotas) {
    node.subtree_quota[fr] = quota.nominal_quota;
  }
  auto add_child = [this, id](NodeId child) {
    AccumulateSubtreeQuota(child);
    for (const auto& [fr, quota] : nodes_[child].subtree_quota) {
      nodes_[id].subtree_quota[fr] += quota - LocalQuota(child, fr);
    }
  };
  // Copies: add_child may not reallocate nodes_, but keeps the loop simple.
  const std::vector<NodeId> cohorts = node.child_cohorts;
  const std::vector<NodeId> cqs = node.child_cqs;
  for (NodeId child : cohorts) add_child(child);
  for (NodeId child : cqs) add_child(child);
}

QuotaTree::NodeId QuotaTree::ClusterQueueNode(absl::string_view name) const {
  auto it = cq_index_.find(name);
  return it == cq_index_.end() ? kNoNode : it->second;
}

QuotaTree::NodeId QuotaTree::CohortNode(absl::string_view name) const {
  auto it = cohort_index_.find(name);
  return it == cohort_index_.end() ? kNoNode : it->second;
}

QuotaTree::NodeId QuotaTree::Root(NodeId node) const {
  while (nodes_[node].parent != kNoNode) node = nodes_[node].parent;
  return node;
}

std::string QuotaTree::Path(NodeId node) const {
  std::vector<absl::string_view> names;
  for (NodeId n = node; n != kNoNode; n = nodes_[n].parent) {
    names.push_back(nodes_[n].name);
  }
  std::string path;
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    absl::StrAppend(&path, "/", *it);
  }
  return path;
}

int QuotaTree::Height(NodeId node) const {
  const Node& n = nodes_[node];
  if (n.is_cq) return 0;
  int height = n.child_cohorts.empty() && n.child_cqs.empty() ? 0 : 1;
  for (NodeId child : n.child_cohorts) {
    height = std::max(height, Height(child) + 1);
  }
  return height;
}

const ResourceQuota& QuotaTree::Quota(NodeId node,
                                      const FlavorResource& fr) const {
  static const ResourceQuota* const kNone = new ResourceQuota();
  auto it = nodes_[node].quotas.find(fr);
  return it == nodes_[node].quotas.end() ? *kNone : it->second;
}

int64_t QuotaTree::SubtreeQuota(NodeId node, const FlavorResource& fr) const {
  return Get(nodes_[node].subtree_quota, fr);
}

int64_t QuotaTree::Usage(NodeId node, const FlavorResource& fr) const {
  return Get(nodes_[node].usage, fr);
}

int64_t QuotaTree::LocalQuota(NodeId node, const FlavorResource& fr) const {
  const std::optional<int64_t>& lending = Quota(node, fr).lending_limit;
  if (!lending.has_value()) return 0;
  return std::max<int64_t>(0, SubtreeQuota(node, fr) - *lending);
}

int64_t QuotaTree::LocalAvailable(NodeId node, const FlavorResource& fr) const {
  return std::max<int64_t>(0, LocalQuota(node, fr) - Usage(node, fr));
}

int64_t QuotaTree::Available(NodeId node, const FlavorResource& fr) const {
  const NodeId parent = nodes_[node].parent;
  if (parent == kNoNode) return SubtreeQuota(node, fr) - Usage(node, fr);
  int64_t from_parent = Available(parent, fr);
  const std::optional<int64_t>& limit = Quota(node, fr).borrowing_limit;
  if (limit.has_value()) {
    const int64_t local = LocalQuota(node, fr);
    const int64_t stored_in_parent = SubtreeQuota(node, fr) - local;
    const int64_t used_in_parent =
        std::max<int64_t>(0, Usage(node, fr) - local);
    from_parent =
        std::min(from_parent, stored_in_parent - used_in_parent + *limit);
  }
  return LocalAvailable(node, fr) + from_parent;
}

int64_t QuotaTree::PotentialAvailable(NodeId node,
                                      const FlavorResource& fr) const {
  const NodeId parent = nodes_[node].parent;
  if (parent == kNoNode) return SubtreeQuota(node, fr);
  int64_t available = LocalQuota(node, fr) + PotentialAvailable(parent, fr);
  const std::optional<int64_t>& limit = Quota(node, fr).borrowing_limit;
  if (limit.has_value()) {
    available = std::min(available, SubtreeQuota(node, fr) + *limit);
  }
  return available;
}

bool QuotaTree::BorrowingWith(NodeId node, const FlavorResource& fr,
                              int64_t val) const {
  return Usage(node, fr) + val > SubtreeQuota(node, fr);
}

bool QuotaTree::IsWithinNominal(NodeId node,
                                const std::set<FlavorResource>& frs) const {
  for (const FlavorResource& fr : frs) {
    if (Borrowing(node, fr)) return false;
  }
  return true;
}

bool QuotaTree::FitsInQuota(NodeId node,
                            const FlavorResourceQuantities& requests,
                            FlavorResourceQuantities* remaining) const {
  bool fits = true;
  FlavorResourceQuantities rest;
  for (const auto& [fr, v] : requests) {
    if (BorrowingWith(node, fr, v)) fits = false;
    rest[fr] = std::max<int64_t>(0, v - LocalAvailable(node, fr));
  }
  *remaining = std::move(rest);
  return fits;
}

QuotaTree::SubtreeFit QuotaTree::LowestSubtreeThatFits(NodeId cq,
                                                       const FlavorResource& fr,
                                                       int64_t val) const {
  const NodeId parent = nodes_[cq].parent;
  if (!BorrowingWith(cq, fr, val) || parent == kNoNode) {
    return {0, parent != kNoNode};
  }
  int64_t remaining = val - LocalAvailable(cq, fr);
  NodeId root = parent;
  for (NodeId n = parent; n != kNoNode; n = nodes_[n].parent) {
    if (!BorrowingWith(n, fr, remaining)) {
      return {Height(n), nodes_[n].parent != kNoNode};
    }
    remaining -= LocalAvailable(n, fr);
    root = n;
  }
  return {Height(root), false};
}

void QuotaTree::AddUsage(NodeId node, const FlavorResource& fr, int64_t val) {
  for (NodeId n = node; n != kNoNode; n = nodes_[n].parent) {
    const int64_t local_available = LocalAvailable(n, fr);
    nodes_[n].usage[fr] += val;
    if (val <= local_available) return;
    val -= local_available;
  }
}

void QuotaTree::RemoveUsage(NodeId node, const FlavorResource& fr,
                            int64_t val) {
  for (NodeId n = node; n != kNoNode; n = nodes_[n].parent) {
    const int64_t stored_in_parent = Usage(n, fr) - LocalQuota(n, fr);
    nodes_[n].usage[fr] -= val;
    if (stored_in_parent <= 0) return;
    val = std::min(val, stored_in_parent);
  }
}

void QuotaTree::AddUsage(NodeId node, const FlavorResourceQuantities& usage) {
  for (const auto& [fr, v] : usage) AddUsage(node, fr, v);
}

void QuotaTree::RemoveUsage(NodeId node,
                            const FlavorResourceQuantities& usage) {
  for (const auto& [fr, v] : usage) RemoveUsage(node, fr, v);
}

}  // namespace jobset::scheduler::queues
