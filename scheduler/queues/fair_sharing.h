#ifndef JOBSET_SCHEDULER_QUEUES_FAIR_SHARING_H_
#define JOBSET_SCHEDULER_QUEUES_FAIR_SHARING_H_

// Kueue's fair sharing (kueue-semantics.md §4.5; SC/fair_sharing.go,
// SCH/fair_sharing_iterator.go), on when jobsetd runs with --fair_sharing:
//
//   Share (DRS) of a ClusterQueue or Cohort with a parent: per resource, the
//   usage above its SubtreeQuota summed over flavors, × 1000 / what the
//   parent's tree could lend of that resource (PotentialAvailable of the
//   parent, summed over flavors); the largest ratio, ÷ fairSharing.weight.
//   Not borrowing: 0. Weight 0 and borrowing: +∞, ordered by the ratio among
//   themselves. A node without a parent: 0.
//
//   Admission: instead of one sorted order, each next head is the winner of
//   a tournament over its root cohort: at every cohort, among the heads its
//   children nominate, the one whose subtree at that level does not borrow
//   on the flavors it requests wins (FairSharingPrioritizeNonBorrowing, on in
//   Kueue), then the lowest share after its admission, then priority, then
//   queue order. Shares are recomputed after every processed head that
//   booked quota (the others change none: FairSharingOrder).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/quota.h"

namespace jobset::scheduler::queues {

// The Preempted reason fair sharing gives.
inline constexpr absl::string_view kInCohortFairSharing = "InCohortFairSharing";

// Kueue's configuration block `fairSharing` (jobsetd's flags).
struct FairSharing {
  enum class Strategy { kLessThanOrEqualToFinalShare, kLessThanInitialShare };
  // Kueue's default: both, in this order.
  std::vector<Strategy> preemption_strategies = {
      Strategy::kLessThanOrEqualToFinalShare, Strategy::kLessThanInitialShare};
};

// The dominant resource share of one node.
struct Drs {
  double weight = 1.0;
  double unweighted_ratio = 0;  // -1 only in NegativeDrs
  std::string dominant_resource;
  bool borrowing = false;  // usage above SubtreeQuota for some resource
  std::vector<FlavorResource> borrowed;

  bool IsZero() const { return unweighted_ratio == 0; }
  // Returns the ratio ÷ weight: 0 when not borrowing, +∞ for weight 0.
  double PreciseWeightedShare() const;
  // status.fairSharing.weightedShare: the share rounded up, INT64_MAX for
  // weight 0 while borrowing.
  int64_t RoundedWeightedShare() const;
  // Returns whether the node borrows on a (flavor, resource) of `requests`
  // with a positive amount.
  bool BorrowingOn(const FlavorResourceQuantities& requests) const;
};

// A share below every real one, to start a search for the highest.
Drs NegativeDrs();

// Returns -1, 0 or 1: lower is admitted first and preempted last.
int CompareDrs(const Drs& a, const Drs& b);

// Returns the node's share as the tree's usage stands.
Drs DominantResourceShare(const QuotaTree& tree, QuotaTree::NodeId node);

// One nominated head as the tournament sees it.
struct FairSharingHead {
  QuotaTree::NodeId cq = QuotaTree::kNoNode;
  const FlavorResourceQuantities* usage = nullptr;  // its assignment's
  int32_t priority = 0;
  absl::Time queue_order;
};

// Returns the index in `heads` of the head to process next among those not
// `done`, or heads.size() when all are. `heads` must be in the classical
// order (cycle.cc's ProcessBefore): it breaks the remaining ties, and the
// first remaining head decides which root cohort's tournament runs, so the
// order is deterministic where Kueue's map order is not. `tree` is used to
// simulate each head's admission and is restored.
size_t NextFairSharingHead(QuotaTree& tree,
                           absl::Span<const FairSharingHead> heads,
                           const std::vector<bool>& done);

// NextFairSharingHead over one cycle's heads, call after call, keeping each
// root cohort's tournament while the usage in its tree stays as it was: a
// head processed without booking anything changes no share, so the next
// winner there comes from the same tournament (a cycle where most heads do
// not fit runs a few tournaments per root instead of one per head). The
// caller says where usage changed. `tree` and `heads` must outlive it.
// Thread-compatible.
class FairSharingOrder {
 public:
  FairSharingOrder(QuotaTree& tree, absl::Span<const FairSharingHead> heads);
  ~FairSharingOrder();

  // Returns NextFairSharingHead(tree, heads, done).
  size_t Next(const std::vector<bool>& done);
  // Usage was added or removed at ClusterQueue `cq` (its root's shares are
  // made again).
  void UsageChanged(QuotaTree::NodeId cq);

 private:
  class Tournament;

  QuotaTree& tree_;
  absl::Span<const FairSharingHead> heads_;
  absl::flat_hash_map<QuotaTree::NodeId, std::unique_ptr<Tournament>>
      tournaments_;  // by root cohort
};

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_FAIR_SHARING_H_
