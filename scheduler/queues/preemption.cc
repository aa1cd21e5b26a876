#include "scheduler/queues/preemption.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "scheduler/queues/cluster_state.h"
#include "scheduler/queues/fair_preemption.h"
#include "scheduler/queues/fair_sharing.h"
#include "scheduler/queues/flavor_assigner.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/quota.h"

namespace jobset::scheduler::queues {
namespace {

using NodeId = QuotaTree::NodeId;

// classical/hierarchical_preemption.go's preemptionVariant.
enum class Variant {
  kNever,
  kWithinClusterQueue,
  kHierarchicalReclaim,      // the preemptor's subtree holds the quota
  kReclaimWithoutBorrowing,  // only if the preemptor will not borrow
  kReclaimWhileBorrowing,
};

absl::string_view ReasonOf(Variant v) {
  switch (v) {
    case Variant::kWithinClusterQueue:
      return kInClusterQueue;
    case Variant::kReclaimWhileBorrowing:
      return kInCohortReclaimWhileBorrowing;
    default:
      return kInCohortReclamation;
  }
}

struct Candidate {
  const AdmittedWorkload* workload;
  NodeId lca;  // the subtree root it was found under; kNoNode in the CQ
  Variant variant;
};

const std::string& ClusterQueueOf(const Workload& w) {
  return w.admission.has_value() ? w.admission->cluster_queue : w.cluster_queue;
}

// When the work a preemption would lose started: the later of the quota
// reservation (missing counts as now) and the last restart.
absl::Time WorkStart(const Workload& w, absl::Time now) {
  return std::max(w.times.quota_reserved.value_or(now), w.times.last_restart);
}

class Classical {
 public:
  Classical(const Preemptor& p, ClusterState& state, absl::Time now)
      : p_(p),
        state_(state),
        tree_(state.tree()),
        now_(now),
        node_(tree_.ClusterQueueNode(p.cq->name)) {}

  std::vector<PreemptionTarget> Run() {
    if (node_ == QuotaTree::kNoNode) return {};
    std::vector<Candidate> same;
    if (p_.cq->preemption.within_cluster_queue != PreemptionPolicy::kNever) {
      FromQueue(node_, QuotaTree::kNoNode, false, same);
    }
    std::vector<Candidate> hierarchy;
    std::vector<Candidate> priority;
    CollectFromCohort(hierarchy, priority);
    auto less = [this](const Candidate& a, const Candidate& b) {
      return CandidateLess(*a.workload->workload, *b.workload->workload,
                           p_.cq->name, now_);
    };
    for (auto* list : {&same, &hierarchy, &priority}) {
      std::stable_sort(list->begin(), list->end(), less);
    }
    // Already-evicted candidates of every kind first, then the rest, each
    // as hierarchy, priority, same queue.
    std::vector<Candidate> all;
    for (bool evicted : {true, false}) {
      for (auto* list : {&hierarchy, &priority, &same}) {
        for (const Candidate& c : *list) {
          if (c.workload->workload->evicted == evicted) all.push_back(c);
        }
      }
    }
    const bool borrow_forbidden =
        p_.cq->preemption.borrow_within_cohort.policy ==
        BorrowWithinCohortPolicy::kNever;
    std::vector<bool> attempts;  // allow borrowing?
    if ((hierarchy.empty() && priority.empty()) ||
        (borrow_forbidden && !UnderNominalWhereNeeded())) {
      attempts = {true};
    } else if (borrow_forbidden && hierarchy.empty()) {
      attempts = {false, true};
    } else {
      attempts = {true, false};
    }
    for (bool borrowing : attempts) {
      std::vector<PreemptionTarget> targets;
      for (const Candidate& c : all) {
        if (!Valid(c, borrowing)) continue;
        state_.RemoveUsage(*c.workload);
        targets.push_back({c.workload, std::string(ReasonOf(c.variant))});
        if (Fits(borrowing)) {
          FillBack(p_, targets, state_, borrowing);
          RestoreTargets(targets, state_);
          return targets;
        }
      }
      RestoreTargets(targets, state_);
    }
    return {};
  }

 private:
  bool SatisfiesPolicy(const Workload& candidate, bool same_queue) const {
    return queues::SatisfiesPolicy(
        *p_.workload, candidate,
        same_queue ? p_.cq->preemption.within_cluster_queue
                   : p_.cq->preemption.reclaim_within_cohort);
  }

  Variant Classify(const AdmittedWorkload& w, bool advantage) const {
    const Workload& candidate = *w.workload;
    if (!MayBeCandidate(w, p_.need_preemption, now_)) return Variant::kNever;
    const bool same_queue = w.cq == node_;
    if (!SatisfiesPolicy(candidate, same_queue)) return Variant::kNever;
    if (same_queue) return Variant::kWithinClusterQueue;
    if (advantage) return Variant::kHierarchicalReclaim;
    const BorrowWithinCohort& bwc = p_.cq->preemption.borrow_within_cohort;
    if (bwc.policy == BorrowWithinCohortPolicy::kNever) {
      return Variant::kReclaimWithoutBorrowing;
    }
    // isAboveBorrowingThreshold.
    if (candidate.priority >= p_.workload->priority ||
        (bwc.max_priority_threshold.has_value() &&
         candidate.priority > *bwc.max_priority_threshold)) {
      return Variant::kReclaimWithoutBorrowing;
    }
    return Variant::kReclaimWhileBorrowing;
  }

  void FromQueue(NodeId cq, NodeId lca, bool advantage,
                 std::vector<Candidate>& out) const {
    for (const AdmittedWorkload& w : state_.Admitted(tree_.Name(cq))) {
      const Variant v = Classify(w, advantage);
      if (v != Variant::kNever) out.push_back(Candidate{&w, lca, v});
    }
  }

  // collectCandidatesForHierarchicalReclaim: walks from the preemptor's
  // parent to the root; once a subtree holding the request is reached, the
  // preemptor has the advantage over everything found from there on.
  void CollectFromCohort(std::vector<Candidate>& hierarchy,
                         std::vector<Candidate>& priority) const {
    if (tree_.Parent(node_) == QuotaTree::kNoNode ||
        p_.cq->preemption.reclaim_within_cohort == PreemptionPolicy::kNever) {
      return;
    }
    FlavorResourceQuantities remaining;
    bool advantage = tree_.FitsInQuota(node_, p_.requests, &remaining);
    NodeId previous = QuotaTree::kNoNode;
    for (NodeId n = tree_.Parent(node_); n != QuotaTree::kNoNode;
         n = tree_.Parent(n)) {
      InSubtree(n, n, previous, advantage, advantage ? hierarchy : priority);
      const FlavorResourceQuantities requests = remaining;
      advantage = tree_.FitsInQuota(n, requests, &remaining) || advantage;
      previous = n;
    }
  }

  // Collects from the queues and subtrees under `current` that use more
  // than their quota, skipping the subtree already visited.
  void InSubtree(NodeId current, NodeId subtree_root, NodeId skip,
                 bool advantage, std::vector<Candidate>& out) const {
    for (NodeId child : tree_.ChildCohorts(current)) {
      if (child == skip) continue;
      if (tree_.IsWithinNominal(child, p_.need_preemption)) continue;
      InSubtree(child, subtree_root, skip, advantage, out);
    }
    for (NodeId cq : tree_.ChildClusterQueues(current)) {
      if (cq == node_) continue;
      if (!tree_.IsWithinNominal(cq, p_.need_preemption)) {
        FromQueue(cq, subtree_root, advantage, out);
      }
    }
  }

  // candidateIsValid: earlier removals may have brought the candidate's
  // queue, or a cohort between it and the common ancestor, within quota.
  bool Valid(const Candidate& c, bool borrowing) const {
    if (c.workload->cq == node_) return true;
    if (borrowing && c.variant == Variant::kReclaimWithoutBorrowing) {
      return false;
    }
    for (NodeId n = c.workload->cq; n != QuotaTree::kNoNode && n != c.lca;
         n = tree_.Parent(n)) {
      if (tree_.IsWithinNominal(n, p_.need_preemption)) return false;
    }
    return true;
  }

  bool Fits(bool allow_borrowing) const {
    return PreemptorFits(p_, tree_, allow_borrowing);
  }

  // queueUnderNominalInResourcesNeedingPreemption.
  bool UnderNominalWhereNeeded() const {
    for (const FlavorResource& fr : p_.need_preemption) {
      if (tree_.Usage(node_, fr) >= tree_.Quota(node_, fr).nominal_quota) {
        return false;
      }
    }
    return true;
  }

  const Preemptor& p_;
  ClusterState& state_;
  const QuotaTree& tree_;
  const absl::Time now_;
  const NodeId node_;
};

absl::string_view HumanReadable(absl::string_view reason) {
  if (reason == kInClusterQueue) return "prioritization in the ClusterQueue";
  if (reason == kInCohortReclamation) return "reclamation within the cohort";
  if (reason == kInCohortReclaimWhileBorrowing) {
    return "reclamation within the cohort while borrowing";
  }
  if (reason == kInCohortFairSharing) return "Fair Sharing within the cohort";
  return "UNKNOWN";
}

absl::string_view OrUnknown(absl::string_view s) {
  return s.empty() ? "UNKNOWN" : s;
}

}  // namespace

bool SatisfiesPolicy(const Workload& preemptor, const Workload& candidate,
                     PreemptionPolicy policy) {
  switch (policy) {
    case PreemptionPolicy::kNever:
      return false;
    case PreemptionPolicy::kLowerPriority:
      return preemptor.priority > candidate.priority;
    case PreemptionPolicy::kLowerOrNewerEqualPriority:
      return preemptor.priority > candidate.priority ||
             (preemptor.priority == candidate.priority &&
              preemptor.times.queue_order < candidate.times.queue_order);
    case PreemptionPolicy::kAny:
      return true;
  }
  return false;
}

bool MayBeCandidate(const AdmittedWorkload& candidate,
                    const std::set<FlavorResource>& need_preemption,
                    absl::Time now) {
  const Workload& w = *candidate.workload;
  // Beyond Kueue: a minimum runtime protects a running workload.
  if (!w.evicted && w.times.not_preemptible_before > now) return false;
  for (const auto& [fr, v] : candidate.usage) {
    if (need_preemption.contains(fr)) return true;
  }
  return false;
}

bool PreemptorFits(const Preemptor& p, const QuotaTree& tree,
                   bool allow_borrowing) {
  const NodeId node = tree.ClusterQueueNode(p.cq->name);
  for (const auto& [fr, v] : p.requests) {
    if (!allow_borrowing && tree.BorrowingWith(node, fr, v)) return false;
    if (v > tree.Available(node, fr)) return false;
  }
  return true;
}

void FillBack(const Preemptor& p, std::vector<PreemptionTarget>& targets,
              ClusterState& state, bool allow_borrowing) {
  // Keeps Kueue's O(1) removal (the last target moves into the gap), and so
  // its output order.
  for (int i = static_cast<int>(targets.size()) - 2; i >= 0; --i) {
    state.AddUsage(*targets[i].victim);
    if (PreemptorFits(p, state.tree(), allow_borrowing)) {
      targets[i] = std::move(targets.back());
      targets.pop_back();
    } else {
      state.RemoveUsage(*targets[i].victim);
    }
  }
}

void RemoveTargets(const std::vector<PreemptionTarget>& targets,
                   ClusterState& state) {
  for (const PreemptionTarget& t : targets) state.RemoveUsage(*t.victim);
}

void RestoreTargets(const std::vector<PreemptionTarget>& targets,
                    ClusterState& state) {
  for (const PreemptionTarget& t : targets) state.AddUsage(*t.victim);
}

bool CandidateLess(const Workload& a, const Workload& b, absl::string_view cq,
                   absl::Time now) {
  if (a.evicted != b.evicted) return a.evicted;
  const bool a_in_cq = ClusterQueueOf(a) == cq;
  const bool b_in_cq = ClusterQueueOf(b) == cq;
  if (a_in_cq != b_in_cq) return !a_in_cq;
  if (a.priority != b.priority) return a.priority < b.priority;
  const absl::Time start_a = WorkStart(a, now);
  const absl::Time start_b = WorkStart(b, now);
  if (start_a != start_b) return start_a > start_b;
  return a.uid < b.uid;
}

std::vector<PreemptionTarget> GetTargets(const Preemptor& preemptor,
                                         ClusterState& state, absl::Time now) {
  if (preemptor.fair_sharing != nullptr) {
    return FairPreemptions(preemptor, state, now);
  }
  return Classical(preemptor, state, now).Run();
}

PreemptionSimulation SimulatePreemption(const Workload& workload,
                                        const ClusterQueue& cq,
                                        const FairSharing* fair_sharing,
                                        const FlavorResource& fr,
                                        int64_t quantity, ClusterState& state,
                                        absl::Time now) {
  const Preemptor p{&workload, &cq, {fr}, {{fr, quantity}}, fair_sharing};
  const std::vector<PreemptionTarget> targets = GetTargets(p, state, now);
  QuotaTree& tree = state.tree();
  const NodeId node = tree.ClusterQueueNode(cq.name);
  if (targets.empty()) {
    return {PreemptionPossibility::kNoCandidates,
            tree.LowestSubtreeThatFits(node, fr, quantity).height};
  }
  RemoveTargets(targets, state);
  const int borrow_after =
      tree.LowestSubtreeThatFits(node, fr, quantity).height;
  RestoreTargets(targets, state);
  for (const PreemptionTarget& t : targets) {
    if (t.victim->cq == node) {
      return {PreemptionPossibility::kPreempt, borrow_after};
    }
  }
  return {PreemptionPossibility::kReclaim, borrow_after};
}

std::string PreemptionMessage(const Workload& preemptor,
                              absl::string_view reason,
                              absl::string_view preemptor_path,
                              absl::string_view preemptee_path) {
  return absl::StrCat(
      "Preempted to accommodate a workload (UID: ", OrUnknown(preemptor.uid),
      ", JobUID: ", OrUnknown(preemptor.job_uid), ") due to ",
      HumanReadable(reason), "; preemptor path: ", OrUnknown(preemptor_path),
      "; preemptee path: ", OrUnknown(preemptee_path));
}

}  // namespace jobset::scheduler::queues
