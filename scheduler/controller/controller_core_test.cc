// The controller end to end over a MemoryStore, a FakeClock and a fake
// agent fleet: Jobs and pods are created, placed as a gang, run, and restart
// all together; state survives a restart of the controller.
#include "scheduler/controller/controller_core.h"

#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/config.h"
#include "absl/strings/str_cat.h"
#include "api/defaults.h"
#include "api/jobset_builder.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "scheduler/controller/in_place_restart.h"
#include "scheduler/controller/limits.h"
#include "scheduler/metrics.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"
#include "scheduler/records/records.h"
#include "store/forwarding_store.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::api::JobSet;
using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::IsOk;
using ::testing::Contains;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

class FakeFleet : public AgentFleet {
 public:
  void Run(Assignment order) override {
    running[order.uid()] = order.Pod();
    configs[order.uid()] = order.config;
    last_hosts = order.hosts;  // Shared, as the hub keeps it.
    jobs.push_back(order.job);
    ++runs;
  }
  void Stop(const std::string& node, const std::string& uid) override {
    stopped.push_back({node, uid});
    running.erase(uid);
  }
  void Release(const std::string& node, const std::string& uid) override {
    released.push_back({node, uid});
    running.erase(uid);
  }
  std::map<std::string, api::Pod> running;  // By uid.
  std::map<std::string, std::shared_ptr<const api::PodConfig>> configs;
  std::vector<std::pair<std::string, std::string>> released;
  std::vector<std::pair<std::string, std::string>> stopped;
  std::shared_ptr<const SharedHostTable> last_hosts;
  // The Jobs the orders shared (the hub would keep them with the orders).
  std::vector<std::weak_ptr<const api::Job>> jobs;
  int runs = 0;
};

NodeInfo Node(const std::string& name, const std::string& pool, int gpus = 8) {
  NodeInfo n;
  n.name = name;
  n.address = absl::StrCat("10.0.0.", name.back() - '0' + 1);
  n.labels["cloud.google.com/gke-nodepool"] = pool;
  n.allocatable.cpu_millis = 16'000;
  n.allocatable.memory_bytes = int64_t{64} << 30;
  n.allocatable.extended["nvidia.com/gpu"] = gpus;
  return n;
}

// A MemoryStore whose commits can be made to fail, as a full disk would, or
// to conflict, as a JobSet the API keeps changing would.
class FlakyStore : public store::ForwardingStore {
 public:
  FlakyStore() : ForwardingStore(&store_) {}

  absl::StatusOr<int64_t> Commit(const store::Batch& batch) override {
    if (fail_commits) return absl::UnavailableError("disk full");
    if (conflict_commits) return absl::AbortedError("conflict");
    if (fail_after == 0) return absl::UnavailableError("jobsetd died here");
    if (fail_after > 0) --fail_after;
    ++commits;
    return ForwardingStore::Commit(batch);
  }
  // Makes the store refuse batches over `limits`, as etcd does.
  void SetLimits(const store::CommitLimits& limits) {
    store_.SetLimits(limits);
  }

  bool fail_commits = false;
  bool conflict_commits = false;
  // Commits that succeed before every commit fails (-1: no limit).
  int fail_after = -1;
  int commits = 0;

 private:
  store::MemoryStore store_;
};

// `replicas` one-pod Jobs; any pod failing restarts the whole JobSet (up
// to 3 times).
JobSet RestartOnAnyFailure(const std::string& name, int replicas) {
  return JobSetBuilder(name)
      .Replicated("workers", replicas)
      .RestartPolicy("workers", "Never")
      .BackoffLimit("workers", 0)
      .FailurePolicy(3)
      .Build();
}

// The same, restarting in place (upstream's validation: backoffLimit
// MaxInt32, completions == parallelism).
// Its pods ask for `gpus` each ("": none).
JobSet RestartInPlaceOnAnyFailure(const std::string& name, int replicas,
                                  int max_restarts,
                                  const std::string& gpus = "") {
  JobSetBuilder b(name);
  b.Replicated("workers", replicas, /*parallelism=*/1, /*completions=*/1)
      .RestartPolicy("workers", "Never")
      .BackoffLimit("workers", std::numeric_limits<int32_t>::max())
      .FailurePolicy(max_restarts)
      .RestartStrategy("InPlaceRestart");
  if (!gpus.empty()) b.Request("workers", "nvidia.com/gpu", gpus);
  return b.Build();
}

// `replicas` one-pod Jobs of ReplicatedJob "workers", each pod asking for
// `gpus` GPUs.
JobSet GpuWorkers(const std::string& name, int replicas,
                  const std::string& gpus) {
  JobSetBuilder b(name);
  b.Replicated("workers", replicas).Request("workers", "nvidia.com/gpu", gpus);
  return b.Build();
}

std::string Annotation(const api::Pod& pod, const std::string& key) {
  auto it = pod.metadata().annotations().find(key);
  return it == pod.metadata().annotations().end() ? "" : it->second;
}

std::string Env(const api::Pod& pod, const std::string& name) {
  for (const api::EnvVar& var : pod.spec().containers(0).env()) {
    if (var.name() == name) return var.value();
  }
  return "";
}

class ControllerCoreTest : public ::testing::Test {
 protected:
  ControllerCoreTest() { Restart(); }

  // A fresh controller over the same store (a jobsetd restart), with
  // `options` (both features on unless they say otherwise).
  void Restart(ControllerCore::Options options = {
                   .features = {.restart_job = true,
                                .in_place_restart = true}}) {
    core_ =
        std::make_unique<ControllerCore>(&store_, &fleet_, &clock_, options);
    ASSERT_THAT(core_->Load().status(), IsOk());
    for (int i = 0; i < 4; ++i)
      core_->SetNode(Node(absl::StrCat("node-", i), "pool-a"));
  }

  // Stores `js` as the API would and tells the controller.
  void Submit(JobSet js) {
    api::SetJobSetDefaults(&js);
    js.mutable_metadata()->set_uid("js-uid");
    js.mutable_metadata()->mutable_creation_timestamp()->set_seconds(1);
    const std::string key =
        store::keys::JobSetKey("default", js.metadata().name());
    ASSERT_THAT(
        store_.Commit(store::Batch().Put(key, js.SerializeAsString())).status(),
        IsOk());
    Notify(key);
  }

  // Deletes JobSet `name` as the API would and tells the controller.
  void DeleteThroughApi(const std::string& name) {
    const std::string key = store::keys::JobSetKey("default", name);
    ASSERT_THAT(store_.Commit(store::Batch().Delete(key)).status(), IsOk());
    Notify(key);
  }

  void Notify(const std::string& key) {
    auto kv = store_.Get(key);
    ASSERT_TRUE(kv.ok());
    store::Event e;
    if (kv->has_value()) {
      e.kv = **kv;
    } else {
      e.type = store::Event::Type::kDelete;
      e.kv.key = key;
    }
    core_->OnJobSetEvent(e);
  }

  // Runs passes until the controller has nothing left to do now.
  void Settle() {
    for (int i = 0; i < 20; ++i) {
      ASSERT_THAT(core_->Pass(), IsOk());
      std::optional<absl::Time> next = core_->NextWake();
      if (!next || *next > clock_.Now()) return;
    }
    FAIL() << "the controller never settled";
  }

  // Reports every running pod of `rjob` ("" for all) with `phase`.
  void ReportAll(const std::string& phase, int exit_code = 0, bool ready = true,
                 const std::string& rjob = "") {
    std::vector<api::Pod> pods;
    for (const auto& [uid, pod] : fleet_.running) pods.push_back(pod);
    for (const api::Pod& pod : pods) {
      if (!rjob.empty() &&
          pod.metadata().labels().at(kReplicatedJobNameKey) != rjob) {
        continue;
      }
      Report(pod, phase, exit_code, ready);
    }
  }

  void Report(const api::Pod& pod, const std::string& phase, int exit_code = 0,
              bool ready = true) {
    PodReport r;
    r.node = pod.spec().node_name();
    r.pod_uid = pod.metadata().uid();
    r.status.set_phase(phase);
    api::ContainerStatus* c = r.status.add_container_statuses();
    c->set_name("main");
    c->set_flat_state(phase == "Running" ? "running" : "terminated");
    c->set_exit_code(exit_code);
    if (phase == "Running" && ready) {
      api::Condition* cond = r.status.add_conditions();
      cond->set_type("Ready");
      cond->set_status("True");
    }
    core_->OnPodReport(r);
    if (phase != "Running") fleet_.running.erase(pod.metadata().uid());
  }

  // Confirms the stop orders: each stopped pod reports it was killed.
  void ConfirmStops() {
    for (const auto& [node, uid] : fleet_.stopped) ConfirmStop(node, uid);
    fleet_.stopped.clear();
  }

  // Pod `uid` on `node` reports it was killed.
  void ConfirmStop(const std::string& node, const std::string& uid) {
    PodReport r;
    r.node = node;
    r.pod_uid = uid;
    r.status.set_phase("Failed");
    r.status.set_reason("Killed");
    core_->OnPodReport(r);
  }

  // The uids the fleet was told to stop.
  std::set<std::string> StoppedUids() const {
    std::set<std::string> uids;
    for (const auto& [node, uid] : fleet_.stopped) uids.insert(uid);
    return uids;
  }

  const api::JobSet& Get(const std::string& name) {
    const api::JobSet* js = core_->FindJobSet("default", name);
    EXPECT_NE(js, nullptr);
    return *js;
  }

  FlakyStore store_;
  FakeClock clock_;
  FakeFleet fleet_;
  std::unique_ptr<ControllerCore> core_;
};

TEST_F(ControllerCoreTest, RunsAJobSetToCompletion) {
  Submit(JobSetBuilder("train")
             .Replicated("leader", 1)
             .Replicated("workers", 2, 2, 2)
             .Build());
  Settle();
  // 1 leader pod + 2 worker Jobs x 2 pods, all placed and started.
  ASSERT_THAT(fleet_.running, SizeIs(5));
  // Agents get each pod bound, with its node's address; the controller
  // records it scheduled.
  const api::Pod& any = fleet_.running.begin()->second;
  EXPECT_FALSE(any.spec().node_name().empty());
  EXPECT_FALSE(any.status().host_ip().empty());
  for (const api::Pod& pod : core_->Pods("default", "train")) {
    EXPECT_TRUE(IsConditionTrue(pod.status().conditions(), "PodScheduled"))
        << pod.metadata().name();
  }
  // The host table covers every pod of the attempt, with the subdomain.
  ASSERT_THAT(fleet_.last_hosts->entries(), SizeIs(5));
  bool found = false;
  for (const HostEntry& e : fleet_.last_hosts->entries()) {
    for (const std::string& n : e.names)
      found |= n == "train-workers-1-1.train";
  }
  EXPECT_TRUE(found);

  // Environment resolved before the pod reaches the agent.
  for (const auto& [uid, pod] : fleet_.running) {
    if (pod.spec().hostname() != "train-workers-1-1") continue;
    std::map<std::string, std::string> env;
    for (const api::EnvVar& v : pod.spec().containers(0).env())
      env[v.name()] = v.value();
    EXPECT_EQ(env[kEnvJobSetName], "train");
    EXPECT_EQ(env[kEnvReplicatedJob], "workers");
    EXPECT_EQ(env[kEnvJobIndex], "1");
    EXPECT_EQ(env[kEnvJobGlobalIndex], "2");
    EXPECT_EQ(env[kEnvRestartAttempt], "0");
    EXPECT_EQ(env[kEnvCompletionIndex], "1");
    EXPECT_EQ(pod.metadata().labels().at(kCompletionIndexKey), "1");
  }

  ReportAll("Running");
  Settle();
  EXPECT_EQ(Get("train").status().replicated_jobs_status(1).ready(), 2);
  ReportAll("Succeeded");
  Settle();
  EXPECT_EQ(Get("train").status().terminal_state(), "Completed");
  EXPECT_THAT(core_->Events("default", "train"),
              Contains(Field(&JobSetEvent::reason, "AllJobsCompleted")));
  // Status is durable.
  auto stored = store_.Get(store::keys::JobSetKey("default", "train"));
  ASSERT_TRUE(stored.ok() && stored->has_value());
  api::JobSet js;
  ASSERT_TRUE(js.ParseFromString((*stored)->value));
  EXPECT_EQ(js.status().terminal_state(), "Completed");
}

// A finished Job's copy for its orders (its shape) is freed once none of
// its pods is on a node: a finished JobSet holds its Jobs once.
TEST_F(ControllerCoreTest, AFinishedJobKeepsNoCopyForItsOrders) {
  Submit(JobSetBuilder("done").Replicated("workers", 2, 2, 2).Build());
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(4));
  ASSERT_THAT(fleet_.jobs, SizeIs(4));
  auto held = [&] {
    int n = 0;
    for (const std::weak_ptr<const api::Job>& job : fleet_.jobs)
      n += !job.expired();
    return n;
  };
  EXPECT_EQ(held(), 4);  // The controller keeps them while pods run.
  ReportAll("Succeeded");
  Settle();
  ASSERT_EQ(Get("done").status().terminal_state(), "Completed");
  EXPECT_EQ(held(), 0);
  // Nothing else changed: the pods still read back whole from the Jobs.
  EXPECT_THAT(core_->Pods("default", "done"), SizeIs(4));
}

// A pod's conditions change when its node says they did (its timeline),
// unless that is not a time of the last day by jobsetd's clock.
TEST_F(ControllerCoreTest, PodConditionsKeepTheNodesTransitionTimes) {
  Submit(JobSetBuilder("timeline").Replicated("workers", 2).Build());
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(2));
  const absl::Time now = clock_.Now();
  std::vector<api::Pod> pods;
  for (const auto& [uid, pod] : fleet_.running) pods.push_back(pod);
  const absl::Time told[] = {now - absl::Seconds(5), now + absl::Hours(1)};
  for (int i = 0; i < 2; ++i) {
    PodReport r;
    r.node = pods[i].spec().node_name();
    r.pod_uid = pods[i].metadata().uid();
    r.status.set_phase("Running");
    api::ContainerStatus* c = r.status.add_container_statuses();
    c->set_name("main");
    c->set_flat_state("running");
    api::Condition* cond = r.status.add_conditions();
    cond->set_type("Initialized");
    cond->set_status("True");
    cond->mutable_last_transition_time()->set_seconds(
        absl::ToUnixSeconds(told[i]));
    core_->OnPodReport(r);
  }
  Settle();
  std::map<std::string, absl::Time> initialized;
  for (const api::Pod& pod : core_->Pods("default", "timeline")) {
    const api::Condition* c =
        FindCondition(pod.status().conditions(), "Initialized");
    ASSERT_NE(c, nullptr) << pod.metadata().name();
    initialized[pod.metadata().uid()] = TransitionTime(*c);
  }
  EXPECT_EQ(initialized[pods[0].metadata().uid()],
            absl::FromUnixSeconds(absl::ToUnixSeconds(told[0])));
  // In the future: jobsetd's own time instead.
  EXPECT_EQ(initialized[pods[1].metadata().uid()],
            absl::FromUnixSeconds(absl::ToUnixSeconds(now)));
}

TEST_F(ControllerCoreTest, PodEventsBecomeTheJobSetsEventsOncePerPass) {
  Submit(JobSetBuilder("train").Replicated("workers", 1, 3, 3).Build());
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(3));
  api::PodEvent pulling;
  pulling.set_type("Normal");
  pulling.set_reason("Pulling");
  pulling.set_message("Pulling image \"busybox:1\"");
  api::PodEvent failed;
  failed.set_type("Warning");
  failed.set_reason("Failed");
  failed.set_message("Failed to pull image \"busybox:1\": not found");
  std::string first;
  for (const auto& [uid, pod] : fleet_.running) {
    if (first.empty()) first = pod.metadata().name();
    PodReport r;
    r.node = pod.spec().node_name();
    r.pod_uid = uid;
    r.status.set_phase("Pending");
    r.events = {pulling, failed};
    core_->OnPodReport(r);
  }
  Settle();
  const std::vector<JobSetEvent> events = core_->Events("default", "train");
  EXPECT_THAT(events, Contains(JobSetEvent{
                          "Normal", "Pulling",
                          absl::StrCat("pod ", first,
                                       ": Pulling image \"busybox:1\" (and 2 "
                                       "more pods)")}));
  EXPECT_THAT(events,
              Contains(JobSetEvent{
                  "Warning", "Failed",
                  absl::StrCat("pod ", first,
                               ": Failed to pull image \"busybox:1\": not "
                               "found (and 2 more pods)")}));
  // Sent once: a pass later, nothing new.
  Settle();
  EXPECT_EQ(core_->Events("default", "train"), events);
}

TEST_F(ControllerCoreTest, NoPodIsLaunchedBeforeItsCommitIsDurable) {
  Submit(JobSetBuilder("train").Replicated("workers", 2, 2, 2).Build());
  store_.fail_commits = true;
  EXPECT_EQ(core_->Pass().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(fleet_.runs, 0);
  // Memory is now ahead of the store: jobsetd rebuilds from what is durable.
  store_.fail_commits = false;
  Restart();
  Settle();
  EXPECT_THAT(fleet_.running, SizeIs(4));
}

TEST_F(ControllerCoreTest, ACommitThatKeepsConflictingTellsTheFleetNothing) {
  Submit(RestartOnAnyFailure("train", 2));
  Settle();
  ReportAll("Running");
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(2));
  const int runs = fleet_.runs;
  // A pod fails and the restart's commits conflict every time: no stop and
  // no launch may go out for a batch the store never wrote.
  const api::Pod failed = fleet_.running.begin()->second;
  Report(failed, "Failed", 1);
  store_.conflict_commits = true;
  EXPECT_EQ(core_->Pass().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(fleet_.runs, runs);
  EXPECT_THAT(fleet_.stopped, IsEmpty());
  EXPECT_THAT(fleet_.released, IsEmpty());
  // jobsetd rebuilds from what is durable, the agent reports the exit
  // again, and the restart happens.
  store_.conflict_commits = false;
  Restart();
  Settle();
  Report(failed, "Failed", 1);
  Settle();
  EXPECT_EQ(Get("train").status().restarts(), 1);
}

// Issue 19: a JobSet with more pods per attempt than the limit (stored
// before the limit existed) fails with the reason instead of being expanded
// (replicas: 2000000000 used to exhaust memory); the others run.
TEST_F(ControllerCoreTest, AJobSetOverThePodLimitFailsInsteadOfExpanding) {
  Submit(JobSetBuilder("huge").Replicated("workers", 2'000'000'000).Build());
  Submit(JobSetBuilder("fine").Replicated("workers", 2).Build());
  Settle();
  const api::JobSet& huge = Get("huge");
  EXPECT_EQ(huge.status().terminal_state(), "Failed");
  ASSERT_THAT(huge.status().conditions(),
              Contains(::testing::Property(&api::Condition::reason,
                                           kReasonTooManyPods)));
  for (const api::Condition& c : huge.status().conditions()) {
    if (c.type() != "Failed") continue;
    EXPECT_EQ(c.status(), "True");
    EXPECT_THAT(c.message(), HasSubstr("2000000000 pods per attempt"));
    EXPECT_THAT(c.message(), HasSubstr("limit of 100000"));
  }
  EXPECT_THAT(core_->Jobs("default", "huge"), IsEmpty());
  EXPECT_THAT(core_->Events("default", "huge"),
              Contains(Field(&JobSetEvent::reason, kReasonTooManyPods)));
  EXPECT_THAT(fleet_.running, SizeIs(2));
  // The failure is durable.
  auto stored = store_.Get(store::keys::JobSetKey("default", "huge"));
  ASSERT_TRUE(stored.ok() && stored->has_value());
  api::JobSet js;
  ASSERT_TRUE(js.ParseFromString((*stored)->value));
  EXPECT_EQ(js.status().terminal_state(), "Failed");
}

TEST_F(ControllerCoreTest, ALowerPodLimitIsAnOption) {
  Restart({.features = {.restart_job = true, .in_place_restart = true},
           .max_pods_per_attempt = 3});
  Submit(JobSetBuilder("four").Replicated("workers", 2, 2, 2).Build());
  Submit(JobSetBuilder("three").Replicated("workers", 3).Build());
  Settle();
  EXPECT_EQ(Get("four").status().terminal_state(), "Failed");
  EXPECT_EQ(Get("three").status().terminal_state(), "");
  EXPECT_THAT(fleet_.running, SizeIs(3));
}

TEST_F(ControllerCoreTest, RestartsAllPodsOnTheSameNodesAndFencesStaleReports) {
  Submit(RestartOnAnyFailure("train", 4));
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(4));
  std::map<std::string, std::string> node_of;  // hostname -> node
  std::vector<api::Pod> old;
  for (const auto& [uid, pod] : fleet_.running) {
    node_of[pod.spec().hostname()] = pod.spec().node_name();
    old.push_back(pod);
  }
  ReportAll("Running");
  Settle();

  // One pod fails: the whole attempt is stopped in one batch.
  Report(old[2], "Failed", 1);
  Settle();
  EXPECT_EQ(Get("train").status().restarts(), 1);
  EXPECT_THAT(fleet_.stopped, SizeIs(3));
  // Recreate: the failed pod's Job is gone at once and the others' as their
  // pods stop, one by one; the new attempt starts whole once the last one
  // is gone, never a part of it beside the old attempt's pods.
  EXPECT_THAT(fleet_.running, IsEmpty());
  while (fleet_.stopped.size() > 1) {
    const auto [node, uid] = fleet_.stopped.back();
    fleet_.stopped.pop_back();
    ConfirmStop(node, uid);
    Settle();
    EXPECT_THAT(fleet_.running, IsEmpty()) << fleet_.stopped.size();
  }
  ConfirmStops();
  Settle();
  // The new attempt runs on the same nodes (sticky), labelled attempt 1.
  ASSERT_THAT(fleet_.running, SizeIs(4));
  std::set<std::string> old_uids;
  for (const api::Pod& pod : old) old_uids.insert(pod.metadata().uid());
  for (const auto& [uid, pod] : fleet_.running) {
    EXPECT_EQ(pod.metadata().labels().at(kRestartAttemptKey), "1");
    EXPECT_EQ(pod.spec().node_name(), node_of[pod.spec().hostname()]);
    EXPECT_FALSE(old_uids.contains(uid));
  }
  // New pods, with nothing of the old attempt's status left on them.
  for (const api::Pod& pod : core_->Pods("default", "train")) {
    if (pod.metadata().labels().at(kRestartAttemptKey) != "1") continue;
    EXPECT_EQ(pod.status().phase(), "Pending");
    EXPECT_THAT(pod.status().container_statuses(), IsEmpty());
    EXPECT_FALSE(pod.metadata().has_deletion_timestamp());
    EXPECT_FALSE(IsConditionTrue(pod.status().conditions(), "Ready"));
  }
  // A late report about an old pod changes nothing.
  const int64_t stale = core_->stale_reports();
  Report(old[0], "Failed", 137);
  Settle();
  EXPECT_EQ(core_->stale_reports(), stale + 1);
  EXPECT_EQ(Get("train").status().restarts(), 1);
  EXPECT_THAT(fleet_.running, SizeIs(4));
}

TEST_F(ControllerCoreTest, RestartsInPlaceBehindABarrier) {
  Submit(RestartInPlaceOnAnyFailure("train", 4, 3));
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(4));
  std::map<std::string, api::Pod> old = fleet_.running;  // By uid.
  for (const auto& [uid, pod] : old) {
    EXPECT_EQ(Annotation(pod, kInPlaceRestartAttemptKey), "0");
    EXPECT_EQ(Env(pod, "JOBSET_IN_PLACE_RESTART_ATTEMPT"), "0");
    // No container restarts alone: the JobSet restarts together.
    EXPECT_EQ(pod.spec().restart_policy(), "Never");
  }
  ReportAll("Running");
  Settle();
  EXPECT_EQ(Get("train").status().current_in_place_restart_attempt(), 0);

  // One pod fails: every other pod is told to stop, none to start.
  const api::Pod failed = std::next(old.begin(), 2)->second;
  const int runs = fleet_.runs;
  Report(failed, "Failed", 1);
  Settle();
  EXPECT_THAT(fleet_.stopped, SizeIs(3));
  EXPECT_FALSE(StoppedUids().contains(failed.metadata().uid()));
  EXPECT_EQ(fleet_.runs, runs);
  {
    const api::JobSet& js = Get("train");
    EXPECT_EQ(js.status().restarts(), 0);  // Nothing was recreated.
    EXPECT_EQ(js.status().current_in_place_restart_attempt(), 0);
    EXPECT_EQ(js.status().previous_in_place_restart_attempt(), 0);
    EXPECT_TRUE(js.status().terminal_state().empty());
  }
  // The failed pod waits at the barrier; it was not replaced.
  std::vector<api::Pod> pods = core_->Pods("default", "train");
  ASSERT_THAT(pods, SizeIs(4));
  for (const api::Pod& pod : pods) {
    EXPECT_TRUE(old.contains(pod.metadata().uid()));
    if (pod.metadata().uid() != failed.metadata().uid()) continue;
    EXPECT_EQ(pod.status().phase(), "Pending");
    ASSERT_THAT(pod.status().container_statuses(), SizeIs(1));
    EXPECT_EQ(pod.status().container_statuses(0).reason(),
              kReasonInPlaceRestarting);
    EXPECT_EQ(pod.status().container_statuses(0).restart_count(), 1);
  }

  // Two of three stops confirmed: the barrier still holds.
  std::vector<std::pair<std::string, std::string>> stops = fleet_.stopped;
  fleet_.stopped = {stops[0], stops[1]};
  ConfirmStops();
  Settle();
  EXPECT_EQ(fleet_.runs, runs);
  EXPECT_EQ(Get("train").status().current_in_place_restart_attempt(), 0);

  // The last one: every pod starts again, where it was, as itself.
  fleet_.stopped = {stops[2]};
  ConfirmStops();
  Settle();
  EXPECT_EQ(Get("train").status().current_in_place_restart_attempt(), 1);
  ASSERT_THAT(fleet_.running, SizeIs(4));
  for (const auto& [uid, pod] : fleet_.running) {
    ASSERT_TRUE(old.contains(uid));
    EXPECT_EQ(pod.metadata().name(), old[uid].metadata().name());
    EXPECT_EQ(pod.spec().node_name(), old[uid].spec().node_name());
    EXPECT_EQ(Annotation(pod, kInPlaceRestartAttemptKey), "1");
    EXPECT_EQ(Env(pod, "JOBSET_IN_PLACE_RESTART_ATTEMPT"), "1");
    EXPECT_EQ(pod.metadata().labels().at(kRestartAttemptKey), "0");
  }

  // A report of the attempt left behind (resent at a reconnect) is stale.
  const int64_t stale = core_->stale_reports();
  Report(failed, "Failed", 1);
  Settle();
  EXPECT_EQ(core_->stale_reports(), stale + 1);
  EXPECT_EQ(Get("train").status().current_in_place_restart_attempt(), 1);

  // The new attempt's reports count its restart.
  PodReport r;
  r.node = failed.spec().node_name();
  r.pod_uid = failed.metadata().uid();
  r.in_place_restart_attempt = 1;
  r.status.set_phase("Running");
  r.status.add_container_statuses()->set_name("main");
  core_->OnPodReport(r);
  Settle();
  for (const api::Pod& pod : core_->Pods("default", "train")) {
    if (pod.metadata().uid() != failed.metadata().uid()) continue;
    EXPECT_EQ(pod.status().phase(), "Running");
    EXPECT_EQ(pod.status().container_statuses(0).restart_count(), 1);
  }
}

// A pod that stopped for a restart in place keeps its node: placement's walk
// skips only Jobs with no pod on a node, and a pod waiting at the barrier is
// on its node again.
TEST_F(ControllerCoreTest, PodsAtARestartInPlacesBarrierKeepTheirNodes) {
  Submit(RestartInPlaceOnAnyFailure("train", 4, 3, "8"));
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(4));
  ReportAll("Running");
  Settle();
  Report(fleet_.running.begin()->second, "Failed", 1);
  Settle();
  ASSERT_THAT(fleet_.stopped, SizeIs(3));
  ConfirmStops();
  // Every pod is stopped and waits at the barrier on its node, with the
  // squatter asking for a whole node in the same pass.
  Submit(GpuWorkers("squatter", 1, "8"));
  Settle();
  EXPECT_EQ(Get("train").status().current_in_place_restart_attempt(), 1);
  std::vector<api::Pod> pods = core_->Pods("default", "squatter");
  ASSERT_THAT(pods, SizeIs(1));
  EXPECT_TRUE(pods[0].spec().node_name().empty());
  // The gang is deleted and its pods stop: the squatter gets a node.
  DeleteThroughApi("train");
  Settle();
  ConfirmStops();
  Settle();
  pods = core_->Pods("default", "squatter");
  ASSERT_THAT(pods, SizeIs(1));
  EXPECT_FALSE(pods[0].spec().node_name().empty());
}

TEST_F(ControllerCoreTest, RestartsInPlaceUntilMaxRestartsThenFails) {
  Submit(RestartInPlaceOnAnyFailure("train", 2, 1));
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(2));
  // Attempt 1 is within maxRestarts 1.
  Report(fleet_.running.begin()->second, "Failed", 1);
  Settle();
  ConfirmStops();
  Settle();
  ASSERT_EQ(Get("train").status().current_in_place_restart_attempt(), 1);
  ASSERT_THAT(fleet_.running, SizeIs(2));
  // A failure of attempt 1 would need a second: the JobSet fails.
  PodReport r;
  const api::Pod pod = fleet_.running.begin()->second;
  r.node = pod.spec().node_name();
  r.pod_uid = pod.metadata().uid();
  r.in_place_restart_attempt = 1;
  r.status.set_phase("Failed");
  core_->OnPodReport(r);
  Settle();
  const api::JobSet& js = Get("train");
  EXPECT_EQ(js.status().terminal_state(), "Failed");
  const api::Condition* failed =
      FindCondition(js.status().conditions(), "Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->reason(), "ReachedMaxRestarts");
  EXPECT_EQ(failed->message(),
            "jobset failed due to reaching max number of restarts");
}

TEST_F(ControllerCoreTest, ARestartInPlaceCarriesOnAcrossAJobsetdRestart) {
  Submit(RestartInPlaceOnAnyFailure("train", 3, 3));
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(3));
  Report(fleet_.running.begin()->second, "Failed", 1);
  Settle();
  ASSERT_THAT(fleet_.stopped, SizeIs(2));
  const std::vector<std::pair<std::string, std::string>> stops = fleet_.stopped;
  fleet_.stopped = {stops[0]};
  ConfirmStops();
  Settle();
  // jobsetd restarts with one pod still stopping.
  fleet_.stopped.clear();
  fleet_.running.clear();
  Restart();
  core_->Announce();
  // The agents are told the attempt their pods run, and the pod still
  // stopping is told to stop again; nothing starts at attempt 1.
  EXPECT_THAT(fleet_.stopped, ElementsAre(stops[1]));
  for (const auto& [uid, pod] : fleet_.running)
    EXPECT_EQ(Annotation(pod, kInPlaceRestartAttemptKey), "0");
  ConfirmStops();
  Settle();
  EXPECT_EQ(Get("train").status().current_in_place_restart_attempt(), 1);
  ASSERT_THAT(fleet_.running, SizeIs(3));
  for (const auto& [uid, pod] : fleet_.running)
    EXPECT_EQ(Annotation(pod, kInPlaceRestartAttemptKey), "1");
}

TEST_F(ControllerCoreTest, PlacesAGangWhollyOrNotAtAll) {
  Submit(GpuWorkers("big", 5, "8"));
  Settle();
  // Five 8-GPU pods, four 8-GPU nodes: nothing runs.
  EXPECT_THAT(fleet_.running, IsEmpty());
  std::vector<api::Pod> pods = core_->Pods("default", "big");
  ASSERT_THAT(pods, SizeIs(5));
  const api::Condition* scheduled =
      FindCondition(pods[0].status().conditions(), "PodScheduled");
  ASSERT_NE(scheduled, nullptr);
  EXPECT_EQ(scheduled->status(), "False");
  EXPECT_EQ(scheduled->reason(), "Unschedulable");
  EXPECT_THAT(scheduled->message(), HasSubstr("nvidia.com/gpu"));
  EXPECT_THAT(core_->Events("default", "big"),
              Contains(Field(&JobSetEvent::reason, "FailedScheduling")));
  // A fifth node arrives: the whole gang starts, each pod PodScheduled=True
  // (first among its conditions, as the kubelet lists them) from now on.
  clock_.Advance(absl::Seconds(30));
  core_->SetNode(Node("node-4", "pool-b"));
  Settle();
  EXPECT_THAT(fleet_.running, SizeIs(5));
  for (const api::Pod& pod : core_->Pods("default", "big")) {
    ASSERT_THAT(pod.status().conditions(), SizeIs(1)) << pod.DebugString();
    const api::Condition& c = pod.status().conditions(0);
    EXPECT_EQ(c.type(), "PodScheduled");
    EXPECT_EQ(c.status(), "True");
    EXPECT_EQ(c.reason(), "");
    EXPECT_EQ(c.last_transition_time().seconds(),
              absl::ToUnixSeconds(clock_.Now()));
  }
  // Running and Ready: PodScheduled stays first.
  ReportAll("Running");
  Settle();
  for (const api::Pod& pod : core_->Pods("default", "big")) {
    ASSERT_THAT(pod.status().conditions(), SizeIs(2)) << pod.DebugString();
    EXPECT_EQ(pod.status().conditions(0).type(), "PodScheduled");
    EXPECT_EQ(pod.status().conditions(1).type(), "Ready");
  }
}

// A gang still waiting for room when jobsetd restarts waits on: the
// restarted controller places it once room appears, as the first one would.
TEST_F(ControllerCoreTest, AGangWaitingForRoomIsPlacedAfterARestart) {
  Submit(GpuWorkers("big", 5, "8"));
  Settle();
  EXPECT_THAT(fleet_.running, IsEmpty());
  Restart();
  Settle();
  EXPECT_THAT(fleet_.running, IsEmpty());
  clock_.Advance(absl::Seconds(30));
  core_->SetNode(Node("node-4", "pool-b"));
  Settle();
  EXPECT_THAT(fleet_.running, SizeIs(5));
}

// Jobs of one pod spec share their requirements (placement evaluates the
// template once); Jobs of another spec must not get them.
TEST_F(ControllerCoreTest, EachPodSpecIsFittedByItsOwnRequirements) {
  JobSetBuilder b("mixed");
  b.Replicated("gpu", 4).Request("gpu", "nvidia.com/gpu", "8");
  b.Replicated("cpu", 4).Request("cpu", "cpu", "1");
  Submit(b.Build());
  Settle();
  // Four 8-GPU pods take every node's GPUs; the CPU pods fit beside them.
  ASSERT_THAT(fleet_.running, SizeIs(8));
  std::map<std::string, int> gpu_pods_on;
  for (const auto& [uid, pod] : fleet_.running) {
    if (pod.metadata().labels().at(kReplicatedJobNameKey) == "gpu")
      ++gpu_pods_on[pod.spec().node_name()];
  }
  EXPECT_THAT(gpu_pods_on, SizeIs(4));
  for (const auto& [node, count] : gpu_pods_on) EXPECT_EQ(count, 1) << node;
}

// Snapshots reuse the nodes' records: a node changed since the last one,
// and the last one's usage, must not leak into the next.
TEST_F(ControllerCoreTest, EachPlacementSeesTheNodesAsTheyAreNow) {
  Submit(GpuWorkers("a", 1, "8"));
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(1));
  const std::string taken = fleet_.running.begin()->second.spec().node_name();
  std::vector<std::string> free;
  for (int i = 0; i < 4; ++i) {
    const std::string name = absl::StrCat("node-", i);
    if (name != taken) free.push_back(name);
  }
  // Cordon every free node but the last.
  for (size_t i = 0; i + 1 < free.size(); ++i) {
    NodeInfo node = Node(free[i], "pool-a");
    node.cordoned = true;
    core_->SetNode(node);
  }
  Submit(GpuWorkers("b", 1, "8"));
  Settle();
  std::vector<api::Pod> pods = core_->Pods("default", "b");
  ASSERT_THAT(pods, SizeIs(1));
  EXPECT_EQ(pods[0].spec().node_name(), free.back());
  // The last node lost: a third gang finds no room (its usage and the
  // loss are both seen).
  core_->LoseNode(free.back(), "NodeLost", "gone");
  Submit(GpuWorkers("c", 1, "8"));
  Settle();
  pods = core_->Pods("default", "c");
  ASSERT_THAT(pods, SizeIs(1));
  EXPECT_TRUE(pods[0].spec().node_name().empty());
}

// Gangs placed in one pass see what those before them took: capacity and
// exclusive domains (the pass adds each placed gang to its snapshot rather
// than walking every pod again).
TEST_F(ControllerCoreTest, GangsPlacedInOnePassSeeEachOthersPods) {
  core_->SetNode(Node("node-2", "pool-b"));
  core_->SetNode(Node("node-3", "pool-b"));
  auto exclusive = [](const std::string& name) {
    JobSetBuilder b(name);
    b.Replicated("workers", 1, 2, 2).Request("workers", "nvidia.com/gpu", "1");
    b.Annotation("alpha.jobset.sigs.k8s.io/exclusive-topology",
                 "cloud.google.com/gke-nodepool");
    return b.Build();
  };
  Submit(exclusive("a"));
  Submit(exclusive("b"));
  Submit(exclusive("c"));
  Submit(GpuWorkers("whole", 1, "8"));
  ASSERT_THAT(core_->Pass(), IsOk());
  std::map<std::string, std::set<std::string>> pools;
  for (const std::string name : {"a", "b", "c", "whole"}) {
    for (const api::Pod& pod : core_->Pods("default", name)) {
      const std::string& node = pod.spec().node_name();
      if (!node.empty()) pools[name].insert(node < "node-2" ? "a" : "b");
    }
  }
  // a and b each hold a pool; c finds both held, and no node has 8 GPUs
  // left for the whole-node pod.
  ASSERT_THAT(pools, SizeIs(2));
  EXPECT_THAT(pools["a"], SizeIs(1));
  EXPECT_THAT(pools["b"], SizeIs(1));
  EXPECT_NE(pools["a"], pools["b"]);
  EXPECT_THAT(fleet_.running, SizeIs(4));
}

// After a jobsetd restart the pods already running still take their nodes'
// capacity: a new gang does not land on a full node.
TEST_F(ControllerCoreTest, RunningPodsTakeTheirCapacityAfterARestart) {
  Submit(GpuWorkers("a", 4, "8"));
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(4));
  ReportAll("Running");
  Settle();
  Restart();
  Settle();
  Submit(GpuWorkers("b", 1, "1"));
  Settle();
  std::vector<api::Pod> pods = core_->Pods("default", "b");
  ASSERT_THAT(pods, SizeIs(1));
  EXPECT_TRUE(pods[0].spec().node_name().empty()) << pods[0].spec().node_name();
}

TEST_F(ControllerCoreTest, HostPortsOfRunningPodsAreTaken) {
  auto host_network = [](const std::string& name, int replicas) {
    JobSetBuilder b(name);
    b.Replicated("w", replicas);
    api::PodSpec* pod = b.Mutable()
                            ->mutable_spec()
                            ->mutable_replicated_jobs(0)
                            ->mutable_template_()
                            ->mutable_spec()
                            ->mutable_template_()
                            ->mutable_spec();
    pod->set_host_network(true);
    pod->mutable_containers(0)->add_ports()->set_container_port(8476);
    return b.Build();
  };
  Submit(host_network("first", 4));
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(4));
  Submit(host_network("second", 1));
  Settle();
  EXPECT_THAT(fleet_.running, SizeIs(4));
  std::vector<api::Pod> pods = core_->Pods("default", "second");
  ASSERT_THAT(pods, SizeIs(1));
  const api::Condition* scheduled =
      FindCondition(pods[0].status().conditions(), "PodScheduled");
  ASSERT_NE(scheduled, nullptr);
  EXPECT_THAT(scheduled->message(), HasSubstr("free ports"));
  // The first JobSet finishes: its ports free up and the second one runs.
  ReportAll("Succeeded");
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(1));
  EXPECT_EQ(
      fleet_.running.begin()->second.metadata().labels().at(kJobSetNameKey),
      "second");
}

TEST_F(ControllerCoreTest, ContinuesAfterARestartFromTheStore) {
  // 64 Jobs: their 128 records are serialized, and their assignments'
  // shapes built, on two threads.
  Submit(JobSetBuilder("train").Replicated("workers", 64).Build());
  Settle();
  ReportAll("Running");
  Settle();
  std::vector<api::Pod> before = core_->Pods("default", "train");
  ASSERT_THAT(before, SizeIs(64));
  const std::vector<api::Job> jobs = core_->Jobs("default", "train");
  ASSERT_THAT(jobs, SizeIs(64));

  Restart();
  Settle();
  std::vector<api::Pod> after = core_->Pods("default", "train");
  ASSERT_THAT(after, SizeIs(64));
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after[i].metadata().name(), before[i].metadata().name());
    EXPECT_EQ(after[i].metadata().uid(), before[i].metadata().uid());
    EXPECT_EQ(after[i].spec().node_name(), before[i].spec().node_name());
    EXPECT_EQ(after[i].status().phase(), "Running");
  }
  const std::vector<api::Job> loaded = core_->Jobs("default", "train");
  ASSERT_THAT(loaded, SizeIs(64));
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_TRUE(
        google::protobuf::util::MessageDifferencer::Equals(loaded[i], jobs[i]))
        << loaded[i].DebugString();
  }
  EXPECT_EQ(fleet_.runs, 64);  // Nothing was started twice.
  ReportAll("Succeeded");
  Settle();
  EXPECT_EQ(Get("train").status().terminal_state(), "Completed");
}

// Pods just placed are stored without what follows from their Job
// (job_pods.h): a restarted controller reads them back exactly.
TEST_F(ControllerCoreTest, PodsJustLaunchedAreReadBackExactly) {
  Submit(JobSetBuilder("train")
             .Replicated("leader", 1)
             .Replicated("workers", 2, 3, 3)
             .Build());
  Settle();
  const std::vector<api::Pod> before = core_->Pods("default", "train");
  ASSERT_THAT(before, SizeIs(7));
  const int runs = fleet_.runs;
  Restart();
  Settle();
  const std::vector<api::Pod> after = core_->Pods("default", "train");
  ASSERT_THAT(after, SizeIs(before.size()));
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_TRUE(
        google::protobuf::util::MessageDifferencer::Equals(after[i], before[i]))
        << after[i].DebugString() << "\nwas\n"
        << before[i].DebugString();
  }
  EXPECT_EQ(fleet_.runs, runs);
}

TEST_F(ControllerCoreTest, ARestartInterruptedByAJobsetdRestartCarriesOn) {
  Submit(RestartOnAnyFailure("train", 4));
  Settle();
  ReportAll("Running");
  Settle();
  std::vector<api::Pod> old;
  for (const auto& [uid, pod] : fleet_.running) old.push_back(pod);
  Report(old[2], "Failed", 1);
  Settle();
  ASSERT_EQ(Get("train").status().restarts(), 1);
  const std::set<std::string> stopping = StoppedUids();
  ASSERT_THAT(stopping, SizeIs(3));

  // jobsetd dies before the old pods confirm their stop. The store does not
  // hold each pod's stop mark: it follows from the Job being deleted.
  Restart();
  fleet_.stopped.clear();
  Settle();
  EXPECT_EQ(StoppedUids(), stopping);
  for (const api::Pod& pod : core_->Pods("default", "train")) {
    if (stopping.contains(pod.metadata().uid())) {
      EXPECT_TRUE(pod.metadata().has_deletion_timestamp())
          << pod.metadata().name();
    }
  }

  ConfirmStops();
  Settle();
  EXPECT_EQ(Get("train").status().restarts(), 1);
  ASSERT_THAT(fleet_.running, SizeIs(4));
  for (const auto& [uid, pod] : fleet_.running) {
    EXPECT_EQ(pod.metadata().labels().at(kRestartAttemptKey), "1");
  }
}

// The pass that decides a restart commits the JobSet's status and stops the
// old attempt; the old Jobs' deletion is stored by the pass after it. A
// crash in between loses nothing: the JobSet's restart count says which
// Jobs are of a previous attempt.
class RestartPassTest : public ControllerCoreTest,
                        public ::testing::WithParamInterface<bool> {};

TEST_P(RestartPassTest, TheOldJobsDeletionIsStoredByThePassAfter) {
  const bool crash = GetParam();
  const std::string name = "train";
  Submit(RestartOnAnyFailure(name, 4));
  Settle();
  ReportAll("Running");
  Settle();
  std::vector<api::Pod> old;
  for (const auto& [uid, pod] : fleet_.running) old.push_back(pod);
  fleet_.stopped.clear();
  Report(old[2], "Failed", 1);
  ASSERT_THAT(core_->Pass(), IsOk());
  const std::set<std::string> stopping = StoppedUids();
  ASSERT_THAT(stopping, SizeIs(3));
  // Stored: the restart, and the old Jobs, not yet marked deleted (the
  // failed pod's Job is gone already: none of its pods runs).
  auto stored_old_jobs = [&] {
    std::map<std::string, api::Job> jobs;
    absl::StatusOr<store::ScanResult> scan =
        store_.Scan(store::keys::JobKey("default", name, ""), "", 100);
    EXPECT_THAT(scan.status(), IsOk());
    for (const store::KeyValue& kv : scan->kvs) {
      api::Job job;
      EXPECT_TRUE(job.ParseFromString(kv.value));
      if (job.metadata().labels().at(kRestartAttemptKey) == "0")
        jobs[job.metadata().name()] = job;
    }
    return jobs;
  };
  auto js = store_.Get(store::keys::JobSetKey("default", name));
  ASSERT_TRUE(js.ok() && js->has_value());
  api::JobSet stored;
  ASSERT_TRUE(stored.ParseFromString((*js)->value));
  EXPECT_EQ(stored.status().restarts(), 1);
  int unmarked = 0;
  for (const auto& [job_name, job] : stored_old_jobs()) {
    unmarked += !job.metadata().has_deletion_timestamp();
  }
  EXPECT_EQ(unmarked, 3);
  // The next pass is due at once.
  std::optional<absl::Time> next = core_->NextWake();
  ASSERT_TRUE(next.has_value());
  EXPECT_LE(*next, clock_.Now());

  if (crash) {
    Restart();
    fleet_.stopped.clear();
    Settle();
    EXPECT_EQ(StoppedUids(), stopping);
  } else {
    ASSERT_THAT(core_->Pass(), IsOk());
    EXPECT_THAT(fleet_.stopped, SizeIs(3));  // Nothing stopped twice.
  }
  ASSERT_THAT(stored_old_jobs(), SizeIs(3));
  for (const auto& [job_name, job] : stored_old_jobs()) {
    EXPECT_TRUE(job.metadata().has_deletion_timestamp()) << job_name;
  }
  ConfirmStops();
  Settle();
  EXPECT_EQ(Get(name).status().restarts(), 1);
  ASSERT_THAT(fleet_.running, SizeIs(4));
  for (const auto& [uid, pod] : fleet_.running) {
    EXPECT_EQ(pod.metadata().labels().at(kRestartAttemptKey), "1");
  }
}

INSTANTIATE_TEST_SUITE_P(CrashBetweenThePasses, RestartPassTest,
                         ::testing::Bool());

// On a store with etcd's kind of limits (here 16 operations, 8 KiB) a
// restart of a 40-Job JobSet takes 17 transactions over three passes. Wherever
// jobsetd dies between two of them, the controller that loads the store next
// restarts the JobSet once: every Job at attempt 1 runs exactly one pod.
class DyingMidCommitTest : public ControllerCoreTest,
                           public ::testing::WithParamInterface<int> {};

TEST_P(DyingMidCommitTest, ARestartInTransactionsConverges) {
  store_.SetLimits({.max_ops = 16, .max_bytes = 8192, .op_overhead = 16});
  constexpr int kJobs = 40;
  Submit(RestartOnAnyFailure("train", kJobs));
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(kJobs));
  ReportAll("Running");
  Settle();
  std::vector<api::Pod> old;
  for (const auto& [uid, pod] : fleet_.running) old.push_back(pod);
  fleet_.stopped.clear();
  store_.commits = 0;
  store_.fail_after = GetParam();
  Report(old[5], "Failed", 1);
  bool died = false;
  for (int i = 0; i < 10 && !died; ++i) {
    died = !core_->Pass().ok();
    ConfirmStops();
  }
  ASSERT_TRUE(died) << "the restart took only " << store_.commits << " commits";
  store_.fail_after = -1;
  // jobsetd starts again; the agents reconnect and run what it announces
  // (and the failure is reported again: a report of the old attempt, once
  // the restart is stored, changes nothing).
  Restart();
  fleet_.running.clear();
  fleet_.stopped.clear();
  core_->Announce();
  Report(old[5], "Failed", 1);
  Settle();
  for (int i = 0; i < 5; ++i) {
    ConfirmStops();
    Settle();
  }
  EXPECT_EQ(Get("train").status().restarts(), 1);
  std::map<std::string, int> per_job;
  for (const auto& [uid, pod] : fleet_.running) {
    EXPECT_EQ(pod.metadata().labels().at(kRestartAttemptKey), "1")
        << pod.metadata().name();
    ++per_job[pod.metadata().labels().at("batch.kubernetes.io/job-name")];
  }
  EXPECT_THAT(per_job, SizeIs(kJobs));
  for (const auto& [job, pods] : per_job) EXPECT_EQ(pods, 1) << job;
  std::map<std::string, int> stored;
  for (const api::Pod& pod : core_->Pods("default", "train")) {
    if (pod.metadata().has_deletion_timestamp()) continue;
    ++stored[pod.metadata().name()];
  }
  EXPECT_THAT(stored, SizeIs(kJobs));
  absl::StatusOr<store::ScanResult> journal =
      store_.Scan(store::keys::kJournal, "", 10);
  ASSERT_THAT(journal.status(), IsOk());
  EXPECT_THAT(journal->kvs, IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(EveryTransaction, DyingMidCommitTest,
                         ::testing::Range(0, 17));

TEST_F(ControllerCoreTest, DeletingAJobSetStopsItsPodsAndForgetsIt) {
  Submit(JobSetBuilder("train").Replicated("workers", 2).Build());
  Settle();
  const std::string key = store::keys::JobSetKey("default", "train");
  ASSERT_THAT(store_.Commit(store::Batch().Delete(key)).status(), IsOk());
  Notify(key);
  Settle();
  EXPECT_THAT(fleet_.stopped, SizeIs(2));
  EXPECT_EQ(core_->FindJobSet("default", "train"), nullptr);
  EXPECT_THAT(store_.Scan("pods/", "", 100)->kvs, IsEmpty());
  EXPECT_THAT(store_.Scan("jobs/", "", 100)->kvs, IsEmpty());
}

TEST_F(ControllerCoreTest, AnApiUpdateRacingTheControllerKeepsBoth) {
  Submit(JobSetBuilder("train").Replicated("workers", 2).Build());
  Settle();
  // The API suspends it without the controller having seen the change yet.
  const std::string key = store::keys::JobSetKey("default", "train");
  auto kv = store_.Get(key);
  api::JobSet js;
  ASSERT_TRUE(js.ParseFromString((*kv)->value));
  js.mutable_spec()->set_suspend(true);
  ASSERT_THAT(store_
                  .Commit(store::Batch().Update(key, js.SerializeAsString(),
                                                (*kv)->mod_revision))
                  .status(),
              IsOk());
  ReportAll("Running");  // Makes the controller write status.
  Settle();
  Notify(key);
  Settle();
  EXPECT_TRUE(Get("train").spec().suspend());
  EXPECT_TRUE(
      IsConditionTrue(Get("train").status().conditions(), kConditionSuspended));
  EXPECT_THAT(fleet_.running, IsEmpty());
}

TEST_F(ControllerCoreTest, TtlDeletesAFinishedJobSet) {
  Submit(JobSetBuilder("train")
             .Replicated("workers", 1)
             .TtlSecondsAfterFinished(60)
             .Build());
  Settle();
  ReportAll("Succeeded");
  Settle();
  ASSERT_EQ(Get("train").status().terminal_state(), "Completed");
  std::optional<absl::Time> wake = core_->NextWake();
  ASSERT_TRUE(wake.has_value());
  clock_.SetTime(*wake);
  Settle();
  EXPECT_EQ(core_->FindJobSet("default", "train"), nullptr);
  EXPECT_FALSE(
      store_.Get(store::keys::JobSetKey("default", "train"))->has_value());
}

TEST_F(ControllerCoreTest, ALostNodeFailsItsPodsAndTheAttemptMovesElsewhere) {
  Submit(RestartOnAnyFailure("train", 2));
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(2));
  ReportAll("Running");
  Settle();
  const api::Pod victim = fleet_.running.begin()->second;
  const std::string lost = victim.spec().node_name();
  core_->LoseNode(lost, "NodeLost", "node stopped heartbeating");
  for (const api::Pod& pod : core_->Pods("default", "train")) {
    if (pod.metadata().uid() != victim.metadata().uid()) continue;
    EXPECT_EQ(pod.status().phase(), "Failed");
    const api::Condition* c =
        FindCondition(pod.status().conditions(), "DisruptionTarget");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->status(), "True");
    EXPECT_EQ(c->reason(), "NodeLost");
  }
  Settle();
  EXPECT_EQ(Get("train").status().restarts(), 1);
  EXPECT_THAT(core_->Events("default", "train"),
              Contains(Field(&JobSetEvent::reason, "NodeLost")));
  // The lost pod's final status is durable and the agent may forget it.
  EXPECT_THAT(fleet_.released,
              Contains(std::pair(lost, victim.metadata().uid())));
  // The new attempt avoids the lost node.
  ConfirmStops();
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(2));
  for (const auto& [uid, pod] : fleet_.running) {
    EXPECT_NE(pod.spec().node_name(), lost);
    EXPECT_EQ(pod.metadata().labels().at(kRestartAttemptKey), "1");
  }
}

TEST_F(ControllerCoreTest, FinishedPodsAreReleasedOnceDurable) {
  Submit(JobSetBuilder("train").Replicated("workers", 2).Build());
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(2));
  std::vector<std::string> uids;
  for (const auto& [uid, pod] : fleet_.running) uids.push_back(uid);
  ReportAll("Running");
  Settle();
  EXPECT_THAT(fleet_.released, IsEmpty());
  ReportAll("Succeeded");
  Settle();
  std::set<std::string> released;
  for (const auto& [node, uid] : fleet_.released) released.insert(uid);
  EXPECT_EQ(released, std::set<std::string>(uids.begin(), uids.end()));
}

TEST_F(ControllerCoreTest,
       ARestartedControllerAnnouncesDesiredPodsAndKeepsEvents) {
  Submit(JobSetBuilder("train").Replicated("workers", 3).Build());
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(3));
  std::map<std::string, api::Pod> before = fleet_.running;
  fleet_.running.clear();
  Restart();
  core_->Announce();
  EXPECT_EQ(fleet_.running.size(), before.size());
  for (const auto& [uid, pod] : before) {
    ASSERT_TRUE(fleet_.running.contains(uid));
    EXPECT_EQ(fleet_.running[uid].spec().node_name(), pod.spec().node_name());
  }
  EXPECT_THAT(fleet_.last_hosts->entries(), SizeIs(3));

  ReportAll("Succeeded");
  Settle();
  const std::vector<JobSetEvent> events = core_->Events("default", "train");
  ASSERT_THAT(events, Not(IsEmpty()));
  Restart();
  core_->Announce();
  EXPECT_THAT(fleet_.running, IsEmpty());  // Finished pods are not desired.
  EXPECT_EQ(core_->Events("default", "train"), events);
}

TEST_F(ControllerCoreTest, EventsAreTrimmedByCountAndAge) {
  Restart({.features = {.restart_job = true, .in_place_restart = true},
           .event_retention = {.per_jobset = 1, .max_age = absl::Hours(1)}});
  Submit(JobSetBuilder("train").Replicated("workers", 2).Build());
  Settle();
  core_->LoseNode("node-0", "NodeLost", "gone");
  core_->LoseNode("node-1", "NodeLost", "gone too");
  Settle();
  auto stored = [&] {
    auto page =
        store_.Scan(store::keys::EventPrefix("default", "train"), "", 1000);
    EXPECT_TRUE(page.ok());
    return page.ok() ? page->kvs.size() : 0;
  };
  EXPECT_EQ(stored(), 1u);
  EXPECT_THAT(core_->Events("default", "train"), SizeIs(1));
  clock_.Advance(absl::Hours(2));
  ASSERT_THAT(core_->Pass(), IsOk());
  EXPECT_EQ(stored(), 0u);
  EXPECT_THAT(core_->Events("default", "train"), IsEmpty());
}

TEST_F(ControllerCoreTest, EventsAreBoundedAndGoWithTheirJobSet) {
  Submit(GpuWorkers("big", 5, "8"));
  Settle();
  auto count = [&] {
    auto page =
        store_.Scan(store::keys::EventPrefix("default", "big"), "", 1000);
    EXPECT_TRUE(page.ok());
    return page.ok() ? page->kvs.size() : 0;
  };
  EXPECT_GE(count(), 1u);
  EXPECT_LE(count(), 100u);
  DeleteThroughApi("big");
  Settle();
  EXPECT_EQ(count(), 0u);
}

// The value of `name`'s series with `labels` in `metrics` (0 if absent).
double MetricValue(SchedulerMetrics& metrics, const std::string& name,
                   const std::map<std::string, std::string>& labels = {}) {
  for (const prometheus::MetricFamily& family : metrics.registry->Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& m : family.metric) {
      std::map<std::string, std::string> have;
      for (const prometheus::ClientMetric::Label& l : m.label)
        have[l.name] = l.value;
      bool match = true;
      for (const auto& [k, v] : labels) match &= have[k] == v;
      if (!match) continue;
      if (family.type == prometheus::MetricType::Histogram)
        return static_cast<double>(m.histogram.sample_count);
      if (family.type == prometheus::MetricType::Gauge) return m.gauge.value;
      return m.counter.value;
    }
  }
  return 0;
}

TEST_F(ControllerCoreTest, MetricsFollowAScriptedRun) {
  SchedulerMetrics metrics;
  PrometheusControllerMetrics exported(&metrics);
  Restart({.features = {.restart_job = true, .in_place_restart = true},
           .metrics = &exported});
  Submit(RestartOnAnyFailure("train", 2));
  Settle();
  EXPECT_EQ(MetricValue(metrics, "jobsetd_placement_duration_seconds"), 1);
  clock_.Advance(absl::Seconds(2));
  ReportAll("Running");
  Settle();
  EXPECT_EQ(MetricValue(metrics, "jobsetd_submit_to_running_seconds"), 1);
  EXPECT_EQ(MetricValue(metrics, "jobsetd_jobsets", {{"state", "running"}}), 1);
  EXPECT_EQ(MetricValue(metrics, "jobsetd_pods", {{"phase", "Running"}}), 2);

  // One pod fails: one restart, then the new attempt runs.
  Report(fleet_.running.begin()->second, "Failed", 1);
  Settle();
  EXPECT_EQ(MetricValue(metrics, "jobsetd_restarts_total",
                        {{"action", "RestartJobSet"}}),
            1);
  ConfirmStops();
  Settle();
  clock_.Advance(absl::Seconds(3));
  ReportAll("Running");
  Settle();
  EXPECT_EQ(MetricValue(metrics, "jobsetd_restart_duration_seconds"), 1);
  // A report about a pod of the old attempt is fenced.
  PodReport stale;
  stale.node = "node-0";
  stale.pod_uid = "no-such-pod";
  core_->OnPodReport(stale);
  EXPECT_EQ(MetricValue(metrics, "jobsetd_fenced_reports_total"), 1);

  ReportAll("Succeeded");
  Settle();
  EXPECT_EQ(MetricValue(metrics, "jobset_completed_total",
                        {{"jobset_name", "train"}, {"namespace", "default"}}),
            1);
  EXPECT_EQ(MetricValue(metrics, "jobset_failed_total"), 0);
  clock_.Advance(absl::Seconds(2));
  ASSERT_THAT(core_->Pass(), IsOk());
  EXPECT_EQ(MetricValue(metrics, "jobsetd_jobsets", {{"state", "completed"}}),
            1);
}

// Issue 19: a store seeded with records that do not decode and with a
// JobSet that cannot expand: the controller loads the rest, runs it, and
// reports both (log, event, metric); the undecodable records stay in the
// store as they were, and the JobSets they belong to, or that cannot
// expand, are Failed with the reason.
TEST_F(ControllerCoreTest,
       LoadSetsAsideWhatDoesNotDecodeAndFailsWhatCannotRun) {
  Submit(JobSetBuilder("broken").Replicated("workers", 2).Build());
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(2));
  const std::string garbage = "\xff\xff\xff\xff";
  const std::string broken_pods =
      store::keys::JobPodsKey("default", "broken", "broken-workers-1");
  const std::string lost_jobset = store::keys::JobSetKey("default", "lost");
  const std::string lost_job =
      store::keys::JobKey("default", "lost", "lost-w-0");
  const std::string bad_event = store::keys::EventKey("default", "broken", 999);
  api::JobSet huge =
      JobSetBuilder("huge").Replicated("w", 2'000'000'000).Build();
  api::SetJobSetDefaults(&huge);
  ASSERT_THAT(store_
                  .Commit(store::Batch()
                              .Put(broken_pods, garbage)
                              .Put(lost_jobset, garbage)
                              .Put(lost_job, "a Job of a JobSet gone bad")
                              .Put(bad_event, garbage)
                              .Put(store::keys::JobSetKey("default", "huge"),
                                   huge.SerializeAsString()))
                  .status(),
              IsOk());

  SchedulerMetrics metrics;
  PrometheusControllerMetrics exported(&metrics);
  core_ = std::make_unique<ControllerCore>(
      &store_, &fleet_, &clock_,
      ControllerCore::Options{.features = {.restart_job = true},
                              .metrics = &exported});
  ASSERT_THAT(core_->Load().status(), IsOk());
  for (int i = 0; i < 4; ++i)
    core_->SetNode(Node(absl::StrCat("node-", i), "pool-a"));
  Submit(JobSetBuilder("fine").Replicated("workers", 1).Build());
  Settle();

  EXPECT_EQ(MetricValue(metrics, "jobsetd_rejected_records_total",
                        {{"reason", "undecodable_record"}}),
            3);
  // The JobSet whose pods do not decode: Failed, with an event naming the
  // record, which is left as it was.
  const api::JobSet& broken = Get("broken");
  EXPECT_EQ(broken.status().terminal_state(), "Failed");
  EXPECT_THAT(broken.status().conditions(),
              Contains(::testing::Property(&api::Condition::reason,
                                           kReasonUndecodableRecord)));
  EXPECT_THAT(core_->Events("default", "broken"),
              Contains(Field(&JobSetEvent::message, HasSubstr(broken_pods))));
  for (const std::string& key : {broken_pods, lost_jobset, bad_event}) {
    auto kv = store_.Get(key);
    ASSERT_TRUE(kv.ok() && kv->has_value()) << key;
    EXPECT_EQ((*kv)->value, garbage) << key;
  }
  // The children of a JobSet that does not decode are not orphans.
  auto child = store_.Get(lost_job);
  ASSERT_TRUE(child.ok() && child->has_value());
  // Over the pod limit: Failed, never expanded.
  EXPECT_EQ(Get("huge").status().terminal_state(), "Failed");
  EXPECT_THAT(core_->Jobs("default", "huge"), IsEmpty());
  // The rest runs.
  bool fine_runs = false;
  for (const auto& [uid, pod] : fleet_.running)
    fine_runs |= pod.metadata().labels().at(kJobSetNameKey) == "fine";
  EXPECT_TRUE(fine_runs);
}

// Issue 19: an Indexed Job of parallelism 100,000 (the pods-per-attempt
// limit) used to put one JobPods record past the store's value limit, and
// its commit crashed jobsetd. Its pods are now split across records: it
// commits, runs, loads back after a restart, and its deletion removes every
// record.
TEST_F(ControllerCoreTest, AnIndexedJobAtThePodLimitRunsAndLoadsBack) {
#ifdef ABSL_HAVE_THREAD_SANITIZER
  // ThreadSanitizer checks the threads, not the size (and is slow at it):
  // a quarter of the limit, still more than one record.
  constexpr int kPods = static_cast<int>(kDefaultMaxPodsPerAttempt / 4);
#else
  constexpr int kPods = static_cast<int>(kDefaultMaxPodsPerAttempt);
#endif
  Submit(JobSetBuilder("big")
             .Replicated("w", 1, kPods, kPods)
             .CompletionMode("w", "Indexed")
             .Build());
  Settle();
  EXPECT_THAT(fleet_.running, SizeIs(kPods));
  auto chunks = [&] {
    auto page = store_.Scan("pods/default/big/", "", 1'000);
    return page.ok() ? page->kvs : std::vector<store::KeyValue>();
  };
  const std::vector<store::KeyValue> stored = chunks();
  // At the limit, more than one record (the bound form is ~40 bytes a pod).
  ASSERT_GE(stored.size(), kPods == kDefaultMaxPodsPerAttempt ? 2u : 1u);
  for (const store::KeyValue& kv : stored)
    EXPECT_LE(kv.value.size(), kMaxJobPodsChunkBytes) << kv.key;

  // Every pod comes back after a restart, placed where it was.
  Restart();
  const std::vector<api::Pod> loaded = core_->Pods("default", "big");
  EXPECT_THAT(loaded, SizeIs(kPods));
  for (const api::Pod& pod : loaded)
    ASSERT_FALSE(pod.spec().node_name().empty()) << pod.metadata().name();
  Settle();

  // Deleting the JobSet removes all of its records.
  DeleteThroughApi("big");
  Settle();
  ConfirmStops();
  Settle();
  EXPECT_THAT(chunks(), IsEmpty());
}

// ---- Secrets and ConfigMaps ----

api::PodSpec& PodSpecOf(JobSet& js) {
  return *js.mutable_spec()
              ->mutable_replicated_jobs(0)
              ->mutable_template_()
              ->mutable_spec()
              ->mutable_template_()
              ->mutable_spec();
}

// Two one-pod Jobs whose container reads Secret "db" (key password), and
// mounts it.
JobSet ReadsSecret(const std::string& name) {
  JobSet js = RestartOnAnyFailure(name, 2);
  api::PodSpec& spec = PodSpecOf(js);
  api::EnvVar* var = spec.mutable_containers(0)->add_env();
  var->set_name("PASSWORD");
  var->mutable_value_from()->mutable_secret_key_ref()->set_name("db");
  var->mutable_value_from()->mutable_secret_key_ref()->set_key("password");
  api::Volume* volume = spec.add_volumes();
  volume->set_name("creds");
  volume->mutable_secret()->set_secret_name("db");
  return js;
}

class PodConfigTest : public ControllerCoreTest {
 protected:
  void PutSecret(const std::string& name, const std::string& password,
                 bool notify = true) {
    api::Secret secret;
    secret.mutable_metadata()->set_name(name);
    secret.mutable_metadata()->set_namespace_("default");
    secret.set_type("Opaque");
    (*secret.mutable_data())["password"] = password;
    const std::string key = store::keys::SecretKey("default", name);
    ASSERT_THAT(
        store_.Commit(store::Batch().Put(key, secret.SerializeAsString()))
            .status(),
        IsOk());
    if (notify) core_->OnConfigEvent(key);
  }

  // Every pod of JobSet "train" waits with `message`.
  void ExpectAllWaiting(const std::string& message) {
    std::vector<api::Pod> pods = core_->Pods("default", "train");
    ASSERT_THAT(pods, SizeIs(2));
    for (const api::Pod& pod : pods) {
      EXPECT_FALSE(pod.spec().node_name().empty());  // Bound.
      EXPECT_EQ(pod.status().phase(), "Pending");
      ASSERT_THAT(pod.status().container_statuses(), SizeIs(1));
      const api::ContainerStatus& c = pod.status().container_statuses(0);
      EXPECT_EQ(c.flat_state(), "waiting");
      EXPECT_EQ(c.reason(), "CreateContainerConfigError");
      EXPECT_EQ(c.message(), message);
    }
  }
};

TEST_F(PodConfigTest, APodWaitsForAMissingSecretAndStartsOnceItIsApplied) {
  Submit(ReadsSecret("train"));
  Settle();
  EXPECT_THAT(fleet_.running, IsEmpty());  // Not sent.
  ExpectAllWaiting(
      "MountVolume.SetUp failed for volume \"creds\" : secret \"db\" not "
      "found");
  // It just waits: no failure, no restart.
  EXPECT_EQ(Get("train").status().restarts(), 0);
  EXPECT_TRUE(Get("train").status().terminal_state().empty());
  EXPECT_THAT(core_->Events("default", "train"),
              Contains(Field(&JobSetEvent::reason, "Failed")));
  // Nothing happens while it is missing.
  clock_.Advance(absl::Seconds(30));
  Settle();
  EXPECT_THAT(fleet_.running, IsEmpty());

  PutSecret("db", "hunter2");
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(2));
  for (const auto& [uid, pod] : fleet_.running) {
    EXPECT_EQ(Env(pod, "PASSWORD"), "hunter2");
    const std::shared_ptr<const api::PodConfig>& config = fleet_.configs[uid];
    ASSERT_NE(config, nullptr);
    ASSERT_THAT(config->volumes, SizeIs(1));
    EXPECT_EQ(config->volumes[0].files(0).data(), "hunter2");
  }
  // Clients see the reference, never the value, and the wait is over.
  for (const api::Pod& pod : core_->Pods("default", "train")) {
    const api::EnvVar* password = nullptr;
    for (const api::EnvVar& var : pod.spec().containers(0).env()) {
      if (var.name() == "PASSWORD") password = &var;
    }
    ASSERT_NE(password, nullptr);
    EXPECT_EQ(password->value(), "");
    EXPECT_EQ(password->value_from().secret_key_ref().name(), "db");
    EXPECT_THAT(pod.status().container_statuses(), IsEmpty());
  }
  ReportAll("Running");
  ReportAll("Succeeded");
  Settle();
  EXPECT_EQ(Get("train").status().terminal_state(), "Completed");
}

TEST_F(PodConfigTest, AMissingKeyWaitsInKubeletsWordsAndIsRetriedPeriodically) {
  PutSecret("db", "x");
  JobSet js = ReadsSecret("train");
  PodSpecOf(js)
      .mutable_containers(0)
      ->mutable_env(0)
      ->mutable_value_from()
      ->mutable_secret_key_ref()
      ->set_key("token");
  Submit(js);
  Settle();
  EXPECT_THAT(fleet_.running, IsEmpty());
  ExpectAllWaiting("couldn't find key token in Secret default/db");
  // The key arrives without an event the controller sees: the periodic
  // retry finds it.
  api::Secret secret;
  secret.mutable_metadata()->set_name("db");
  (*secret.mutable_data())["password"] = "x";
  (*secret.mutable_data())["token"] = "t0k";
  ASSERT_THAT(
      store_
          .Commit(store::Batch().Put(store::keys::SecretKey("default", "db"),
                                     secret.SerializeAsString()))
          .status(),
      IsOk());
  Settle();
  EXPECT_THAT(fleet_.running, IsEmpty());
  clock_.Advance(PodConfigs::kRetryInterval);
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(2));
  EXPECT_EQ(Env(fleet_.running.begin()->second, "PASSWORD"), "t0k");
}

TEST_F(PodConfigTest, AnEventOfAnotherNamespaceRetriesNothing) {
  Submit(ReadsSecret("train"));
  Settle();
  const int runs = fleet_.runs;
  core_->OnConfigEvent("secrets/other/db");
  EXPECT_NE(core_->NextWake(), absl::InfinitePast());
  Settle();
  EXPECT_EQ(fleet_.runs, runs);
}

TEST_F(PodConfigTest, WaitingSurvivesAJobsetdRestart) {
  Submit(ReadsSecret("train"));
  Settle();
  Restart();
  core_->Announce();
  EXPECT_THAT(fleet_.running, IsEmpty());
  ExpectAllWaiting(
      "MountVolume.SetUp failed for volume \"creds\" : secret \"db\" not "
      "found");
  // Applied while nobody watched: the pass after a Load retries.
  PutSecret("db", "hunter2", /*notify=*/false);
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(2));
  EXPECT_EQ(Env(fleet_.running.begin()->second, "PASSWORD"), "hunter2");
}

TEST_F(PodConfigTest, RunningPodsAreResentNotStoppedWhenTheirSecretGoes) {
  PutSecret("db", "hunter2");
  Submit(ReadsSecret("train"));
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(2));
  ReportAll("Running");
  Settle();
  ASSERT_THAT(store_
                  .Commit(store::Batch().Delete(
                      store::keys::SecretKey("default", "db")))
                  .status(),
              IsOk());
  fleet_.running.clear();
  Restart();
  core_->Announce();
  // Started pods keep running (kubelet does not take a running container's
  // environment back).
  EXPECT_THAT(fleet_.running, SizeIs(2));
}

TEST_F(PodConfigTest, AJobSetWithWaitingPodsIsDeleted) {
  Submit(ReadsSecret("train"));
  Settle();
  DeleteThroughApi("train");
  Settle();
  EXPECT_EQ(core_->FindJobSet("default", "train"), nullptr);
  EXPECT_THAT(fleet_.running, IsEmpty());
}

TEST_F(PodConfigTest, AWaitingPodThatFailsElsewhereRestartsTheGang) {
  // One replicatedJob's pods wait; the JobSet still follows its policies
  // when another pod fails.
  JobSet js = JobSetBuilder("train")
                  .Replicated("a", 1)
                  .Replicated("b", 1)
                  .RestartPolicy("a", "Never")
                  .RestartPolicy("b", "Never")
                  .BackoffLimit("a", 0)
                  .BackoffLimit("b", 0)
                  .FailurePolicy(3)
                  .Build();
  api::EnvVar* var = js.mutable_spec()
                         ->mutable_replicated_jobs(1)
                         ->mutable_template_()
                         ->mutable_spec()
                         ->mutable_template_()
                         ->mutable_spec()
                         ->mutable_containers(0)
                         ->add_env();
  var->set_name("M");
  var->mutable_value_from()->mutable_config_map_key_ref()->set_name("cfg");
  var->mutable_value_from()->mutable_config_map_key_ref()->set_key("k");
  Submit(js);
  Settle();
  ASSERT_THAT(fleet_.running, SizeIs(1));  // a's pod only.
  ReportAll("Failed", 1);
  Settle();
  ConfirmStops();
  Settle();
  EXPECT_EQ(Get("train").status().restarts(), 1);
  // The new attempt: a's pod runs again, b's waits again.
  EXPECT_THAT(fleet_.running, SizeIs(1));
}

TEST(RefusedKeysTest, NamesTheKeysOverTheStoresLimits) {
  store::Batch batch;
  batch.Put("jobs/default/a/a-w-0", "small");
  batch.Put("pods/default/b/b-w-0",
            std::string(store::Store::kMaxValueBytes + 1, 'x'));
  batch.Put(std::string(store::Store::kMaxKeyBytes + 1, 'k'), "v");
  EXPECT_THAT(
      RefusedKeys(batch, absl::InvalidArgumentError("too big")),
      ::testing::ElementsAre("pods/default/b/b-w-0",
                             std::string(store::Store::kMaxKeyBytes + 1, 'k')));
  // Nothing over a limit: the key the store's error names, unescaped.
  store::Batch fine;
  fine.Put("pods/default/c/c-w-0", "v");
  EXPECT_THAT(
      RefusedKeys(fine, absl::InvalidArgumentError(
                            "store: key \"pods/default/c/c\\x01\" appears "
                            "twice in a batch")),
      ::testing::ElementsAre(std::string("pods/default/c/c\x01")));
  // Quoted as Go's %q: \xNN is two digits, whatever follows it.
  EXPECT_THAT(RefusedKeys(fine, absl::InvalidArgumentError(
                                    R"(store: key "c\x01a\"b" appears twice)")),
              ::testing::ElementsAre(std::string("c\x01"
                                                 "a\"b")));
  EXPECT_THAT(RefusedKeys(fine, absl::InvalidArgumentError("no key named")),
              IsEmpty());
}

}  // namespace
}  // namespace jobset::scheduler
