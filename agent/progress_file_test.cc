// The progress file's grammar, table-driven (ParseProgressTail is pure),
// and ReadProgressFile on what a hostile pod can put in the file's place:
// a symlink, a fifo (the read must not block), a directory, a hard link, a
// 1 MiB line. Files live in the test's own temporary directory.
#include "agent/progress_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

struct ParseCase {
  std::string name;
  std::string tail;
  bool whole = true;
  ProgressReject reject = ProgressReject::kNone;
  bool line = true;  // a line taken (with reject kNone)
  int64_t step = 0;
  int64_t checkpoint = 0;
};

std::vector<ParseCase> ParseCases() {
  const std::string long_line(kMaxProgressLineBytes + 1, '7');
  return {
      {"Step", "step=42\n", true, ProgressReject::kNone, true, 42, 0},
      {"StepAndCheckpoint", "step=120 checkpoint_step=100\n", true,
       ProgressReject::kNone, true, 120, 100},
      {"TabsAndCarriageReturn", " step=5\tcheckpoint_step=5\r\n", true,
       ProgressReject::kNone, true, 5, 5},
      {"LastCompleteLineCounts", "step=1\nstep=2\nstep=3\n", true,
       ProgressReject::kNone, true, 3, 0},
      {"PartialLastLineIgnored", "step=1\nstep=2\nstep=3", true,
       ProgressReject::kNone, true, 2, 0},
      {"TrailingBlankLinesSkipped", "step=9\n\n  \n", true,
       ProgressReject::kNone, true, 9, 0},
      {"Empty", "", true, ProgressReject::kNone, false},
      {"NoNewlineYet", "step=4", true, ProgressReject::kNone, false},
      {"OnlyBlankLines", "\n\n", true, ProgressReject::kNone, false},
      {"Zero", "step=0\n", true, ProgressReject::kNone, true, 0, 0},
      {"Max", absl::StrCat("step=", int64_t{1} << 62, "\n"), true,
       ProgressReject::kNone, true, int64_t{1} << 62, 0},
      {"OverMax", absl::StrCat("step=", (int64_t{1} << 62) + 1, "\n"), true,
       ProgressReject::kOutOfRange, false},
      {"TwentyDigits", "step=99999999999999999999\n", true,
       ProgressReject::kOutOfRange, false},
      {"Negative", "step=-3\n", true, ProgressReject::kNegative, false},
      {"NegativeCheckpoint", "step=3 checkpoint_step=-1\n", true,
       ProgressReject::kNegative, false},
      {"CheckpointAfterStep", "step=3 checkpoint_step=4\n", true,
       ProgressReject::kCheckpointAfterStep, false},
      {"Garbage", "hello world\n", true, ProgressReject::kMalformed, false},
      {"NoNumber", "step=\n", true, ProgressReject::kMalformed, false},
      {"Plus", "step=+3\n", true, ProgressReject::kMalformed, false},
      {"Hex", "step=0x10\n", true, ProgressReject::kMalformed, false},
      {"TrailingWord", "step=3 loss=0.1\n", true, ProgressReject::kMalformed,
       false},
      {"NoSpaceBeforeCheckpoint", "step=3checkpoint_step=1\n", true,
       ProgressReject::kMalformed, false},
      {"UpperCase", "STEP=3\n", true, ProgressReject::kMalformed, false},
      {"NulByte", std::string("step=3\0\n", 8), true,
       ProgressReject::kMalformed, false},
      {"LineTooLong", absl::StrCat("step=", long_line, "\n"), true,
       ProgressReject::kTooLong, false},
      {"GoodLineAfterLongOne", absl::StrCat(long_line, "\nstep=8\n"), true,
       ProgressReject::kNone, true, 8, 0},
      {"LongUnterminated", long_line, true, ProgressReject::kTooLong, false},
      {"LineBeganBeforeTail", "9999\n", false, ProgressReject::kTooLong, false},
      {"TailWithWholeLine", "99\nstep=6\n", false, ProgressReject::kNone, true,
       6, 0},
  };
}

class ParseProgressTailTest : public ::testing::TestWithParam<ParseCase> {};

TEST_P(ParseProgressTailTest, Parses) {
  const ParseCase& c = GetParam();
  const ProgressInput in = ParseProgressTail(c.tail, c.whole);
  EXPECT_EQ(ProgressRejectName(in.reject), ProgressRejectName(c.reject));
  EXPECT_EQ(in.has_line(), c.line);
  if (c.line) {
    EXPECT_EQ(in.step, c.step);
    EXPECT_EQ(in.checkpoint_step, c.checkpoint);
  }
  EXPECT_LE(in.line.size(), kMaxProgressLineBytes);
}

INSTANTIATE_TEST_SUITE_P(Grammar, ParseProgressTailTest,
                         ::testing::ValuesIn(ParseCases()),
                         [](const ::testing::TestParamInfo<ParseCase>& info) {
                           return info.param.name;
                         });

TEST(ProgressRejectNameTest, NamesEveryReason) {
  EXPECT_EQ(ProgressRejectName(ProgressReject::kNotAFile), "not_a_file");
  EXPECT_EQ(ProgressRejectName(ProgressReject::kDecreasing), "decreasing");
  EXPECT_EQ(ProgressRejectName(ProgressReject::kCheckpointAfterStep),
            "checkpoint_after_step");
  EXPECT_EQ(ProgressRejectName(ProgressReject::kNone), "");
}

class ReadProgressFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl =
        absl::StrCat(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp",
                     "/progressXXXXXX");
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    dir_fd_ = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dir_fd_, 0);
  }
  void TearDown() override { close(dir_fd_); }

  std::string Path(const std::string& name) const {
    return absl::StrCat(dir_, "/", name);
  }
  void Write(const std::string& name, const std::string& data) {
    std::ofstream(Path(name), std::ios::binary | std::ios::trunc) << data;
  }

  std::string dir_;
  int dir_fd_ = -1;
};

TEST_F(ReadProgressFileTest, ReadsTheLastLine) {
  Write("progress", "step=1\nstep=7 checkpoint_step=5\n");
  const ProgressInput in = ReadProgressFile(dir_fd_, "progress");
  ASSERT_TRUE(in.has_line());
  EXPECT_EQ(in.step, 7);
  EXPECT_EQ(in.checkpoint_step, 5);
}

TEST_F(ReadProgressFileTest, MissingFileIsNothing) {
  const ProgressInput in = ReadProgressFile(dir_fd_, "progress");
  EXPECT_EQ(in.reject, ProgressReject::kNone);
  EXPECT_FALSE(in.has_line());
}

TEST_F(ReadProgressFileTest, ReadsOnlyTheTailOfABigFile) {
  // 1 MiB of history, then the last line: found in the last 4 KiB.
  std::string data;
  while (data.size() < (1 << 20)) absl::StrAppend(&data, "step=1\n");
  absl::StrAppend(&data, "step=123456\n");
  Write("progress", data);
  const ProgressInput in = ReadProgressFile(dir_fd_, "progress");
  ASSERT_TRUE(in.has_line());
  EXPECT_EQ(in.step, 123456);
}

TEST_F(ReadProgressFileTest, OneMebibyteLineIsTooLong) {
  Write("progress", absl::StrCat("step=", std::string(1 << 20, '1'), "\n"));
  const ProgressInput in = ReadProgressFile(dir_fd_, "progress");
  EXPECT_EQ(in.reject, ProgressReject::kTooLong);
  EXPECT_LE(in.line.size(), kMaxProgressLineBytes);
}

TEST_F(ReadProgressFileTest, SymlinkIsNotFollowed) {
  // A link to a file that parses: it must still not be read.
  Write("elsewhere", "step=99\n");
  ASSERT_EQ(symlink(Path("elsewhere").c_str(), Path("progress").c_str()), 0);
  EXPECT_EQ(ReadProgressFile(dir_fd_, "progress").reject,
            ProgressReject::kNotAFile);
}

TEST_F(ReadProgressFileTest, FifoIsNotOpenedAndDoesNotBlock) {
  // Opening a fifo with no writer for reading would block without
  // O_NONBLOCK; it is refused before it is opened at all.
  ASSERT_EQ(mkfifo(Path("progress").c_str(), 0600), 0);
  EXPECT_EQ(ReadProgressFile(dir_fd_, "progress").reject,
            ProgressReject::kNotAFile);
}

TEST_F(ReadProgressFileTest, DirectoryIsRefused) {
  ASSERT_EQ(mkdir(Path("progress").c_str(), 0700), 0);
  EXPECT_EQ(ReadProgressFile(dir_fd_, "progress").reject,
            ProgressReject::kNotAFile);
}

TEST_F(ReadProgressFileTest, HardLinkIsRefused) {
  Write("other", "step=3\n");
  ASSERT_EQ(link(Path("other").c_str(), Path("progress").c_str()), 0);
  EXPECT_EQ(ReadProgressFile(dir_fd_, "progress").reject,
            ProgressReject::kNotAFile);
}

}  // namespace
}  // namespace jobset::agent
