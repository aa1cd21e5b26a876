// wait jobset NAME --for=condition=...: its deadline is on the command's
// clock.
#include <string>

#include "absl/time/time.h"
#include "cli/cmd/fake_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;

// The fake clock stands long before the real time, so the watch's deadline
// (the clock's now + --timeout) has passed when it starts: wait times out
// at once (exit 4) instead of after 30 real seconds.
TEST_F(CommandsTest, WaitTimesOutOnTheCommandsClock) {
  FakeClock clock(absl::FromUnixSeconds(kCreated));
  ASSERT_EQ(RunAt(clock, {"wait", "jobset", "js-0", "--for=condition=Completed",
                          "--timeout=30s"}),
            kExitWaitTimeout)
      << err_.str();
  EXPECT_EQ(err_.str(),
            "error: timed out after 30s waiting for the condition "
            "Completed=True on jobset.jobset.x-k8s.io/js-0\n");
}

TEST_F(CommandsTest, WaitChecksItsArguments) {
  EXPECT_EQ(Run({"wait", "pods", "p-0", "--for=condition=Ready"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("\"wait\" supports jobsets only"));
  EXPECT_EQ(Run({"wait", "jobset", "js-0", "--for=delete"}), kExitUsage);
}

}  // namespace
}  // namespace jobset::cli
