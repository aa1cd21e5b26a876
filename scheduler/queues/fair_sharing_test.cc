#include "scheduler/queues/fair_sharing.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/queues/cluster_state.h"
#include "scheduler/queues/cycle.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/preemption.h"
#include "scheduler/queues/quota.h"
#include "scheduler/queues/test_builders.h"

namespace jobset::scheduler::queues {
namespace {

using ::jobset::scheduler::queues::testing::ClusterQueueBuilder;
using ::jobset::scheduler::queues::testing::Cpu;
using ::jobset::scheduler::queues::testing::kT0;
using ::jobset::scheduler::queues::testing::Quota;
using ::jobset::scheduler::queues::testing::WorkloadBuilder;
using ::testing::ElementsAre;

const FlavorResource kCpu{"default", "cpu"};
const FlavorResource kGpu{"default", "example.com/gpu"};

ClusterQueue Cq(std::string name, std::string cohort, int64_t cores,
                double weight = 1.0, int64_t gpus = 0) {
  std::vector<ResourceQuota> quotas = {Quota("cpu", Cpu(cores))};
  if (gpus > 0) quotas.push_back(Quota("example.com/gpu", gpus));
  return ClusterQueueBuilder(std::move(name))
      .Cohort(std::move(cohort))
      .Flavor("default", std::move(quotas))
      .ReclaimWithinCohort(PreemptionPolicy::kAny)
      .WithinClusterQueue(PreemptionPolicy::kLowerPriority)
      .FairWeight(weight)
      .Build();
}

QuotaTree Tree(std::vector<ClusterQueue> cqs) {
  absl::StatusOr<QuotaTree> tree = QuotaTree::Build({}, cqs);
  EXPECT_TRUE(tree.ok()) << tree.status();
  return *std::move(tree);
}

// Kueue's TestDominantResourceShare cases: cq (cpu 2, gpu 5) and lending-cq
// (cpu 8, gpu 5) in one cohort; the share counts usage above nominal per
// 1000 of what the cohort could lend (cpu 10, gpu 10).
TEST(DominantResourceShareTest, KueueCases) {
  QuotaTree tree =
      Tree({Cq("cq", "c", 2, 1.0, 5), Cq("lender", "c", 8, 1.0, 5)});
  const QuotaTree::NodeId cq = tree.ClusterQueueNode("cq");
  tree.AddUsage(cq, {{kCpu, Cpu(1)}, {kGpu, 2}});
  EXPECT_TRUE(DominantResourceShare(tree, cq).IsZero()) << "below nominal";
  EXPECT_FALSE(DominantResourceShare(tree, cq).borrowing);

  tree.AddUsage(cq, {{kCpu, Cpu(2)}, {kGpu, 1}});  // cpu 3 of 2, gpu 3 of 5
  Drs share = DominantResourceShare(tree, cq);
  EXPECT_TRUE(share.borrowing);
  EXPECT_EQ(share.dominant_resource, "cpu");
  EXPECT_DOUBLE_EQ(share.PreciseWeightedShare(), 100);  // (3-2)*1000/10
  EXPECT_EQ(share.RoundedWeightedShare(), 100);
  EXPECT_THAT(share.borrowed, ElementsAre(kCpu));

  tree.AddUsage(cq, {{kGpu, 4}});  // gpu 7 of 5: 200 beats cpu's 100
  share = DominantResourceShare(tree, cq);
  EXPECT_EQ(share.dominant_resource, "example.com/gpu");
  EXPECT_DOUBLE_EQ(share.PreciseWeightedShare(), 200);

  const QuotaTree::NodeId cohort = tree.CohortNode("c");
  EXPECT_TRUE(DominantResourceShare(tree, cohort).IsZero()) << "a root";
}

TEST(DominantResourceShareTest, WeightDividesAndZeroWeightIsLast) {
  QuotaTree tree = Tree({Cq("heavy", "c", 2, 2.0), Cq("zero", "c", 2, 0.0),
                         Cq("lender", "c", 6)});
  tree.AddUsage(tree.ClusterQueueNode("heavy"), kCpu, Cpu(4));
  const Drs heavy = DominantResourceShare(tree, tree.ClusterQueueNode("heavy"));
  EXPECT_DOUBLE_EQ(heavy.PreciseWeightedShare(), 100);  // 2000/10 / 2
  EXPECT_EQ(heavy.RoundedWeightedShare(), 100);

  const QuotaTree::NodeId zero = tree.ClusterQueueNode("zero");
  EXPECT_EQ(DominantResourceShare(tree, zero).PreciseWeightedShare(), 0)
      << "weight 0 without borrowing";
  tree.AddUsage(zero, kCpu, Cpu(3));
  const Drs borrowing = DominantResourceShare(tree, zero);
  EXPECT_EQ(borrowing.RoundedWeightedShare(),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(CompareDrs(borrowing, heavy), 1);
  EXPECT_EQ(CompareDrs(heavy, borrowing), -1);
  EXPECT_EQ(CompareDrs(NegativeDrs(), Drs{}), -1);
}

TEST(DominantResourceShareTest, BorrowingOnOnlyTheRequestedFlavors) {
  QuotaTree tree = Tree({Cq("a", "c", 2, 1.0, 2), Cq("b", "c", 2, 1.0, 2)});
  tree.AddUsage(tree.ClusterQueueNode("a"), kGpu, 3);
  const Drs share = DominantResourceShare(tree, tree.ClusterQueueNode("a"));
  EXPECT_TRUE(share.BorrowingOn({{kGpu, 1}}));
  EXPECT_FALSE(share.BorrowingOn({{kCpu, Cpu(1)}}));
  EXPECT_FALSE(share.BorrowingOn({{kGpu, 0}}));
}

// ---- Cycles with fair sharing ----

Workload Running(std::string name, std::string cq, int32_t cores) {
  return WorkloadBuilder(std::move(name))
      .PodSet("w", cores, {{"cpu", Cpu(1)}})
      .AdmittedOn(std::move(cq), "default")
      .Build();
}

Workload Job(std::string name, std::string cq, int32_t cores,
             int32_t priority = 0) {
  return WorkloadBuilder(std::move(name))
      .Queue(std::move(cq))
      .Priority(priority)
      .PodSet("w", cores, {{"cpu", Cpu(1)}})
      .Build();
}

CycleInput Input(std::vector<ClusterQueue> cqs, std::vector<Workload> running,
                 std::vector<Workload> heads, bool fair) {
  CycleInput in;
  in.flavors = {ResourceFlavor{"default", {}, {}, {}}};
  in.cluster_queues = std::move(cqs);
  for (Workload& w : running) {
    in.admitted.push_back(std::make_shared<const Workload>(std::move(w)));
  }
  for (Workload& w : heads) {
    PendingQueue q;
    q.cluster_queue = w.cluster_queue;
    q.workloads.push_back(
        PendingWorkload{std::make_shared<const Workload>(std::move(w)), false,
                        absl::InfinitePast()});
    in.pending.push_back(std::move(q));
  }
  if (fair) in.fair_sharing = FairSharing{};
  return in;
}

// "<name> admit" | "<name> preempt <victim>:<reason>..." | "<name> pending".
std::vector<std::string> Lines(const CycleInput& input) {
  absl::StatusOr<CycleResult> result = RunCycle(input, kT0);
  EXPECT_TRUE(result.ok()) << result.status();
  std::vector<std::string> lines;
  if (!result.ok()) return lines;
  for (const Decision& d : result->decisions) {
    std::string line = d.uid;
    if (d.kind == DecisionKind::kAdmit) line += " admit";
    if (d.kind == DecisionKind::kPending) line += " pending";
    if (d.kind == DecisionKind::kPreempt) {
      line += " preempt";
      for (const Victim& v : d.victims) line += " " + v.uid + ":" + v.reason;
    }
    lines.push_back(line);
  }
  return lines;
}

// a and b own 2 cpus each, c lends 8; 2 are free. a already borrows 4;
// both heads would borrow. Classical order takes a's (higher priority);
// fair sharing takes b's, whose share after admission is lower.
TEST(FairSharingCycleTest, TheLowerShareIsAdmittedFirst) {
  auto input = [](bool fair) {
    return Input(
        {Cq("a", "c", 2), Cq("b", "c", 2), Cq("c", "c", 8)},
        {Running("a1", "a", 6), Running("b1", "b", 2), Running("c1", "c", 2)},
        {Job("a2", "a", 2, 10), Job("b2", "b", 2, 0)}, fair);
  };
  EXPECT_THAT(Lines(input(false)), ElementsAre("a2 admit", "b2 pending"));
  EXPECT_THAT(Lines(input(true)), ElementsAre("b2 admit", "a2 pending"));
}

// A weight of 3 lets a hold three times b's share before b goes first.
TEST(FairSharingCycleTest, WeightsScaleTheShares) {
  auto input = [](double weight_a) {
    ClusterQueue a = Cq("a", "c", 2, weight_a);
    return Input(
        {a, Cq("b", "c", 2), Cq("c", "c", 8)},
        {Running("a1", "a", 4), Running("b1", "b", 3), Running("c1", "c", 3)},
        {Job("a2", "a", 2), Job("b2", "b", 2)}, true);
  };
  // a after: 4 over / 12; b after: 3 over / 12.
  EXPECT_THAT(Lines(input(1.0)), ElementsAre("b2 admit", "a2 pending"));
  // a after weighted: 333/3 = 111 < b's 250.
  EXPECT_THAT(Lines(input(3.0)), ElementsAre("a2 admit", "b2 pending"));
}

// A head within its queue's nominal quota for what it requests goes before
// one that borrows, even though its queue's share is higher from borrowing
// another resource (FairSharingPrioritizeNonBorrowing): without the rule,
// b2 (share 125 after) would go before a2 (share 500 from gpus).
TEST(FairSharingCycleTest, NominalBeforeBorrowing) {
  Workload gpus = WorkloadBuilder("a1")
                      .PodSet("w", 4, {{"example.com/gpu", 1}})
                      .AdmittedOn("a", "default")
                      .Build();
  const CycleInput input =
      Input({Cq("a", "c", 4, 1.0, 1), Cq("b", "c", 2, 1.0, 1),
             Cq("c", "c", 2, 1.0, 4)},
            {std::move(gpus), Running("b1", "b", 1)},
            {Job("b2", "b", 2), Job("a2", "a", 2)}, true);
  EXPECT_THAT(Lines(input), ElementsAre("a2 admit", "b2 admit"));
}

// ---- Preemption with fair sharing ----

// a, b and c own 4 cpus each; a runs four 2-cpu workloads (4 borrowed), b
// is at its nominal quota and wants 2 more. b's share after admission (2
// over of 12) does not exceed a's after losing one workload (2 over):
// LessThanOrEqualToFinalShare takes one of a's, the first in candidate
// order.
TEST(FairSharingPreemptionTest, TakesFromTheHighestShare) {
  const CycleInput input = Input(
      {Cq("a", "c", 4), Cq("b", "c", 4), Cq("c", "c", 4)},
      {Running("a1", "a", 2), Running("a2", "a", 2), Running("a3", "a", 2),
       Running("a4", "a", 2), Running("b1", "b", 4)},
      {Job("b2", "b", 2)}, true);
  EXPECT_THAT(Lines(input), ElementsAre("b2 preempt a1:InCohortFairSharing"));
}

// With a borrowing only 2, taking one of its workloads would leave b above
// a: neither strategy passes, nothing is preempted.
TEST(FairSharingPreemptionTest, EqualSharesAreLeftAlone) {
  const CycleInput input =
      Input({Cq("a", "c", 4), Cq("b", "c", 4), Cq("c", "c", 2)},
            {Running("a1", "a", 2), Running("a2", "a", 2),
             Running("a3", "a", 2), Running("b1", "b", 4)},
            {Job("b2", "b", 2)}, true);
  EXPECT_THAT(Lines(input), ElementsAre("b2 pending"));
}

// With weight 2, b's share after admission is half a's before: the second
// strategy (LessThanInitialShare) takes one of a's.
TEST(FairSharingPreemptionTest, SecondStrategyForAHeavierQueue) {
  const CycleInput input =
      Input({Cq("a", "c", 4), Cq("b", "c", 4, 2.0), Cq("c", "c", 2)},
            {Running("a1", "a", 2), Running("a2", "a", 2),
             Running("a3", "a", 2), Running("b1", "b", 4)},
            {Job("b2", "b", 2)}, true);
  EXPECT_THAT(Lines(input), ElementsAre("b2 preempt a1:InCohortFairSharing"));
}

// A queue within its nominal quota reclaims it from the borrower whatever
// the shares (FairSharingPreemptWithinNominal): a1 (4 cpus) is enough.
TEST(FairSharingPreemptionTest, WithinNominalReclaims) {
  const CycleInput input = Input(
      {Cq("a", "c", 4), Cq("b", "c", 4)},
      {Running("a1", "a", 4), Running("a2", "a", 2), Running("a3", "a", 2)},
      {Job("b1", "b", 4)}, true);
  EXPECT_THAT(Lines(input), ElementsAre("b1 preempt a1:InCohortReclamation"));
}

// In its own queue, a higher priority preempts as classical preemption does.
TEST(FairSharingPreemptionTest, WithinTheClusterQueue) {
  Workload low = Running("low", "a", 4);
  const CycleInput input = Input({Cq("a", "", 4)}, {std::move(low)},
                                 {Job("high", "a", 4, 10)}, true);
  EXPECT_THAT(Lines(input), ElementsAre("high preempt low:InClusterQueue"));
}

TEST(FairSharingPreemptionTest, MessageNamesFairSharing) {
  EXPECT_EQ(PreemptionMessage(WorkloadBuilder("b2").Uid("u2").Build(),
                              kInCohortFairSharing, "/c/b", "/c/a"),
            "Preempted to accommodate a workload (UID: u2, JobUID: UNKNOWN) "
            "due to Fair Sharing within the cohort; preemptor path: /c/b; "
            "preemptee path: /c/a");
}

// FairSharingOrder keeps a root's tournament while nothing is booked in its
// tree. Root r holds cohorts c1 and c2 (two queues each) and a lender; root
// s two queues. Heads are processed in turn, some booking their usage (as
// an admission does), some not (as a head that does not fit): the kept
// order picks as NextFairSharingHead does afresh each time, and one never
// told of the bookings would not.
TEST(FairSharingOrderTest, KeptTournamentsPickAsFreshOnes) {
  const std::vector<Cohort> cohorts = {Cohort{"c1", "r", {}, 1.0},
                                       Cohort{"c2", "r", {}, 1.0}};
  const std::vector<ClusterQueue> cqs = {
      Cq("a1", "c1", 1), Cq("a2", "c1", 1),     Cq("b1", "c2", 1),
      Cq("b2", "c2", 1), Cq("lender", "r", 12), Cq("x1", "s", 2),
      Cq("x2", "s", 2)};
  auto tree = [&] {
    absl::StatusOr<QuotaTree> t = QuotaTree::Build(cohorts, cqs);
    EXPECT_TRUE(t.ok()) << t.status();
    return *std::move(t);
  };
  QuotaTree fresh = tree();
  QuotaTree kept = tree();
  QuotaTree stale = tree();
  // Two heads per queue but the lender's, as several cycles' would be.
  std::vector<FlavorResourceQuantities> usages;
  std::vector<std::string> queues;
  for (int round = 0; round < 2; ++round) {
    for (const char* cq : {"a1", "a2", "b1", "b2", "x1", "x2"}) {
      queues.push_back(cq);
      usages.push_back({{kCpu, Cpu(1 + (queues.size() % 3))}});
    }
  }
  std::vector<FairSharingHead> heads;
  for (size_t i = 0; i < queues.size(); ++i) {
    heads.push_back(FairSharingHead{fresh.ClusterQueueNode(queues[i]),
                                    &usages[i], 0,
                                    kT0 + absl::Seconds(static_cast<int>(i))});
  }
  // Every third head does not fit and books nothing.
  auto books = [](size_t i) { return i % 3 != 2; };
  std::vector<size_t> want;
  std::vector<size_t> got;
  std::vector<size_t> never_told;
  std::vector<bool> done_fresh(heads.size(), false);
  std::vector<bool> done_kept(heads.size(), false);
  std::vector<bool> done_stale(heads.size(), false);
  FairSharingOrder order(kept, heads);
  FairSharingOrder stale_order(stale, heads);
  for (size_t step = 0; step < heads.size(); ++step) {
    const size_t f = NextFairSharingHead(fresh, heads, done_fresh);
    const size_t k = order.Next(done_kept);
    const size_t s = stale_order.Next(done_stale);
    ASSERT_LT(f, heads.size());
    want.push_back(f);
    got.push_back(k);
    never_told.push_back(s);
    done_fresh[f] = done_kept[k] = done_stale[s] = true;
    if (books(f)) fresh.AddUsage(heads[f].cq, *heads[f].usage);
    if (books(k)) {
      kept.AddUsage(heads[k].cq, *heads[k].usage);
      order.UsageChanged(heads[k].cq);
    }
    if (books(s)) stale.AddUsage(heads[s].cq, *heads[s].usage);
  }
  EXPECT_EQ(got, want);
  EXPECT_NE(never_told, want);
  EXPECT_EQ(order.Next(done_kept), heads.size());
}

}  // namespace
}  // namespace jobset::scheduler::queues
