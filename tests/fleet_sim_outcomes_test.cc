#include "tests/fleet_sim_outcomes.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::testing::fleet {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

api::JobSet Finished(const std::string& state, int restarts) {
  api::JobSet js;
  js.mutable_status()->set_terminal_state(state);
  js.mutable_status()->set_restarts(restarts);
  js.mutable_status()->set_restarts_count_towards_max(restarts);
  for (const char* name : {"a", "b"}) {
    api::ReplicatedJobStatus* r =
        js.mutable_status()->add_replicated_jobs_status();
    r->set_name(name);
    r->set_succeeded(state == "Completed" ? 1 : 0);
    r->set_failed(state == "Failed" ? 1 : 0);
  }
  return js;
}

TEST(OutcomeOfTest, ReadsTheStatus) {
  const JobSetOutcome o = OutcomeOf(Finished("Failed", 2));
  EXPECT_EQ(o.terminal_state, "Failed");
  EXPECT_EQ(o.restarts, 2);
  EXPECT_EQ(o.restarts_count_towards_max, 2);
  EXPECT_EQ(o.replicated.at("a"), (std::pair<int, int>{0, 1}));
}

TEST(CompareOutcomesTest, TheSameOutcomesAgree) {
  Outcomes a = {{"ns/x", OutcomeOf(Finished("Completed", 1))}};
  EXPECT_THAT(CompareOutcomes(a, a, "single", "mixed"), IsEmpty());
}

TEST(CompareOutcomesTest, NamesTheJobSetAndEveryFieldThatDiffers) {
  Outcomes a = {{"ns/x", OutcomeOf(Finished("Completed", 1))},
                {"ns/only-a", OutcomeOf(Finished("Completed", 0))}};
  Outcomes b = {{"ns/x", OutcomeOf(Finished("Failed", 2))},
                {"ns/only-b", OutcomeOf(Finished("", 0))}};
  b["ns/x"].replicated.erase("b");
  EXPECT_THAT(
      CompareOutcomes(a, b, "single", "mixed"),
      ElementsAre("ns/only-a: only in the single run",
                  "ns/only-b: only in the mixed run",
                  "ns/x status.terminalState: single Completed, mixed Failed",
                  "ns/x status.restarts: single 1, mixed 2",
                  "ns/x status.restartsCountTowardsMax: single 1, mixed 2",
                  "ns/x status.replicatedJobsStatus[a].succeeded: single 1, "
                  "mixed 0",
                  "ns/x status.replicatedJobsStatus[a].failed: single 0, "
                  "mixed 1",
                  "ns/x status.replicatedJobsStatus[b].succeeded: single 1, "
                  "mixed -1",
                  "ns/x status.replicatedJobsStatus[b].failed: single 0, "
                  "mixed -1"));
}

TEST(CompareOutcomesTest, AnUnfinishedJobSetSaysSo) {
  Outcomes a = {{"ns/x", OutcomeOf(Finished("", 0))}};
  Outcomes b = {{"ns/x", OutcomeOf(Finished("Completed", 0))}};
  a["ns/x"].replicated = b["ns/x"].replicated;
  EXPECT_THAT(
      CompareOutcomes(a, b, "single", "mixed"),
      ElementsAre("ns/x status.terminalState: single (none), mixed Completed"));
}

}  // namespace
}  // namespace jobset::testing::fleet
