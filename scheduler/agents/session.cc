#include "scheduler/agents/session.h"

#include <utility>

#include "common/log.h"
#include "scheduler/records/constants.h"

namespace jobset::scheduler {

api::PodAssignment ToAssignment(const Assignment& desired) {
  api::PodAssignment a;
  *a.mutable_pod() = desired.Pod();
  // The attempt's table, compressed once for all its pods: a P-pod attempt
  // sends P copies of one small string, not P x P entries.
  if (desired.hosts != nullptr) a.set_hosts_table(desired.hosts->Encoded());
  a.set_stop(desired.stop);
  if (desired.job != nullptr) {
    const auto& annotations = desired.job->metadata().annotations();
    if (auto it = annotations.find(kPodSecurityLevelKey);
        it != annotations.end()) {
      a.set_pod_security_level(it->second);
    }
  }
  if (desired.config != nullptr) {
    for (const api::ConfigVolume& v : desired.config->volumes)
      *a.add_config_volumes() = v;
    for (const api::RegistryCredential& c : desired.config->pull_credentials)
      *a.add_pull_credentials() = c;
  }
  return a;
}

bool AgentSession::Pop(api::SchedulerMessage* msg, absl::Duration wait,
                       bool* timed_out) {
  Outgoing next;
  {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return closed_ || !out_.empty();
    };
    const bool woke = mu_.AwaitWithTimeout(absl::Condition(&ready), wait);
    if (timed_out != nullptr) *timed_out = !woke;
    if (closed_ || out_.empty()) return false;
    next = std::move(out_.front());
    out_.pop_front();
  }
  Build(std::move(next), msg);
  return true;
}

AgentSession::Next AgentSession::TryPop(api::SchedulerMessage* msg) {
  Outgoing next;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return Next::kClosed;
    if (out_.empty()) return Next::kEmpty;
    next = std::move(out_.front());
    out_.pop_front();
  }
  Build(std::move(next), msg);
  return Next::kMessage;
}

// Built outside the lock, so the hub (and the controller thread behind it)
// never waits for a pod or a whole desired set to be built.
void AgentSession::Build(Outgoing next, api::SchedulerMessage* msg) {
  *msg = std::move(next.message);
  if (next.run.has_value()) {
    *msg->mutable_run() = ToAssignment(*next.run);
    if (stages_ != nullptr)
      stages_->Sent(next.run->uid(), next.run->bound, clock_->Now());
  }
  if (!next.pods.empty()) {
    api::Welcome* welcome = msg->mutable_welcome();
    welcome->mutable_pods()->Reserve(next.pods.size());
    for (const Assignment& pod : next.pods)
      *welcome->add_pods() = ToAssignment(pod);
  }
}

void AgentSession::SetWake(std::function<void()> wake) {
  std::function<void()> now;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return;
    wake_ = std::move(wake);
    if (!out_.empty()) now = wake_;
  }
  if (now) now();
}

std::function<void()> AgentSession::Queue(Outgoing out) {
  if (closed_) return nullptr;
  if (out_.size() >= kMaxQueued) {
    JOBSET_LOG(WARNING) << "node " << node_ << " reads none of its last "
                        << out_.size()
                        << " messages: its stream is cut (it gets "
                           "everything again when it reconnects)";
    CloseLocked();
    return std::exchange(wake_, nullptr);
  }
  out_.push_back(std::move(out));
  return wake_;
}

void AgentSession::Push(api::SchedulerMessage msg) {
  std::function<void()> wake;
  {
    absl::MutexLock lock(&mu_);
    wake = Queue(Outgoing{std::move(msg), std::nullopt, {}});
  }
  if (wake) wake();
}

void AgentSession::PushRun(Assignment pod) {
  std::function<void()> wake;
  {
    absl::MutexLock lock(&mu_);
    wake = Queue(Outgoing{{}, std::move(pod), {}});
  }
  if (wake) wake();
}

void AgentSession::PushWelcome(api::SchedulerMessage welcome,
                               std::vector<Assignment> pods) {
  std::function<void()> wake;
  {
    absl::MutexLock lock(&mu_);
    wake = Queue(Outgoing{std::move(welcome), std::nullopt, std::move(pods)});
  }
  if (wake) wake();
}

void AgentSession::CloseLocked() {
  closed_ = true;
  out_.clear();
  if (cancel_) std::exchange(cancel_, nullptr)();
}

void AgentSession::Close() {
  std::function<void()> wake;
  {
    absl::MutexLock lock(&mu_);
    if (!closed_) wake = wake_;
    CloseLocked();
    wake_ = nullptr;
  }
  if (wake) wake();
}

void AgentSession::Detach() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  out_.clear();
  cancel_ = nullptr;
  wake_ = nullptr;
}

}  // namespace jobset::scheduler
