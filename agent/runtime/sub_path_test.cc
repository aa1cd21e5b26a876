#include "agent/runtime/sub_path.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

class SubPathTest : public ::testing::TestWithParam<BeneathResolver> {
 protected:
  void SetUp() override {
    static int counter = 0;
    volume_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/vol", ++counter);
    ASSERT_EQ(mkdir(volume_.c_str(), 0700), 0);
    ASSERT_EQ(mkdir((volume_ + "/dir").c_str(), 0700), 0);
  }

  // Returns the path `fd` resolved to, and closes it.
  static std::string Target(int fd) {
    char buf[4096] = {};
    const std::string link = absl::StrCat("/proc/self/fd/", fd);
    const ssize_t n = readlink(link.c_str(), buf, sizeof(buf) - 1);
    close(fd);
    return n > 0 ? std::string(buf, n) : "";
  }

  std::string volume_;
};

TEST_P(SubPathTest, ResolvesBeneathTheVolume) {
  absl::StatusOr<int> fd = OpenBeneath(volume_, "dir", "subPath", GetParam());
  ASSERT_THAT(fd.status(), IsOk());
  EXPECT_EQ(Target(*fd), volume_ + "/dir");
}

TEST_P(SubPathTest, CreatesAMissingSubPathPrivately) {
  absl::StatusOr<int> fd =
      OpenBeneath(volume_, "dir/new/deeper", "subPath", GetParam());
  ASSERT_THAT(fd.status(), IsOk());
  EXPECT_EQ(Target(*fd), volume_ + "/dir/new/deeper");
  struct stat st;
  ASSERT_EQ(stat((volume_ + "/dir/new/deeper").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

// A container planted a symlink in the volume (an init container writing an
// emptyDir): a later mount through it must not reach outside.
TEST_P(SubPathTest, SymlinkOutOfTheVolumeIsRefused) {
  ASSERT_EQ(symlink("/etc", (volume_ + "/escape").c_str()), 0);
  ASSERT_EQ(
      symlink("../../../../../../../etc", (volume_ + "/dir/climb").c_str()), 0);
  for (const char* sub :
       {"escape", "escape/passwd", "dir/climb", "dir/climb/x"}) {
    EXPECT_THAT(OpenBeneath(volume_, sub, "volumeMounts[0].subPath", GetParam())
                    .status(),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("volumeMounts[0].subPath")))
        << sub;
  }
  // Nothing was created outside on the way.
  struct stat st;
  EXPECT_NE(stat("/etc/x", &st), 0);
}

TEST_P(SubPathTest, AbsoluteAndClimbingPathsAreRefused) {
  for (const char* sub : {"/etc", "..", "dir/../..", "dir/.."}) {
    EXPECT_THAT(OpenBeneath(volume_, sub, "subPath", GetParam()).status(),
                StatusIs(absl::StatusCode::kInvalidArgument))
        << sub;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Resolvers, SubPathTest,
    ::testing::Values(BeneathResolver::kOpenat2, BeneathResolver::kWalk),
    [](const ::testing::TestParamInfo<BeneathResolver>& i) {
      return i.param == BeneathResolver::kOpenat2 ? std::string("openat2")
                                                  : std::string("walk");
    });

}  // namespace
}  // namespace jobset::agent
