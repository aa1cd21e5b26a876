#include "tests/fleet_sim_mixer.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::testing::fleet {
namespace {

using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAreArray;

const absl::Time kT0 = absl::UnixEpoch() + absl::Seconds(1000);

api::AgentMessage Report(int i) {
  api::AgentMessage m;
  m.mutable_pod_update()->set_pod_uid(absl::StrCat("uid-", i));
  m.mutable_pod_update()->mutable_status()->set_phase("Running");
  return m;
}

std::vector<std::string> Uids(const std::vector<api::AgentMessage>& ms) {
  std::vector<std::string> out;
  for (const api::AgentMessage& m : ms) out.push_back(m.pod_update().pod_uid());
  return out;
}

TEST(ReportMixerTest, OffPassesEveryReportAtOnce) {
  ReportMixer mixer({}, 0);
  EXPECT_FALSE(mixer.active());
  ReportMixer::Out out = mixer.Report(Report(1), kT0);
  EXPECT_EQ(Uids(out.send), std::vector<std::string>{"uid-1"});
  EXPECT_THAT(out.later, IsEmpty());
  EXPECT_FALSE(out.flush.has_value());
}

TEST(ReportMixerTest, DuplicatesAreIdenticalCopiesWithinTheDelay) {
  ReportMixer::Options o;
  o.duplicates = 5;
  o.max_delay = absl::Seconds(2);
  ReportMixer mixer(o, 3);
  EXPECT_TRUE(mixer.active());
  const api::AgentMessage report = Report(7);
  ReportMixer::Out out = mixer.Report(report, kT0);
  ASSERT_THAT(out.send, SizeIs(1));  // the report itself, now
  ASSERT_THAT(out.later, SizeIs(5));
  for (const auto& [when, copy] : out.later) {
    EXPECT_GE(when, kT0);
    EXPECT_LE(when, kT0 + absl::Seconds(2));
    EXPECT_EQ(copy.SerializeAsString(), report.SerializeAsString());
  }
  // Without reordering, a copy is sent when its time comes.
  EXPECT_THAT(mixer.Copy(out.later[0].second, out.later[0].first).send,
              SizeIs(1));
  EXPECT_EQ(mixer.counts().reports, 1);
  EXPECT_EQ(mixer.counts().copies, 1);
}

TEST(ReportMixerTest, AWindowIsSentShuffledWhenFull) {
  ReportMixer::Options o;
  o.reorder = true;
  o.window_messages = 8;
  ReportMixer mixer(o, 0);
  std::vector<std::string> sent;
  std::vector<std::string> want;
  ReportMixer::Out first = mixer.Report(Report(0), kT0);
  want.push_back("uid-0");
  EXPECT_THAT(first.send, IsEmpty());
  ASSERT_TRUE(first.flush.has_value());
  EXPECT_EQ(first.flush->first, kT0 + o.window);
  for (int i = 1; i < 8; ++i) {
    ReportMixer::Out out = mixer.Report(Report(i), kT0);
    want.push_back(absl::StrCat("uid-", i));
    EXPECT_FALSE(out.flush.has_value());  // the same window
    for (const std::string& u : Uids(out.send)) sent.push_back(u);
    if (i < 7) {
      EXPECT_THAT(out.send, IsEmpty());
    }
  }
  EXPECT_THAT(sent, UnorderedElementsAreArray(want));
  EXPECT_NE(sent, want);  // 1 in 40,320 for a seed; this one shuffles
  EXPECT_GT(mixer.counts().displaced, 0);
  // Its timer then finds it sent; the next report opens a new window.
  EXPECT_THAT(mixer.Flush(first.flush->second), IsEmpty());
  ReportMixer::Out next = mixer.Report(Report(9), kT0);
  ASSERT_TRUE(next.flush.has_value());
  EXPECT_NE(next.flush->second, first.flush->second);
  EXPECT_EQ(Uids(mixer.Flush(next.flush->second)),
            std::vector<std::string>{"uid-9"});
}

TEST(ReportMixerTest, EveryReportAndCopyLeavesExactlyOnce) {
  ReportMixer::Options o;
  o.duplicates = 3;
  o.reorder = true;
  o.window_messages = 5;
  o.seed = 42;
  ReportMixer mixer(o, 1);
  std::map<std::string, int> out;
  std::vector<std::pair<absl::Time, api::AgentMessage>> later;
  std::vector<int64_t> windows;
  auto take = [&](ReportMixer::Out result) {
    for (const std::string& u : Uids(result.send)) ++out[u];
    for (auto& l : result.later) later.push_back(std::move(l));
    if (result.flush.has_value()) windows.push_back(result.flush->second);
  };
  for (int i = 0; i < 20; ++i) take(mixer.Report(Report(i), kT0));
  for (auto& [when, copy] : later) take(mixer.Copy(copy, when));
  for (int64_t w : windows) {
    for (const std::string& u : Uids(mixer.Flush(w))) ++out[u];
  }
  ASSERT_THAT(out, SizeIs(20));
  for (const auto& [uid, n] : out) EXPECT_EQ(n, 4) << uid;
  EXPECT_EQ(mixer.counts().reports, 20);
  EXPECT_EQ(mixer.counts().copies, 60);
}

TEST(ReportMixerTest, SeededPerStream) {
  ReportMixer::Options o;
  o.reorder = true;
  o.window_messages = 16;
  o.seed = 7;
  auto order = [&](uint64_t stream) {
    ReportMixer mixer(o, stream);
    std::vector<std::string> sent;
    for (int i = 0; i < 16; ++i) {
      for (const std::string& u : Uids(mixer.Report(Report(i), kT0).send))
        sent.push_back(u);
    }
    return sent;
  };
  EXPECT_EQ(order(1), order(1));
  EXPECT_NE(order(1), order(2));
}

TEST(ReportMixerTest, ClearDropsTheWindow) {
  ReportMixer::Options o;
  o.reorder = true;
  ReportMixer mixer(o, 0);
  ReportMixer::Out out = mixer.Report(Report(1), kT0);
  mixer.Clear();
  EXPECT_THAT(mixer.Flush(out.flush->second), IsEmpty());
}

}  // namespace
}  // namespace jobset::testing::fleet
