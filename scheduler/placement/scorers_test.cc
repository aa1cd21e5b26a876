#include "scheduler/placement/scorers.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/placement/test_cluster.h"

namespace jobset::scheduler::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(StickyDomainTest, DomainWithMostPreviousNodes) {
  // 12 nodes in pools of 4; node-00012 has no pool.
  std::vector<NodeRecord> nodes = testing::SliceCluster(12, 4);
  nodes.push_back(testing::GpuNode("node-00012"));
  const ClusterSnapshot cluster = testing::MustBuild(std::move(nodes));
  const ClusterSnapshot::Topology& pools =
      *cluster.FindTopology(testing::kPool);
  struct Case {
    std::vector<ClusterSnapshot::NodeId> previous;
    int32_t domain;
  };
  for (const Case& c : std::vector<Case>{
           {{}, -1},
           {{12}, -1},
           {{5}, 1},
           {{0, 5, 6}, 1},
           {{0, 5}, 0},  // tie: the lower domain
           {{9, 10, 12, 12}, 2},
       }) {
    EXPECT_EQ(StickyDomain(c.previous, pools), c.domain)
        << ::testing::PrintToString(c.previous);
  }
}

TEST(BestFitLessTest, FewerNodesThenLessRoomThenValue) {
  const DomainCandidate small{0, 4, 4, "z"};
  const DomainCandidate big{1, 16, 16, "a"};
  const DomainCandidate small_tight{2, 4, 2, "y"};
  const DomainCandidate small_tight_b{3, 4, 2, "b"};
  EXPECT_TRUE(BestFitLess(small, big));
  EXPECT_FALSE(BestFitLess(big, small));
  EXPECT_TRUE(BestFitLess(small_tight, small));
  EXPECT_TRUE(BestFitLess(small_tight_b, small_tight));
  EXPECT_FALSE(BestFitLess(small, small));
}

struct FewestCase {
  std::string name;
  std::vector<DomainCandidate> candidates;
  int64_t pods;
  std::vector<int32_t> chosen;
};

class FewestDomainsTest : public ::testing::TestWithParam<FewestCase> {};

TEST_P(FewestDomainsTest, Chooses) {
  EXPECT_EQ(FewestDomains(GetParam().candidates, GetParam().pods),
            GetParam().chosen);
}

INSTANTIATE_TEST_SUITE_P(
    Table, FewestDomainsTest,
    ::testing::Values(
        FewestCase{"Empty", {}, 3, {}},
        FewestCase{"SmallestSingleDomain",
                   {{0, 16, 16, "a"}, {1, 4, 4, "b"}, {2, 8, 8, "c"}},
                   4,
                   {1}},
        FewestCase{"TightestAmongEqualSize",
                   {{0, 4, 4, "a"}, {1, 4, 3, "b"}, {2, 4, 2, "c"}},
                   3,
                   {1}},
        FewestCase{"RoomiestFirstWhenNoneHoldsAll",
                   {{0, 4, 2, "a"}, {1, 4, 4, "b"}, {2, 4, 3, "c"}},
                   6,
                   {1, 2}},
        FewestCase{"TiesByValue",
                   {{0, 4, 3, "b"}, {1, 4, 3, "a"}, {2, 4, 3, "c"}},
                   5,
                   {1, 0}},
        FewestCase{
            "AllWhenTooSmall", {{0, 4, 1, "a"}, {1, 4, 2, "b"}}, 9, {1, 0}}),
    [](const ::testing::TestParamInfo<FewestCase>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace jobset::scheduler::placement
