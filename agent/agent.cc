#include "agent/agent.h"

#include <map>
#include <utility>
#include <vector>

#include "common/log.h"

namespace jobset::agent {
namespace {

// The shortest time between two ticks woken by the runtime's changes.
constexpr absl::Duration kMinTick = absl::Milliseconds(5);

SchedulerStream::Options StreamOptions(const Agent::Options& options) {
  SchedulerStream::Options s;
  s.scheduler = options.scheduler;
  s.min_backoff = options.min_backoff;
  s.max_backoff = options.max_backoff;
  s.credentials = options.credentials;
  s.server_name = options.server_name;
  s.metrics = options.metrics;
  return s;
}

}  // namespace

Agent::Agent(Options options, Runtime* runtime, Clock* clock)
    : options_(std::move(options)),
      runtime_(runtime),
      clock_(clock),
      progress_clock_(
          options_.progress_clock != nullptr ? options_.progress_clock : clock),
      reporter_(options_.metrics),
      progress_(ProgressWatcher::Options{
          .interval = options_.progress_report_interval,
          .metrics = options_.metrics}),
      lease_(options_.lease, runtime, clock),
      pods_(PodSet::Options{.gpu_capacity =
                                PodSet::GpuCapacity(options_.registration),
                            .state_dir = options_.state_dir},
            runtime, clock, &reporter_,
            [this](const api::AgentMessage& msg) { return stream_.Send(msg); }),
      logs_(options_.log_retention, options_.log_sweep),
      stream_(
          StreamOptions(options_),
          SchedulerStream::Handler{
              .hello =
                  [this] {
                    // The attempts before the list (PodSet::Attempts).
                    PodReporter::AttemptOf attempts = pods_.Attempts();
                    return PodReporter::Hello(options_.registration,
                                              runtime_->List(), attempts);
                  },
              .hello_sent =
                  [this](const api::AgentMessage& hello) {
                    reporter_.HelloSent(hello);
                    progress_.Resend();
                    lease_.StreamOpened();
                  },
              .heard = [this](absl::Time now) { lease_.Heard(now); },
              .handle =
                  [this](const api::SchedulerMessage& msg) { OnMessage(msg); },
              .revoked = options_.on_revoked,
          },
          clock) {}

Agent::~Agent() { Shutdown(); }

void Agent::Start() {
  pods_.Load();
  if (options_.metrics != nullptr) {
    options_.metrics->reattached.Increment(
        static_cast<double>(runtime_->List().size()));
  }
  if (absl::Status lease = lease_.Install(); !lease.ok()) {
    JOBSET_LOG(ERROR) << "setting the lease: " << lease;
  }
  stream_.Start();
  tick_thread_ = std::thread([this] { TickLoop(); });
}

void Agent::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  stream_.Shutdown();
  if (tick_thread_.joinable()) tick_thread_.join();
}

bool Agent::welcomed() { return stream_.welcomed(); }
int64_t Agent::connects() { return stream_.connects(); }
bool Agent::revoked() { return stream_.revoked(); }

bool Agent::AwaitWelcomed(bool want, absl::Duration timeout) {
  return stream_.AwaitWelcomed(want, timeout);
}

bool Agent::AwaitRevoked(absl::Duration timeout) {
  return stream_.AwaitRevoked(timeout);
}

void Agent::Handle(const api::SchedulerMessage& msg) { stream_.Dispatch(msg); }

void Agent::OnMessage(const api::SchedulerMessage& msg) {
  switch (msg.kind_case()) {
    case api::SchedulerMessage::kWelcome:
      pods_.Reconcile(msg.welcome());
      lease_.Welcomed();
      break;
    case api::SchedulerMessage::kRun:
      pods_.Run(msg.run());
      break;
    case api::SchedulerMessage::kStop:
      pods_.Stop(msg.stop().pod_uid());
      break;
    case api::SchedulerMessage::kRelease:
      pods_.Release(msg.release().pod_uid());
      break;
    case api::SchedulerMessage::kLogRequest: {
      api::AgentMessage reply;
      *reply.mutable_log_chunk() = ReadLogChunk(*runtime_, msg.log_request());
      stream_.Send(reply);
      break;
    }
    default:
      break;
  }
}

void Agent::TickLoop() {
  absl::Time last = absl::InfinitePast();
  auto stopping = [this]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      // A runtime that tells of changes wakes the tick early (a pod's exit
      // or start is reported at once), but at most every kMinTick; one that
      // cannot is polled every tick.
      const absl::Duration since = clock_->Now() - last;
      const absl::Duration pause =
          since < kMinTick ? kMinTick - since : absl::ZeroDuration();
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping), pause)) return;
    }
    if (!runtime_->WaitForChange(options_.tick)) {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping), options_.tick))
        return;
    }
    last = clock_->Now();
    Tick();
  }
}

void Agent::Tick() {
  const absl::Time now = clock_->Now();
  const bool welcomed = stream_.Tick(now);
  logs_.MaybeSweep(*runtime_, now);
  // The attempts before the list, and before FinishRestarts below changes
  // them: each listed status goes with the attempt it is of, or an earlier
  // one that jobsetd fences (PodSet::Attempts).
  const PodReporter::AttemptOf attempts = pods_.Attempts();
  std::vector<PodState> pods = runtime_->List();
  lease_.Enforce(now, pods);
  pods_.FinishRestarts(pods);
  reporter_.Record(pods);
  // Read while disconnected too: the rates need every reading.
  progress_.Read(ProgressPods(pods), progress_clock_->Now());
  if (options_.metrics != nullptr)
    options_.metrics->connected.Set(welcomed ? 1 : 0);
  if (!welcomed) return;
  reporter_.Report(
      std::move(pods), runtime_->TakeEvents(), now, attempts,
      [this](const api::AgentMessage& msg) { return stream_.Send(msg); });
  progress_.Report(
      progress_clock_->Now(),
      [this](const api::AgentMessage& msg) { return stream_.Send(msg); });
}

std::vector<ProgressWatcher::Pod> Agent::ProgressPods(
    const std::vector<PodState>& pods) {
  std::vector<ProgressWatcher::Pod> out;
  out.reserve(pods.size());
  for (const PodState& pod : pods) {
    ProgressWatcher::Pod p;
    p.uid = pod.uid;
    p.dir = runtime_->ProgressDir(pod.uid);
    p.attempt = pods_.AttemptRunning(pod.uid);
    // A container restarted runs its training anew (from a checkpoint).
    for (const api::ContainerStatus& c : pod.status.container_statuses())
      p.restarts += c.restart_count();
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace jobset::agent
