#include "scheduler/controller/controller.h"

#include <utility>

#include "common/log.h"
#include "store/keys.h"

namespace jobset::scheduler {
namespace {

// How long the threads wait before looking at `stopping_` again.
constexpr absl::Duration kPoll = absl::Milliseconds(200);

}  // namespace

Controller::Controller(store::Store* store, AgentFleet* fleet, Clock* clock,
                       api::Features features)
    : store_(store), clock_(clock), core_(store, fleet, clock, features) {}

absl::StatusOr<std::unique_ptr<Controller>> Controller::Start(
    store::Store* store, AgentFleet* fleet, Clock* clock,
    api::Features features, ControllerMetrics* metrics,
    EventRetention retention) {
  auto controller =
      absl::WrapUnique(new Controller(store, fleet, clock, features));
  controller->core_.set_metrics(metrics);
  controller->core_.set_event_retention(retention);
  absl::StatusOr<int64_t> revision = controller->core_.Load();
  if (!revision.ok()) return revision.status();
  controller->core_.Announce();
  controller->loop_ = std::thread([c = controller.get()] { c->RunLoop(); });
  controller->watcher_ =
      std::thread([c = controller.get(), r = *revision] { c->WatchStore(r); });
  return controller;
}

Controller::~Controller() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  loop_.join();
  watcher_.join();
}

void Controller::Enqueue(Input input) {
  absl::MutexLock lock(&mu_);
  inputs_.push_back(std::move(input));
}

void Controller::SetNode(NodeInfo node) { Enqueue(std::move(node)); }

void Controller::ReportPod(PodReport report) { Enqueue(std::move(report)); }

void Controller::LoseNode(std::string name, std::string reason,
                          std::string message) {
  Enqueue(NodeLoss{std::move(name), std::move(reason), std::move(message)});
}

void Controller::WatchStore(int64_t revision) {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    absl::StatusOr<std::vector<store::Event>> events = store_->WaitForEvents(
        store::keys::kJobSets, revision, absl::Now() + kPoll, 1000);
    if (!events.ok()) {
      // Fell behind the history: the loop reloads; watch from the present.
      absl::MutexLock lock(&mu_);
      resync_ = true;
      revision = store_->CurrentRevision();
      continue;
    }
    if (events->empty()) continue;
    revision = events->back().kv.mod_revision;
    absl::MutexLock lock(&mu_);
    for (store::Event& e : *events) inputs_.push_back(std::move(e));
  }
}

void Controller::RunLoop() {
  while (true) {
    std::deque<Input> inputs;
    bool resync = false;
    {
      absl::MutexLock lock(&mu_);
      const std::optional<absl::Time> wake = core_.NextWake();
      // Timers run on the injected clock; the wait itself is bounded so a
      // FakeClock cannot stall shutdown.
      absl::Time deadline = absl::Now() + kPoll;
      if (wake.has_value()) {
        deadline =
            std::min(deadline, absl::Now() + std::max(absl::ZeroDuration(),
                                                      *wake - clock_->Now()));
      }
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || resync_ || !inputs_.empty();
      };
      mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
      if (stopping_) return;
      inputs.swap(inputs_);
      resync = std::exchange(resync_, false);
    }
    if (resync) {
      absl::StatusOr<int64_t> loaded = core_.Load();
      if (!loaded.ok()) {
        JOBSET_LOG(FATAL) << "controller: reloading the store failed: "
                          << loaded.status().ToString();
      }
      core_.Announce();
    }
    for (Input& input : inputs) {
      if (auto* node = std::get_if<NodeInfo>(&input)) {
        core_.SetNode(std::move(*node));
      } else if (auto* report = std::get_if<PodReport>(&input)) {
        core_.OnPodReport(*report);
      } else if (auto* loss = std::get_if<NodeLoss>(&input)) {
        core_.LoseNode(loss->name, loss->reason, loss->message);
      } else {
        core_.OnJobSetEvent(std::get<store::Event>(input));
      }
    }
    // A failed commit leaves memory ahead of the store: crash, and let the
    // restart rebuild from what is durable.
    absl::Status status = core_.Pass();
    if (!status.ok()) {
      JOBSET_LOG(FATAL) << "controller: commit failed: " << status.ToString();
    }
  }
}

}  // namespace jobset::scheduler
