#include "scheduler/queues/fair_sharing.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/quota.h"

namespace jobset::scheduler::queues {
namespace {

using NodeId = QuotaTree::NodeId;

bool ZeroWeightBorrows(const Drs& d) { return d.weight == 0 && !d.IsZero(); }

}  // namespace

// One tournament: the shares each remaining head gives the child of every
// cohort on its path, with its admission simulated (computeDRS). Its shares
// hold while the usage in `root`'s tree stays as it was; heads done since
// it was made are passed over.
class FairSharingOrder::Tournament {
 public:
  Tournament(QuotaTree& tree, absl::Span<const FairSharingHead> heads,
             const std::vector<bool>& done, NodeId root)
      : tree_(tree), heads_(heads) {
    for (size_t i = 0; i < heads.size(); ++i) {
      const NodeId cq = heads[i].cq;
      if (done[i] || tree.Parent(cq) == QuotaTree::kNoNode ||
          tree.Root(cq) != root) {
        continue;
      }
      by_cq_[cq].push_back(i);
      tree.AddUsage(cq, *heads[i].usage);
      Drs share = DominantResourceShare(tree, cq);
      for (NodeId a = tree.Parent(cq); a != QuotaTree::kNoNode;
           a = tree.Parent(a)) {
        Drs next = DominantResourceShare(tree, a);
        shares_[{a, i}] = std::move(share);
        share = std::move(next);
      }
      tree.RemoveUsage(cq, *heads[i].usage);
    }
  }

  // runTournament: the winner under `cohort` of the heads not `done`, or
  // heads_.size() if none.
  size_t Run(NodeId cohort, const std::vector<bool>& done) const {
    std::vector<size_t> candidates;
    for (NodeId child : tree_.ChildCohorts(cohort)) {
      const size_t winner = Run(child, done);
      if (winner != heads_.size()) candidates.push_back(winner);
    }
    for (NodeId child : tree_.ChildClusterQueues(cohort)) {
      auto it = by_cq_.find(child);
      if (it == by_cq_.end()) continue;
      for (size_t i : it->second) {
        if (!done[i]) candidates.push_back(i);
      }
    }
    if (candidates.empty()) return heads_.size();
    size_t best = candidates.front();
    for (size_t c : candidates) {
      if (Less(c, best, cohort)) best = c;
    }
    return best;
  }

 private:
  // entryComparer.less, made total by the classical order (the index).
  bool Less(size_t a, size_t b, NodeId cohort) const {
    if (a == b) return false;
    const Drs& da = shares_.at({cohort, a});
    const Drs& db = shares_.at({cohort, b});
    const bool a_borrows = da.BorrowingOn(*heads_[a].usage);
    const bool b_borrows = db.BorrowingOn(*heads_[b].usage);
    if (a_borrows != b_borrows) return !a_borrows;
    if (const int c = CompareDrs(da, db); c != 0) return c < 0;
    if (heads_[a].priority != heads_[b].priority) {
      return heads_[a].priority > heads_[b].priority;
    }
    if (heads_[a].queue_order != heads_[b].queue_order) {
      return heads_[a].queue_order < heads_[b].queue_order;
    }
    return a < b;
  }

  const QuotaTree& tree_;
  absl::Span<const FairSharingHead> heads_;
  absl::flat_hash_map<NodeId, std::vector<size_t>> by_cq_;
  absl::flat_hash_map<std::pair<NodeId, size_t>, Drs> shares_;
};

double Drs::PreciseWeightedShare() const {
  if (IsZero()) return 0;
  if (weight == 0) return std::numeric_limits<double>::infinity();
  return unweighted_ratio / weight;
}

int64_t Drs::RoundedWeightedShare() const {
  if (ZeroWeightBorrows(*this)) return std::numeric_limits<int64_t>::max();
  const double share = std::ceil(PreciseWeightedShare());
  if (share >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
    return std::numeric_limits<int64_t>::max();
  }
  return static_cast<int64_t>(share);
}

bool Drs::BorrowingOn(const FlavorResourceQuantities& requests) const {
  for (const FlavorResource& fr : borrowed) {
    auto it = requests.find(fr);
    if (it != requests.end() && it->second > 0) return true;
  }
  return false;
}

Drs NegativeDrs() {
  Drs d;
  d.unweighted_ratio = -1;
  return d;
}

int CompareDrs(const Drs& a, const Drs& b) {
  const bool a_inf = ZeroWeightBorrows(a);
  const bool b_inf = ZeroWeightBorrows(b);
  double x = 0;
  double y = 0;
  if (a_inf && b_inf) {
    x = a.unweighted_ratio;
    y = b.unweighted_ratio;
  } else if (a_inf || b_inf) {
    return a_inf ? 1 : -1;
  } else {
    x = a.PreciseWeightedShare();
    y = b.PreciseWeightedShare();
  }
  return x < y ? -1 : (x > y ? 1 : 0);
}

Drs DominantResourceShare(const QuotaTree& tree, NodeId node) {
  Drs d;
  d.weight = tree.FairWeight(node);
  const NodeId parent = tree.Parent(node);
  if (parent == QuotaTree::kNoNode) return d;
  std::map<std::string, int64_t> borrowed;  // by resource, sorted
  for (const auto& [fr, quota] : tree.SubtreeQuotas(node)) {
    const int64_t over = tree.Usage(node, fr) - quota;
    if (over > 0) {
      borrowed[fr.resource] += over;
      d.borrowed.push_back(fr);
    }
  }
  if (borrowed.empty()) return d;
  d.borrowing = true;
  // calculateLendable: what the parent's tree could give, per resource.
  std::map<std::string, int64_t> lendable;
  for (const auto& [fr, quota] : tree.SubtreeQuotas(tree.Root(node))) {
    lendable[fr.resource] += tree.PotentialAvailable(parent, fr);
  }
  // The highest ratio; among equal ones the first resource by name.
  for (const auto& [resource, amount] : borrowed) {
    const int64_t capacity = lendable[resource];
    if (capacity <= 0) continue;
    const double ratio =
        static_cast<double>(amount) * 1000.0 / static_cast<double>(capacity);
    if (ratio > d.unweighted_ratio) {
      d.unweighted_ratio = ratio;
      d.dominant_resource = resource;
    }
  }
  return d;
}

FairSharingOrder::FairSharingOrder(QuotaTree& tree,
                                   absl::Span<const FairSharingHead> heads)
    : tree_(tree), heads_(heads) {}

FairSharingOrder::~FairSharingOrder() = default;

size_t FairSharingOrder::Next(const std::vector<bool>& done) {
  size_t first = 0;
  while (first < heads_.size() && done[first]) ++first;
  if (first == heads_.size()) return first;
  const NodeId cq = heads_[first].cq;
  if (tree_.Parent(cq) == QuotaTree::kNoNode) return first;
  const NodeId root = tree_.Root(cq);
  std::unique_ptr<Tournament>& t = tournaments_[root];
  if (t == nullptr) t = std::make_unique<Tournament>(tree_, heads_, done, root);
  return t->Run(root, done);
}

void FairSharingOrder::UsageChanged(NodeId cq) {
  tournaments_.erase(tree_.Root(cq));
}

size_t NextFairSharingHead(QuotaTree& tree,
                           absl::Span<const FairSharingHead> heads,
                           const std::vector<bool>& done) {
  return FairSharingOrder(tree, heads).Next(done);
}

}  // namespace jobset::scheduler::queues
