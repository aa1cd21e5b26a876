#ifndef JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_H_
#define JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_H_

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
  // `fleet` must outlive the Controller.
  static absl::StatusOr<std::unique_ptr<Controller>> Start(
      store::Store* store, AgentFleet* fleet, Clock* clock,
      api::Features features, ControllerMetrics* metrics = nullptr,
      EventRetention retention = {});

  // Stops both threads (a pass in progress completes).
  ~Controller() override;

  void SetNode(NodeInfo node) override;
  void ReportPod(PodReport report) override;
  void LoseNode(std::string name, std::string reason,
                std::string message) override;

 private:
  struct NodeLoss {
    std::string name, reason, message;
  };
  using Input = std::variant<NodeInfo, PodReport, NodeLoss, store::Event>;

  Controller(store::Store* store, AgentFleet* fleet, Clock* clock,
             api::Features features);
  void RunLoop();
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

  std::thread loop_;
  std::thread watcher_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_H_
