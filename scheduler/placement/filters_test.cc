#include "scheduler/placement/filters.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler::placement {
namespace {

using Op = NodeSelectorRequirement::Operator;
using Kind = NodeVerdict::Kind;
constexpr auto kNoSchedule = TaintEffect::kNoSchedule;
constexpr auto kNoExecute = TaintEffect::kNoExecute;
constexpr auto kPrefer = TaintEffect::kPreferNoSchedule;

struct TolerationCase {
  Toleration toleration;
  Taint taint;
  bool tolerates;
};

class ToleratesTest : public ::testing::TestWithParam<TolerationCase> {};

TEST_P(ToleratesTest, MatchesKubernetes) {
  EXPECT_EQ(Tolerates(GetParam().toleration, GetParam().taint),
            GetParam().tolerates);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ToleratesTest,
    ::testing::Values(
        // Equal: key and value must match.
        TolerationCase{
            {"k", false, "v", kNoSchedule}, {"k", "v", kNoSchedule}, true},
        TolerationCase{
            {"k", false, "w", kNoSchedule}, {"k", "v", kNoSchedule}, false},
        TolerationCase{
            {"j", false, "v", kNoSchedule}, {"k", "v", kNoSchedule}, false},
        // Exists ignores the value.
        TolerationCase{
            {"k", true, "", kNoSchedule}, {"k", "v", kNoSchedule}, true},
        // Effects must match unless the toleration's is unset.
        TolerationCase{
            {"k", true, "", kNoSchedule}, {"k", "v", kNoExecute}, false},
        TolerationCase{
            {"k", true, "", std::nullopt}, {"k", "v", kNoExecute}, true},
        // Empty key with Exists tolerates everything.
        TolerationCase{
            {"", true, "", std::nullopt}, {"k", "v", kNoExecute}, true},
        TolerationCase{
            {"", true, "", kNoSchedule}, {"k", "v", kNoExecute}, false}));

TEST(FirstUntoleratedTaintTest, SkipsPreferNoScheduleAndToleratedTaints) {
  const std::vector<Taint> taints = {
      {"soft", "", kPrefer}, {"a", "1", kNoSchedule}, {"b", "2", kNoExecute}};
  EXPECT_EQ(FirstUntoleratedTaint(taints, {}), &taints[1]);
  const std::vector<Toleration> a = {{"a", true, "", std::nullopt}};
  EXPECT_EQ(FirstUntoleratedTaint(taints, a), &taints[2]);
  const std::vector<Toleration> both = {{"a", true, "", std::nullopt},
                                        {"b", false, "2", kNoExecute}};
  EXPECT_EQ(FirstUntoleratedTaint(taints, both), nullptr);
}

struct RequirementCase {
  NodeSelectorRequirement requirement;
  Labels labels;
  bool matches;
};

class MatchesRequirementTest
    : public ::testing::TestWithParam<RequirementCase> {};

TEST_P(MatchesRequirementTest, MatchesKubernetes) {
  EXPECT_EQ(MatchesRequirement(GetParam().requirement, GetParam().labels),
            GetParam().matches);
}

INSTANTIATE_TEST_SUITE_P(
    Table, MatchesRequirementTest,
    ::testing::Values(
        RequirementCase{{"zone", Op::kIn, {"a", "b"}}, {{"zone", "b"}}, true},
        RequirementCase{{"zone", Op::kIn, {"a"}}, {{"zone", "b"}}, false},
        RequirementCase{{"zone", Op::kIn, {"a"}}, {}, false},
        RequirementCase{{"zone", Op::kNotIn, {"a"}}, {{"zone", "b"}}, true},
        RequirementCase{{"zone", Op::kNotIn, {"a"}}, {{"zone", "a"}}, false},
        // NotIn matches a node without the label, as in Kubernetes.
        RequirementCase{{"zone", Op::kNotIn, {"a"}}, {}, true},
        RequirementCase{{"gpu", Op::kExists, {}}, {{"gpu", ""}}, true},
        RequirementCase{{"gpu", Op::kExists, {}}, {}, false},
        RequirementCase{{"spot", Op::kDoesNotExist, {}}, {}, true},
        RequirementCase{
            {"spot", Op::kDoesNotExist, {}}, {{"spot", "1"}}, false},
        RequirementCase{{"gen", Op::kGt, {}, 4}, {{"gen", "5"}}, true},
        RequirementCase{{"gen", Op::kGt, {}, 5}, {{"gen", "5"}}, false},
        RequirementCase{{"gen", Op::kLt, {}, 5}, {{"gen", "4"}}, true},
        RequirementCase{{"gen", Op::kLt, {}, 5}, {{"gen", "x"}}, false},
        RequirementCase{{"gen", Op::kGt, {}, 0}, {}, false}));

TEST(MatchesNodeAffinityTest, TermsOredExpressionsAnded) {
  const Labels labels = {{"zone", "a"}, {"gpu", "h100"}};
  const NodeSelectorRequirement zone_a{"zone", Op::kIn, {"a"}};
  const NodeSelectorRequirement gpu_a100{"gpu", Op::kIn, {"a100"}};
  const NodeSelectorRequirement gpu_h100{"gpu", Op::kIn, {"h100"}};
  EXPECT_TRUE(MatchesNodeAffinity(std::nullopt, labels));
  EXPECT_FALSE(MatchesNodeAffinity(std::vector<NodeSelectorTerm>{}, labels));
  EXPECT_FALSE(MatchesNodeAffinity(std::vector<NodeSelectorTerm>{{}}, labels));
  EXPECT_TRUE(MatchesNodeAffinity(
      std::vector<NodeSelectorTerm>{{{zone_a, gpu_h100}}}, labels));
  EXPECT_FALSE(MatchesNodeAffinity(
      std::vector<NodeSelectorTerm>{{{zone_a, gpu_a100}}}, labels));
  EXPECT_TRUE(MatchesNodeAffinity(
      std::vector<NodeSelectorTerm>{{{zone_a, gpu_a100}}, {{gpu_h100}}},
      labels));
}

TEST(MatchesNodeSelectorTest, EveryEntryMustBeEqual) {
  const Labels labels = {{"zone", "a"}, {"gpu", "h100"}};
  EXPECT_TRUE(MatchesNodeSelector({}, labels));
  EXPECT_TRUE(MatchesNodeSelector({{"zone", "a"}, {"gpu", "h100"}}, labels));
  EXPECT_FALSE(MatchesNodeSelector({{"zone", "a"}, {"gpu", "a100"}}, labels));
  EXPECT_FALSE(MatchesNodeSelector({{"rack", "1"}}, labels));
}

TEST(HostPortsFreeTest, ConflictNeedsSameProtocolAndPort) {
  using P = HostPort::Protocol;
  const std::vector<HostPort> used = {{P::kTcp, 80}, {P::kUdp, 53}};
  EXPECT_TRUE(HostPortsFree({}, used));
  EXPECT_TRUE(HostPortsFree({{P::kTcp, 53}, {P::kUdp, 80}}, used));
  EXPECT_FALSE(HostPortsFree({{P::kTcp, 80}}, used));
  EXPECT_FALSE(HostPortsFree({{P::kTcp, 1}, {P::kUdp, 53}}, used));
}

struct FitCase {
  std::vector<int64_t> free;
  std::vector<int64_t> request;
  int64_t limit;
  int64_t fit;
};

class PodsThatFitTest : public ::testing::TestWithParam<FitCase> {};

TEST_P(PodsThatFitTest, TheScarcestResourceDecides) {
  EXPECT_EQ(PodsThatFit(GetParam().free, GetParam().request, GetParam().limit),
            GetParam().fit);
}

INSTANTIATE_TEST_SUITE_P(
    Table, PodsThatFitTest,
    ::testing::Values(FitCase{{64000, 1 << 30, 8}, {1000, 1 << 20, 1}, 100, 8},
                      FitCase{{64000, 1 << 30, 8}, {1000, 1 << 20, 8}, 100, 1},
                      FitCase{{64000, 1 << 30, 8}, {1000, 1 << 20, 9}, 100, 0},
                      FitCase{{1500, 1 << 30, 8}, {1000, 0, 1}, 100, 1},
                      FitCase{{64000, 1 << 30, 8}, {1000, 0, 1}, 3, 3},
                      FitCase{{64000, 1 << 30, 8}, {0, 0, 0}, 5, 5},
                      FitCase{{-1000, 1 << 30, 8}, {1000, 0, 0}, 5, 0},
                      FitCase{{-1000, 1 << 30, 8}, {0, 0, 0}, 5, 5}));

struct CheckNodeCase {
  std::string name;
  NodeRecord node;
  Kind kind;
  std::string reason;
};

class CheckNodeTest : public ::testing::TestWithParam<CheckNodeCase> {};

TEST_P(CheckNodeTest, FirstFailureInKubernetesOrder) {
  PodRequirements requirements;
  requirements.node_selector = {{"pool", "p"}};
  requirements.host_ports = {{HostPort::Protocol::kTcp, 80}};
  const NodeVerdict verdict = CheckNode(GetParam().node, requirements);
  EXPECT_EQ(verdict.kind, GetParam().kind);
  EXPECT_EQ(VerdictReason(verdict), GetParam().reason);
}

NodeRecord Node(bool ready, bool cordoned, std::vector<Taint> taints,
                Labels labels, std::vector<HostPort> ports) {
  NodeRecord node;
  node.name = "h";
  node.ready = ready;
  node.cordoned = cordoned;
  node.taints = std::move(taints);
  node.labels = std::move(labels);
  node.used_host_ports = std::move(ports);
  return node;
}

INSTANTIATE_TEST_SUITE_P(
    Table, CheckNodeTest,
    ::testing::Values(
        CheckNodeCase{"Fits", Node(true, false, {}, {{"pool", "p"}}, {}),
                      Kind::kFits, ""},
        CheckNodeCase{"CordonedFirst",
                      Node(false, true, {{"t", "", kNoSchedule}}, {}, {}),
                      Kind::kUnschedulable, "node(s) were unschedulable"},
        CheckNodeCase{
            "NotReady", Node(false, false, {{"t", "", kNoSchedule}}, {}, {}),
            Kind::kNotReady,
            "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"},
        CheckNodeCase{"TaintBeforeAffinity",
                      Node(true, false, {{"t", "x", kNoExecute}}, {}, {}),
                      Kind::kUntoleratedTaint,
                      "node(s) had untolerated taint {t: x}"},
        CheckNodeCase{"Affinity",
                      Node(true, false, {{"t", "x", kPrefer}}, {{"pool", "q"}},
                           {{HostPort::Protocol::kTcp, 80}}),
                      Kind::kNodeAffinity,
                      "node(s) didn't match Pod's node affinity/selector"},
        CheckNodeCase{
            "HostPorts",
            Node(true, false, {}, {{"pool", "p"}},
                 {{HostPort::Protocol::kTcp, 80}}),
            Kind::kHostPorts,
            "node(s) didn't have free ports for the requested pod ports"}),
    [](const ::testing::TestParamInfo<CheckNodeCase>& info) {
      return info.param.name;
    });

TEST(InsufficientReasonTest, KubernetesWording) {
  EXPECT_EQ(InsufficientReason("nvidia.com/gpu"),
            "Insufficient nvidia.com/gpu");
  EXPECT_EQ(InsufficientReason("cpu"), "Insufficient cpu");
  EXPECT_EQ(InsufficientReason("pods"), "Too many pods");
}

}  // namespace
}  // namespace jobset::scheduler::placement
