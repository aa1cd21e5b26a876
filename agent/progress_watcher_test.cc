// The progress watcher over real directories at given (monotonic) times:
// at most one read per pod per interval, reports only of changes, again
// after a Hello, a send that failed retried, pods forgotten, a restart taken
// as a new instance, a directory made again followed.
#include "agent/progress_watcher.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::testing::IsEmpty;
using ::testing::SizeIs;

const absl::Time kStart = absl::FromUnixSeconds(5000);
constexpr absl::Duration kInterval = absl::Seconds(1);

class ProgressWatcherTest : public ::testing::Test {
 protected:
  ProgressWatcherTest()
      : watcher_(ProgressWatcher::Options{.interval = kInterval,
                                          .metrics = &metrics_}) {
    std::string tmpl = absl::StrCat(
        getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp", "/wXXXXXX");
    EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }

  ProgressWatcher::Pod Pod(const std::string& uid, int64_t restarts = 0) {
    ProgressWatcher::Pod p;
    p.uid = uid;
    p.dir = absl::StrCat(root_, "/", uid);
    p.restarts = restarts;
    mkdir(p.dir.c_str(), 0700);
    return p;
  }
  void Write(const std::string& uid, const std::string& line) {
    const std::string dir = absl::StrCat(root_, "/", uid);
    std::ofstream(dir + "/tmp") << line << "\n";
    ASSERT_EQ(rename((dir + "/tmp").c_str(), (dir + "/progress").c_str()), 0);
  }
  // Reads at `at` and returns what is reported then.
  std::vector<api::PodReport> Tick(
      const std::vector<ProgressWatcher::Pod>& pods, absl::Time at,
      bool send_ok = true) {
    watcher_.Read(pods, at);
    std::vector<api::PodReport> sent;
    watcher_.Report(at, [&](const api::AgentMessage& msg) {
      if (send_ok) sent.push_back(msg.pod_update());
      return send_ok;
    });
    return sent;
  }

  AgentMetrics metrics_;
  ProgressWatcher watcher_;
  std::string root_;
};

TEST_F(ProgressWatcherTest, ReadsAtMostOncePerIntervalAndReportsChanges) {
  const std::vector<ProgressWatcher::Pod> pods = {Pod("a")};
  EXPECT_THAT(Tick(pods, kStart), IsEmpty());  // No file yet: nothing.
  Write("a", "step=1");
  std::vector<api::PodReport> sent = Tick(pods, kStart + absl::Seconds(1));
  ASSERT_THAT(sent, SizeIs(1));
  EXPECT_EQ(sent[0].pod_uid(), "a");
  EXPECT_FALSE(sent[0].has_status());
  EXPECT_EQ(sent[0].progress().step(), 1);
  // Written again at once: read only a whole interval after the last read.
  Write("a", "step=2");
  EXPECT_THAT(Tick(pods, kStart + absl::Milliseconds(1500)), IsEmpty());
  sent = Tick(pods, kStart + absl::Seconds(2));
  ASSERT_THAT(sent, SizeIs(1));
  EXPECT_EQ(sent[0].progress().step(), 2);
  EXPECT_DOUBLE_EQ(sent[0].progress().steps_per_second(), 1);
  // Nothing changed: nothing sent, however often it ticks.
  EXPECT_THAT(Tick(pods, kStart + absl::Seconds(5)), IsEmpty());
  EXPECT_EQ(metrics_.progress_reports.Value(), 2);
}

TEST_F(ProgressWatcherTest, SendsAgainAfterAHelloAndAfterAFailedSend) {
  const std::vector<ProgressWatcher::Pod> pods = {Pod("a")};
  Write("a", "step=7");
  EXPECT_THAT(Tick(pods, kStart, /*send_ok=*/false), IsEmpty());
  std::vector<api::PodReport> sent = Tick(pods, kStart + absl::Seconds(3));
  ASSERT_THAT(sent, SizeIs(1));  // What the failed send did not carry.
  EXPECT_EQ(sent[0].progress().step(), 7);
  EXPECT_EQ(sent[0].progress().since_last_advance().seconds(), 3);
  watcher_.Resend();  // A new stream's Hello.
  sent = Tick(pods, kStart + absl::Seconds(4));
  ASSERT_THAT(sent, SizeIs(1));
  EXPECT_EQ(sent[0].progress().step(), 7);
  EXPECT_THAT(Tick(pods, kStart + absl::Seconds(5)), IsEmpty());
}

TEST_F(ProgressWatcherTest, RejectionsAreCountedAndReported) {
  const std::vector<ProgressWatcher::Pod> pods = {Pod("a")};
  Write("a", "step=10");
  Tick(pods, kStart);
  Write("a", "step=5");
  std::vector<api::PodReport> sent = Tick(pods, kStart + absl::Seconds(1));
  ASSERT_THAT(sent, SizeIs(1));
  EXPECT_EQ(sent[0].progress().step(), 10);
  EXPECT_EQ(sent[0].progress().rejected_lines(), 1);
  EXPECT_EQ(metrics_.progress_rejected.Add({{"reason", "decreasing"}}).Value(),
            1);
}

TEST_F(ProgressWatcherTest, ARestartedPodMayGoLower) {
  std::vector<ProgressWatcher::Pod> pods = {Pod("a")};
  Write("a", "step=100");
  Tick(pods, kStart);
  pods = {Pod("a", /*restarts=*/1)};
  // The new instance has no step until it writes one.
  std::vector<api::PodReport> sent = Tick(pods, kStart + absl::Seconds(1));
  ASSERT_THAT(sent, SizeIs(1));
  EXPECT_FALSE(sent[0].progress().has_step());
  Write("a", "step=40");
  sent = Tick(pods, kStart + absl::Seconds(2));
  ASSERT_THAT(sent, SizeIs(1));
  EXPECT_EQ(sent[0].progress().step(), 40);
  EXPECT_EQ(sent[0].progress().rejected_lines(), 0);
}

TEST_F(ProgressWatcherTest, FollowsADirectoryMadeAgainAndForgetsPods) {
  const std::vector<ProgressWatcher::Pod> pods = {Pod("a")};
  Write("a", "step=3");
  ASSERT_THAT(Tick(pods, kStart), SizeIs(1));
  // The pod's directory made again (a restart in place removes and makes
  // the pod's whole directory, and changes its attempt, which is noticed at
  // once): inotify says nothing of it while the old one is held open, so it
  // is found at the next read, at the latest 30 s on.
  std::filesystem::remove_all(absl::StrCat(root_, "/a"));
  Pod("a");
  Write("a", "step=4");
  std::vector<api::PodReport> sent = Tick(pods, kStart + absl::Seconds(30));
  ASSERT_THAT(sent, SizeIs(1));
  EXPECT_EQ(sent[0].progress().step(), 4);
  // Gone from the runtime: forgotten; back, it is new.
  EXPECT_THAT(Tick({}, kStart + absl::Seconds(31)), IsEmpty());
  sent = Tick(pods, kStart + absl::Seconds(32));
  ASSERT_THAT(sent, SizeIs(1));
  EXPECT_EQ(sent[0].progress().step(), 4);
  EXPECT_EQ(sent[0].progress().steps_per_second(), 0);
}

}  // namespace
}  // namespace jobset::agent
