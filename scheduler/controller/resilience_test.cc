// jobsetd's resilience as the controller runs it (docs/resilience.md): hang
// and straggler detection (progress_checks.cc), goodput in status
// (goodput_tracking.cc), and hot spares replacing a lost host.
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/defaults.h"
#include "api/jobset_builder.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/controller/controller_core.h"
#include "scheduler/records/constants.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::api::JobSet;
using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::SizeIs;

class Fleet : public AgentFleet {
 public:
  void Run(Assignment order) override { running[order.uid()] = order.Pod(); }
  void Stop(const std::string& node, const std::string& uid) override {
    running.erase(uid);
    stopped.push_back({node, uid});
  }
  void Release(const std::string&, const std::string& uid) override {
    running.erase(uid);
  }
  std::map<std::string, api::Pod> running;  // By uid.
  std::vector<std::pair<std::string, std::string>> stopped;
  void Quarantine(const std::string& node,
                  const std::string& evidence) override {
    quarantined.push_back({node, evidence});
  }
  std::vector<std::pair<std::string, std::string>> quarantined;
};

// Progress by pod uid, as the hub's table would hold it.
class FakeProgress : public ProgressSource {
 public:
  std::optional<resilience::PodProgress> Of(
      const std::string& uid) const override {
    auto it = pods.find(uid);
    if (it == pods.end()) return std::nullopt;
    return it->second;
  }
  void Advance(const std::string& uid, int64_t step, absl::Time at,
               double rate = 1) {
    resilience::PodProgress& p = pods[uid];
    p.step = step;
    p.advanced_at = at;
    p.reported_at = at;
    p.steps_per_second = rate;
  }
  std::map<std::string, resilience::PodProgress> pods;
};

class ResilienceTest : public ::testing::Test {
 protected:
  ResilienceTest() { Restart({.progress = &progress_}); }

  // A fresh controller over the same store with `options`.
  void Restart(ControllerCore::Options options) {
    core_ = std::make_unique<ControllerCore>(&store_, &fleet_, &clock_,
                                             std::move(options));
    EXPECT_THAT(core_->Load().status(), IsOk());
    for (int i = 0; i < 2; ++i) {
      NodeInfo n;
      n.name = absl::StrCat("node-", i);
      n.address = absl::StrCat("10.0.0.", i + 1);
      n.allocatable.cpu_millis = 16'000;
      n.allocatable.memory_bytes = int64_t{64} << 30;
      core_->SetNode(n);
    }
  }

  void Submit(JobSet js) {
    api::SetJobSetDefaults(&js);
    js.mutable_metadata()->set_uid("js-uid");
    js.mutable_metadata()->mutable_creation_timestamp()->set_seconds(
        absl::ToUnixSeconds(clock_.Now()));
    const std::string key =
        store::keys::JobSetKey("default", js.metadata().name());
    ASSERT_THAT(
        store_.Commit(store::Batch().Put(key, js.SerializeAsString())).status(),
        IsOk());
    store::Event e;
    e.kv = **store_.Get(key);
    core_->OnJobSetEvent(e);
  }

  // Runs the passes due by now.
  void Settle() {
    for (int i = 0; i < 20; ++i) {
      ASSERT_THAT(core_->Pass(), IsOk());
      std::optional<absl::Time> next = core_->NextWake();
      if (!next || *next > clock_.Now()) return;
    }
    FAIL() << "the controller never settled";
  }

  void RunAll() {
    for (const auto& [uid, pod] : fleet_.running) {
      PodReport r;
      r.node = pod.spec().node_name();
      r.pod_uid = uid;
      r.status.set_phase("Running");
      api::Condition* ready = r.status.add_conditions();
      ready->set_type("Ready");
      ready->set_status("True");
      core_->OnPodReport(r);
    }
  }

  // The stopped pods report they were killed.
  void ConfirmStops() {
    for (const auto& [node, uid] : std::exchange(fleet_.stopped, {})) {
      PodReport r;
      r.node = node;
      r.pod_uid = uid;
      r.status.set_phase("Failed");
      r.status.set_reason("Killed");
      core_->OnPodReport(r);
    }
  }

  const api::JobSet& Get() { return *core_->FindJobSet("default", "train"); }

  store::MemoryStore store_;
  FakeClock clock_;
  Fleet fleet_;
  FakeProgress progress_;
  std::unique_ptr<ControllerCore> core_;
};

JobSet Train(const std::string& timeout, int replicas = 2) {
  JobSetBuilder b("train");
  b.Replicated("workers", replicas)
      .RestartPolicy("workers", "Never")
      .BackoffLimit("workers", 0)
      .FailurePolicy(3);
  if (!timeout.empty()) b.Annotation("jobsetd.io/progress-timeout", timeout);
  return b.Build();
}

TEST_F(ResilienceTest, AStalledAttemptFailsWithProgressStalled) {
  Submit(Train("1m"));
  Settle();
  RunAll();
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(2));
  const std::map<std::string, api::Pod> first = fleet_.running;
  int64_t step = 7;
  for (const auto& [uid, pod] : first)
    progress_.Advance(uid, step++, clock_.Now());

  // Within the timeout: nothing; the controller wakes when it ends.
  clock_.Advance(absl::Seconds(59));
  Settle();
  EXPECT_EQ(Get().status().restarts(), 0);
  std::optional<absl::Time> wake = core_->NextWake();
  ASSERT_TRUE(wake.has_value());
  EXPECT_LE(*wake, clock_.Now() + absl::Seconds(1));

  clock_.Advance(absl::Seconds(1));
  Settle();
  EXPECT_EQ(Get().status().restarts(), 1) << Get().DebugString();
  bool event = false;
  for (const JobSetEvent& e : core_->Events("default", "train")) {
    if (e.reason == "ProgressStalled") {
      event = true;
      EXPECT_THAT(e.message, HasSubstr("at step 7"));
    }
  }
  EXPECT_TRUE(event);
}

TEST_F(ResilienceTest, ProgressKeepsItRunning) {
  Submit(Train("1m"));
  Settle();
  RunAll();
  Settle();
  for (int minute = 1; minute <= 5; ++minute) {
    for (const auto& [uid, pod] : fleet_.running)
      progress_.Advance(uid, minute * 100, clock_.Now());
    clock_.Advance(absl::Seconds(50));
    Settle();
  }
  EXPECT_EQ(Get().status().restarts(), 0);
}

// A trainer that never reports is never judged; nor is a JobSet without
// the annotation.
TEST_F(ResilienceTest, NoStepNoAnnotationNoVerdict) {
  Submit(Train("1m"));
  Settle();
  RunAll();
  Settle();
  clock_.Advance(absl::Minutes(10));
  Settle();
  EXPECT_EQ(Get().status().restarts(), 0);
}

absl::Duration Seconds(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

// A scripted run: 10 s to start, a hang, a restart; the goodput in status
// adds up to the wall time, and the attempts say why the first one ended.
TEST_F(ResilienceTest, GoodputAddsUpAndKeepsTheAttempts) {
  const absl::Time submitted = clock_.Now();
  Submit(Train("1m"));
  Settle();
  clock_.Advance(absl::Seconds(10));
  RunAll();
  Settle();
  for (const auto& [uid, pod] : fleet_.running)
    progress_.Advance(uid, 50, clock_.Now());
  clock_.Advance(absl::Seconds(61));
  Settle();
  ASSERT_EQ(Get().status().restarts(), 1);
  const api::GoodputStatus& g = Get().status().goodput();
  ASSERT_TRUE(g.has_phase_since()) << Get().status().DebugString();
  const absl::Duration accounted =
      Seconds(g.queued()) + Seconds(g.starting()) + Seconds(g.productive()) +
      Seconds(g.stalled()) + Seconds(g.restarting());
  const absl::Time phase_since =
      absl::FromUnixSeconds(g.phase_since().seconds()) +
      absl::Nanoseconds(g.phase_since().nanos());
  EXPECT_EQ(accounted, phase_since - submitted);
  EXPECT_EQ(g.phase(), "Restarting");
  EXPECT_GE(Seconds(g.stalled()), absl::Seconds(60));
  ASSERT_EQ(g.attempts_size(), 2);
  EXPECT_EQ(g.attempts(0).reason(), "ProgressStalled");
  EXPECT_EQ(g.attempts(0).last_step(), 50);
}

// Four pods; the one on `slow_node` runs at 4 steps/s, the others at 10:
// below 0.7 x the median for the 20 s window, it is flagged.
class StragglerTest : public ResilienceTest {
 protected:
  void Start(const std::string& action) {
    JobSet js = Train("", 4);
    (*js.mutable_metadata()
          ->mutable_annotations())["jobsetd.io/straggler-threshold"] = "0.7";
    (*js.mutable_metadata()
          ->mutable_annotations())["jobsetd.io/straggler-window"] = "20s";
    if (!action.empty()) {
      (*js.mutable_metadata()
            ->mutable_annotations())["jobsetd.io/straggler-action"] = action;
    }
    Submit(js);
    Settle();
    RunAll();
    Settle();
    ASSERT_THAT(fleet_.running, SizeIs(4));
    slow_ = fleet_.running.begin()->first;
    slow_node_ = fleet_.running.begin()->second.spec().node_name();
  }
  // Every pod reports its rate now; then `seconds` pass.
  void Report(int seconds) {
    for (const auto& [uid, pod] : fleet_.running)
      progress_.Advance(uid, 100, clock_.Now(), uid == slow_ ? 4 : 10);
    clock_.Advance(absl::Seconds(seconds));
    Settle();
  }
  bool Flagged() {
    for (const api::Pod& pod : core_->Pods("default", "train")) {
      if (pod.metadata().uid() != slow_) continue;
      for (const api::Condition& c : pod.status().conditions())
        if (c.type() == "Straggler" && c.status() == "True") return true;
    }
    return false;
  }
  std::string slow_;
  std::string slow_node_;
};

TEST_F(StragglerTest, ASlowPodIsFlaggedAfterItsWindow) {
  Start("");
  Report(10);  // first seen below at +10 s
  Report(10);
  EXPECT_FALSE(Flagged()) << "within the window";
  Report(10);
  Report(10);  // +40 s: below for the whole window
  EXPECT_TRUE(Flagged());
  EXPECT_EQ(Get().status().restarts(), 0) << "Flag only";
  int events = 0;
  for (const JobSetEvent& e : core_->Events("default", "train"))
    events += e.reason == "Straggler";
  EXPECT_EQ(events, 1);
}

TEST_F(StragglerTest, ReplaceRestartsTheGangWithoutItsNode) {
  Start("Replace");
  for (int i = 0; i < 4; ++i) Report(10);
  EXPECT_EQ(Get().status().restarts(), 1);
  ConfirmStops();
  Settle();
  RunAll();
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(4));
  for (const auto& [uid, pod] : fleet_.running)
    EXPECT_NE(pod.spec().node_name(), slow_node_) << pod.metadata().name();
}

// Slice a: two hosts and a spare; slice b: one host. The spare stays idle
// until a host of the exclusive gang is lost; the replacement keeps slice a
// (without the spare it could run nowhere).
TEST_F(ResilienceTest, AHotSpareReplacesALostHost) {
  for (const auto& [name, labels] :
       std::vector<std::pair<std::string, std::map<std::string, std::string>>>{
           {"a-0", {{"pool", "a"}}},
           {"a-1", {{"pool", "a"}}},
           {"a-2", {{"pool", "a"}, {"jobsetd.io/spare", "true"}}},
           {"b-0", {{"pool", "b"}}}}) {
    NodeInfo n;
    n.name = name;
    n.address = absl::StrCat("10.0.1.", n.name.back() - '0' + 1);
    n.allocatable.cpu_millis = 1'000;
    n.allocatable.memory_bytes = int64_t{8} << 30;
    n.labels.insert(labels.begin(), labels.end());
    core_->SetNode(n);
  }
  // node-0 and node-1 have no pool label: not in any slice.
  JobSetBuilder b("train");
  b.Replicated("workers", 1, /*parallelism=*/2, /*completions=*/2)
      .RestartPolicy("workers", "Never")
      .BackoffLimit("workers", 0)
      .Request("workers", "cpu", "1")
      .FailurePolicy(3)
      .Annotation("alpha.jobset.sigs.k8s.io/exclusive-topology", "pool");
  Submit(b.Build());
  Settle();
  RunAll();
  Settle();
  std::set<std::string> first;
  for (const auto& [uid, pod] : fleet_.running)
    first.insert(pod.spec().node_name());
  ASSERT_THAT(first, SizeIs(2));
  ASSERT_EQ(first, (std::set<std::string>{"a-0", "a-1"}))
      << "a spare takes no first attempt";
  const std::string lost = "a-0";

  core_->LoseNode(lost, "NodeLost", "node stopped heartbeating");
  Settle();
  ConfirmStops();
  Settle();
  ASSERT_EQ(Get().status().restarts(), 1);
  std::set<std::string> second;
  for (const auto& [uid, pod] : fleet_.running)
    second.insert(pod.spec().node_name());
  EXPECT_EQ(second, (std::set<std::string>{"a-1", "a-2"}));
}

// --quarantine_after=2 with exit code 74 a device error: each failure is
// the node's fault (NodeFault: a restart that does not count against
// maxRestarts), and the second, in the next attempt, quarantines the node.
TEST_F(ResilienceTest, ADeviceErrorIsTheNodesFaultAndTwiceQuarantinesIt) {
  Restart({.progress = &progress_,
           .quarantine = {.after = 2,
                          .window = absl::Hours(24),
                          .devices = {.exit_codes = {74}}}});
  Submit(Train("", 2));
  for (int attempt = 0; attempt < 2; ++attempt) {
    Settle();
    RunAll();
    Settle();
    ASSERT_THAT(fleet_.running, SizeIs(2)) << "attempt " << attempt;
    std::string uid;
    for (const auto& [u, pod] : fleet_.running)
      if (pod.spec().node_name() == "node-0") uid = u;
    ASSERT_FALSE(uid.empty());
    PodReport r;
    r.node = "node-0";
    r.pod_uid = uid;
    r.status.set_phase("Failed");
    api::ContainerStatus* c = r.status.add_container_statuses();
    c->set_name("main");
    c->set_flat_state("terminated");
    c->set_exit_code(74);
    core_->OnPodReport(r);
    fleet_.running.erase(uid);
    Settle();
    ConfirmStops();
    Settle();
    EXPECT_EQ(Get().status().restarts(), attempt + 1);
    EXPECT_EQ(Get().status().restarts_count_towards_max(), 0)
        << "a node's fault is not the user's";
  }
  ASSERT_THAT(fleet_.quarantined, SizeIs(1));
  EXPECT_EQ(fleet_.quarantined[0].first, "node-0");
  EXPECT_THAT(fleet_.quarantined[0].second, HasSubstr("exit code 74"));
  bool event = false;
  for (const JobSetEvent& e : core_->Events("default", "train"))
    event |= e.reason == "NodeQuarantined";
  EXPECT_TRUE(event);
}

// Slices a and b: hosts x-0..x-2 and a spare x-3 each. A gang of three
// pods (one Job, exclusive on "pool") runs on one slice's three hosts (the
// other has room for it too) until host x-0 of it is lost.
class HotSpareTest : public ResilienceTest {
 protected:
  HotSpareTest() { RestartWithSlices(); }

  // A fresh controller over the same store (a jobsetd restart) with
  // `quarantine`, and the slices' hosts but `absent` registered.
  void RestartWithSlices(ControllerCore::Options::Quarantine quarantine = {},
                         const std::string& absent = "") {
    Restart({.features = {.restart_job = true, .in_place_restart = true},
             .progress = &progress_,
             .quarantine = quarantine});
    for (const char* name :
         {"a-0", "a-1", "a-2", "a-3", "b-0", "b-1", "b-2", "b-3"}) {
      if (name != absent) core_->SetNode(Host(name));
    }
  }

  static NodeInfo Host(const std::string& name) {
    NodeInfo n;
    n.name = name;
    n.address =
        absl::StrCat("10.0.", name[0] == 'a' ? 1 : 2, ".", name[2] - '0' + 1);
    n.allocatable.cpu_millis = 1'000;
    n.allocatable.memory_bytes = int64_t{8} << 30;
    n.labels["pool"] = name.substr(0, 1);
    if (name[2] == '3') n.labels["jobsetd.io/spare"] = "true";
    return n;
  }

  // The gang, restarting with `strategy`; node-0 and node-1 have no pool
  // label, so it can run in slice a or b only.
  static JobSet Gang(const std::string& strategy) {
    JobSetBuilder b("train");
    b.Replicated("workers", 1, /*parallelism=*/3, /*completions=*/3)
        .RestartPolicy("workers", "Never")
        .BackoffLimit("workers", strategy == "InPlaceRestart"
                                     ? std::numeric_limits<int32_t>::max()
                                     : 0)
        .Request("workers", "cpu", "1")
        .FailurePolicy(3)
        .RestartStrategy(strategy)
        .Annotation("alpha.jobset.sigs.k8s.io/exclusive-topology", "pool");
    return b.Build();
  }

  // Submits the gang and runs it; its pods' nodes by uid. Sets slice_.
  std::map<std::string, std::string> Start(const std::string& strategy) {
    Submit(Gang(strategy));
    Settle();
    RunAll();
    Settle();
    std::map<std::string, std::string> nodes = Nodes();
    if (!nodes.empty()) slice_ = nodes.begin()->second.substr(0, 1);
    return nodes;
  }

  // The names of hosts `indexes` of the gang's slice.
  std::set<std::string> Hosts(std::vector<int> indexes) const {
    std::set<std::string> out;
    for (int i : indexes) out.insert(absl::StrCat(slice_, "-", i));
    return out;
  }

  // The node of every pod the fleet runs, by uid.
  std::map<std::string, std::string> Nodes() {
    std::map<std::string, std::string> nodes;
    for (const auto& [uid, pod] : fleet_.running)
      nodes[uid] = pod.spec().node_name();
    return nodes;
  }

  // Host x-`i` of the gang's slice.
  std::string HostName(int i) const { return absl::StrCat(slice_, "-", i); }

  // The pod the fleet runs on `node`: its uid and the report that it
  // failed with `exit_code`.
  PodReport Failure(const std::string& node, int exit_code) {
    PodReport r;
    r.node = node;
    r.status.set_phase("Failed");
    api::ContainerStatus* c = r.status.add_container_statuses();
    c->set_name("main");
    c->set_flat_state("terminated");
    c->set_exit_code(exit_code);
    for (const auto& [uid, pod] : fleet_.running)
      if (pod.spec().node_name() == node) r.pod_uid = uid;
    return r;
  }

  // Loses host x-0 of the gang's slice (its pods are gone with it).
  void LoseHost0() {
    const std::string lost = absl::StrCat(slice_, "-0");
    core_->LoseNode(lost, "NodeLost", "node stopped heartbeating");
    for (auto it = fleet_.running.begin(); it != fleet_.running.end();) {
      it = it->second.spec().node_name() == lost ? fleet_.running.erase(it)
                                                 : std::next(it);
    }
    Settle();
  }

  static std::string Annotation(const api::Pod& pod, const std::string& key) {
    auto it = pod.metadata().annotations().find(key);
    return it == pod.metadata().annotations().end() ? "" : it->second;
  }

  // Every pod the fleet runs reports Running, at the restart in place
  // attempt it was sent (as its agent would).
  void RunAllInPlace() {
    for (const auto& [uid, pod] : fleet_.running) {
      PodReport r;
      r.node = pod.spec().node_name();
      r.pod_uid = uid;
      r.in_place_restart_attempt =
          std::stoi(Annotation(pod, kInPlaceRestartAttemptKey));
      r.status.set_phase("Running");
      api::Condition* ready = r.status.add_conditions();
      ready->set_type("Ready");
      ready->set_status("True");
      core_->OnPodReport(r);
    }
  }

  std::string slice_;  // "a" or "b"
};

std::set<std::string> Values(const std::map<std::string, std::string>& m) {
  std::set<std::string> out;
  for (const auto& [k, v] : m) out.insert(v);
  return out;
}

// InPlaceRestart: the lost host's pod is made again on the slice's spare;
// the two others restart in place (same uid, same node, attempt 1), and
// none of the three starts before both have stopped attempt 0.
TEST_F(HotSpareTest, InPlaceRestartAroundTheSpare) {
  const std::map<std::string, std::string> first = Start("InPlaceRestart");
  ASSERT_EQ(Values(first), Hosts({0, 1, 2}))
      << "a spare takes no first attempt";
  LoseHost0();
  // The barrier: the survivors are told to stop; nothing new runs yet.
  EXPECT_THAT(fleet_.stopped, SizeIs(2));
  for (const auto& [uid, node] : Nodes())
    EXPECT_TRUE(first.contains(uid)) << "started before the barrier: " << node;
  clock_.Advance(absl::Seconds(5));
  ConfirmStops();
  Settle();
  RunAllInPlace();
  Settle();
  const api::JobSet& js = Get();
  // Goodput counts the restart in place as an attempt: its 5 s at the
  // barrier are Restarting, not Productive.
  const api::GoodputStatus& g = js.status().goodput();
  EXPECT_EQ(g.phase(), "Productive") << g.DebugString();
  EXPECT_EQ(g.restarting().seconds(), 5) << g.DebugString();
  ASSERT_EQ(g.attempts_size(), 2) << g.DebugString();
  EXPECT_EQ(g.attempts(0).reason(), "InPlaceRestart");
  EXPECT_EQ(g.attempts(0).first_failed_node(), *Hosts({0}).begin());
  EXPECT_EQ(g.attempts(1).index(), 1);
  EXPECT_EQ(js.status().restarts(), 0) << "nothing was recreated";
  EXPECT_EQ(js.status().current_in_place_restart_attempt(), 1);
  const std::map<std::string, std::string> second = Nodes();
  EXPECT_EQ(Values(second), Hosts({1, 2, 3}));
  int kept = 0;
  for (const auto& [uid, pod] : fleet_.running) {
    EXPECT_EQ(Annotation(pod, kInPlaceRestartAttemptKey), "1")
        << pod.metadata().name();
    if (first.contains(uid)) {
      ++kept;
      EXPECT_EQ(pod.spec().node_name(), first.at(uid)) << "restarted in place";
    }
  }
  EXPECT_EQ(kept, 2);
  // Every pod of the gang runs attempt 1: the barrier is down for all.
  int running = 0;
  for (const api::Pod& pod : core_->Pods("default", "train")) {
    if (pod.spec().node_name() == *Hosts({0}).begin()) continue;
    EXPECT_EQ(pod.status().phase(), "Running") << pod.metadata().name();
    ++running;
  }
  EXPECT_EQ(running, 3);
}

// Recreate: the whole gang comes back on its slice, with the spare, though
// the other slice has room for all of it.
TEST_F(HotSpareTest, RecreateKeepsTheSliceWithTheSpare) {
  const std::map<std::string, std::string> first = Start("Recreate");
  ASSERT_EQ(Values(first), Hosts({0, 1, 2}));
  LoseHost0();
  ConfirmStops();
  Settle();
  EXPECT_EQ(Get().status().restarts(), 1);
  const std::map<std::string, std::string> second = Nodes();
  EXPECT_EQ(Values(second), Hosts({1, 2, 3}));
  for (const auto& [uid, node] : second) EXPECT_FALSE(first.contains(uid));
}

// A host quarantined under the gang (its device error, the first with
// --quarantine_after=1): the gang restarts (NodeFault) on its slice, with
// the spare in the quarantined host's place.
TEST_F(HotSpareTest, AQuarantinedHostsPlaceGoesToTheSpare) {
  RestartWithSlices(
      {.after = 1, .window = absl::Hours(24), .devices = {.exit_codes = {74}}});
  const std::map<std::string, std::string> first = Start("Recreate");
  ASSERT_EQ(Values(first), Hosts({0, 1, 2}));
  const PodReport failed = Failure(HostName(0), 74);
  ASSERT_FALSE(failed.pod_uid.empty());
  core_->OnPodReport(failed);
  fleet_.running.erase(failed.pod_uid);
  Settle();
  ASSERT_THAT(fleet_.quarantined, SizeIs(1));
  ASSERT_EQ(fleet_.quarantined[0].first, HostName(0));
  // The hub taints the node once the pass is durable.
  NodeInfo tainted = Host(HostName(0));
  tainted.taints.push_back({"jobsetd.io/quarantined", "", {}});
  core_->SetNode(tainted);
  ConfirmStops();
  Settle();
  EXPECT_EQ(Get().status().restarts(), 1);
  EXPECT_EQ(Values(Nodes()), Hosts({1, 2, 3}));
}

// Whether a JobSet may use spares is derived from its pods' last nodes, not
// only kept in memory: after a jobsetd restart the gang that took the spare
// keeps it (and its slice) at its next restart.
TEST_F(HotSpareTest, TheSpareIsKeptAcrossAJobsetdRestart) {
  Start("Recreate");
  LoseHost0();
  ConfirmStops();
  Settle();
  ASSERT_EQ(Values(Nodes()), Hosts({1, 2, 3}));
  // jobsetd restarts; the lost host never comes back.
  fleet_.running.clear();
  RestartWithSlices({}, HostName(0));
  core_->Announce();
  ASSERT_EQ(Values(Nodes()), Hosts({1, 2, 3}));
  const PodReport failed = Failure(HostName(1), 1);
  core_->OnPodReport(failed);
  fleet_.running.erase(failed.pod_uid);
  Settle();
  ConfirmStops();
  Settle();
  EXPECT_EQ(Get().status().restarts(), 2);
  EXPECT_EQ(Values(Nodes()), Hosts({1, 2, 3}));
}

}  // namespace
}  // namespace jobset::scheduler
