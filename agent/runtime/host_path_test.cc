#include "agent/runtime/host_path.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
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

class HostPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The real path of the test's directory: it may sit under a link.
    char* real = ::realpath(::testing::TempDir().c_str(), nullptr);
    ASSERT_NE(real, nullptr);
    root_ = absl::StrCat(real, "/host_path");
    ::free(real);
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ + "/datasets/real/deep");
    std::filesystem::create_directories(root_ + "/etc");
    std::ofstream(root_ + "/etc/shadow") << "secret";
    std::ofstream(root_ + "/datasets/file") << "data";
    // /datasets/x -> ../etc, /datasets/f -> ../etc/shadow.
    std::filesystem::create_directory_symlink("../etc", root_ + "/datasets/x");
    std::filesystem::create_symlink("../etc/shadow", root_ + "/datasets/f");
  }

  std::string root_;
};

TEST_F(HostPathTest, RealPathsPass) {
  EXPECT_THAT(CheckHostPathHasNoSymlinks("/"), IsOk());
  EXPECT_THAT(CheckHostPathHasNoSymlinks(root_ + "/datasets"), IsOk());
  EXPECT_THAT(CheckHostPathHasNoSymlinks(root_ + "/datasets/real/deep/"),
              IsOk());
  EXPECT_THAT(CheckHostPathHasNoSymlinks(root_ + "//datasets//file"), IsOk());
  // What does not exist yet has nothing to follow (DirectoryOrCreate).
  EXPECT_THAT(CheckHostPathHasNoSymlinks(root_ + "/datasets/new/a/b"), IsOk());
  EXPECT_THAT(CheckHostPathHasNoSymlinks(root_ + "/datasets/file/below"),
              IsOk());
}

TEST_F(HostPathTest, ALinkAnywhereIsRefusedNamingIt) {
  const std::string link = root_ + "/datasets/x";
  EXPECT_THAT(CheckHostPathHasNoSymlinks(link),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat("hostPath \"", link, "\": \"",
                                              link, "\" is a symbolic link"))));
  // A link in the middle: the mount would reach /etc/ssh, not a dataset.
  EXPECT_THAT(
      CheckHostPathHasNoSymlinks(link + "/ssh"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr(absl::StrCat("\"", link, "\" is a symbolic link"))));
  // Below a link, even what does not exist is refused.
  EXPECT_THAT(CheckHostPathHasNoSymlinks(link + "/missing/dir"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is a symbolic link")));
  // A link to a file.
  EXPECT_THAT(CheckHostPathHasNoSymlinks(root_ + "/datasets/f"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("datasets/f\" is a symbolic link")));
}

TEST_F(HostPathTest, RelativeAndDotDotPathsAreRefused) {
  EXPECT_THAT(CheckHostPathHasNoSymlinks("datasets"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("must be an absolute path")));
  EXPECT_THAT(CheckHostPathHasNoSymlinks(""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("must be an absolute path")));
  EXPECT_THAT(
      CheckHostPathHasNoSymlinks(root_ + "/datasets/../etc"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'.' or '..'")));
  EXPECT_THAT(
      CheckHostPathHasNoSymlinks("/datasets/./x"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'.' or '..'")));
  // A hostile path is quoted, never a line of its own.
  EXPECT_THAT(CheckHostPathHasNoSymlinks("x\ny"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hostPath \"x\\ny\"")));
}

// The same (device, inode): the same object.
bool SameObject(int fd, const std::string& path) {
  struct stat a, b;
  return ::fstat(fd, &a) == 0 && ::lstat(path.c_str(), &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

TEST_F(HostPathTest, OpenHostPathOpensTheObjectChecked) {
  const std::string dir = root_ + "/datasets/real";
  absl::StatusOr<ScopedFd> fd = OpenHostPath(dir);
  ASSERT_THAT(fd.status(), IsOk());
  EXPECT_TRUE(SameObject(fd->get(), dir));
  // Open only to name the object (O_PATH), and never past an exec.
  const int flags = ::fcntl(fd->get(), F_GETFL);
  EXPECT_EQ(flags & O_PATH, O_PATH);
  EXPECT_EQ(::fcntl(fd->get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  // Once open, it stays that object whatever the path becomes.
  ASSERT_EQ(::rename(dir.c_str(), (dir + ".old").c_str()), 0);
  ASSERT_EQ(::symlink((root_ + "/etc").c_str(), dir.c_str()), 0);
  EXPECT_TRUE(SameObject(fd->get(), dir + ".old"));

  absl::StatusOr<ScopedFd> file = OpenHostPath(root_ + "//datasets//file");
  ASSERT_THAT(file.status(), IsOk());
  EXPECT_TRUE(SameObject(file->get(), root_ + "/datasets/file"));
  absl::StatusOr<ScopedFd> slash = OpenHostPath("/");
  ASSERT_THAT(slash.status(), IsOk());
  EXPECT_TRUE(SameObject(slash->get(), "/"));
}

TEST_F(HostPathTest, OpenHostPathRefusesWhatTheCheckRefuses) {
  const std::string link = root_ + "/datasets/x";
  EXPECT_THAT(OpenHostPath(link).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat("hostPath \"", link, "\": \"",
                                              link, "\" is a symbolic link"))));
  EXPECT_THAT(OpenHostPath(link + "/ssh").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is a symbolic link")));
  EXPECT_THAT(OpenHostPath(root_ + "/datasets/f").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("datasets/f\" is a symbolic link")));
  EXPECT_THAT(
      OpenHostPath(root_ + "/datasets/../etc").status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'.' or '..'")));
  EXPECT_THAT(
      OpenHostPath("/datasets/./x").status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'.' or '..'")));
  EXPECT_THAT(OpenHostPath("datasets").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("must be an absolute path")));
}

TEST_F(HostPathTest, OpenHostPathNamesWhatDoesNotExist) {
  const std::string missing = root_ + "/datasets/new";
  EXPECT_THAT(
      OpenHostPath(missing + "/a/b").status(),
      StatusIs(absl::StatusCode::kNotFound,
               HasSubstr(absl::StrCat("hostPath \"", missing, "/a/b\": \"",
                                      missing, "\" does not exist"))));
  EXPECT_THAT(OpenHostPath(root_ + "/datasets/file/below").status(),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("datasets/file/below\" does not exist")));
}

TEST_F(HostPathTest, OpenOrCreateMakesWhatIsMissingAndOpensIt) {
  const std::string dir = root_ + "/datasets/new/a/b";
  absl::StatusOr<ScopedFd> made =
      OpenOrCreateHostPath(dir, HostPathCreate::kDirectories);
  ASSERT_THAT(made.status(), IsOk());
  struct stat opened, there;
  ASSERT_EQ(::fstat(made->get(), &opened), 0);
  ASSERT_EQ(::stat(dir.c_str(), &there), 0);
  EXPECT_TRUE(S_ISDIR(there.st_mode));
  EXPECT_EQ(opened.st_ino, there.st_ino);
  // Again: what exists is opened, nothing fails.
  EXPECT_THAT(OpenOrCreateHostPath(dir, HostPathCreate::kDirectories).status(),
              IsOk());

  const std::string file = root_ + "/datasets/real/empty";
  made = OpenOrCreateHostPath(file, HostPathCreate::kFile);
  ASSERT_THAT(made.status(), IsOk());
  ASSERT_EQ(::stat(file.c_str(), &there), 0);
  EXPECT_TRUE(S_ISREG(there.st_mode));
  EXPECT_EQ(there.st_size, 0);
  EXPECT_EQ(there.st_mode & 07777, 0644);
  // FileOrCreate makes no parents (os.OpenFile).
  EXPECT_THAT(
      OpenOrCreateHostPath(root_ + "/datasets/none/f", HostPathCreate::kFile)
          .status(),
      StatusIs(absl::StatusCode::kInternal,
               HasSubstr("No such file or directory")));
}

// What another pod's swap could have made the agent create through a link:
// nothing is made beyond it, and the link is refused by name.
TEST_F(HostPathTest, OpenOrCreateNeverMakesAnythingThroughALink) {
  EXPECT_THAT(OpenOrCreateHostPath(root_ + "/datasets/x/cron.d/job",
                                   HostPathCreate::kDirectories)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is a symbolic link")));
  EXPECT_FALSE(std::filesystem::exists(root_ + "/etc/cron.d"));
  // A link as the last component, dangling: O_EXCL | O_NOFOLLOW makes
  // nothing at its target.
  std::filesystem::create_symlink("../etc/nologin", root_ + "/datasets/n");
  EXPECT_THAT(OpenOrCreateHostPath(root_ + "/datasets/n", HostPathCreate::kFile)
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is a symbolic link")));
  EXPECT_FALSE(std::filesystem::exists(root_ + "/etc/nologin"));
  std::filesystem::create_directory_symlink("../etc", root_ + "/datasets/d");
  EXPECT_THAT(
      OpenOrCreateHostPath(root_ + "/datasets/d", HostPathCreate::kDirectories)
          .status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("is a symbolic link")));
}

}  // namespace
}  // namespace jobset::agent
