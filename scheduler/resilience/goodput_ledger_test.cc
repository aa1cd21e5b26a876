#include "scheduler/resilience/goodput_ledger.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler::resilience {

// Prints PhaseTimes in failure messages.
void PrintTo(const PhaseTimes& t, std::ostream* os) {
  *os << "{queued " << t.queued << ", starting " << t.starting
      << ", productive " << t.productive << ", stalled " << t.stalled
      << ", restarting " << t.restarting << "}";
}

namespace {

using ::testing::ElementsAre;
using ::testing::Field;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

absl::Time At(int minutes) { return kT0 + absl::Minutes(minutes); }

GoodputTransition Event(GoodputEvent event, int minute) {
  return GoodputTransition{.event = event, .time = At(minute)};
}

GoodputTransition Progress(int minute, int64_t step,
                           std::optional<int64_t> checkpoint = std::nullopt) {
  return GoodputTransition{.event = GoodputEvent::kProgressAdvanced,
                           .time = At(minute),
                           .step = step,
                           .checkpoint_step = checkpoint};
}

GoodputTransition Stalled(int minute, int last_progress_minute) {
  return GoodputTransition{.event = GoodputEvent::kProgressStalled,
                           .time = At(minute),
                           .last_progress = At(last_progress_minute)};
}

GoodputTransition Failed(int minute, int32_t next_attempt,
                         std::string reason = "FailedJobs") {
  return GoodputTransition{.event = GoodputEvent::kAttemptFailed,
                           .time = At(minute),
                           .attempt = next_attempt,
                           .reason = std::move(reason)};
}

GoodputTransition Finished(int minute) {
  return GoodputTransition{.event = GoodputEvent::kFinished,
                           .time = At(minute),
                           .reason = "AllJobsCompleted"};
}

PhaseTimes Minutes(int queued, int starting, int productive, int stalled,
                   int restarting) {
  return PhaseTimes{absl::Minutes(queued), absl::Minutes(starting),
                    absl::Minutes(productive), absl::Minutes(stalled),
                    absl::Minutes(restarting)};
}

void ApplyAll(GoodputLedger& ledger,
              const std::vector<GoodputTransition>& transitions) {
  for (const GoodputTransition& t : transitions) {
    EXPECT_TRUE(ledger.Apply(t))
        << static_cast<int>(t.event) << " at " << t.time;
  }
}

// A run with a hang, a restart and a checkpoint, minute by minute.
std::vector<GoodputTransition> ScriptedRun() {
  GoodputTransition failed = Failed(62, 1, "ProgressStalled");
  failed.pod = "train-w-0-3";
  failed.node = "n7";
  failed.exit_codes = {0, 137, 137, 1};
  return {
      Event(GoodputEvent::kAdmitted, 5),     // queued 5
      Event(GoodputEvent::kAllRunning, 8),   // starting 3
      Progress(10, 1),                       // starting +2: the first step
      Progress(35, 250, 200),                // productive
      Progress(50, 400, 300),                // the last progress
      Stalled(60, 50),                       // 50..60 stalled, not productive
      failed,                                // stalled +2; restart
      Event(GoodputEvent::kAllRunning, 65),  // restarting 3
      Progress(67, 301, 300),                // restarting +2; 100 steps lost
      Progress(90, 600),                     // productive
      Finished(100),                         // productive
  };
}

TEST(GoodputLedgerTest, ScriptedRunAddsUpExactly) {
  GoodputLedger ledger(kT0);
  ApplyAll(ledger, ScriptedRun());
  GoodputReport r = ledger.Report(At(500));  // finished: `now` is ignored
  EXPECT_EQ(r.phase, GoodputPhase::kFinished);
  EXPECT_EQ(r.times, Minutes(5, 5, 40 + 33, 12, 5));
  EXPECT_EQ(r.wall, absl::Minutes(100));
  EXPECT_EQ(r.times.Sum(), r.wall);
  EXPECT_DOUBLE_EQ(r.goodput, 0.73);
  EXPECT_EQ(r.lost_steps, 100);

  ASSERT_EQ(ledger.attempts().size(), 2u);
  const AttemptRecord& first = ledger.attempts()[0];
  EXPECT_EQ(first.index, 0);
  EXPECT_EQ(first.start, At(5));
  EXPECT_EQ(first.end, At(62));
  EXPECT_EQ(first.reason, "ProgressStalled");
  EXPECT_EQ(first.first_failed_pod, "train-w-0-3");
  EXPECT_EQ(first.first_failed_node, "n7");
  EXPECT_THAT(first.exit_codes, ElementsAre(137, 1));
  EXPECT_EQ(first.last_step, 400);
  const AttemptRecord& second = ledger.attempts()[1];
  EXPECT_EQ(second.index, 1);
  EXPECT_EQ(second.start, At(62));
  EXPECT_EQ(second.end, At(100));
  EXPECT_EQ(second.reason, "AllJobsCompleted");
  EXPECT_EQ(second.last_step, 600);
}

TEST(GoodputLedgerTest, EveryMomentOfTheScriptAddsUp) {
  GoodputLedger ledger(kT0);
  for (const GoodputTransition& t : ScriptedRun()) {
    for (int m = 0; m <= 100; ++m) {
      GoodputReport r = ledger.Report(At(m));
      ASSERT_EQ(r.times.Sum(), r.wall) << "minute " << m;
    }
    ledger.Apply(t);
  }
}

TEST(GoodputLedgerTest, MidRunReportCountsTheCurrentPhaseToNow) {
  GoodputLedger ledger(kT0);
  ApplyAll(ledger, {Event(GoodputEvent::kAdmitted, 5),
                    Event(GoodputEvent::kAllRunning, 8), Progress(10, 1)});
  GoodputReport r = ledger.Report(At(30));
  EXPECT_EQ(r.phase, GoodputPhase::kProductive);
  EXPECT_EQ(r.times, Minutes(5, 5, 20, 0, 0));
  EXPECT_EQ(r.wall, absl::Minutes(30));
  // `now` before the last accounted time: counted up to that time.
  r = ledger.Report(At(1));
  EXPECT_EQ(r.wall, absl::Minutes(10));
  EXPECT_EQ(r.times.Sum(), r.wall);
}

TEST(GoodputLedgerTest, WithoutProgressReportsRunningIsProductive) {
  GoodputLedger ledger(kT0);
  ApplyAll(ledger, {Event(GoodputEvent::kAdmitted, 1),
                    Event(GoodputEvent::kAllRunning, 2), Finished(10)});
  GoodputReport r = ledger.Report(At(10));
  EXPECT_EQ(r.times, Minutes(1, 1, 8, 0, 0));
  EXPECT_DOUBLE_EQ(r.goodput, 0.8);
  EXPECT_EQ(ledger.attempts()[0].last_step, std::nullopt);
}

TEST(GoodputLedgerTest, EmptyLedgerIsQueuedAndZeroWallHasNoGoodput) {
  GoodputLedger ledger(kT0);
  GoodputReport r = ledger.Report(kT0);
  EXPECT_EQ(r.phase, GoodputPhase::kQueued);
  EXPECT_EQ(r.wall, absl::ZeroDuration());
  EXPECT_EQ(r.goodput, 0);
  EXPECT_EQ(ledger.Report(At(7)).times, Minutes(7, 0, 0, 0, 0));
  EXPECT_TRUE(ledger.attempts().empty());
}

TEST(GoodputLedgerTest, StallThenProgressResumesWithoutRestart) {
  GoodputLedger ledger(kT0);
  ApplyAll(ledger, {Event(GoodputEvent::kAdmitted, 0), Progress(1, 1),
                    Progress(5, 50), Stalled(15, 5), Progress(20, 51)});
  GoodputReport r = ledger.Report(At(30));
  // Productive 1..5 and 20..30; stalled 5..20.
  EXPECT_EQ(r.times, Minutes(0, 1, 14, 15, 0));
  EXPECT_EQ(r.lost_steps, 0);
}

TEST(GoodputLedgerTest, StallNeverReachesBackBeforeThePhase) {
  GoodputLedger ledger(kT0);
  ApplyAll(ledger, {Event(GoodputEvent::kAdmitted, 0), Progress(1, 1),
                    Stalled(20, 5), Progress(25, 2)});
  // A second stall whose last progress is before the productive segment.
  ASSERT_TRUE(ledger.Apply(Stalled(40, 3)));
  // Stalled 5..25, then 25..40: the stall takes nothing before 25.
  EXPECT_EQ(ledger.Report(At(40)).times, Minutes(0, 1, 4, 20 + 15, 0));
}

TEST(GoodputLedgerTest, SuspensionGoesBackToTheQueueAndCountsLostWork) {
  GoodputLedger ledger(kT0);
  GoodputTransition suspended{
      .event = GoodputEvent::kSuspended, .time = At(30), .reason = "Suspended"};
  GoodputTransition admitted{
      .event = GoodputEvent::kAdmitted, .time = At(40), .attempt = 0};
  ApplyAll(ledger, {Event(GoodputEvent::kAdmitted, 0), Progress(2, 10, 5),
                    Progress(20, 90, 80), suspended, admitted,
                    Event(GoodputEvent::kAllRunning, 41),
                    // Resumed from its checkpoint at 80.
                    Progress(45, 81)});
  GoodputReport r = ledger.Report(At(50));
  EXPECT_EQ(r.times, Minutes(10, 2 + 5, 28 + 5, 0, 0));
  EXPECT_EQ(r.lost_steps, 10);
  EXPECT_THAT(ledger.attempts(),
              ElementsAre(Field(&AttemptRecord::reason, "Suspended"),
                          Field(&AttemptRecord::end, absl::InfiniteFuture())));
}

TEST(GoodputLedgerTest, LostWorkWithoutCheckpointsIsEverything) {
  GoodputLedger ledger(kT0);
  ApplyAll(ledger, {Event(GoodputEvent::kAdmitted, 0), Progress(1, 1),
                    Progress(9, 500), Failed(10, 1), Progress(12, 1)});
  EXPECT_EQ(ledger.Report(At(12)).lost_steps, 500);
}

TEST(GoodputLedgerTest, AnAttemptThatNeverAdvancedLeavesTheDebtOwed) {
  GoodputLedger ledger(kT0);
  ApplyAll(ledger, {Event(GoodputEvent::kAdmitted, 0), Progress(1, 100, 40),
                    Failed(10, 1), Failed(12, 2),  // attempt 1 never ran
                    Progress(15, 41, 40)});
  EXPECT_EQ(ledger.Report(At(15)).lost_steps, 60);
  EXPECT_EQ(ledger.Report(At(15)).times, Minutes(0, 1, 9, 0, 5));
}

TEST(GoodputLedgerTest, HugeStepsSaturateLostWork) {
  GoodputLedger ledger(kT0);
  const int64_t max = std::numeric_limits<int64_t>::max();
  ApplyAll(ledger, {Event(GoodputEvent::kAdmitted, 0), Progress(1, max),
                    Failed(2, 1), Progress(3, 1, 0), Progress(4, max),
                    Failed(5, 2), Progress(6, 1, 0)});
  EXPECT_EQ(ledger.Report(At(6)).lost_steps, max);
}

TEST(GoodputLedgerTest, HistoryKeepsTheLastAttempts) {
  GoodputLedger ledger(kT0, /*max_attempts=*/10);
  ASSERT_TRUE(ledger.Apply(Event(GoodputEvent::kAdmitted, 0)));
  for (int i = 1; i <= 14; ++i) ASSERT_TRUE(ledger.Apply(Failed(i, i)));
  ASSERT_EQ(ledger.attempts().size(), 10u);
  EXPECT_EQ(ledger.attempts().front().index, 5);
  EXPECT_EQ(ledger.attempts().back().index, 14);
  EXPECT_EQ(ledger.attempts().back().end, absl::InfiniteFuture());
}

TEST(GoodputLedgerTest, ExitCodesAreDistinctNonzeroAndBounded) {
  GoodputLedger ledger(kT0);
  GoodputTransition failed = Failed(1, 1);
  for (int32_t code = 0; code < 20; ++code) failed.exit_codes.push_back(code);
  failed.exit_codes.push_back(3);
  ApplyAll(ledger, {Event(GoodputEvent::kAdmitted, 0), failed});
  EXPECT_THAT(ledger.attempts()[0].exit_codes,
              ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
}

struct IgnoredCase {
  std::string name;
  std::vector<GoodputTransition> before;
  GoodputTransition transition;
};

class IgnoredTransitionTest : public ::testing::TestWithParam<IgnoredCase> {};

TEST_P(IgnoredTransitionTest, ChangesNothing) {
  GoodputLedger ledger(kT0);
  ApplyAll(ledger, GetParam().before);
  const api::GoodputStatus before = ledger.ToProto();
  EXPECT_FALSE(ledger.Apply(GetParam().transition));
  EXPECT_EQ(ledger.ToProto().SerializeAsString(), before.SerializeAsString());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, IgnoredTransitionTest,
    ::testing::Values(
        IgnoredCase{
            "AllRunningWhileQueued", {}, Event(GoodputEvent::kAllRunning, 1)},
        IgnoredCase{"ProgressWhileQueued", {}, Progress(1, 5)},
        IgnoredCase{"FailedWhileQueued", {}, Failed(1, 1)},
        IgnoredCase{
            "SuspendedWhileQueued", {}, Event(GoodputEvent::kSuspended, 1)},
        IgnoredCase{"AdmittedTwice",
                    {Event(GoodputEvent::kAdmitted, 0)},
                    Event(GoodputEvent::kAdmitted, 1)},
        IgnoredCase{"StalledWhileStarting",
                    {Event(GoodputEvent::kAdmitted, 0)},
                    Stalled(5, 1)},
        IgnoredCase{"AllRunningWhileProductive",
                    {Event(GoodputEvent::kAdmitted, 0), Progress(1, 1)},
                    Event(GoodputEvent::kAllRunning, 2)},
        IgnoredCase{"NegativeStep",
                    {Event(GoodputEvent::kAdmitted, 0)},
                    Progress(1, -1)},
        IgnoredCase{"NegativeCheckpoint",
                    {Event(GoodputEvent::kAdmitted, 0)},
                    Progress(1, 5, -1)},
        IgnoredCase{"InfiniteTime",
                    {Event(GoodputEvent::kAdmitted, 0)},
                    GoodputTransition{.event = GoodputEvent::kAllRunning,
                                      .time = absl::InfiniteFuture()}},
        IgnoredCase{"AfterFinished",
                    {Event(GoodputEvent::kAdmitted, 0), Finished(1)},
                    Finished(2)}),
    [](const ::testing::TestParamInfo<IgnoredCase>& info) {
      return info.param.name;
    });

TEST(GoodputLedgerTest, ClockGoingBackCountsAtTheLastAccountedTime) {
  GoodputLedger ledger(kT0);
  ApplyAll(ledger, {Event(GoodputEvent::kAdmitted, 10),
                    Event(GoodputEvent::kAllRunning, 5)});  // 5 min "earlier"
  GoodputReport r = ledger.Report(At(20));
  EXPECT_EQ(r.times, Minutes(10, 0, 10, 0, 0));
  EXPECT_EQ(r.times.Sum(), r.wall);
}

TEST(GoodputLedgerTest, RandomRunsAlwaysAddUp) {
  std::mt19937 rng(43);
  std::uniform_int_distribution<int> event(0, 6);
  std::uniform_int_distribution<int> step(-5, 60);  // backwards too
  for (int run = 0; run < 200; ++run) {
    GoodputLedger ledger(kT0, /*max_attempts=*/3);
    int minute = 0;
    int64_t steps = 0;
    for (int i = 0; i < 40; ++i) {
      minute += step(rng);
      GoodputTransition t{.event = static_cast<GoodputEvent>(event(rng)),
                          .time = At(minute),
                          .attempt = i,
                          .step = steps += 7,
                          .checkpoint_step = steps / 2,
                          .last_progress = At(minute - step(rng))};
      ledger.Apply(t);
      GoodputReport r = ledger.Report(At(minute + 3));
      ASSERT_EQ(r.times.Sum(), r.wall) << "run " << run << " step " << i;
      ASSERT_GE(r.times.queued, absl::ZeroDuration());
      ASSERT_GE(r.times.starting, absl::ZeroDuration());
      ASSERT_GE(r.times.productive, absl::ZeroDuration());
      ASSERT_GE(r.times.stalled, absl::ZeroDuration());
      ASSERT_GE(r.times.restarting, absl::ZeroDuration());
      ASSERT_LE(ledger.attempts().size(), 3u);
      // And the persisted form continues exactly where it was.
      absl::StatusOr<GoodputLedger> back =
          GoodputLedger::FromProto(ledger.ToProto(), 3);
      ASSERT_TRUE(back.ok()) << back.status();
      ASSERT_EQ(back->ToProto().SerializeAsString(),
                ledger.ToProto().SerializeAsString());
    }
  }
}

TEST(GoodputLedgerTest, PersistedMidRunContinuesTheSame) {
  GoodputLedger original(kT0);
  std::vector<GoodputTransition> run = ScriptedRun();
  // Persist just before the stall takes productive time back.
  ApplyAll(original, {run.begin(), run.begin() + 5});
  const api::GoodputStatus status = original.ToProto();
  EXPECT_EQ(status.phase(), "Productive");
  EXPECT_EQ(status.phase_since().seconds(), absl::ToUnixSeconds(At(10)));
  absl::StatusOr<GoodputLedger> restored = GoodputLedger::FromProto(status);
  ASSERT_TRUE(restored.ok()) << restored.status();
  ApplyAll(original, {run.begin() + 5, run.end()});
  ApplyAll(*restored, {run.begin() + 5, run.end()});
  EXPECT_EQ(restored->ToProto().SerializeAsString(),
            original.ToProto().SerializeAsString());
  EXPECT_EQ(restored->Report(At(100)).times, Minutes(5, 5, 73, 12, 5));
}

TEST(GoodputLedgerTest, ProtoCarriesTheAttempts) {
  GoodputLedger ledger(kT0);
  ApplyAll(ledger, ScriptedRun());
  api::GoodputStatus s = ledger.ToProto();
  EXPECT_EQ(s.phase(), "Finished");
  EXPECT_EQ(s.productive().seconds(), 73 * 60);
  EXPECT_EQ(s.lost_steps(), 100);
  ASSERT_EQ(s.attempts_size(), 2);
  EXPECT_EQ(s.attempts(0).reason(), "ProgressStalled");
  EXPECT_EQ(s.attempts(0).first_failed_node(), "n7");
  EXPECT_THAT(s.attempts(0).exit_codes(), ElementsAre(137, 1));
  EXPECT_EQ(s.attempts(1).last_step(), 600);
  EXPECT_TRUE(s.attempts(1).has_end());
}

TEST(GoodputLedgerTest, FromProtoNamesWhatIsWrong) {
  GoodputLedger ledger(kT0);
  ApplyAll(ledger, {Event(GoodputEvent::kAdmitted, 5), Progress(6, 1)});
  const api::GoodputStatus good = ledger.ToProto();
  ASSERT_TRUE(GoodputLedger::FromProto(good).ok());

  struct Case {
    void (*mutate)(api::GoodputStatus*);
    std::string error;
  };
  const Case cases[] = {
      {[](api::GoodputStatus* s) { s->clear_submitted(); },
       "submitted: missing or out of range"},
      {[](api::GoodputStatus* s) { s->clear_phase_since(); },
       "phaseSince: missing or out of range"},
      {[](api::GoodputStatus* s) { s->mutable_phase_since()->set_seconds(1); },
       "phaseSince: before submitted"},
      {[](api::GoodputStatus* s) { s->set_phase("Sleeping"); },
       "phase: unknown phase \"Sleeping\""},
      {[](api::GoodputStatus* s) { s->set_phase("Finished"); },
       "finished: set if and only if the phase is Finished"},
      {[](api::GoodputStatus* s) { s->mutable_queued()->set_seconds(-60); },
       "queued: negative or out of range"},
      {[](api::GoodputStatus* s) { s->mutable_starting()->set_seconds(1); },
       "phase durations: do not add up to phaseSince - submitted"},
      {[](api::GoodputStatus* s) { s->set_lost_steps(-1); },
       "lostSteps: negative"},
      {[](api::GoodputStatus* s) {
         s->mutable_attempts(0)->mutable_end()->set_seconds(1);
       },
       "attempts[0].end: before start"},
      {[](api::GoodputStatus* s) { s->mutable_attempts(0)->set_index(-2); },
       "attempts[0].index: negative"},
      {[](api::GoodputStatus* s) { s->set_checkpoint_step(-1); },
       "checkpointStep: negative"},
  };
  for (const Case& c : cases) {
    api::GoodputStatus bad = good;
    c.mutate(&bad);
    EXPECT_EQ(GoodputLedger::FromProto(bad).status(),
              absl::InvalidArgumentError(c.error));
  }
}

TEST(GoodputPhaseTest, Names) {
  EXPECT_EQ(GoodputPhaseName(GoodputPhase::kQueued), "Queued");
  EXPECT_EQ(GoodputPhaseName(GoodputPhase::kStarting), "Starting");
  EXPECT_EQ(GoodputPhaseName(GoodputPhase::kProductive), "Productive");
  EXPECT_EQ(GoodputPhaseName(GoodputPhase::kStalled), "Stalled");
  EXPECT_EQ(GoodputPhaseName(GoodputPhase::kRestarting), "Restarting");
  EXPECT_EQ(GoodputPhaseName(GoodputPhase::kFinished), "Finished");
}

}  // namespace
}  // namespace jobset::scheduler::resilience
