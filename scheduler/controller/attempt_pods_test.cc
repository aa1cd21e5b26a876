// Every attempt kept: the controller records the pods a restart (or a
// suspension) erased, in the pass after the one that erased them, keeps the
// last --attempt_history attempts, and deletes the records with their
// JobSet (through the API, by TTL, or while jobsetd was down).
#include "scheduler/controller/attempt_pods.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/defaults.h"
#include "api/jobset_builder.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/controller/controller_core.h"
#include "scheduler/records/attempt_pods.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::UnorderedElementsAreArray;

class FakeFleet : public AgentFleet {
 public:
  void Run(Assignment order) override { running[order.uid()] = order.Pod(); }
  void Stop(const std::string& node, const std::string& uid) override {
    stopped.push_back({node, uid});
    running.erase(uid);
  }
  void Release(const std::string&, const std::string& uid) override {
    running.erase(uid);
  }
  std::map<std::string, api::Pod> running;  // By uid.
  std::vector<std::pair<std::string, std::string>> stopped;
};

NodeInfo Node(int i) {
  NodeInfo n;
  n.name = absl::StrCat("node-", i);
  n.address = absl::StrCat("10.0.0.", i + 1);
  n.allocatable.cpu_millis = 16'000;
  n.allocatable.memory_bytes = int64_t{64} << 30;
  return n;
}

// What a running pod was: its name, uid and node.
struct Ran {
  std::string name, uid, node;
  bool operator==(const Ran&) const = default;
};

class AttemptPodsTest : public ::testing::Test {
 protected:
  AttemptPodsTest() { Restart(); }

  // A fresh controller over the same store (a jobsetd restart) keeping
  // `history` attempts.
  void Restart(int history = kDefaultAttemptHistory) {
    ControllerCore::Options options;
    options.features.attempt_history = history;
    core_ =
        std::make_unique<ControllerCore>(&store_, &fleet_, &clock_, options);
    ASSERT_THAT(core_->Load().status(), IsOk());
    for (int i = 0; i < 4; ++i) core_->SetNode(Node(i));
  }

  // Stores `js` as the API would and tells the controller.
  void Put(api::JobSet js) {
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

  // Changes the stored "train"'s spec as the API would.
  void SetSuspend(bool suspend) {
    const std::string key = store::keys::JobSetKey("default", "train");
    auto kv = store_.Get(key);
    ASSERT_TRUE(kv.ok() && kv->has_value());
    api::JobSet js;
    ASSERT_TRUE(js.ParseFromString((*kv)->value));
    js.mutable_spec()->set_suspend(suspend);
    ASSERT_THAT(store_
                    .Commit(store::Batch().Update(key, js.SerializeAsString(),
                                                  (*kv)->mod_revision))
                    .status(),
                IsOk());
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

  void Settle() {
    for (int i = 0; i < 20; ++i) {
      ASSERT_THAT(core_->Pass(), IsOk());
      std::optional<absl::Time> next = core_->NextWake();
      if (!next || *next > clock_.Now()) return;
    }
    FAIL() << "the controller never settled";
  }

  void Report(const std::string& node, const std::string& uid,
              const std::string& phase, int exit_code = 0) {
    PodReport r;
    r.node = node;
    r.pod_uid = uid;
    r.status.set_phase(phase);
    api::ContainerStatus* c = r.status.add_container_statuses();
    c->set_name("main");
    c->set_flat_state(phase == "Running" ? "running" : "terminated");
    c->set_exit_code(exit_code);
    core_->OnPodReport(r);
  }

  // Every running pod reports Running.
  std::vector<Ran> RunAll() {
    std::vector<Ran> ran;
    for (const auto& [uid, pod] : fleet_.running) {
      ran.push_back({pod.metadata().name(), uid, pod.spec().node_name()});
      Report(pod.spec().node_name(), uid, "Running");
    }
    Settle();
    return ran;
  }

  // One pod fails: the JobSet restarts; the others' stops are confirmed.
  void FailOne(const Ran& pod) {
    Report(pod.node, pod.uid, "Failed", 1);
    Settle();
    ConfirmStops();
    Settle();
  }

  void ConfirmStops() {
    for (const auto& [node, uid] : std::exchange(fleet_.stopped, {}))
      Report(node, uid, "Failed", 137);
  }

  // The pods stored of attempt `attempt` of "train".
  std::vector<Ran> Stored(int attempt) {
    absl::StatusOr<std::vector<StoredAttempt>> read =
        ReadAttemptPods(&store_, "default", "train", "js-uid", attempt);
    EXPECT_THAT(read.status(), IsOk());
    std::vector<Ran> out;
    if (!read.ok()) return out;
    for (const StoredAttempt& a : *read) {
      for (const AttemptPod& pod : a.pods)
        out.push_back({pod.name, pod.uid, pod.node});
    }
    return out;
  }

  // The attempts "train"'s stored history lists.
  std::vector<int32_t> HistoryAttempts() {
    auto kv = store_.Get(store::keys::AttemptHistoryKey("default", "train"));
    EXPECT_TRUE(kv.ok());
    std::vector<int32_t> out;
    if (!kv.ok() || !kv->has_value()) return out;
    api::AttemptHistory h;
    EXPECT_TRUE(h.ParseFromString((*kv)->value));
    EXPECT_EQ(h.jobset_uid(), "js-uid");
    for (const auto& a : h.attempts()) out.push_back(a.attempt());
    return out;
  }

  // Every key under `prefix`.
  std::vector<std::string> Keys(const std::string& prefix) {
    std::vector<std::string> keys;
    absl::StatusOr<store::ScanResult> scan = store_.Scan(prefix, "", 1000);
    EXPECT_THAT(scan.status(), IsOk());
    if (!scan.ok()) return keys;
    for (const store::KeyValue& kv : scan->kvs) keys.push_back(kv.key);
    return keys;
  }

  store::MemoryStore store_;
  FakeClock clock_;
  FakeFleet fleet_;
  std::unique_ptr<ControllerCore> core_;
};

api::JobSet Train(int max_restarts = 5) {
  return JobSetBuilder("train")
      .Replicated("workers", 2)
      .RestartPolicy("workers", "Never")
      .BackoffLimit("workers", 0)
      .FailurePolicy(max_restarts)
      .Build();
}

TEST_F(AttemptPodsTest, ARestartRecordsTheOldPodsAfterTheNewAttemptLaunches) {
  Put(Train());
  Settle();
  const std::vector<Ran> old = RunAll();
  ASSERT_THAT(old, SizeIs(2));
  // The failed pod's Job goes at once (its only pod has ended): the pass
  // after the restart's records it. The other waits for its pod's stop.
  Report(old[0].node, old[0].uid, "Failed", 1);
  Settle();
  EXPECT_THAT(Stored(0), ElementsAre(old[0]));
  ConfirmStops();
  // The pass that launches attempt 1 erases the other old Job, and does not
  // record it; the next one, which runs at once, does.
  ASSERT_THAT(core_->Pass(), IsOk());
  EXPECT_THAT(fleet_.running, SizeIs(2));
  EXPECT_THAT(Stored(0), ElementsAre(old[0]));
  EXPECT_EQ(core_->NextWake(), absl::InfinitePast());
  Settle();
  EXPECT_THAT(Stored(0), UnorderedElementsAreArray(old));
  EXPECT_THAT(HistoryAttempts(), ElementsAre(0));
  // Two parts: one per pass that erased some.
  EXPECT_THAT(Keys(store::keys::AttemptPodsPrefix("default", "train", 0)),
              SizeIs(2));
  EXPECT_THAT(Stored(1), IsEmpty());  // The current attempt runs.
}

TEST_F(AttemptPodsTest, OnlyTheLastKAttemptsAreKeptAcrossAControllerRestart) {
  Restart(/*history=*/3);
  Put(Train());
  Settle();
  std::vector<std::vector<Ran>> attempts;
  for (int attempt = 0; attempt < 4; ++attempt) {
    attempts.push_back(RunAll());
    FailOne(attempts.back()[0]);
    // The history survives a jobsetd restart.
    if (attempt == 1) Restart(/*history=*/3);
  }
  ASSERT_EQ(core_->FindJobSet("default", "train")->status().restarts(), 4);
  // Attempts 2..4 are kept (4 runs); 0 and 1 are gone, parts and all.
  EXPECT_THAT(HistoryAttempts(), ElementsAre(2, 3));
  EXPECT_THAT(Stored(0), IsEmpty());
  EXPECT_THAT(Stored(1), IsEmpty());
  EXPECT_THAT(Stored(2), UnorderedElementsAreArray(attempts[2]));
  EXPECT_THAT(Stored(3), UnorderedElementsAreArray(attempts[3]));
  for (const std::string& key : Keys(std::string(store::keys::kAttemptPods))) {
    EXPECT_TRUE(absl::StartsWith(key, store::keys::AttemptPodsPrefix(
                                          "default", "train", 2)) ||
                absl::StartsWith(
                    key, store::keys::AttemptPodsPrefix("default", "train", 3)))
        << key;
  }
  // The goodput ledger keeps as many attempts, so describe agrees.
  EXPECT_THAT(
      core_->FindJobSet("default", "train")->status().goodput().attempts(),
      SizeIs(3));
}

TEST_F(AttemptPodsTest, ASuspensionsPodsAreKeptUnderTheirAttempt) {
  Put(Train());
  Settle();
  const std::vector<Ran> before = RunAll();
  SetSuspend(true);
  Settle();
  ConfirmStops();
  Settle();
  ASSERT_THAT(fleet_.running, IsEmpty());
  EXPECT_THAT(Stored(0), UnorderedElementsAreArray(before));
  // Resumed, attempt 0 runs new pods; a restart then keeps both sets.
  SetSuspend(false);
  Settle();
  const std::vector<Ran> after = RunAll();
  ASSERT_THAT(after, SizeIs(2));
  FailOne(after[0]);
  std::vector<Ran> both = before;
  both.insert(both.end(), after.begin(), after.end());
  EXPECT_THAT(Stored(0), UnorderedElementsAreArray(both));
}

TEST_F(AttemptPodsTest, TheRecordsGoWithTheirJobSet) {
  Put(Train());
  Settle();
  FailOne(RunAll()[0]);
  ASSERT_THAT(Keys(std::string(store::keys::kAttemptPods)), Not(IsEmpty()));
  const std::string key = store::keys::JobSetKey("default", "train");
  ASSERT_THAT(store_.Commit(store::Batch().Delete(key)).status(), IsOk());
  Notify(key);
  Settle();
  EXPECT_THAT(Keys(std::string(store::keys::kAttemptPods)), IsEmpty());
  EXPECT_THAT(Keys(std::string(store::keys::kAttempts)), IsEmpty());
}

TEST_F(AttemptPodsTest, TheRecordsGoWithAJobSetItsTtlDeletes) {
  api::JobSet js = Train();
  js.mutable_spec()->set_ttl_seconds_after_finished(60);
  Put(js);
  Settle();
  FailOne(RunAll()[0]);
  for (const Ran& pod : RunAll()) Report(pod.node, pod.uid, "Succeeded");
  Settle();
  ASSERT_EQ(core_->FindJobSet("default", "train")->status().terminal_state(),
            "Completed");
  ASSERT_THAT(Keys(std::string(store::keys::kAttemptPods)), Not(IsEmpty()));
  clock_.SetTime(*core_->NextWake());
  Settle();
  ASSERT_EQ(core_->FindJobSet("default", "train"), nullptr);
  EXPECT_THAT(Keys(std::string(store::keys::kAttemptPods)), IsEmpty());
  EXPECT_THAT(Keys(std::string(store::keys::kAttempts)), IsEmpty());
}

// Deleted while jobsetd was down: the next jobsetd deletes the records; a
// new JobSet of the name does not inherit them.
TEST_F(AttemptPodsTest, RecordsOfAJobSetGoneMeanwhileAreDeletedAtLoad) {
  Put(Train());
  Settle();
  FailOne(RunAll()[0]);
  ASSERT_THAT(Keys(std::string(store::keys::kAttemptPods)), Not(IsEmpty()));
  // Another "train" (another uid) replaced it while no controller ran:
  // the old one's children went, its attempt records stayed.
  store::Batch replace;
  for (const char* prefix : {"jobs/", "pods/", "events/"}) {
    for (const std::string& key : Keys(prefix)) replace.Delete(key);
  }
  api::JobSet other = Train();
  api::SetJobSetDefaults(&other);
  other.mutable_metadata()->set_uid("other-uid");
  replace.Put(store::keys::JobSetKey("default", "train"),
              other.SerializeAsString());
  ASSERT_THAT(store_.Commit(replace).status(), IsOk());
  // And a history whose JobSet is gone.
  api::AttemptHistory gone;
  gone.set_jobset_uid("gone-uid");
  gone.add_attempts()->set_attempt(0);
  gone.mutable_attempts(0)->set_parts(1);
  ASSERT_THAT(
      store_
          .Commit(
              store::Batch()
                  .Put(store::keys::AttemptHistoryKey("ns", "gone"),
                       gone.SerializeAsString())
                  .Put(store::keys::AttemptPodsKey("ns", "gone", 0, 0), "x"))
          .status(),
      IsOk());
  Restart();
  Settle();
  EXPECT_THAT(Keys(std::string(store::keys::kAttemptPods)), IsEmpty());
  EXPECT_THAT(Keys(std::string(store::keys::kAttempts)), IsEmpty());
}

}  // namespace
}  // namespace jobset::scheduler
