#include "scheduler/placement/rejection.h"

#include <string>

#include "gtest/gtest.h"

namespace jobset::scheduler::placement {
namespace {

TEST(FormatNodeReasonsTest, KubernetesHistogram) {
  EXPECT_EQ(FormatNodeReasons(0, 16,
                              {{"node(s) didn't match Pod's node "
                                "affinity/selector",
                                8},
                               {"Insufficient nvidia.com/gpu", 8}}),
            "0/16 nodes are available: 8 Insufficient nvidia.com/gpu, 8 "
            "node(s) didn't match Pod's node affinity/selector.");
  // Sorted as strings, as kube-scheduler does ("14" before "2").
  EXPECT_EQ(
      FormatNodeReasons(
          0, 16, {{"Insufficient cpu", 2}, {"node(s) were unschedulable", 14}}),
      "0/16 nodes are available: 14 node(s) were unschedulable, 2 "
      "Insufficient cpu.");
  EXPECT_EQ(FormatNodeReasons(3, 3, {}), "3/3 nodes are available.");
}

TEST(FormatDomainReasonsTest, NamesEveryKindOfUnavailableDomain) {
  DomainTally tally;
  tally.total = 7;
  tally.held = 3;
  tally.taken = 1;
  tally.busy = 1;
  tally.small = 2;
  tally.max_small_room = 2;
  EXPECT_EQ(FormatDomainReasons("cloud.google.com/gke-nodepool", 4, tally),
            "exclusive topology \"cloud.google.com/gke-nodepool\": no free "
            "domain has room for the 4 pods (7 domains: 3 held by other "
            "jobs, 1 taken by other jobs of this JobSet, 1 in use by pods of "
            "other jobs, 2 with room for at most 2 pods)");
  EXPECT_EQ(FormatDomainReasons("rack", 2, DomainTally{1, 1, 0, 0, 0, 0}),
            "exclusive topology \"rack\": no free domain has room for the 2 "
            "pods (1 domain: 1 held by other jobs)");
  EXPECT_EQ(FormatDomainReasons("rack", 2, DomainTally{}),
            "exclusive topology \"rack\": no free domain has room for the 2 "
            "pods (0 domains)");
}

}  // namespace
}  // namespace jobset::scheduler::placement
