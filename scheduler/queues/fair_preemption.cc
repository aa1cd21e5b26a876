#include "scheduler/queues/fair_preemption.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "scheduler/queues/cluster_state.h"
#include "scheduler/queues/fair_sharing.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/preemption.h"
#include "scheduler/queues/quota.h"

namespace jobset::scheduler::queues {
namespace {

using NodeId = QuotaTree::NodeId;
using Strategy = FairSharing::Strategy;

// TargetClusterQueueOrdering: which ClusterQueue gives up a workload next.
class TargetOrdering {
 public:
  TargetOrdering(const QuotaTree& tree, NodeId preemptor_cq,
                 const std::vector<const AdmittedWorkload*>& candidates,
                 absl::string_view preemptor_cq_name, absl::Time now)
      : tree_(tree),
        preemptor_(preemptor_cq),
        preemptor_name_(preemptor_cq_name),
        now_(now) {
    for (NodeId n = tree.Parent(preemptor_cq); n != QuotaTree::kNoNode;
         n = tree.Parent(n)) {
      ancestors_.insert(n);
    }
    for (const AdmittedWorkload* c : candidates) by_cq_[c->cq].push_back(c);
  }

  // Returns the next target ClusterQueue, kNoNode when there is none.
  NodeId Next() {
    if (tree_.Parent(preemptor_) == QuotaTree::kNoNode) {
      return !pruned_.contains(preemptor_) && HasWorkload(preemptor_)
                 ? preemptor_
                 : QuotaTree::kNoNode;
    }
    const NodeId root = tree_.Root(preemptor_);
    while (!pruned_.contains(root)) {
      const NodeId target = NextTarget(root);
      if (target != QuotaTree::kNoNode) return target;
    }
    return QuotaTree::kNoNode;
  }

  bool HasWorkload(NodeId cq) const {
    auto it = by_cq_.find(cq);
    return it != by_cq_.end() && !it->second.empty();
  }
  const AdmittedWorkload* Pop(NodeId cq) {
    std::vector<const AdmittedWorkload*>& list = by_cq_[cq];
    const AdmittedWorkload* head = list.front();
    list.erase(list.begin());
    return head;
  }
  void Drop(NodeId cq) { pruned_.insert(cq); }
  bool OnPreemptorPath(NodeId cohort) const {
    return ancestors_.contains(cohort);
  }

 private:
  NodeId NextTarget(NodeId cohort) {
    NodeId best_cq = QuotaTree::kNoNode;
    Drs best_cq_share = NegativeDrs();
    for (NodeId cq : tree_.ChildClusterQueues(cohort)) {
      if (pruned_.contains(cq)) continue;
      Drs share = DominantResourceShare(tree_, cq);
      const int cmp = CompareDrs(share, best_cq_share);
      if ((!share.borrowing && cq != preemptor_) || !HasWorkload(cq)) {
        pruned_.insert(cq);
      } else if (cmp == 0) {
        if (CandidateLess(*by_cq_[cq].front()->workload,
                          *by_cq_[best_cq].front()->workload, preemptor_name_,
                          now_)) {
          best_cq = cq;
        }
      } else if (cmp > 0) {
        best_cq = cq;
        best_cq_share = std::move(share);
      }
    }
    NodeId best_cohort = QuotaTree::kNoNode;
    Drs best_cohort_share = NegativeDrs();
    for (NodeId child : tree_.ChildCohorts(cohort)) {
      if (pruned_.contains(child)) continue;
      Drs share = DominantResourceShare(tree_, child);
      // A cohort on the preemptor's path stays until its children are
      // pruned: there may be imbalance below it.
      if (!share.borrowing && !OnPreemptorPath(child)) {
        pruned_.insert(child);
      } else if (CompareDrs(share, best_cohort_share) >= 0) {
        best_cohort = child;
        best_cohort_share = std::move(share);
      }
    }
    if (best_cohort == QuotaTree::kNoNode && best_cq == QuotaTree::kNoNode) {
      pruned_.insert(cohort);
      return QuotaTree::kNoNode;
    }
    // On a tie the cohort: the most unfair node within it can be chosen.
    if (CompareDrs(best_cohort_share, best_cq_share) >= 0) {
      return NextTarget(best_cohort);
    }
    return best_cq;
  }

  const QuotaTree& tree_;
  const NodeId preemptor_;
  const absl::string_view preemptor_name_;
  const absl::Time now_;
  absl::flat_hash_set<NodeId> ancestors_;
  absl::flat_hash_set<NodeId> pruned_;  // ClusterQueues and cohorts
  absl::flat_hash_map<NodeId, std::vector<const AdmittedWorkload*>> by_cq_;
};

bool Passes(Strategy strategy, const Drs& preemptor_new, const Drs& target_old,
            const Drs& target_new) {
  if (strategy == Strategy::kLessThanOrEqualToFinalShare) {
    return CompareDrs(preemptor_new, target_new) <= 0;
  }
  return CompareDrs(preemptor_new, target_old) < 0;
}

class Fair {
 public:
  Fair(const Preemptor& p, ClusterState& state, absl::Time now)
      : p_(p),
        state_(state),
        tree_(state.tree()),
        now_(now),
        node_(tree_.ClusterQueueNode(p.cq->name)) {}

  std::vector<PreemptionTarget> Run() {
    if (node_ == QuotaTree::kNoNode) return {};
    std::vector<const AdmittedWorkload*> candidates = Candidates();
    if (candidates.empty()) return {};
    std::stable_sort(
        candidates.begin(), candidates.end(),
        [this](const AdmittedWorkload* a, const AdmittedWorkload* b) {
          return CandidateLess(*a->workload, *b->workload, p_.cq->name, now_);
        });
    // The shares include the preemptor's admission.
    tree_.AddUsage(node_, p_.requests);
    const std::vector<Strategy>& strategies =
        p_.fair_sharing->preemption_strategies;
    const Strategy first = strategies.empty()
                               ? Strategy::kLessThanOrEqualToFinalShare
                               : strategies.front();
    std::vector<const AdmittedWorkload*> retry;
    bool fits = RunFirst(candidates, first, retry);
    if (!fits && (strategies.empty() || strategies.size() > 1)) {
      fits = RunSecond(retry);
    }
    tree_.RemoveUsage(node_, p_.requests);
    if (!fits) {
      RestoreTargets(targets_, state_);
      return {};
    }
    FillBack(p_, targets_, state_, /*allow_borrowing=*/true);
    RestoreTargets(targets_, state_);
    return std::move(targets_);
  }

 private:
  // findCandidates.
  std::vector<const AdmittedWorkload*> Candidates() const {
    std::vector<const AdmittedWorkload*> out;
    auto from = [&](NodeId cq, PreemptionPolicy policy) {
      for (const AdmittedWorkload& w : state_.Admitted(tree_.Name(cq))) {
        if (MayBeCandidate(w, p_.need_preemption, now_) &&
            SatisfiesPolicy(*p_.workload, *w.workload, policy)) {
          out.push_back(&w);
        }
      }
    };
    const ClusterQueuePreemption& policy = p_.cq->preemption;
    if (policy.within_cluster_queue != PreemptionPolicy::kNever) {
      from(node_, policy.within_cluster_queue);
    }
    if (tree_.Parent(node_) == QuotaTree::kNoNode ||
        policy.reclaim_within_cohort == PreemptionPolicy::kNever) {
      return out;
    }
    std::vector<NodeId> stack = {tree_.Root(node_)};
    while (!stack.empty()) {
      const NodeId cohort = stack.back();
      stack.pop_back();
      for (NodeId child : tree_.ChildCohorts(cohort)) stack.push_back(child);
      for (NodeId cq : tree_.ChildClusterQueues(cohort)) {
        if (cq != node_ && BorrowsWhereNeeded(cq)) {
          from(cq, policy.reclaim_within_cohort);
        }
      }
    }
    return out;
  }

  // cqIsBorrowing.
  bool BorrowsWhereNeeded(NodeId cq) const {
    for (const FlavorResource& fr : p_.need_preemption) {
      if (tree_.Borrowing(cq, fr)) return true;
    }
    return false;
  }

  // runFirstFsStrategy.
  bool RunFirst(const std::vector<const AdmittedWorkload*>& candidates,
                Strategy strategy,
                std::vector<const AdmittedWorkload*>& retry) {
    TargetOrdering ordering(tree_, node_, candidates, p_.cq->name, now_);
    bool within_nominal = true;
    for (const FlavorResource& fr : p_.need_preemption) {
      if (tree_.Borrowing(node_, fr)) within_nominal = false;
    }
    for (NodeId target = ordering.Next(); target != QuotaTree::kNoNode;
         target = ordering.Next()) {
      if (target == node_ || within_nominal) {
        if (Take(ordering.Pop(target),
                 target == node_ ? kInClusterQueue : kInCohortReclamation)) {
          return true;
        }
        continue;
      }
      const auto [preemptor_new, target_old] = Shares(ordering, target);
      if (std::isinf(preemptor_new.PreciseWeightedShare()) &&
          !std::isinf(target_old.PreciseWeightedShare())) {
        // No candidate here can pass either strategy.
        while (ordering.HasWorkload(target))
          retry.push_back(ordering.Pop(target));
        continue;
      }
      while (ordering.HasWorkload(target)) {
        const AdmittedWorkload* w = ordering.Pop(target);
        state_.RemoveUsage(*w);
        const Drs target_new =
            DominantResourceShare(tree_, AlmostLca(ordering, target, target));
        state_.AddUsage(*w);
        if (!Passes(strategy, preemptor_new, target_old, target_new)) {
          retry.push_back(w);
          continue;
        }
        if (Take(w, kInCohortFairSharing)) return true;
        break;  // the shares changed: choose the target again
      }
    }
    return false;
  }

  // runSecondFsStrategy (rule S2-b): at most one kept candidate per
  // ClusterQueue, if the preemptor's share after stays below the target's.
  bool RunSecond(const std::vector<const AdmittedWorkload*>& retry) {
    TargetOrdering ordering(tree_, node_, retry, p_.cq->name, now_);
    for (NodeId target = ordering.Next(); target != QuotaTree::kNoNode;
         target = ordering.Next()) {
      const auto [preemptor_new, target_old] = Shares(ordering, target);
      const AdmittedWorkload* w = ordering.Pop(target);
      if (Passes(Strategy::kLessThanInitialShare, preemptor_new, target_old,
                 Drs{}) &&
          Take(w, kInCohortFairSharing)) {
        return true;
      }
      ordering.Drop(target);
    }
    return false;
  }

  // Removes `w` as a target; returns whether the preemptor now fits
  // (workloadFitsForFairSharing: its own simulated usage taken out).
  bool Take(const AdmittedWorkload* w, absl::string_view reason) {
    state_.RemoveUsage(*w);
    targets_.push_back(PreemptionTarget{w, std::string(reason)});
    tree_.RemoveUsage(node_, p_.requests);
    const bool fits = PreemptorFits(p_, tree_, /*allow_borrowing=*/true);
    tree_.AddUsage(node_, p_.requests);
    return fits;
  }

  // ComputeShares: the shares of the preemptor's and the target's children
  // of their lowest common ancestor.
  std::pair<Drs, Drs> Shares(const TargetOrdering& ordering, NodeId target) {
    return {DominantResourceShare(tree_, AlmostLca(ordering, node_, target)),
            DominantResourceShare(tree_, AlmostLca(ordering, target, target))};
  }

  // Returns the node below the lowest common ancestor of the preemptor's
  // ClusterQueue and `target` on the path from `from` (one of the two).
  NodeId AlmostLca(const TargetOrdering& ordering, NodeId from,
                   NodeId target) const {
    NodeId lca = tree_.Parent(target);
    while (lca != QuotaTree::kNoNode && !ordering.OnPreemptorPath(lca)) {
      lca = tree_.Parent(lca);
    }
    NodeId below = from;
    for (NodeId n = tree_.Parent(from); n != QuotaTree::kNoNode && n != lca;
         n = tree_.Parent(n)) {
      below = n;
    }
    return below;
  }

  const Preemptor& p_;
  ClusterState& state_;
  QuotaTree& tree_;
  const absl::Time now_;
  const NodeId node_;
  std::vector<PreemptionTarget> targets_;
};

}  // namespace

std::vector<PreemptionTarget> FairPreemptions(const Preemptor& preemptor,
                                              ClusterState& state,
                                              absl::Time now) {
  return Fair(preemptor, state, now).Run();
}

}  // namespace jobset::scheduler::queues
