#ifndef JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_H_
#define JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/controller/controller_core.h"

namespace jobset::scheduler {

// Runs a ControllerCore on its own thread, the single writer of scheduling
// state. Other threads (gRPC handlers, agent streams) only enqueue: node
// changes and pod reports through this class, JobSet changes through the
// store, which a second thread watches. Each wake-up drains everything
// queued and runs one pass, so a burst of events costs one commit.
// Thread-safe.
class Controller final : public NodeSink {
 public:
  // Loads the state from `store` and starts both threads. `store` and
  // `fleet` must outlive the Controller. A pass whose commit fails (the
  // store's error, or conflicts past the Applier's retries) tells the fleet
  // nothing; the controller then reloads from the store, as after a crash,
  // and goes on. Only a store that cannot be read at all stops it.
  static absl::StatusOr<std::unique_ptr<Controller>> Start(
      store::Store* store, AgentFleet* fleet, Clock* clock,
      api::Features features, ControllerMetrics* metrics = nullptr,
      EventRetention retention = {},
      int64_t max_pods_per_attempt = kDefaultMaxPodsPerAttempt,
      const ProgressSource* progress = nullptr,
      ControllerCore::Options::Quarantine quarantine = {});

  // Stops both threads (a pass in progress completes).
  ~Controller() override;

  void SetNode(NodeInfo node) override;
  void ReportPod(PodReport report) override;
  void LoseNode(std::string name, std::string reason,
                std::string message) override;

  // Passes whose commit failed (each followed by a reload).
  int64_t failed_passes() const {
    return passes_failed_.load(std::memory_order_relaxed);
  }

 private:
  struct NodeLoss {
    std::string name, reason, message;
  };
  // A Secret or ConfigMap changed (its key only: no value is queued); an
  // empty key: the watch of them fell behind, retry every waiting pod.
  struct ConfigChange {
    std::string key;
  };
  // A change of a Kueue object (under kueue/), with its value; an empty key:
  // the watch of them fell behind, read them all again.
  struct KueueChange {
    store::Event event;
  };
  using Input = std::variant<NodeInfo, PodReport, NodeLoss, store::Event,
                             ConfigChange, KueueChange>;

  Controller(store::Store* store, AgentFleet* fleet, Clock* clock,
             ControllerCore::Options options);
  void RunLoop();
  // Rebuilds the core from the store, re-announces the placed pods and
  // applies `replay` again.
  void Reload(std::deque<Input>& replay);
  // Hands `input` to the core (a copy: it may be replayed).
  void Apply(Input& input);
  // Watches JobSets, and Secrets and ConfigMaps (for pods waiting on
  // them), from `revision`.
  void WatchStore(int64_t revision);
  void Enqueue(Input input);

  store::Store* const store_;
  Clock* const clock_;
  ControllerCore core_;  // Only the loop thread touches it after Start.

  absl::Mutex mu_;
  std::deque<Input> inputs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Set when the watch fell behind the store's history: reload everything.
  bool resync_ ABSL_GUARDED_BY(mu_) = false;

  std::atomic<int64_t> passes_failed_{0};

  std::thread loop_;
  std::thread watcher_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_H_
