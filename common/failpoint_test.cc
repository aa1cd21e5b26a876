#include "common/failpoint.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::failpoint {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Sites as the code has them: a function that returns a status, one that
// returns a value or a status, and one that returns nothing.
absl::Status CommitStep() {
  JOBSET_FAILPOINT("server.create.after_commit");
  return absl::OkStatus();
}

absl::StatusOr<int> UpdateStep() {
  JOBSET_FAILPOINT("server.update.after_commit");
  return 7;
}

int trims = 0;
void TrimStep() {
  JOBSET_FAILPOINT_VOID("store.history.trim");
  ++trims;
}

class FailpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kCompiledIn) GTEST_SKIP() << "failpoints are compiled out (-c opt)";
  }
  void TearDown() override {
    if (kCompiledIn) {
      ASSERT_THAT(SetForTesting(""), IsOk());
    }
  }
};

TEST_F(FailpointTest, NothingIsArmedWithoutTheVariable) {
  ASSERT_EQ(getenv(kEnvironmentVariable), nullptr);
  EXPECT_THAT(InitFromEnvironment(), IsOk());
  EXPECT_THAT(CommitStep(), IsOk());
  EXPECT_THAT(UpdateStep(), IsOk());
  for (int i = 0; i < kNumPoints; ++i) {
    EXPECT_FALSE(internal::MayAct(i)) << kPoints[i].name;
  }
  // A point that is off takes the one load and is not counted.
  EXPECT_EQ(HitsForTesting("server.create.after_commit"), 0);
}

TEST_F(FailpointTest, AcceptsTheGrammar) {
  for (const char* spec : {
           "",
           " ; ",
           "server.create.after_commit=abort",
           "server.create.after_commit=crash;",
           "server.create.after_commit=3*off->abort",
           "store.history.trim=50%sleep(100)",
           "store.history.trim=sleep(2s)",
           "server.create.after_validate=error(unavailable)",
           "server.create.after_validate=error(UNAVAILABLE)",
           "store.snapshot.add=12.5%2*error(data_loss)->off",
           " server.update.after_commit = 1*sleep(1) -> error(aborted) ; "
           "controller.restart.after_commit=off",
       }) {
    EXPECT_THAT(Validate(spec), IsOk()) << spec;
  }
}

TEST_F(FailpointTest, RefusesAMalformedSpecNamingTheProblemAndThePoints) {
  struct Case {
    std::string spec;
    std::string why;
  };
  for (const Case& c : std::vector<Case>{
           {"server.create.aftercommit=abort",
            "unknown failpoint \"server.create.aftercommit\""},
           {"server.create.after_commit", "is not POINT=TERMS"},
           {"server.create.after_commit=panic", "the action must be"},
           {"server.create.after_commit=", "the action must be"},
           {"server.create.after_commit=abort->", "the action must be"},
           {"server.create.after_commit=error(ok)", "status code other than"},
           {"server.create.after_commit=error(nope)", "status code other than"},
           {"store.history.trim=error(internal)", "returns no status"},
           {"server.create.after_commit=0*abort", "N* must be"},
           {"server.create.after_commit=x*abort", "N* must be"},
           {"server.create.after_commit=101%abort", "P% must be"},
           {"server.create.after_commit=sleep(-1)", "sleep must be 0 to 1h"},
           {"server.create.after_commit=sleep(2h)", "sleep must be 0 to 1h"},
           {"server.create.after_commit=sleep(soon)", "sleep takes"},
           {"server.create.after_commit=abort;server.create.after_commit=off",
            "named twice"},
           {std::string(70'000, 'x'), "over the limit"},
       }) {
    EXPECT_THAT(
        Validate(c.spec),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 AllOf(HasSubstr("JOBSET_FAILPOINTS: "), HasSubstr(c.why),
                       HasSubstr("server.create.after_validate, "),
                       HasSubstr("store.snapshot.add"))))
        << c.spec;
    // A refused spec arms nothing.
    EXPECT_THAT(SetForTesting(c.spec),
                StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(CommitStep(), IsOk());
  }
}

TEST_F(FailpointTest, ErrorReturnsFromTheEnclosingFunction) {
  ASSERT_THAT(SetForTesting("server.create.after_commit=error(unavailable)"),
              IsOk());
  EXPECT_THAT(CommitStep(),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("failpoint server.create.after_commit (hit "
                                 "1): injected error")));
  // Another point is not touched.
  EXPECT_THAT(UpdateStep(), IsOk());
  ASSERT_THAT(SetForTesting("server.update.after_commit=error(aborted)"),
              IsOk());
  EXPECT_THAT(UpdateStep().status(),
              StatusIs(absl::StatusCode::kAborted, HasSubstr("hit 1")));
  EXPECT_THAT(CommitStep(), IsOk());
}

TEST_F(FailpointTest, CountsHandOverToTheNextTerm) {
  ASSERT_THAT(SetForTesting("server.create.after_commit=2*off->1*error("
                            "internal)->error(aborted)"),
              IsOk());
  EXPECT_THAT(CommitStep(), IsOk());
  EXPECT_THAT(CommitStep(), IsOk());
  EXPECT_THAT(CommitStep(), StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(CommitStep(), StatusIs(absl::StatusCode::kAborted));
  EXPECT_THAT(CommitStep(), StatusIs(absl::StatusCode::kAborted));
  EXPECT_EQ(HitsForTesting("server.create.after_commit"), 5);

  // Every term spent: the hits do nothing (and still count).
  ASSERT_THAT(SetForTesting("server.create.after_commit=2*error(internal)"),
              IsOk());
  EXPECT_EQ(HitsForTesting("server.create.after_commit"), 0);
  EXPECT_THAT(CommitStep(), StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(CommitStep(), StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(CommitStep(), IsOk());
  EXPECT_EQ(HitsForTesting("server.create.after_commit"), 3);
}

TEST_F(FailpointTest, AChanceThatFailsFallsThroughToTheNextTerm) {
  ASSERT_THAT(SetForTesting("server.create.after_commit=0%error(internal)"),
              IsOk());
  for (int i = 0; i < 100; ++i) EXPECT_THAT(CommitStep(), IsOk());

  ASSERT_THAT(SetForTesting("server.create.after_commit=50%error(internal)->"
                            "error(aborted)"),
              IsOk());
  int internal = 0;
  int aborted = 0;
  constexpr int kHits = 1000;
  for (int i = 0; i < kHits; ++i) {
    const absl::StatusCode code = CommitStep().code();
    internal += code == absl::StatusCode::kInternal;
    aborted += code == absl::StatusCode::kAborted;
  }
  EXPECT_EQ(internal + aborted, kHits);
  // Binomial(1000, 1/2): outside [350, 650] once in about 10^20 runs.
  EXPECT_GT(internal, 350);
  EXPECT_LT(internal, 650);
}

TEST_F(FailpointTest, SleepPausesAVoidSite) {
  ASSERT_THAT(SetForTesting("store.history.trim=1*sleep(30)"), IsOk());
  trims = 0;
  const absl::Time start = absl::Now();
  TrimStep();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(30));
  TrimStep();
  EXPECT_EQ(trims, 2);
  EXPECT_EQ(HitsForTesting("store.history.trim"), 2);
}

TEST_F(FailpointTest, ALoneOffDisarms) {
  ASSERT_THAT(SetForTesting("server.create.after_commit=off;"
                            "server.update.after_commit=abort"),
              IsOk());
  EXPECT_FALSE(internal::MayAct(
      internal::IndexOf("server.create.after_commit", Site::kStatus)));
  EXPECT_TRUE(internal::MayAct(
      internal::IndexOf("server.update.after_commit", Site::kStatus)));
  ASSERT_THAT(SetForTesting(""), IsOk());
  EXPECT_FALSE(internal::MayAct(
      internal::IndexOf("server.update.after_commit", Site::kStatus)));
}

TEST_F(FailpointTest, AbortKillsTheProcessAsKillDashNineDoes) {
  EXPECT_EXIT(
      {
        if (SetForTesting("server.create.after_commit=1*off->abort").ok()) {
          CommitStep().IgnoreError();
          fprintf(stderr, "survived the first hit\n");
          CommitStep().IgnoreError();
        }
        _exit(0);
      },
      ::testing::KilledBySignal(SIGKILL),
      "survived the first hit\n.*failpoint server.create.after_commit: abort "
      "at hit 2 \\(SIGKILL\\)");
}

// The variable is read once per process: these run in a fresh one each.
class FailpointEnvironmentTest : public FailpointTest {
 protected:
  void SetUp() override {
    FailpointTest::SetUp();
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

TEST_F(FailpointEnvironmentTest, InitFromEnvironmentRefusesATypo) {
  EXPECT_EXIT(
      {
        setenv(kEnvironmentVariable, "server.create.after_comit=abort", 1);
        const absl::Status status = InitFromEnvironment();
        fprintf(stderr, "%s\n", status.ToString().c_str());
        _exit(status.ok() ? 0 : 3);
      },
      ::testing::ExitedWithCode(3),
      "INVALID_ARGUMENT: JOBSET_FAILPOINTS: unknown failpoint "
      "\"server.create.after_comit\".*the failpoints: "
      "server.create.after_validate, ");
}

TEST_F(FailpointEnvironmentTest, InitFromEnvironmentArms) {
  EXPECT_EXIT(
      {
        setenv(kEnvironmentVariable,
               "server.create.after_commit=error(unavailable)", 1);
        const bool armed = InitFromEnvironment().ok() &&
                           absl::IsUnavailable(CommitStep()) &&
                           UpdateStep().ok();
        _exit(armed ? 3 : 4);
      },
      ::testing::ExitedWithCode(3),
      "JOBSET_FAILPOINTS armed: server.create.after_commit=error");
}

TEST_F(FailpointEnvironmentTest, AFirstHitDiesOnAMalformedSpec) {
  EXPECT_DEATH(
      {
        setenv(kEnvironmentVariable, "server.create.after_commit=explode", 1);
        CommitStep().IgnoreError();
      },
      "failpoint server.create.after_commit, term \"explode\": the action "
      "must be");
}

TEST(FailpointOffTest, ReleaseBuildsCompileThePointsOut) {
  if (kCompiledIn) GTEST_SKIP() << "failpoints are compiled in";
  EXPECT_THAT(SetForTesting("server.create.after_commit=error(internal)"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(CommitStep(), IsOk());
  trims = 0;
  TrimStep();
  EXPECT_EQ(trims, 1);
}

TEST(FailpointOffTest, ReleaseBuildsRefuseTheVariable) {
  if (kCompiledIn) GTEST_SKIP() << "failpoints are compiled in";
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // A fresh process.
  EXPECT_EXIT(
      {
        setenv(kEnvironmentVariable, "server.create.after_commit=abort", 1);
        const absl::Status status = InitFromEnvironment();
        fprintf(stderr, "%s\n", status.ToString().c_str());
        _exit(absl::IsFailedPrecondition(status) ? 3 : 4);
      },
      ::testing::ExitedWithCode(3),
      "JOBSET_FAILPOINTS is set, but this build has no failpoints");
}

}  // namespace
}  // namespace jobset::failpoint
