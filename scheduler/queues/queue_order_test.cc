#include "scheduler/queues/queue_order.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/quota.h"
#include "scheduler/queues/test_builders.h"

namespace jobset::scheduler::queues {
namespace {

using ::jobset::scheduler::queues::testing::ClusterQueueBuilder;
using ::jobset::scheduler::queues::testing::kT0;
using ::jobset::scheduler::queues::testing::Quota;
using ::jobset::scheduler::queues::testing::WorkloadBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

PendingWorkload Pending(std::string uid, int32_t priority, int minute) {
  return PendingWorkload{std::make_shared<const Workload>(
                             WorkloadBuilder(uid)
                                 .Priority(priority)
                                 .QueuedAt(kT0 + absl::Minutes(minute))
                                 .Build()),
                         false, absl::InfinitePast()};
}

TEST(HeapOrderTest, PriorityThenQueueOrderTimeThenUid) {
  PendingQueue queue{
      "cq",
      {Pending("late-low", 0, 5), Pending("early-low", 0, 1),
       Pending("high", 10, 9), Pending("b", 0, 3), Pending("a", 0, 3)},
      ""};
  EXPECT_THAT(HeapOrder(queue, kT0), ElementsAre(2, 1, 4, 3, 0));
  EXPECT_THAT(Head(queue, kT0), Optional(2));
}

TEST(HeapOrderTest, StickyFirstParkedAndBackingOffLeftOut) {
  PendingQueue queue{"cq",
                     {Pending("high", 10, 0), Pending("sticky", 0, 9),
                      Pending("parked", 20, 0), Pending("backoff", 30, 0)},
                     "sticky"};
  queue.workloads[2].parked = true;
  queue.workloads[3].requeue_at = kT0 + absl::Seconds(60);
  EXPECT_THAT(HeapOrder(queue, kT0), ElementsAre(1, 0));
  EXPECT_THAT(HeapOrder(queue, kT0 + absl::Seconds(60)), ElementsAre(1, 3, 0));
}

TEST(HeapOrderTest, EmptyWhenAllParked) {
  PendingQueue queue{"cq", {Pending("a", 0, 0)}, ""};
  queue.workloads[0].parked = true;
  EXPECT_THAT(HeapOrder(queue, kT0), IsEmpty());
  EXPECT_EQ(Head(queue, kT0), std::nullopt);
}

struct RequeueCase {
  std::string name;
  QueueingStrategy strategy;
  RequeueReason reason;
  Requeue want;
  bool sticky;
};

class RequeueAfterTest : public ::testing::TestWithParam<RequeueCase> {};

TEST_P(RequeueAfterTest, ParksOrReheaps) {
  const RequeueCase& c = GetParam();
  EXPECT_EQ(RequeueAfter(c.strategy, c.reason), c.want);
  EXPECT_EQ(BecomesSticky(c.strategy, c.reason), c.sticky);
}

constexpr QueueingStrategy kBestEffort = QueueingStrategy::kBestEffortFIFO;
constexpr QueueingStrategy kStrict = QueueingStrategy::kStrictFIFO;

INSTANTIATE_TEST_SUITE_P(
    Table, RequeueAfterTest,
    ::testing::Values(
        RequeueCase{"BestEffortNoFit", kBestEffort, RequeueReason::kNoFit,
                    Requeue::kPark, false},
        RequeueCase{"BestEffortNoCandidates", kBestEffort,
                    RequeueReason::kPreemptionNoCandidates, Requeue::kPark,
                    false},
        RequeueCase{"BestEffortInactive", kBestEffort, RequeueReason::kGeneric,
                    Requeue::kPark, false},
        RequeueCase{"BestEffortSkipped", kBestEffort,
                    RequeueReason::kFailedAfterNomination, Requeue::kHeap,
                    false},
        RequeueCase{"BestEffortPreempting", kBestEffort,
                    RequeueReason::kPendingPreemption, Requeue::kHeap, true},
        RequeueCase{"StrictNoFit", kStrict, RequeueReason::kNoFit,
                    Requeue::kHeap, false},
        RequeueCase{"StrictPreempting", kStrict,
                    RequeueReason::kPendingPreemption, Requeue::kHeap, false},
        RequeueCase{"StrictNamespaceMismatch", kStrict,
                    RequeueReason::kNamespaceMismatch, Requeue::kPark, false}),
    [](const ::testing::TestParamInfo<RequeueCase>& info) {
      return info.param.name;
    });

TEST(QueuesToUnparkTest, EveryQueueUnderTheSameRoot) {
  auto cq = [](std::string name, std::string cohort) {
    return ClusterQueueBuilder(std::move(name))
        .Cohort(std::move(cohort))
        .Flavor("default", {Quota("cpu", 1)})
        .Build();
  };
  absl::StatusOr<QuotaTree> tree =
      QuotaTree::Build({Cohort{"left", "root", {}}},
                       {cq("l2", "left"), cq("l1", "left"), cq("r1", "root"),
                        cq("other", "x"), cq("solo", "")});
  ASSERT_TRUE(tree.ok());
  EXPECT_THAT(QueuesToUnpark(*tree, "l1"), ElementsAre("l1", "l2", "r1"));
  EXPECT_THAT(QueuesToUnpark(*tree, "solo"), ElementsAre("solo"));
  EXPECT_THAT(QueuesToUnpark(*tree, "missing"), IsEmpty());
}

}  // namespace
}  // namespace jobset::scheduler::queues
