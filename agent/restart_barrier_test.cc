// The in-place restart barrier: the attempt ledger, restarts waiting for the
// old attempt, and the annotation they come from.
#include "agent/restart_barrier.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/pod_phase.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOkAndHolds;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

api::PodAssignment Order(const std::string& uid, int32_t attempt) {
  api::PodAssignment a;
  a.mutable_pod()->mutable_metadata()->set_uid(uid);
  (*a.mutable_pod()
        ->mutable_metadata()
        ->mutable_annotations())[kInPlaceRestartAttemptKey] =
      absl::StrCat(attempt);
  return a;
}

PodState Pod(const std::string& uid, const char* phase) {
  PodState pod;
  pod.uid = uid;
  pod.status.set_phase(phase);
  return pod;
}

TEST(InPlaceAttemptOfTest, Table) {
  api::Pod pod;
  EXPECT_THAT(InPlaceAttemptOf(pod), IsOkAndHolds(std::nullopt));
  auto& annotations = *pod.mutable_metadata()->mutable_annotations();
  annotations[kInPlaceRestartAttemptKey] = "3";
  EXPECT_THAT(InPlaceAttemptOf(pod), IsOkAndHolds(3));
  for (const char* bad : {"-1", "x", "99999999999", ""}) {
    annotations[kInPlaceRestartAttemptKey] = bad;
    EXPECT_THAT(InPlaceAttemptOf(pod),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("not a non-negative 32-bit integer")))
        << bad;
  }
}

TEST(RestartBarrierTest, ARestartWaitsForTheOldAttemptToFinish) {
  RestartBarrier barrier;
  EXPECT_EQ(barrier.Running("p1"), 0);  // Started at attempt 0.
  EXPECT_FALSE(barrier.IsLater("p1", 0));
  EXPECT_TRUE(barrier.IsLater("p1", 1));
  barrier.Hold(Order("p1", 1));
  // Still running: nothing is ready; its devices are not free.
  EXPECT_THAT(barrier.Ready({Pod("p1", api::kPodRunning)}), ElementsAre());
  EXPECT_EQ(barrier.Unrestarted({"p1", "p2"}), std::set<std::string>{"p2"});
  EXPECT_THAT(barrier.Ready(
                  {Pod("p1", api::kPodFailed), Pod("p2", api::kPodSucceeded)}),
              ElementsAre("p1"));
  std::optional<api::PodAssignment> taken = barrier.Take("p1");
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->pod().metadata().uid(), "p1");
  EXPECT_FALSE(barrier.Take("p1").has_value());
  barrier.SetRunning("p1", 1);
  EXPECT_EQ(barrier.Running("p1"), 1);
  EXPECT_FALSE(barrier.IsLater("p1", 1));
}

TEST(RestartBarrierTest, EraseForgetsTheAttemptAndTheWaitingRestart) {
  RestartBarrier barrier;
  barrier.Hold(Order("p1", 1));
  EXPECT_FALSE(barrier.Erase("p1"));  // No attempt recorded: ledger as was.
  EXPECT_FALSE(barrier.Take("p1").has_value());
  barrier.SetRunning("p1", 2);
  EXPECT_TRUE(barrier.Erase("p1"));
  EXPECT_EQ(barrier.Running("p1"), 0);
}

TEST(RestartBarrierTest, TheLedgerRoundTripsKeepingLivePodsOnly) {
  RestartBarrier barrier;
  barrier.SetRunning("p1", 2);
  barrier.SetRunning("p2", 5);
  barrier.Hold(Order("p1", 3));
  EXPECT_EQ(barrier.Serialize(), "p1 2\np2 5\n");
  RestartBarrier loaded = RestartBarrier::Parse(
      barrier.Serialize() + "p3 x\np4 -1\n", {"p1", "p3", "p4"});
  EXPECT_EQ(loaded.Running("p1"), 2);
  EXPECT_EQ(loaded.Running("p2"), 0);  // Not live.
  EXPECT_EQ(loaded.Running("p3"), 0);  // Malformed.
  EXPECT_EQ(loaded.Running("p4"), 0);
  EXPECT_FALSE(loaded.Take("p1").has_value());  // Restarts are not saved.
  EXPECT_EQ(loaded.Serialize(), "p1 2\n");
}

}  // namespace
}  // namespace jobset::agent
