// The threaded Controller: JobSet changes arrive through the store's watch,
// reports through ReportPod, and each wake-up runs a pass.
#include "scheduler/controller/controller.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "api/defaults.h"
#include "api/jobset_builder.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gtest/gtest.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;

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
  for (const api::Pod& pod : fleet.running()) {
    PodReport r;
    r.node = "node-0";
    r.pod_uid = pod.metadata().uid();
    r.status.set_phase("Succeeded");
    (*controller)->ReportPod(r);
  }
  ASSERT_TRUE(Eventually([&] {
    auto kv = store.Get(key);
    api::JobSet stored;
    return kv.ok() && kv->has_value() && stored.ParseFromString((*kv)->value) &&
           stored.status().terminal_state() == "Completed";
  }));
}

}  // namespace
}  // namespace jobset::scheduler
