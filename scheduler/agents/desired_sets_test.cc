#include "scheduler/agents/desired_sets.h"

#include <memory>
#include <string>
#include <vector>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/agents/test_orders.h"

namespace jobset::scheduler {
namespace {

using ::jobset::scheduler::testing::MakeJob;
using ::jobset::scheduler::testing::OrderOn;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> Uids(const std::vector<Assignment>& set) {
  std::vector<std::string> out;
  for (const Assignment& a : set)
    out.push_back(a.uid() + (a.stop ? " (stop)" : ""));
  return out;
}

TEST(DesiredSetsTest, KeepsEachNodesOrdersAndStopMarksUntilReleased) {
  DesiredSets sets;
  sets.Run(OrderOn("n1", "b"));
  sets.Run(OrderOn("n1", "a"));
  sets.Run(OrderOn("n2", "c"));
  EXPECT_TRUE(sets.Stop("n1", "a"));
  EXPECT_FALSE(sets.Stop("n1", "c"));  // n2's.
  EXPECT_FALSE(sets.Stop("n3", "a"));
  EXPECT_THAT(Uids(sets.Of("n1")), ElementsAre("a (stop)", "b"));
  EXPECT_THAT(Uids(sets.Of("n2")), ElementsAre("c"));
  // A new order of a stopped pod clears the mark.
  sets.Run(OrderOn("n1", "a"));
  EXPECT_THAT(Uids(sets.Of("n1")), ElementsAre("a", "b"));
  sets.Release("n1", "a");
  sets.Release("n1", "b");
  EXPECT_THAT(sets.Of("n1"), IsEmpty());
  EXPECT_EQ(sets.Find("n1", "a"), nullptr);
  ASSERT_NE(sets.Find("n2", "c"), nullptr);
  EXPECT_EQ(sets.Find("n2", "c")->node(), "n2");
}

TEST(DesiredSetsTest, FencesReportsToTheNodesOwnPods) {
  DesiredSets sets;
  sets.Run(OrderOn("n1", "mine"));
  sets.Run(OrderOn("n2", "theirs"));
  EXPECT_EQ(sets.Check("n1", "mine"), DesiredSets::Fence::kDesired);
  EXPECT_EQ(sets.Check("n1", "gone"), DesiredSets::Fence::kFenced);
  EXPECT_EQ(sets.Check("n1", "theirs"), DesiredSets::Fence::kForeign);
  EXPECT_THAT(sets.ForeignPod("n1", "theirs"),
              StatusIs(absl::StatusCode::kPermissionDenied,
                       HasSubstr("node \"n1\" may only report pods bound to "
                                 "it (pod theirs is not)")));
  EXPECT_THAT(sets.ForeignPod("n2", "theirs"), IsOk());
  // Released, the uid is nobody's: only fenced.
  sets.Release("n2", "theirs");
  EXPECT_EQ(sets.Check("n1", "theirs"), DesiredSets::Fence::kFenced);
  // A release by another node leaves the binding alone.
  sets.Release("n2", "mine");
  EXPECT_EQ(sets.Check("n2", "mine"), DesiredSets::Fence::kForeign);
}

TEST(DesiredSetsTest, TheLoadCountsUnstoppedPodsRequests) {
  DesiredSets sets;
  EXPECT_EQ(sets.Load("n1").pods, 0);
  std::shared_ptr<const api::Job> job = MakeJob();  // 500m CPU a pod.
  sets.Run(OrderOn("n1", "a", {}, job, 0));
  sets.Run(OrderOn("n1", "b", {}, job, 1));
  sets.Run(OrderOn("n1", "c", {}, job, 2));
  sets.Stop("n1", "c");
  const NodeLoad load = sets.Load("n1");
  EXPECT_EQ(load.pods, 2);
  EXPECT_EQ(load.allocated.cpu_millis, 1000);
  EXPECT_EQ(load.allocated.memory_bytes, 0);
  // The orders share their Job.
  EXPECT_EQ(job.use_count(), 4);
}

}  // namespace
}  // namespace jobset::scheduler
