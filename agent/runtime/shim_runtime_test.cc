// ShimRuntime's log retention, on log directories made by hand (no shims,
// no processes): which released pods' logs go by age and by total bytes,
// and that a known pod's never do.
#include "agent/runtime/shim_runtime.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/runtime/pod_files.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::IsOkAndHolds;

class ShimRuntimeRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    work_dir_ =
        absl::StrCat(std::getenv("TEST_TMPDIR"), "/retention", ++counter);
    ShimRuntime::Options options;
    options.work_dir = work_dir_;
    options.shim_path = "/bin/true";  // Never spawned: no pod is started.
    absl::StatusOr<std::unique_ptr<ShimRuntime>> r =
        ShimRuntime::Create(options);
    ASSERT_THAT(r.status(), IsOk());
    runtime_ = std::move(*r);
  }

  // Makes pod `uid`'s logs: `bytes` in main.log, last written at `written`;
  // `known` also makes its pod directory (a pod the runtime still has).
  void MakeLogs(const std::string& uid, int bytes, absl::Time written,
                bool known = false) {
    const std::string dir = absl::StrCat(work_dir_, "/logs/", uid);
    ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
    ASSERT_THAT(WriteFileAtomic(dir + "/main.log", std::string(bytes, 'x')),
                IsOk());
    const struct timespec times[2] = {absl::ToTimespec(written),
                                      absl::ToTimespec(written)};
    ASSERT_EQ(utimensat(AT_FDCWD, (dir + "/main.log").c_str(), times, 0), 0);
    ASSERT_EQ(utimensat(AT_FDCWD, dir.c_str(), times, 0), 0);
    if (known) {
      ASSERT_EQ(mkdir(absl::StrCat(work_dir_, "/pods/", uid).c_str(), 0700), 0);
    }
  }

  bool HasLogs(const std::string& uid) {
    struct stat st;
    return stat(absl::StrCat(work_dir_, "/logs/", uid).c_str(), &st) == 0;
  }

  const absl::Time now_ = absl::FromUnixSeconds(1'700'000'000);
  std::string work_dir_;
  std::unique_ptr<ShimRuntime> runtime_;
};

TEST_F(ShimRuntimeRetentionTest, ReleasedPodsLogsGoAfterTheRetention) {
  MakeLogs("old", 10, now_ - absl::Hours(25));
  MakeLogs("fresh", 10, now_ - absl::Hours(1));
  MakeLogs("old-but-known", 10, now_ - absl::Hours(48), /*known=*/true);
  LogRetention retention;
  retention.retention = absl::Hours(24);
  EXPECT_THAT(runtime_->PruneLogs(now_, retention), IsOkAndHolds(1));
  EXPECT_FALSE(HasLogs("old"));
  EXPECT_TRUE(HasLogs("fresh"));
  EXPECT_TRUE(HasLogs("old-but-known"));
  // A day later the fresh one goes too.
  EXPECT_THAT(runtime_->PruneLogs(now_ + absl::Hours(24), retention),
              IsOkAndHolds(1));
  EXPECT_FALSE(HasLogs("fresh"));
  EXPECT_TRUE(HasLogs("old-but-known"));
}

TEST_F(ShimRuntimeRetentionTest, OverTheByteLimitOldestReleasedGoFirst) {
  MakeLogs("a", 100, now_ - absl::Hours(3));
  MakeLogs("b", 100, now_ - absl::Hours(2));
  MakeLogs("c", 100, now_ - absl::Hours(1));
  MakeLogs("known", 100, now_ - absl::Hours(10), /*known=*/true);
  LogRetention retention;
  retention.max_bytes = 250;  // 400 now: a and b go (200 left), not c.
  EXPECT_THAT(runtime_->PruneLogs(now_, retention), IsOkAndHolds(2));
  EXPECT_FALSE(HasLogs("a"));
  EXPECT_FALSE(HasLogs("b"));
  EXPECT_TRUE(HasLogs("c"));
  EXPECT_TRUE(HasLogs("known"));
  // Under the limit, nothing more goes.
  EXPECT_THAT(runtime_->PruneLogs(now_, retention), IsOkAndHolds(0));
  EXPECT_TRUE(HasLogs("c"));
}

TEST_F(ShimRuntimeRetentionTest, OneSweepRemovesAtMostMaxRemoved) {
  for (int i = 0; i < 5; ++i) {
    MakeLogs(absl::StrCat("p", i), 10, now_ - absl::Hours(30 + i));
  }
  LogRetention retention;
  retention.max_removed = 2;
  EXPECT_THAT(runtime_->PruneLogs(now_, retention), IsOkAndHolds(2));
  // The oldest first.
  EXPECT_FALSE(HasLogs("p4"));
  EXPECT_FALSE(HasLogs("p3"));
  EXPECT_TRUE(HasLogs("p2"));
  EXPECT_THAT(runtime_->PruneLogs(now_, retention), IsOkAndHolds(2));
  EXPECT_THAT(runtime_->PruneLogs(now_, retention), IsOkAndHolds(1));
  EXPECT_THAT(runtime_->PruneLogs(now_, retention), IsOkAndHolds(0));
}

}  // namespace
}  // namespace jobset::agent
