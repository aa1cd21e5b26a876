#include "common/log.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset {
namespace {

using ::testing::ContainsRegex;
using ::testing::EndsWith;

TEST(LogTest, FormatsOneLineWithSeverityFileAndLine) {
  const std::string line = FormatLogLine(
      LogSeverity::kWarning, "scheduler/controller/controller.cc", 109, "x y");
  EXPECT_THAT(line, ContainsRegex("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z W "));
  EXPECT_THAT(line, EndsWith(" W controller.cc:109] x y"));
}

TEST(LogTest, EachSeverityHasItsLetter) {
  EXPECT_THAT(FormatLogLine(LogSeverity::kInfo, "a.cc", 1, ""),
              EndsWith(" I a.cc:1] "));
  EXPECT_THAT(FormatLogLine(LogSeverity::kError, "a.cc", 1, ""),
              EndsWith(" E a.cc:1] "));
  EXPECT_THAT(FormatLogLine(LogSeverity::kFatal, "a.cc", 1, ""),
              EndsWith(" F a.cc:1] "));
}

TEST(LogTest, StreamsToStderr) {
  testing::internal::CaptureStderr();
  JOBSET_LOG(INFO) << "pods " << 3;
  EXPECT_THAT(testing::internal::GetCapturedStderr(),
              ContainsRegex(" I log_test.cc:[0-9]+\\] pods 3\n$"));
}

TEST(LogDeathTest, FatalAborts) {
  EXPECT_DEATH(JOBSET_LOG(FATAL) << "broken invariant", "broken invariant");
}

TEST(LogDeathTest, CheckAbortsOnlyWhenFalse) {
  int evaluated = 0;
  JOBSET_CHECK(++evaluated == 1) << "not reached";
  EXPECT_EQ(evaluated, 1);
  EXPECT_DEATH(JOBSET_CHECK(evaluated == 2) << "room miscounted",
               "check failed: evaluated == 2 room miscounted");
}

}  // namespace
}  // namespace jobset
