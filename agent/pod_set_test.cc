// The desired pod set over a FakeRuntime: reconciling a Welcome, GPUs by
// device index and their ledger, restart in place behind its barrier, and
// untrusted assignments failing only their pod.
#include "agent/pod_set.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "agent/fake_runtime.h"
#include "agent/pod_reporter.h"
#include "agent/restart_barrier.h"
#include "api/host_table.h"
#include "api/pod_phase.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::agent {
namespace {

using ::jobset::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

api::PodAssignment Assignment(const std::string& uid, int gpus = 0) {
  api::PodAssignment a;
  a.mutable_pod()->mutable_metadata()->set_uid(uid);
  a.mutable_pod()->mutable_metadata()->set_name(uid);
  api::Container* c = a.mutable_pod()->mutable_spec()->add_containers();
  c->set_name("main");
  if (gpus > 0)
    (*c->mutable_resources()->mutable_limits())["nvidia.com/gpu"] =
        absl::StrCat(gpus);
  return a;
}

api::PodAssignment AtAttempt(api::PodAssignment a, int32_t attempt) {
  (*a.mutable_pod()
        ->mutable_metadata()
        ->mutable_annotations())[kInPlaceRestartAttemptKey] =
      absl::StrCat(attempt);
  return a;
}

std::vector<int> GpusOf(const api::PodAssignment& a) {
  return {a.devices().nvidia_gpus().begin(), a.devices().nvidia_gpus().end()};
}

class PodSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int counter = 0;
    state_dir_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/state", ++counter);
    ASSERT_EQ(system(("mkdir -p " + state_dir_).c_str()), 0);
  }

  std::unique_ptr<PodSet> NewSet() {
    return std::make_unique<PodSet>(
        PodSet::Options{.gpu_capacity = 4, .state_dir = state_dir_}, &runtime_,
        &clock_, &reporter_, [this](const api::AgentMessage& msg) {
          absl::MutexLock lock(&mu_);
          sent_.push_back(msg);
          return true;
        });
  }

  std::vector<api::PodReport> Failures() {
    absl::MutexLock lock(&mu_);
    std::vector<api::PodReport> reports;
    for (const api::AgentMessage& m : sent_) reports.push_back(m.pod_update());
    return reports;
  }

  std::string state_dir_;
  FakeClock clock_;
  FakeRuntime runtime_;
  PodReporter reporter_{nullptr};
  absl::Mutex mu_;
  std::vector<api::AgentMessage> sent_ ABSL_GUARDED_BY(mu_);
};

TEST_F(PodSetTest, AWelcomeIsWhatRuns) {
  std::unique_ptr<PodSet> pods = NewSet();
  ASSERT_THAT(runtime_.Start(Assignment("old")), IsOk());
  ASSERT_THAT(runtime_.Start(Assignment("kept")), IsOk());
  api::Welcome welcome;
  *welcome.add_pods() = Assignment("kept");
  *welcome.add_pods() = Assignment("new");
  api::PodAssignment stopped = Assignment("stopped");
  stopped.set_stop(true);
  *welcome.add_pods() = stopped;
  pods->Reconcile(welcome);
  EXPECT_FALSE(runtime_.Has("old"));  // Not wanted: released at once.
  EXPECT_TRUE(runtime_.Has("kept"));
  EXPECT_TRUE(runtime_.Has("new"));
  EXPECT_FALSE(runtime_.Has("stopped"));     // Never started to be stopped.
  EXPECT_EQ(runtime_.started().size(), 3u);  // old, kept, new: none twice.
  pods->Stop("new");
  pods->Release("kept");
  EXPECT_FALSE(runtime_.Has("kept"));
  EXPECT_EQ(runtime_.List()[0].status.phase(), api::kPodFailed);
}

TEST_F(PodSetTest, GpusGoByIndexAndSurviveARestartedAgent) {
  std::unique_ptr<PodSet> pods = NewSet();
  pods->Run(Assignment("a", 2));
  pods->Run(Assignment("b", 2));
  pods->Run(Assignment("c", 1));  // None left.
  ASSERT_EQ(runtime_.started().size(), 2u);
  EXPECT_THAT(GpusOf(runtime_.started()[0]), ElementsAre(0, 1));
  EXPECT_THAT(GpusOf(runtime_.started()[1]), ElementsAre(2, 3));
  std::vector<api::PodReport> failures = Failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].pod_uid(), "c");
  EXPECT_EQ(failures[0].status().reason(), "UnexpectedAdmissionError");
  // A new agent on the same state dir knows a's and b's devices.
  pods = NewSet();
  pods->Load();
  pods->Release("a");
  pods->Run(Assignment("d", 2));
  ASSERT_EQ(runtime_.started().size(), 3u);
  EXPECT_THAT(GpusOf(runtime_.started()[2]), ElementsAre(0, 1));
}

TEST_F(PodSetTest, AnInvalidAssignmentFailsItsPodOnly) {
  std::unique_ptr<PodSet> pods = NewSet();
  api::PodAssignment bad = Assignment("../x");
  pods->Run(bad);
  api::PodAssignment bad_attempt = AtAttempt(Assignment("y"), 0);
  (*bad_attempt.mutable_pod()
        ->mutable_metadata()
        ->mutable_annotations())[kInPlaceRestartAttemptKey] = "-3";
  pods->Run(bad_attempt);
  EXPECT_TRUE(runtime_.started().empty());
  std::vector<api::PodReport> failures = Failures();
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].status().reason(), "InvalidAssignment");
  EXPECT_EQ(failures[0].status().phase(), api::kPodFailed);
  EXPECT_THAT(failures[1].status().message(),
              HasSubstr("not a non-negative 32-bit integer"));
}

// `a` with a host table of `names` (at 10.0.0.1), sent as jobsetd sends it.
api::PodAssignment WithTable(api::PodAssignment a,
                             const std::vector<std::string>& names) {
  api::HostTable table;
  for (const std::string& name : names) {
    api::HostEntry* e = table.add_hosts();
    e->set_address("10.0.0.1");
    e->add_names(name);
  }
  a.set_hosts_table(api::EncodeHostTable(table));
  return a;
}

TEST_F(PodSetTest, TheHostTableIsExpandedOnReceipt) {
  std::unique_ptr<PodSet> pods = NewSet();
  pods->Run(WithTable(Assignment("a"), {"w-0", "w-1"}));
  ASSERT_EQ(runtime_.started().size(), 1u);
  EXPECT_TRUE(runtime_.started()[0].hosts_table().empty());
  EXPECT_THAT(runtime_.HostNames("a"), ElementsAre("w-0", "w-1"));
  // The attempt's table grew: the running pod gets it.
  pods->Run(WithTable(Assignment("a"), {"w-0", "w-1", "w-2"}));
  EXPECT_THAT(runtime_.HostNames("a"), ElementsAre("w-0", "w-1", "w-2"));
  // One that does not decode leaves a running pod as it was.
  api::PodAssignment garbage = Assignment("a");
  garbage.set_hosts_table("garbage");
  pods->Run(garbage);
  EXPECT_THAT(runtime_.HostNames("a"), ElementsAre("w-0", "w-1", "w-2"));
  EXPECT_TRUE(Failures().empty());
  // And fails a new pod, as any assignment that does not pass.
  garbage.mutable_pod()->mutable_metadata()->set_uid("b");
  pods->Run(garbage);
  api::PodAssignment both = WithTable(Assignment("c"), {"w-0"});
  both.add_hosts()->set_address("10.0.0.2");
  pods->Run(both);
  EXPECT_EQ(runtime_.started().size(), 1u);
  std::vector<api::PodReport> failures = Failures();
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].pod_uid(), "b");
  EXPECT_EQ(failures[0].status().reason(), "InvalidAssignment");
  EXPECT_THAT(failures[0].status().message(),
              HasSubstr("hosts_table: 7 bytes are not a host table"));
  EXPECT_THAT(failures[1].status().message(),
              HasSubstr("hosts and hosts_table: both set"));
  // A Welcome's pods too; a stop needs no table.
  api::Welcome welcome;
  *welcome.add_pods() = WithTable(Assignment("a"), {"w-0"});
  *welcome.add_pods() = WithTable(Assignment("d"), {"w-0", "w-3"});
  api::PodAssignment stop = Assignment("e");
  stop.set_stop(true);
  stop.set_hosts_table("garbage");
  *welcome.add_pods() = stop;
  pods->Reconcile(welcome);
  EXPECT_THAT(runtime_.HostNames("a"), ElementsAre("w-0"));
  EXPECT_THAT(runtime_.HostNames("d"), ElementsAre("w-0", "w-3"));
  EXPECT_EQ(Failures().size(), 2u);
}

TEST_F(PodSetTest, ARestartInPlaceWaitsForTheOldAttempt) {
  std::unique_ptr<PodSet> pods = NewSet();
  pods->Run(AtAttempt(Assignment("p", 1), 0));
  ASSERT_EQ(runtime_.started().size(), 1u);
  EXPECT_EQ(pods->AttemptRunning("p"), 0);
  // Attempt 1 while attempt 0 runs: it is stopped, not started again yet.
  pods->Run(AtAttempt(Assignment("p", 1), 1));
  EXPECT_EQ(runtime_.List()[0].status.phase(), api::kPodFailed);  // Stopped.
  // The old attempt finished (the fake stops at once): the next tick
  // restarts it under its uid, on its devices.
  pods->FinishRestarts(runtime_.List());
  ASSERT_EQ(runtime_.started().size(), 2u);
  EXPECT_EQ(runtime_.List()[0].status.phase(), api::kPodRunning);
  EXPECT_THAT(GpusOf(runtime_.started()[1]), ElementsAre(0));
  EXPECT_EQ(pods->AttemptRunning("p"), 1);
  // An old or the same attempt again changes nothing.
  pods->Run(AtAttempt(Assignment("p", 1), 1));
  pods->FinishRestarts(runtime_.List());
  EXPECT_EQ(runtime_.started().size(), 2u);
  // The attempt ledger survives the agent.
  pods = NewSet();
  pods->Load();
  EXPECT_EQ(pods->AttemptRunning("p"), 1);
}

TEST_F(PodSetTest, AFinishedPodRestartsInPlaceAtOnce) {
  std::unique_ptr<PodSet> pods = NewSet();
  pods->Run(AtAttempt(Assignment("p"), 0));
  runtime_.Exit("p", 1);
  pods->Run(AtAttempt(Assignment("p"), 1));
  EXPECT_EQ(runtime_.started().size(), 2u);
  EXPECT_EQ(runtime_.List()[0].status.phase(), api::kPodRunning);
}

// A tick reads the attempts, lists the pods, and reports them; a restart in
// place that lands in between (from the stream's thread, or the tick's own
// FinishRestarts) leaves the list with the old attempt's exit. That exit
// must not go with the new attempt: jobsetd would take it as the new
// attempt's failure and restart in place again (AgentE2eTest's restarted
// agent case never saw its attempt 1 start on both pods).
TEST_F(PodSetTest, AnExitListedBeforeARestartInPlaceKeepsItsAttempt) {
  std::unique_ptr<PodSet> pods = NewSet();
  std::vector<api::PodReport> reports;
  auto send = [&](const api::AgentMessage& msg) {
    reports.push_back(msg.pod_update());
    return true;
  };
  pods->Run(AtAttempt(Assignment("p"), 0));
  runtime_.Exit("p", 3);
  reporter_.Report(runtime_.List(), {}, clock_.Now(), pods->Attempts(), send);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].status().phase(), api::kPodFailed);
  EXPECT_EQ(reports[0].in_place_restart_attempt(), 0);
  // The tick's attempts and list; then attempt 1 arrives and starts at once.
  PodReporter::AttemptOf attempts = pods->Attempts();
  std::vector<PodState> listed = runtime_.List();
  pods->Run(AtAttempt(Assignment("p"), 1));
  ASSERT_EQ(runtime_.started().size(), 2u);
  reporter_.Report(listed, {}, clock_.Now(), attempts, send);
  for (const api::PodReport& r : reports) {
    EXPECT_FALSE(r.status().phase() == api::kPodFailed &&
                 r.in_place_restart_attempt() == 1)
        << r.DebugString();
  }
  // A tick whose attempts were read before the restart and whose list came
  // after it stamps attempt 1's start with attempt 0 (jobsetd fences it)...
  reporter_.Report(runtime_.List(), {}, clock_.Now(), attempts, send);
  EXPECT_EQ(reports.back().status().phase(), api::kPodRunning);
  EXPECT_EQ(reports.back().in_place_restart_attempt(), 0);
  // ... so the next tick tells it again, under attempt 1.
  const size_t sent = reports.size();
  reporter_.Report(runtime_.List(), {}, clock_.Now(), pods->Attempts(), send);
  ASSERT_EQ(reports.size(), sent + 1);
  EXPECT_EQ(reports.back().status().phase(), api::kPodRunning);
  EXPECT_EQ(reports.back().in_place_restart_attempt(), 1);
}

TEST(PodSetGpuCapacityTest, Table) {
  api::NodeRegistration node;
  EXPECT_EQ(PodSet::GpuCapacity(node), 0);
  (*node.mutable_capacity())["nvidia.com/gpu"] = "8";
  EXPECT_EQ(PodSet::GpuCapacity(node), 8);
  (*node.mutable_capacity())["nvidia.com/gpu"] = "-1";
  EXPECT_EQ(PodSet::GpuCapacity(node), 0);
}

}  // namespace
}  // namespace jobset::agent
