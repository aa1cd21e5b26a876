#include "scheduler/controller/controller.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>
#include <variant>

#include "common/clock.h"
#include "common/log.h"
#include "store/keys.h"

namespace jobset::scheduler {
namespace {

// How long the threads wait before looking at `stopping_` again.
constexpr absl::Duration kPoll = absl::Milliseconds(200);
// After a failed pass, the pause before the reload and the next try.
constexpr absl::Duration kMinRetryBackoff = absl::Milliseconds(50);
constexpr absl::Duration kMaxRetryBackoff = absl::Seconds(5);
// At most this many inputs are kept to apply again after a reload.
constexpr size_t kMaxUnsettled = 200'000;

}  // namespace

Controller::Controller(store::Store* store, AgentFleet* fleet, Clock* clock,
                       ControllerCore::Options options)
    : store_(store), clock_(clock), core_(store, fleet, clock, options) {}

absl::StatusOr<std::unique_ptr<Controller>> Controller::Start(
    store::Store* store, AgentFleet* fleet, Clock* clock,
    api::Features features, ControllerMetrics* metrics,
    EventRetention retention, int64_t max_pods_per_attempt,
    const ProgressSource* progress,
    ControllerCore::Options::Quarantine quarantine) {
  auto controller = absl::WrapUnique(
      new Controller(store, fleet, clock,
                     {.features = features,
                      .metrics = metrics,
                      .event_retention = retention,
                      .max_pods_per_attempt = max_pods_per_attempt,
                      .progress = progress,
                      .quarantine = std::move(quarantine)}));
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
  // Secrets and ConfigMaps are looked at between waits for JobSets (at
  // most kPoll late): only their keys are queued, never their values.
  int64_t config_revisions[2] = {revision, revision};
  int64_t kueue_revision = revision;
  const absl::string_view config_prefixes[2] = {store::keys::kSecrets,
                                                store::keys::kConfigMaps};
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<std::vector<store::Event>> changes = store_->WaitForEvents(
          config_prefixes[i], config_revisions[i], absl::InfinitePast(), 1000,
          &config_revisions[i]);
      if (!changes.ok()) {
        config_revisions[i] = store_->CurrentRevision();
        Enqueue(ConfigChange{});
        continue;
      }
      if (changes->empty()) continue;
      absl::MutexLock lock(&mu_);
      for (const store::Event& e : *changes)
        inputs_.push_back(ConfigChange{e.kv.key});
    }
    // Kueue's objects likewise, with their values (they are small and few
    // beside JobSets). Falling behind them (no Kueue change for longer than
    // the watch history holds) reads them all again, not the whole state.
    absl::StatusOr<std::vector<store::Event>> kueue =
        store_->WaitForEvents(store::keys::kKueue, kueue_revision,
                              absl::InfinitePast(), 1000, &kueue_revision);
    if (!kueue.ok()) {
      kueue_revision = store_->CurrentRevision();
      Enqueue(KueueChange{});
    } else if (!kueue->empty()) {
      absl::MutexLock lock(&mu_);
      for (store::Event& e : *kueue)
        inputs_.push_back(KueueChange{std::move(e)});
    }
    absl::StatusOr<std::vector<store::Event>> events = store_->WaitForEvents(
        store::keys::kJobSets, revision, RealDeadline(kPoll), 1000, &revision);
    if (!events.ok()) {
      // Fell behind the history: the loop reloads; watch from the present.
      absl::MutexLock lock(&mu_);
      resync_ = true;
      revision = store_->CurrentRevision();
      continue;
    }
    if (events->empty()) continue;
    absl::MutexLock lock(&mu_);
    for (store::Event& e : *events) inputs_.push_back(std::move(e));
  }
}

void Controller::Reload(std::deque<Input>& replay) {
  absl::StatusOr<int64_t> loaded = core_.Load();
  if (!loaded.ok()) {
    // Load fails only when the store cannot be read (a record that does not
    // decode is set aside, not an error): the data directory is gone or the
    // store is unusable, and no state to schedule from exists. This is the
    // one error the controller does not survive; a restart of jobsetd (by
    // its supervisor) tries the store again.
    JOBSET_LOG(FATAL) << "controller: reading the store failed: "
                      << loaded.status().ToString();
  }
  core_.Announce();
  for (Input& input : replay) Apply(input);
}

void Controller::Apply(Input& input) {
  // Inputs are kept until the core settles (replayed after a reload), so
  // they are copied into the core, not moved.
  if (const auto* node = std::get_if<NodeInfo>(&input)) {
    core_.SetNode(*node);
  } else if (const auto* report = std::get_if<PodReport>(&input)) {
    core_.OnPodReport(*report);
  } else if (const auto* loss = std::get_if<NodeLoss>(&input)) {
    core_.LoseNode(loss->name, loss->reason, loss->message);
  } else if (const auto* config = std::get_if<ConfigChange>(&input)) {
    if (config->key.empty()) {
      core_.RetryConfigs();
    } else {
      core_.OnConfigEvent(config->key);
    }
  } else if (const auto* kueue = std::get_if<KueueChange>(&input)) {
    core_.OnKueueEvent(kueue->event);
  } else {
    core_.OnJobSetEvent(std::get<store::Event>(input));
  }
}

void Controller::RunLoop() {
  // The inputs applied since the core last had nothing left to do: a
  // reload (after a failed pass, or when the watch fell behind) forgets
  // what they did, so they are applied again after it; a report is not lost
  // with the pass that was to store it.
  std::deque<Input> unsettled;
  bool trimmed = false;  // Said so since the core last settled.
  absl::Duration backoff = kMinRetryBackoff;
  while (true) {
    std::deque<Input> inputs;
    bool resync = false;
    {
      absl::MutexLock lock(&mu_);
      const std::optional<absl::Time> wake = core_.NextWake();
      // Timers run on the injected clock; the wait itself is bounded so a
      // FakeClock cannot stall shutdown.
      absl::Duration wait = kPoll;
      if (wake.has_value()) {
        wait = std::min(wait,
                        std::max(absl::ZeroDuration(), *wake - clock_->Now()));
      }
      const absl::Time deadline = RealDeadline(wait);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || resync_ || !inputs_.empty();
      };
      mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
      if (stopping_) return;
      inputs.swap(inputs_);
      resync = std::exchange(resync_, false);
    }
    if (resync) Reload(unsettled);
    for (Input& input : inputs) {
      Apply(input);
      // What Load cannot rebuild: JobSet changes are in the store and nodes
      // survive a Load, but reports and node losses change pods in memory.
      if (std::holds_alternative<PodReport>(input) ||
          std::holds_alternative<NodeLoss>(input)) {
        unsettled.push_back(std::move(input));
      }
    }
    if (unsettled.size() > kMaxUnsettled) {
      // A core that never settles (always more dirty JobSets than a pass
      // takes) must not grow this without bound: the oldest go, and a
      // reload before they settle forgets them (their agents report again
      // when they reconnect).
      if (!trimmed) {
        JOBSET_LOG(WARNING) << "controller: over " << kMaxUnsettled
                            << " inputs not yet settled; a reload now would "
                               "forget the oldest";
        trimmed = true;
      }
      unsettled.erase(unsettled.begin(),
                      unsettled.end() - static_cast<ptrdiff_t>(kMaxUnsettled));
    }
    absl::Status status = core_.Pass();
    if (status.ok()) {
      backoff = kMinRetryBackoff;
      if (core_.NextWake() != absl::InfinitePast()) {
        unsettled.clear();
        trimmed = false;
      }
      continue;
    }
    // Nothing of the pass reached the agents, but memory is ahead of the
    // store: reload what is durable, as a restart would, and try again
    // (JobSets whose records the store refused fail at the reload). A store
    // that keeps failing (a full disk) is retried with a growing pause.
    passes_failed_.fetch_add(1, std::memory_order_relaxed);
    JOBSET_LOG(ERROR) << "controller: commit failed, reloading from the "
                         "store in "
                      << absl::FormatDuration(backoff) << ": "
                      << status.ToString();
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), backoff)) return;
    }
    backoff = std::min(backoff * 2, kMaxRetryBackoff);
    Reload(unsettled);
  }
}

}  // namespace jobset::scheduler
