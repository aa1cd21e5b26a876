#include "scheduler/queues/flavor_assigner.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/quota.h"
#include "scheduler/queues/test_builders.h"

namespace jobset::scheduler::queues {
namespace {

using ::jobset::scheduler::queues::testing::ClusterQueueBuilder;
using ::jobset::scheduler::queues::testing::Cpu;
using ::jobset::scheduler::queues::testing::Quota;
using ::jobset::scheduler::queues::testing::WorkloadBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

FlavorIndex Flavors(std::vector<ResourceFlavor> flavors) {
  FlavorIndex index;
  for (ResourceFlavor& f : flavors) {
    std::string name = f.name;
    index.emplace(std::move(name), std::move(f));
  }
  return index;
}

ResourceFlavor Plain(std::string name) {
  return ResourceFlavor{name, {}, {}, {}};
}

// A table row: ClusterQueues (the first is the workload's), usage per queue
// on (flavor, cpu), the workload, and what the preemption oracle answers.
struct Case {
  std::string name;
  std::vector<ClusterQueue> cqs;
  std::vector<std::pair<std::string, FlavorResourceQuantities>> usage;
  Workload workload;
  PreemptionSimulation oracle;
  // Expected.
  AssignmentMode mode;
  std::map<std::string, std::string> flavors;  // of the last podSet
  int borrowing;
  std::string message;
  std::string no_fit_reason;
};

FlavorResourceQuantities CpuOn(std::string flavor, int64_t cores) {
  return {{FlavorResource{std::move(flavor), "cpu"}, Cpu(cores)}};
}

ClusterQueue Solo(int64_t cores) {
  return ClusterQueueBuilder("cq")
      .Flavor("default", {Quota("cpu", Cpu(cores))})
      .Build();
}

// §8.1's on-demand and spot under one group, cq-a and cq-b in cohort team.
ClusterQueue TwoFlavors(std::string name, int64_t on_demand, int64_t spot) {
  return ClusterQueueBuilder(std::move(name))
      .Cohort("team")
      .Flavor("on-demand", {Quota("cpu", Cpu(on_demand))})
      .Flavor("spot", {Quota("cpu", Cpu(spot))})
      .Build();
}

Workload J(int32_t pods) {
  return WorkloadBuilder("j")
      .Queue("cq")
      .PodSet("w", pods, {{"cpu", Cpu(1)}})
      .Build();
}

constexpr PreemptionSimulation kNoCandidates{
    PreemptionPossibility::kNoCandidates, 0};
constexpr PreemptionSimulation kCanPreempt{PreemptionPossibility::kPreempt, 0};

class AssignFlavorsTest : public ::testing::TestWithParam<Case> {};

TEST_P(AssignFlavorsTest, ModeFlavorsAndKueueMessage) {
  const Case& c = GetParam();
  absl::StatusOr<QuotaTree> tree = QuotaTree::Build({}, c.cqs);
  ASSERT_TRUE(tree.ok()) << tree.status();
  for (const auto& [cq, usage] : c.usage) {
    tree->AddUsage(tree->ClusterQueueNode(cq), usage);
  }
  const FlavorIndex flavors =
      Flavors({Plain("default"), Plain("on-demand"), Plain("spot")});
  auto oracle = [&c](const FlavorResource&, int64_t) { return c.oracle; };
  const Assignment a = AssignFlavors(c.workload, c.cqs.front(), flavors, *tree,
                                     oracle, /*fair_sharing=*/false);
  EXPECT_EQ(a.Mode(), c.mode);
  ASSERT_FALSE(a.pod_sets.empty());
  std::map<std::string, std::string> got;
  for (const auto& [resource, choice] : a.pod_sets.back().flavors) {
    got[resource] = choice.flavor;
  }
  EXPECT_EQ(got, c.flavors);
  EXPECT_EQ(a.borrowing, c.borrowing);
  EXPECT_EQ(a.Message(), c.message);
  EXPECT_EQ(a.no_fit_reason, c.no_fit_reason);
}

INSTANTIATE_TEST_SUITE_P(
    Table, AssignFlavorsTest,
    ::testing::Values(
        Case{"Fits",
             {Solo(8)},
             {},
             J(4),
             kNoCandidates,
             AssignmentMode::kFit,
             {{"cpu", "default"}},
             0,
             "",
             ""},
        // §6 scenario 2: full, no candidates: Preempt mode without targets.
        Case{"WaitingForQuota",
             {Solo(4)},
             {{"cq", CpuOn("default", 4)}},
             J(2),
             kNoCandidates,
             AssignmentMode::kPreempt,
             {{"cpu", "default"}},
             0,
             "couldn't assign flavors to pod set w: insufficient unused quota "
             "for cpu in flavor default, 2 more needed",
             ""},
        // §6 scenario 3.
        Case{"ExceedsMaxQuota",
             {Solo(8)},
             {},
             J(10),
             kNoCandidates,
             AssignmentMode::kNoFit,
             {},
             0,
             "couldn't assign flavors to pod set w: insufficient quota for cpu "
             "in flavor default, previously considered podsets requests (0) + "
             "current podset request (10) > maximum capacity (8)",
             "ExceedsMaxQuota"},
        // §6 scenario 4: b is checked at 5 + 5 > 8.
        Case{"PodSetsAddUp",
             {Solo(8)},
             {},
             WorkloadBuilder("j")
                 .PodSet("a", 5, {{"cpu", Cpu(1)}})
                 .PodSet("b", 5, {{"cpu", Cpu(1)}})
                 .Build(),
             kNoCandidates,
             AssignmentMode::kNoFit,
             {},
             0,
             "couldn't assign flavors to pod set b: insufficient quota for cpu "
             "in flavor default, previously considered podsets requests (5) + "
             "current podset request (5) > maximum capacity (8)",
             "ExceedsMaxQuota"},
        Case{"ResourceNotCovered",
             {Solo(8)},
             {},
             WorkloadBuilder("j")
                 .PodSet("w", 1, {{"cpu", Cpu(1)}, {"nvidia.com/gpu", 1}})
                 .Build(),
             kNoCandidates,
             AssignmentMode::kNoFit,
             {},
             0,
             "couldn't assign flavors to pod set w: resource nvidia.com/gpu "
             "unavailable in ClusterQueue",
             "NoMatchingFlavor"},
        Case{"ZeroOfAnUncoveredResourceIsIgnored",
             {Solo(8)},
             {},
             WorkloadBuilder("j")
                 .PodSet("w", 1, {{"cpu", Cpu(1)}, {"nvidia.com/gpu", 0}})
                 .Build(),
             kNoCandidates,
             AssignmentMode::kFit,
             {{"cpu", "default"}},
             0,
             "",
             ""},
        Case{"MissingFlavor",
             {ClusterQueueBuilder("cq")
                  .Flavor("ghost", {Quota("cpu", Cpu(8))})
                  .Build()},
             {},
             J(1),
             kNoCandidates,
             AssignmentMode::kNoFit,
             {},
             0,
             "couldn't assign flavors to pod set w: flavor ghost not found",
             "NoMatchingFlavor"},
        // §6 scenario 5: fits by borrowing from the cohort: level 1.
        Case{"Borrows",
             {TwoFlavors("cq", 8, 0), TwoFlavors("cq-b", 8, 0)},
             {{"cq", CpuOn("on-demand", 8)}},
             J(4),
             kNoCandidates,
             AssignmentMode::kFit,
             {{"cpu", "on-demand"}},
             1,
             "",
             ""},
        // §6 scenario 17: whenCanBorrow MayStopSearch borrows on-demand ...
        Case{"WhenCanBorrowMayStopSearch",
             {TwoFlavors("cq", 4, 8), TwoFlavors("cq-b", 4, 0)},
             {{"cq", CpuOn("on-demand", 4)}},
             J(4),
             kNoCandidates,
             AssignmentMode::kFit,
             {{"cpu", "on-demand"}},
             1,
             "",
             ""},
        // ... TryNextFlavor takes spot without borrowing.
        Case{"WhenCanBorrowTryNextFlavor",
             {ClusterQueueBuilder("cq")
                  .Cohort("team")
                  .Flavor("on-demand", {Quota("cpu", Cpu(4))})
                  .Flavor("spot", {Quota("cpu", Cpu(8))})
                  .WhenCanBorrow(FungibilityPolicy::kTryNextFlavor)
                  .Build(),
              TwoFlavors("cq-b", 4, 0)},
             {{"cq", CpuOn("on-demand", 4)}},
             J(4),
             kNoCandidates,
             AssignmentMode::kFit,
             {{"cpu", "spot"}},
             0,
             "",
             ""},
        // §6 scenario 18: whenCanPreempt TryNextFlavor (default) skips the
        // flavor that needs preemption when a later one fits ...
        Case{"WhenCanPreemptTryNextFlavor",
             {ClusterQueueBuilder("cq")
                  .Flavor("on-demand", {Quota("cpu", Cpu(4))})
                  .Flavor("spot", {Quota("cpu", Cpu(8))})
                  .Build()},
             {{"cq", CpuOn("on-demand", 4)}},
             J(4),
             kCanPreempt,
             AssignmentMode::kFit,
             {{"cpu", "spot"}},
             0,
             "",
             ""},
        // ... MayStopSearch preempts on on-demand.
        Case{"WhenCanPreemptMayStopSearch",
             {ClusterQueueBuilder("cq")
                  .Flavor("on-demand", {Quota("cpu", Cpu(4))})
                  .Flavor("spot", {Quota("cpu", Cpu(8))})
                  .WhenCanPreempt(FungibilityPolicy::kMayStopSearch)
                  .Build()},
             {{"cq", CpuOn("on-demand", 4)}},
             J(4),
             kCanPreempt,
             AssignmentMode::kPreempt,
             {{"cpu", "on-demand"}},
             0,
             "couldn't assign flavors to pod set w: insufficient unused quota "
             "for cpu in flavor on-demand, 4 more needed",
             ""},
        // Both flavors short: every reason, sorted; the flavor without
        // candidates beats the one that can never fit.
        Case{"NoFlavorFitsListsEveryReason",
             {ClusterQueueBuilder("cq")
                  .Flavor("spot", {Quota("cpu", Cpu(1))})
                  .Flavor("on-demand", {Quota("cpu", Cpu(4))})
                  .Build()},
             {{"cq", CpuOn("on-demand", 4)}},
             J(2),
             kNoCandidates,
             AssignmentMode::kPreempt,
             {{"cpu", "on-demand"}},
             0,
             "couldn't assign flavors to pod set w: insufficient quota for cpu "
             "in flavor spot, previously considered podsets requests (0) + "
             "current podset request (2) > maximum capacity (1), insufficient "
             "unused quota for cpu in flavor on-demand, 2 more needed",
             ""},
        // Short in a root cohort, more than nominal, no borrowWithinCohort:
        // NoFit without simulating preemption.
        Case{"BeyondNominalWithoutBorrowWithinCohort",
             {TwoFlavors("cq", 2, 0), TwoFlavors("cq-b", 8, 0)},
             {{"cq-b", CpuOn("on-demand", 8)}},
             J(4),
             kCanPreempt,
             AssignmentMode::kNoFit,
             {},
             0,
             "couldn't assign flavors to pod set w: insufficient quota for cpu "
             "in flavor spot, previously considered podsets requests (0) + "
             "current podset request (4) > maximum capacity (0), insufficient "
             "unused quota for cpu in flavor on-demand, 2 more needed",
             "WaitingForQuota"}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(AssignFlavorsTest, FlavorResultsAndAdmission) {
  // §6 scenario 1's assignment, with "pods" covered.
  const ClusterQueue cq =
      ClusterQueueBuilder("cq-a")
          .Flavor("default", {Quota("cpu", Cpu(8)), Quota("pods", 10)})
          .Build();
  absl::StatusOr<QuotaTree> tree = QuotaTree::Build({}, {cq});
  ASSERT_TRUE(tree.ok());
  auto oracle = [](const FlavorResource&, int64_t) { return kNoCandidates; };
  const Assignment a = AssignFlavors(
      WorkloadBuilder("j1").PodSet("w", 4, {{"cpu", Cpu(1)}}).Build(), cq,
      Flavors({Plain("default")}), *tree, oracle, /*fair_sharing=*/false);
  ASSERT_EQ(a.Mode(), AssignmentMode::kFit);
  EXPECT_THAT(a.usage,
              ElementsAre(Pair(FlavorResource{"default", "cpu"}, Cpu(4)),
                          Pair(FlavorResource{"default", "pods"}, 4)));
  const Admission admission = a.ToAdmission("cq-a");
  EXPECT_EQ(admission.cluster_queue, "cq-a");
  ASSERT_EQ(admission.pod_set_assignments.size(), 1u);
  const PodSetAssignment& psa = admission.pod_set_assignments[0];
  EXPECT_EQ(psa.name, "w");
  EXPECT_EQ(psa.count, 4);
  EXPECT_THAT(psa.flavors,
              ElementsAre(Pair("cpu", "default"), Pair("pods", "default")));
  EXPECT_THAT(psa.resource_usage,
              ElementsAre(Pair("cpu", Cpu(4)), Pair("pods", 4)));
  EXPECT_THAT(a.NeedPreemption(), IsEmpty());
}

TEST(AssignFlavorsTest, PreemptModeNamesTheResourcesToPreempt) {
  const ClusterQueue cq = Solo(4);
  absl::StatusOr<QuotaTree> tree = QuotaTree::Build({}, {cq});
  ASSERT_TRUE(tree.ok());
  tree->AddUsage(0, CpuOn("default", 4));
  std::vector<int64_t> asked;
  auto oracle = [&asked](const FlavorResource&, int64_t quantity) {
    asked.push_back(quantity);
    return kCanPreempt;
  };
  const Assignment a = AssignFlavors(J(3), cq, Flavors({Plain("default")}),
                                     *tree, oracle, /*fair_sharing=*/false);
  EXPECT_EQ(a.Mode(), AssignmentMode::kPreempt);
  EXPECT_THAT(a.NeedPreemption(),
              ElementsAre(FlavorResource{"default", "cpu"}));
  EXPECT_THAT(asked, ElementsAre(Cpu(3)));
}

struct MismatchCase {
  std::string name;
  PodPlacement pods;
  ResourceFlavor flavor;
  std::optional<std::string> want;
};

class FlavorMismatchTest : public ::testing::TestWithParam<MismatchCase> {};

TEST_P(FlavorMismatchTest, TaintsSelectorAndAffinity) {
  EXPECT_EQ(FlavorMismatch(GetParam().pods, GetParam().flavor),
            GetParam().want);
}

const Taint kGpuTaint{"nvidia.com/gpu", "present", TaintEffect::kNoSchedule};
const Toleration kGpuToleration{"nvidia.com/gpu", TolerationOperator::kExists,
                                "", TaintEffect::kNoSchedule};
const ResourceFlavor kH100{
    "gpu-h100", {{"gpu.model", "h100"}}, {kGpuTaint}, {}};
const ResourceFlavor kA100{"a100", {{"gpu.model", "a100"}}, {}, {}};
const ResourceFlavor kSpot{
    "spot",
    {{"capacity", "spot"}},
    {{"spot", "true", TaintEffect::kNoSchedule}},
    {{"spot", TolerationOperator::kEqual, "true", TaintEffect::kNoSchedule}}};

const ResourceFlavor kGen5{"gen5", {{"gpu.generation", "5"}}, {}, {}};

PodPlacement Selector(std::string key, std::string value) {
  return PodPlacement{{{std::move(key), std::move(value)}}, {}, {}};
}

PodPlacement Affinity(std::vector<NodeSelectorTerm> terms) {
  return PodPlacement{{}, std::move(terms), {}};
}

INSTANTIATE_TEST_SUITE_P(
    Table, FlavorMismatchTest,
    ::testing::Values(
        // §6 scenario 20: the driver does not tolerate the GPU taint.
        MismatchCase{"UntoleratedTaint",
                     {},
                     kH100,
                     "untolerated taint {nvidia.com/gpu present NoSchedule "
                     "<nil>} in flavor gpu-h100"},
        MismatchCase{"ToleratedTaint", PodPlacement{{}, {}, {kGpuToleration}},
                     kH100, std::nullopt},
        // §8.1: spot's own tolerations count against its taints.
        MismatchCase{"FlavorTolerations", {}, kSpot, std::nullopt},
        MismatchCase{
            "PreferNoScheduleIgnored",
            {},
            ResourceFlavor{
                "soft", {}, {{"x", "", TaintEffect::kPreferNoSchedule}}, {}},
            std::nullopt},
        // §6 scenario 19.
        MismatchCase{"SelectorMismatch", Selector("gpu.model", "h100"), kA100,
                     "flavor a100 doesn't match node affinity"},
        MismatchCase{"SelectorMatch", Selector("gpu.model", "a100"), kA100,
                     std::nullopt},
        MismatchCase{"SelectorKeyTheFlavorLacksIsIgnored",
                     Selector("zone", "us-east1"), kA100, std::nullopt},
        MismatchCase{
            "AffinityIn",
            Affinity(
                {{{"gpu.model", SelectorOperator::kIn, {"h100", "a100"}}}}),
            kA100, std::nullopt},
        MismatchCase{
            "AffinityNotIn",
            Affinity({{{"gpu.model", SelectorOperator::kNotIn, {"a100"}}}}),
            kA100, "flavor a100 doesn't match node affinity"},
        MismatchCase{"AffinityTermsAreOred",
                     Affinity({{{"gpu.model", SelectorOperator::kIn, {"h100"}}},
                               {{"gpu.model", SelectorOperator::kExists, {}}}}),
                     kA100, std::nullopt},
        MismatchCase{"AffinityTermOfForeignKeysMatchesAll",
                     Affinity({{{"gpu.model", SelectorOperator::kIn, {"h100"}}},
                               {{"zone", SelectorOperator::kIn, {"x"}}}}),
                     kA100, std::nullopt},
        // Gt and Lt compare integers; a value that is none matches nothing.
        MismatchCase{
            "AffinityGt",
            Affinity({{{"gpu.generation", SelectorOperator::kGt, {"4"}}}}),
            kGen5, std::nullopt},
        MismatchCase{
            "AffinityGtIsStrict",
            Affinity({{{"gpu.generation", SelectorOperator::kGt, {"5"}}}}),
            kGen5, "flavor gen5 doesn't match node affinity"},
        MismatchCase{
            "AffinityLt",
            Affinity({{{"gpu.generation", SelectorOperator::kLt, {"+6"}}}}),
            kGen5, std::nullopt},
        MismatchCase{
            "AffinityLtNotAnInteger",
            Affinity({{{"gpu.generation", SelectorOperator::kLt, {"6x"}}}}),
            kGen5, "flavor gen5 doesn't match node affinity"},
        MismatchCase{"AffinityGtOnANonIntegerLabel",
                     Affinity({{{"gpu.model", SelectorOperator::kGt, {"1"}}}}),
                     kA100, "flavor a100 doesn't match node affinity"}),
    [](const ::testing::TestParamInfo<MismatchCase>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace jobset::scheduler::queues
