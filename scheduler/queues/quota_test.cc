#include "scheduler/queues/quota.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/test_builders.h"

namespace jobset::scheduler::queues {
namespace {

using ::jobset::scheduler::queues::testing::ClusterQueueBuilder;
using ::jobset::scheduler::queues::testing::Quota;
using ::testing::HasSubstr;

const FlavorResource kCpuDefault{"default", "cpu"};

// A ClusterQueue with `nominal` cpu on flavor "default".
ClusterQueue Cq(std::string name, std::string cohort, int64_t nominal,
                std::optional<int64_t> borrowing = std::nullopt,
                std::optional<int64_t> lending = std::nullopt) {
  return ClusterQueueBuilder(std::move(name))
      .Cohort(std::move(cohort))
      .Flavor("default", {Quota("cpu", nominal, borrowing, lending)})
      .Build();
}

struct Usage {
  std::string cq;
  int64_t value;
};

struct Expect {
  std::string cq;
  int64_t available;
  int64_t potential;
};

struct TreeCase {
  std::string name;
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cqs;
  std::vector<Usage> usage;
  std::vector<Expect> expect;
};

class QuotaTreeTest : public ::testing::TestWithParam<TreeCase> {};

TEST_P(QuotaTreeTest, AvailableAndPotentialAvailable) {
  const TreeCase& c = GetParam();
  absl::StatusOr<QuotaTree> tree = QuotaTree::Build(c.cohorts, c.cqs);
  ASSERT_TRUE(tree.ok()) << tree.status();
  for (const Usage& u : c.usage) {
    tree->AddUsage(tree->ClusterQueueNode(u.cq), kCpuDefault, u.value);
  }
  for (const Expect& e : c.expect) {
    const QuotaTree::NodeId node = tree->ClusterQueueNode(e.cq);
    EXPECT_EQ(tree->Available(node, kCpuDefault), e.available) << e.cq;
    EXPECT_EQ(tree->PotentialAvailable(node, kCpuDefault), e.potential) << e.cq;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, QuotaTreeTest,
    ::testing::Values(
        // §1.4's check (DOC/cluster_queue.md): cohort SubtreeQuota 10.
        TreeCase{"LendingLimitDoc",
                 {},
                 {Cq("a", "c", 9), Cq("b", "c", 12, std::nullopt, 1)},
                 {},
                 {{"a", 10, 10}, {"b", 21, 21}}},
        TreeCase{"NoCohort",
                 {},
                 {Cq("solo", "", 8)},
                 {{"solo", 6}},
                 {{"solo", 2, 8}}},
        // §6 scenario 5: cq-a runs 8 and may borrow cq-b's idle 8.
        TreeCase{"Borrowing",
                 {},
                 {Cq("cq-a", "team", 8), Cq("cq-b", "team", 8)},
                 {{"cq-a", 8}},
                 {{"cq-a", 8, 16}, {"cq-b", 8, 16}}},
        // §6 scenario 6: borrowingLimit 2 caps both.
        TreeCase{"BorrowingLimit",
                 {},
                 {Cq("cq-a", "team", 8, 2), Cq("cq-b", "team", 8)},
                 {{"cq-a", 8}},
                 {{"cq-a", 2, 10}, {"cq-b", 8, 16}}},
        // §6 scenario 7: cq-b lends only 2; cq-b keeps 6 for itself.
        TreeCase{
            "LendingLimit",
            {},
            {Cq("cq-a", "team", 8), Cq("cq-b", "team", 8, std::nullopt, 2)},
            {{"cq-a", 8}},
            {{"cq-a", 2, 10}, {"cq-b", 8, 16}}},
        // Usage within localQuota stays local: cq-b's 5 of its private 6.
        TreeCase{
            "UsageWithinLocalQuota",
            {},
            {Cq("cq-a", "team", 8), Cq("cq-b", "team", 8, std::nullopt, 2)},
            {{"cq-b", 5}},
            {{"cq-a", 10, 10}, {"cq-b", 11, 16}}},
        // Over-admission: available goes negative.
        TreeCase{"Negative",
                 {},
                 {Cq("solo", "", 4)},
                 {{"solo", 6}},
                 {{"solo", -2, 4}}},
        // A Cohort's own quota is a shared pool; its lendingLimit keeps part
        // of the subtree from the root.
        TreeCase{
            "CohortQuotaAndHierarchy",
            {Cohort{"left",
                    "root",
                    {ResourceGroup{
                        {"cpu"},
                        {FlavorQuotas{"default",
                                      {Quota("cpu", 4, std::nullopt, 6)}}}}}}},
            {Cq("l1", "left", 5), Cq("l2", "left", 5), Cq("r1", "root", 10)},
            {},
            // left: SubtreeQuota 14, localQuota 8; root: 10 + 6 = 16.
            {{"l1", 24, 24}, {"r1", 16, 16}}}),
    [](const ::testing::TestParamInfo<TreeCase>& info) {
      return info.param.name;
    });

TEST(QuotaTreeTest, AddThenRemoveRestoresEveryNode) {
  absl::StatusOr<QuotaTree> tree = QuotaTree::Build(
      {}, {Cq("cq-a", "team", 8, std::nullopt, 3), Cq("cq-b", "team", 8)});
  ASSERT_TRUE(tree.ok());
  const QuotaTree::NodeId a = tree->ClusterQueueNode("cq-a");
  const QuotaTree::NodeId team = tree->CohortNode("team");
  tree->AddUsage(a, kCpuDefault, 4);  // 4 of cq-a's private 5: none bubbles
  EXPECT_EQ(tree->Usage(team, kCpuDefault), 0);
  tree->AddUsage(a, kCpuDefault, 6);  // 10: 5 beyond the private 5
  EXPECT_EQ(tree->Usage(team, kCpuDefault), 5);
  tree->RemoveUsage(a, kCpuDefault, 6);
  EXPECT_EQ(tree->Usage(a, kCpuDefault), 4);
  EXPECT_EQ(tree->Usage(team, kCpuDefault), 0);
  tree->RemoveUsage(a, kCpuDefault, 4);
  EXPECT_EQ(tree->Usage(a, kCpuDefault), 0);
}

struct FitCase {
  std::string name;
  int64_t l1_usage;
  int64_t val;
  int height;
  bool below_root;
};

class LowestSubtreeTest : public ::testing::TestWithParam<FitCase> {};

TEST_P(LowestSubtreeTest, HeightOfTheLowestSubtreeThatHoldsIt) {
  const FitCase& c = GetParam();
  // root { left { l1 (5), l2 (5) }, r1 (10) }
  absl::StatusOr<QuotaTree> tree = QuotaTree::Build(
      {Cohort{"left", "root", {}}},
      {Cq("l1", "left", 5), Cq("l2", "left", 5), Cq("r1", "root", 10)});
  ASSERT_TRUE(tree.ok());
  const QuotaTree::NodeId l1 = tree->ClusterQueueNode("l1");
  tree->AddUsage(l1, kCpuDefault, c.l1_usage);
  const QuotaTree::SubtreeFit fit =
      tree->LowestSubtreeThatFits(l1, kCpuDefault, c.val);
  EXPECT_EQ(fit.height, c.height);
  EXPECT_EQ(fit.below_root, c.below_root);
}

INSTANTIATE_TEST_SUITE_P(
    Table, LowestSubtreeTest,
    ::testing::Values(FitCase{"InsideTheQueue", 0, 5, 0, true},
                      FitCase{"InTheChildCohort", 0, 7, 1, true},
                      FitCase{"AtTheRoot", 0, 12, 2, false},
                      FitCase{"NowhereReportsTheRoot", 0, 30, 2, false},
                      FitCase{"UsageCounts", 4, 3, 1, true}),
    [](const ::testing::TestParamInfo<FitCase>& info) {
      return info.param.name;
    });

TEST(QuotaTreeTest, PathsHeightsAndWithinNominal) {
  absl::StatusOr<QuotaTree> tree = QuotaTree::Build(
      {Cohort{"left", "root", {}}},
      {Cq("l1", "left", 5), Cq("l2", "left", 5), Cq("solo", "", 1)});
  ASSERT_TRUE(tree.ok());
  const QuotaTree::NodeId l1 = tree->ClusterQueueNode("l1");
  EXPECT_EQ(tree->Path(l1), "/root/left/l1");
  EXPECT_EQ(tree->Path(tree->ClusterQueueNode("solo")), "/solo");
  EXPECT_EQ(tree->Height(tree->CohortNode("root")), 2);
  EXPECT_EQ(tree->Height(l1), 0);
  tree->AddUsage(l1, kCpuDefault, 6);
  EXPECT_FALSE(tree->IsWithinNominal(l1, {kCpuDefault}));
  EXPECT_TRUE(tree->IsWithinNominal(tree->CohortNode("root"), {kCpuDefault}));
  FlavorResourceQuantities remaining;
  EXPECT_FALSE(tree->FitsInQuota(l1, {{kCpuDefault, 1}}, &remaining));
  EXPECT_EQ(remaining[kCpuDefault], 1);
}

TEST(QuotaTreeTest, CohortCycleIsReportedNotFollowed) {
  absl::StatusOr<QuotaTree> tree = QuotaTree::Build(
      {Cohort{"a", "b", {}}, Cohort{"b", "a", {}}, Cohort{"c", "a", {}}},
      {Cq("in-cycle", "c", 5), Cq("fine", "d", 5)});
  ASSERT_TRUE(tree.ok());
  EXPECT_TRUE(tree->InCycle(tree->ClusterQueueNode("in-cycle")));
  EXPECT_FALSE(tree->InCycle(tree->ClusterQueueNode("fine")));
  EXPECT_EQ(tree->Available(tree->ClusterQueueNode("in-cycle"), kCpuDefault),
            5);
}

TEST(QuotaTreeTest, RejectsDuplicateAndEmptyNames) {
  EXPECT_THAT(
      QuotaTree::Build({}, {Cq("a", "", 1), Cq("a", "", 1)}).status().message(),
      HasSubstr("clusterQueues: duplicate name \"a\""));
  EXPECT_EQ(QuotaTree::Build({Cohort{"", "", {}}}, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace jobset::scheduler::queues
