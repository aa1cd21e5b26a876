#include "scheduler/agents/pod_progress_table.h"

#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler {
namespace {

using ::testing::Key;
using ::testing::UnorderedElementsAre;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

api::PodProgress Progress(int64_t step, int64_t since_seconds = 2) {
  api::PodProgress p;
  p.set_step(step);
  p.set_checkpoint_step(step / 2);
  p.set_steps_per_second(4.5);
  p.mutable_since_last_advance()->set_seconds(since_seconds);
  p.set_rejected_lines(1);
  return p;
}

TEST(PodProgressTableTest, KeepsTheLatestOfEachPod) {
  PodProgressTable table;
  EXPECT_EQ(table.Get("a"), std::nullopt);
  table.Update("n1", "a", 0, Progress(10), kNow);
  table.Update("n1", "a", 1, Progress(20), kNow + absl::Seconds(1));
  std::optional<PodProgressEntry> a = table.Get("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->node, "n1");
  EXPECT_EQ(a->in_place_restart_attempt, 1);
  EXPECT_EQ(a->step, 20);
  EXPECT_EQ(a->checkpoint_step, 10);
  EXPECT_DOUBLE_EQ(a->steps_per_second, 4.5);
  EXPECT_EQ(a->since_last_advance, absl::Seconds(2));
  EXPECT_EQ(a->rejected_lines, 1);
  EXPECT_EQ(a->received_at, kNow + absl::Seconds(1));
  // The agent's age plus jobsetd's time since the report.
  EXPECT_EQ(a->SinceLastAdvance(kNow + absl::Seconds(11)), absl::Seconds(12));
  EXPECT_EQ(a->AdvancedAt(), kNow - absl::Seconds(1));
  EXPECT_EQ(table.size(), 1u);
}

// The controller's view (ProgressSource): the advance on jobsetd's clock,
// no checkpoint for 0, nothing advanced before the first step.
TEST(PodProgressTableTest, AsTheControllerReadsIt) {
  PodProgressTable table;
  EXPECT_EQ(table.Of("a"), std::nullopt);
  table.Update("n1", "a", 0, Progress(10, 3), kNow);
  std::optional<resilience::PodProgress> a = table.Of("a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->step, 10);
  EXPECT_EQ(a->checkpoint_step, 5);
  EXPECT_EQ(a->advanced_at, kNow - absl::Seconds(3));
  EXPECT_EQ(a->steps_per_second, 4.5);
  EXPECT_EQ(a->reported_at, kNow);
  table.Update("n1", "b", 0, api::PodProgress(), kNow);
  std::optional<resilience::PodProgress> b = table.Of("b");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->step, std::nullopt);
  EXPECT_EQ(b->checkpoint_step, std::nullopt);
  EXPECT_EQ(b->advanced_at, absl::InfinitePast());
}

TEST(PodProgressTableTest, NoStepYet) {
  PodProgressTable table;
  api::PodProgress p;
  p.set_rejected_lines(3);
  table.Update("n1", "a", 0, p, kNow);
  ASSERT_TRUE(table.Get("a").has_value());
  EXPECT_EQ(table.Get("a")->step, std::nullopt);
  EXPECT_EQ(table.Get("a")->rejected_lines, 3);
}

TEST(PodProgressTableTest, ForgetsAPodOrANodesPods) {
  PodProgressTable table;
  table.Update("n1", "a", 0, Progress(1), kNow);
  table.Update("n1", "b", 0, Progress(1), kNow);
  table.Update("n2", "c", 0, Progress(1), kNow);
  table.Forget("a");
  table.Forget("unknown");
  EXPECT_THAT(table.Snapshot(), UnorderedElementsAre(Key("b"), Key("c")));
  table.ForgetNode("n1");
  EXPECT_THAT(table.Snapshot(), UnorderedElementsAre(Key("c")));
  // A pod reported by another node since (its record moved) is that
  // node's.
  table.Update("n3", "c", 0, Progress(2), kNow);
  table.ForgetNode("n2");
  EXPECT_THAT(table.Snapshot(), UnorderedElementsAre(Key("c")));
  table.ForgetNode("n3");
  EXPECT_EQ(table.size(), 0u);
}

}  // namespace
}  // namespace jobset::scheduler
