#include "scheduler/queues/model.h"

#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/queues/test_builders.h"

namespace jobset::scheduler::queues {
namespace {

using ::jobset::scheduler::queues::testing::Cpu;
using ::jobset::scheduler::queues::testing::WorkloadBuilder;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

struct FormatCase {
  std::string resource;
  int64_t value;
  std::string want;
};

class FormatQuantityTest : public ::testing::TestWithParam<FormatCase> {};

TEST_P(FormatQuantityTest, PrintsTheKubernetesCanonicalForm) {
  const FormatCase& c = GetParam();
  EXPECT_EQ(FormatQuantity(c.resource, c.value), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, FormatQuantityTest,
    ::testing::Values(
        // cpu is held in milli-units.
        FormatCase{"cpu", 0, "0"}, FormatCase{"cpu", 2000, "2"},
        FormatCase{"cpu", 1500, "1500m"}, FormatCase{"cpu", 100, "100m"},
        FormatCase{"cpu", 10000, "10"}, FormatCase{"cpu", 2000000, "2k"},
        FormatCase{"cpu", -2000, "-2"},
        // memory: BinarySI when whole in Ki/Mi/..., else DecimalSI.
        FormatCase{"memory", 8LL << 30, "8Gi"},
        FormatCase{"memory", 1536LL << 20, "1536Mi"},
        FormatCase{"memory", 1536, "1536"}, FormatCase{"memory", 1000, "1k"},
        FormatCase{"memory", 3000, "3k"}, FormatCase{"memory", 512, "512"},
        FormatCase{"hugepages-2Mi", 4LL << 20, "4Mi"},
        // Everything else: DecimalSI counts.
        FormatCase{"nvidia.com/gpu", 16, "16"},
        FormatCase{"nvidia.com/gpu", 2000, "2k"},
        FormatCase{"pods", 1500, "1500"},
        FormatCase{"pods", INT64_MAX, "9223372036854775807"}));

TEST(WorkloadKeyTest, NamespaceSlashName) {
  EXPECT_EQ(WorkloadKey(WorkloadBuilder("j1").Namespace("a").Build()), "a/j1");
}

TEST(AdmittedUsageTest, SumsPodSetUsageByFlavorAndResource) {
  Workload w = WorkloadBuilder("j1")
                   .PodSet("a", 2, {{"cpu", Cpu(1)}, {"memory", 100}})
                   .PodSet("b", 3, {{"cpu", Cpu(2)}})
                   .AdmittedOn("cq", "default")
                   .Build();
  w.admission->pod_set_assignments[1].flavors["cpu"] = "spot";
  EXPECT_THAT(AdmittedUsage(w),
              ElementsAre(Pair(FlavorResource{"default", "cpu"}, Cpu(2)),
                          Pair(FlavorResource{"default", "memory"}, 200),
                          Pair(FlavorResource{"spot", "cpu"}, Cpu(6))));
}

TEST(AdmittedUsageTest, ReclaimablePodsStopCounting) {
  // §6 scenario 35: one of two Jobs succeeded; its pod's quota is released.
  const Workload w = WorkloadBuilder("j1")
                         .PodSet("a", 2, {{"cpu", Cpu(1)}})
                         .AdmittedOn("cq", "default")
                         .Reclaimable(1)
                         .Build();
  EXPECT_THAT(AdmittedUsage(w),
              ElementsAre(Pair(FlavorResource{"default", "cpu"}, Cpu(1))));
}

TEST(AdmittedUsageTest, EmptyWithoutAdmission) {
  EXPECT_THAT(AdmittedUsage(WorkloadBuilder("j1").PodSet("a", 2, {}).Build()),
              IsEmpty());
}

struct TolerationCase {
  std::string name;
  Toleration toleration;
  bool tolerates;
};

class ToleratesTest : public ::testing::TestWithParam<TolerationCase> {};

TEST_P(ToleratesTest, MatchesKubernetes) {
  const Taint taint{"nvidia.com/gpu", "present", TaintEffect::kNoSchedule};
  EXPECT_EQ(Tolerates(GetParam().toleration, taint), GetParam().tolerates);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ToleratesTest,
    ::testing::Values(
        TolerationCase{"EqualSameValue",
                       {"nvidia.com/gpu", TolerationOperator::kEqual, "present",
                        TaintEffect::kNoSchedule},
                       true},
        TolerationCase{"EqualOtherValue",
                       {"nvidia.com/gpu", TolerationOperator::kEqual, "absent",
                        std::nullopt},
                       false},
        TolerationCase{
            "ExistsAnyValue",
            {"nvidia.com/gpu", TolerationOperator::kExists, "", std::nullopt},
            true},
        TolerationCase{"EmptyKeyExists",
                       {"", TolerationOperator::kExists, "", std::nullopt},
                       true},
        TolerationCase{"OtherKey",
                       {"spot", TolerationOperator::kExists, "", std::nullopt},
                       false},
        TolerationCase{"OtherEffect",
                       {"nvidia.com/gpu", TolerationOperator::kExists, "",
                        TaintEffect::kNoExecute},
                       false}),
    [](const ::testing::TestParamInfo<TolerationCase>& info) {
      return info.param.name;
    });

TEST(TaintStringTest, PrintsAsGoPrintsATaintValue) {
  EXPECT_EQ(
      TaintString({"nvidia.com/gpu", "present", TaintEffect::kNoSchedule}),
      "{nvidia.com/gpu present NoSchedule <nil>}");
  EXPECT_EQ(TaintString({"spot", "", TaintEffect::kNoExecute}),
            "{spot  NoExecute <nil>}");
}

}  // namespace
}  // namespace jobset::scheduler::queues
