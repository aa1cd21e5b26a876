// The threaded Controller: JobSet changes arrive through the store's watch,
// reports through ReportPod, and each wake-up runs a pass.
#include "scheduler/controller/controller.h"

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/defaults.h"
#include "api/jobset_builder.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/controller/limits.h"
#include "scheduler/records/constants.h"
#include "store/forwarding_store.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using ::testing::HasSubstr;

class RecordingFleet : public AgentFleet {
 public:
  void Run(Assignment order) override {
    absl::MutexLock lock(&mu_);
    running_.push_back(order.Pod());
  }
  void Stop(const std::string&, const std::string&) override {}
  void Release(const std::string&, const std::string&) override {}
  std::vector<api::Pod> running() {
    absl::MutexLock lock(&mu_);
    return running_;
  }

 private:
  absl::Mutex mu_;
  std::vector<api::Pod> running_ ABSL_GUARDED_BY(mu_);
};

// Polls `done` every 10 ms for up to 10 s.
bool Eventually(const std::function<bool()>& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(10));
  }
  return done();
}

// Reports every pod of `pods` (on node-0) succeeded.
void ReportSucceeded(Controller& controller,
                     const std::vector<api::Pod>& pods) {
  for (const api::Pod& pod : pods) {
    PodReport r;
    r.node = "node-0";
    r.pod_uid = pod.metadata().uid();
    r.status.set_phase("Succeeded");
    controller.ReportPod(r);
  }
}

TEST(ControllerTest, RunsAJobSetFromTheStoreToCompletion) {
  store::MemoryStore store;
  RecordingFleet fleet;
  auto controller = Controller::Start(&store, &fleet, RealClock::Get(),
                                      {.restart_job = true});
  ASSERT_THAT(controller.status(), IsOk());
  NodeInfo node;
  node.name = "node-0";
  node.address = "10.0.0.1";
  node.allocatable.cpu_millis = 8000;
  node.allocatable.memory_bytes = int64_t{8} << 30;
  (*controller)->SetNode(node);

  api::JobSet js =
      api::testing::JobSetBuilder("train").Replicated("workers", 2).Build();
  api::SetJobSetDefaults(&js);
  js.mutable_metadata()->set_uid("uid");
  const std::string key = store::keys::JobSetKey("default", "train");
  ASSERT_THAT(
      store.Commit(store::Batch().Create(key, js.SerializeAsString())).status(),
      IsOk());
  ASSERT_TRUE(Eventually([&] { return fleet.running().size() == 2; }));
  ReportSucceeded(**controller, fleet.running());
  ASSERT_TRUE(Eventually([&] {
    auto kv = store.Get(key);
    api::JobSet stored;
    return kv.ok() && kv->has_value() && stored.ParseFromString((*kv)->value) &&
           stored.status().terminal_state() == "Completed";
  }));
}

// A MemoryStore whose commits the test can make fail: the first
// `aborts` commits conflict (ABORTED), and any batch writing a key that
// starts with `refuse_prefix` is refused as INVALID_ARGUMENT naming the key,
// as the store refuses a value over its limit.
class FaultyStore : public store::ForwardingStore {
 public:
  FaultyStore() : ForwardingStore(&inner) {}

  absl::StatusOr<int64_t> Commit(const store::Batch& batch) override {
    {
      absl::MutexLock lock(&mu_);
      if (aborts_ > 0) {
        --aborts_;
        ++aborted_;
        return absl::AbortedError("conflict");
      }
      if (!refuse_prefix_.empty()) {
        for (const store::Batch::Op& op : batch.ops()) {
          if (absl::StartsWith(op.key, refuse_prefix_)) {
            ++refused_;
            return absl::InvalidArgumentError(
                absl::StrCat("store: value of 4000000 bytes at \"", op.key,
                             "\" exceeds the limit of 3145728 bytes"));
          }
        }
      }
    }
    return ForwardingStore::Commit(batch);
  }

  void Abort(int n) {
    absl::MutexLock lock(&mu_);
    aborts_ = n;
  }
  void Refuse(std::string prefix) {
    absl::MutexLock lock(&mu_);
    refuse_prefix_ = std::move(prefix);
  }
  int aborted() {
    absl::MutexLock lock(&mu_);
    return aborted_;
  }
  int refused() {
    absl::MutexLock lock(&mu_);
    return refused_;
  }

  store::MemoryStore inner;  // Writes here bypass the faults.

 private:
  absl::Mutex mu_;
  int aborts_ ABSL_GUARDED_BY(mu_) = 0;
  int aborted_ ABSL_GUARDED_BY(mu_) = 0;
  int refused_ ABSL_GUARDED_BY(mu_) = 0;
  std::string refuse_prefix_ ABSL_GUARDED_BY(mu_);
};

// A fleet that checks every order against the store: a pod it is told to
// run must already be stored (acknowledged = durable).
class CheckingFleet : public RecordingFleet {
 public:
  explicit CheckingFleet(store::Store* store) : store_(store) {}
  void Run(Assignment order) override {
    const api::Pod pod = order.Pod();
    const std::string key = store::keys::JobPodsKey(
        pod.metadata().namespace_(), pod.metadata().labels().at(kJobSetNameKey),
        order.job->metadata().name());
    auto kv = store_->Get(key);
    if (!kv.ok() || !kv->has_value()) undurable_.fetch_add(1);
    RecordingFleet::Run(std::move(order));
  }
  int undurable() const { return undurable_.load(); }

 private:
  store::Store* const store_;
  std::atomic<int> undurable_{0};
};

NodeInfo BigNode() {
  NodeInfo node;
  node.name = "node-0";
  node.address = "10.0.0.1";
  node.allocatable.cpu_millis = 64000;
  node.allocatable.memory_bytes = int64_t{64} << 30;
  return node;
}

// A defaulted JobSet of `replicas` one-pod Jobs, serialized.
std::string Spec(const std::string& name, int replicas) {
  api::JobSet js =
      api::testing::JobSetBuilder(name).Replicated("workers", replicas).Build();
  api::SetJobSetDefaults(&js);
  js.mutable_metadata()->set_uid(absl::StrCat(name, "-uid"));
  return js.SerializeAsString();
}

void SubmitTo(store::Store& store, const std::string& name, int replicas) {
  ASSERT_THAT(
      store
          .Commit(store::Batch().Create(store::keys::JobSetKey("default", name),
                                        Spec(name, replicas)))
          .status(),
      IsOk());
}

api::JobSet Stored(store::Store& store, const std::string& name) {
  api::JobSet js;
  auto kv = store.Get(store::keys::JobSetKey("default", name));
  if (kv.ok() && kv->has_value()) js.ParseFromString((*kv)->value);
  return js;
}

// Issue 19: after the Applier's last ABORTED retry the pass fails, the
// fleet is told nothing, and the controller reloads from the store (it
// used to crash) and converges.
TEST(ControllerTest, ACommitAbortedPastItsRetriesIsReloadedAndConverges) {
  FaultyStore store;
  CheckingFleet fleet(&store);
  // Every commit of the first pass and of its retries conflicts.
  store.Abort(Applier::kMaxCommitAttempts);
  auto controller = Controller::Start(&store, &fleet, RealClock::Get(),
                                      {.restart_job = true});
  ASSERT_THAT(controller.status(), IsOk());
  (*controller)->SetNode(BigNode());
  SubmitTo(store.inner, "train", 2);
  ASSERT_TRUE(Eventually([&] { return fleet.running().size() == 2; }));
  EXPECT_EQ(store.aborted(), Applier::kMaxCommitAttempts);
  EXPECT_EQ((*controller)->failed_passes(), 1);
  EXPECT_EQ(fleet.undurable(), 0);
  EXPECT_EQ(fleet.running().size(), 2);
}

// The reports of a pass whose commit failed are applied again after the
// reload: agents report an exit once, and it is not lost with the pass.
TEST(ControllerTest, ReportsOfAFailedPassAreNotLost) {
  FaultyStore store;
  CheckingFleet fleet(&store);
  auto controller = Controller::Start(&store, &fleet, RealClock::Get(),
                                      {.restart_job = true});
  ASSERT_THAT(controller.status(), IsOk());
  (*controller)->SetNode(BigNode());
  SubmitTo(store.inner, "train", 2);
  ASSERT_TRUE(Eventually([&] { return fleet.running().size() == 2; }));
  store.Abort(Applier::kMaxCommitAttempts);
  ReportSucceeded(**controller, fleet.running());
  ASSERT_TRUE(Eventually([&] {
    return Stored(store, "train").status().terminal_state() == "Completed";
  }));
  EXPECT_EQ(store.aborted(), Applier::kMaxCommitAttempts);
  EXPECT_GE((*controller)->failed_passes(), 1);
}

// Issue 19: a commit the store refuses as INVALID_ARGUMENT (a record over
// its limit) fails the JobSet that wrote it, with the store's error; the
// controller goes on, and the other JobSets of the pass run.
TEST(ControllerTest, ACommitRefusedAsInvalidFailsItsJobSetNotTheController) {
  FaultyStore store;
  CheckingFleet fleet(&store);
  store.Refuse(absl::StrCat(store::keys::kPods, "default/big/"));
  auto controller = Controller::Start(&store, &fleet, RealClock::Get(),
                                      {.restart_job = true});
  ASSERT_THAT(controller.status(), IsOk());
  (*controller)->SetNode(BigNode());
  // Both in one batch, so that the refusal takes the other's writes too.
  ASSERT_THAT(
      store.inner
          .Commit(store::Batch()
                      .Create(store::keys::JobSetKey("default", "big"),
                              Spec("big", 2))
                      .Create(store::keys::JobSetKey("default", "small"),
                              Spec("small", 3)))
          .status(),
      IsOk());
  ASSERT_TRUE(Eventually([&] {
    return Stored(store, "big").status().terminal_state() == "Failed" &&
           fleet.running().size() == 3;
  }));
  EXPECT_GE(store.refused(), 1);
  EXPECT_GE((*controller)->failed_passes(), 1);
  const api::JobSet big = Stored(store, "big");
  bool found = false;
  for (const api::Condition& c : big.status().conditions()) {
    if (c.type() != "Failed") continue;
    found = true;
    EXPECT_EQ(c.status(), "True");
    EXPECT_EQ(c.reason(), kReasonCommitRefused);
    EXPECT_THAT(c.message(), HasSubstr("pods/default/big/"));
  }
  EXPECT_TRUE(found);
  // Only "small"'s pods ran, each after its commit.
  for (const api::Pod& pod : fleet.running())
    EXPECT_EQ(pod.metadata().labels().at(kJobSetNameKey), "small");
  EXPECT_EQ(fleet.undurable(), 0);
  // Still serving: a new JobSet runs.
  SubmitTo(store.inner, "later", 1);
  ASSERT_TRUE(Eventually([&] { return fleet.running().size() == 4; }));
}

// Issue 19: jobsetd used to refuse to start (or exhaust memory) over a
// store holding a record that does not decode or a JobSet that cannot
// expand. Now it starts, serves, and fails the JobSet with the reason.
TEST(ControllerTest, StartsOverAnUndecodableRecordAndAJobSetThatCannotExpand) {
  store::MemoryStore store;
  RecordingFleet fleet;
  ASSERT_THAT(
      store
          .Commit(store::Batch()
                      .Put(store::keys::JobSetKey("default", "bad"), "\xff\xff")
                      .Put(store::keys::JobSetKey("default", "huge"),
                           Spec("huge", 2'000'000'000)))
          .status(),
      IsOk());
  auto controller = Controller::Start(&store, &fleet, RealClock::Get(),
                                      {.restart_job = true});
  ASSERT_THAT(controller.status(), IsOk());
  (*controller)->SetNode(BigNode());
  SubmitTo(store, "train", 2);
  ASSERT_TRUE(Eventually([&] {
    return fleet.running().size() == 2 &&
           Stored(store, "huge").status().terminal_state() == "Failed";
  }));
  bool reason = false;
  const api::JobSet huge = Stored(store, "huge");
  for (const api::Condition& c : huge.status().conditions())
    reason |= c.type() == "Failed" && c.reason() == kReasonTooManyPods;
  EXPECT_TRUE(reason);
  auto bad = store.Get(store::keys::JobSetKey("default", "bad"));
  ASSERT_TRUE(bad.ok() && bad->has_value());
  EXPECT_EQ((*bad)->value, "\xff\xff");
}

}  // namespace
}  // namespace jobset::scheduler
