#include "agent/pod_reporter.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/restart_barrier.h"
#include "api/pod_phase.h"

namespace jobset::agent {
namespace {

// How far a container's start may be past the tick's time and still be taken
// as the list's lag behind it (a later start is another clock's, not timed).
constexpr absl::Duration kMaxListLag = absl::Seconds(10);

void SetDuration(absl::Duration d, google::protobuf::Duration* out) {
  out->set_seconds(absl::IDivDuration(d, absl::Seconds(1), &d));
  out->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(d)));
}

absl::Time ToTime(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

// What was sent of a pod: its status and the attempt it went with. The same
// status under another attempt is news (one stamped with an earlier attempt
// while the pod restarted in place was fenced by jobsetd).
std::string Sent(int32_t attempt, const api::PodStatus& status) {
  return absl::StrCat(attempt, " ", status.SerializeAsString());
}

}  // namespace

api::AgentMessage PodReporter::Hello(const api::NodeRegistration& node,
                                     std::vector<PodState> pods,
                                     const AttemptOf& attempt) {
  api::AgentMessage hello;
  *hello.mutable_hello()->mutable_node() = node;
  for (PodState& pod : pods) {
    api::PodReport* r = hello.mutable_hello()->add_pods();
    r->set_pod_uid(pod.uid);
    r->set_in_place_restart_attempt(attempt(pod.uid));
    *r->mutable_status() = std::move(pod.status);
  }
  return hello;
}

void PodReporter::HelloSent(const api::AgentMessage& hello) {
  std::map<std::string, std::string> sent;
  for (const api::PodReport& r : hello.hello().pods())
    sent[r.pod_uid()] = Sent(r.in_place_restart_attempt(), r.status());
  absl::MutexLock lock(&mu_);
  sent_ = std::move(sent);
}

void PodReporter::Launched(const std::string& uid, absl::Time ordered) {
  if (metrics_ != nullptr) metrics_->launches.Increment();
  absl::MutexLock lock(&mu_);
  launching_[uid] = ordered;
}

void PodReporter::Restarted(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  sent_.erase(uid);
  exited_.erase(uid);
}

void PodReporter::Forget(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  sent_.erase(uid);
  exited_.erase(uid);
  launching_.erase(uid);
}

void PodReporter::Report(
    std::vector<PodState> pods,
    const std::map<std::string, std::vector<api::PodEvent>>& events,
    absl::Time now, const AttemptOf& attempt, const Send& send) {
  // Events go once, with the pod's next report (one is sent for them even
  // when the status did not change); lost if the stream is.
  for (PodState& pod : pods) {
    const int32_t pod_attempt = attempt(pod.uid);
    std::string now_status = Sent(pod_attempt, pod.status);
    auto pod_events = events.find(pod.uid);
    if (pod_events == events.end()) {
      absl::MutexLock lock(&mu_);
      auto it = sent_.find(pod.uid);
      if (it != sent_.end() && it->second == now_status) continue;
    }
    api::AgentMessage msg;
    api::PodReport* report = msg.mutable_pod_update();
    report->set_pod_uid(pod.uid);
    report->set_in_place_restart_attempt(pod_attempt);
    *report->mutable_status() = std::move(pod.status);
    TakeLaunch(pod.uid, report->status(), now, report);
    if (pod_events != events.end()) {
      const std::vector<api::PodEvent>& e = pod_events->second;
      // jobsetd takes at most kMaxEventsPerPod in one report: the latest.
      const size_t skip = e.size() > Runtime::kMaxEventsPerPod
                              ? e.size() - Runtime::kMaxEventsPerPod
                              : 0;
      for (size_t i = skip; i < e.size(); ++i) *report->add_events() = e[i];
    }
    if (!send(msg)) return;
    absl::MutexLock lock(&mu_);
    sent_[pod.uid] = std::move(now_status);
  }
}

void PodReporter::TakeLaunch(const std::string& uid,
                             const api::PodStatus& status, absl::Time now,
                             api::PodReport* report) {
  if (status.phase().empty() || status.phase() == api::kPodPending) return;
  absl::Time ordered;
  {
    absl::MutexLock lock(&mu_);
    auto it = launching_.find(uid);
    if (it == launching_.end()) return;
    ordered = it->second;
    launching_.erase(it);
  }
  // A pod seen only once it had finished has no launch to time.
  if (status.phase() != api::kPodRunning) return;
  // The runtime's start times are the host's wall clock, as is `ordered`
  // with jobset-agent's clock.
  absl::Time started = absl::InfinitePast();
  for (const api::ContainerStatus& c : status.container_statuses()) {
    if (c.has_started_at()) started = std::max(started, ToTime(c.started_at()));
  }
  // A tick reads its time before it lists the pods: a pod started in
  // between is reported no earlier than its start.
  if (started > now && started - now < kMaxListLag) now = started;
  const absl::Duration to_report =
      std::max(now - ordered, absl::ZeroDuration());
  api::LaunchTimings* launch = report->mutable_launch();
  SetDuration(to_report, launch->mutable_received_to_reported());
  if (started >= ordered && started - ordered <= to_report)
    SetDuration(started - ordered, launch->mutable_received_to_started());
  if (metrics_ != nullptr)
    metrics_->launch_seconds.Observe(absl::ToDoubleSeconds(to_report));
}

void PodReporter::Record(const std::vector<PodState>& pods) {
  if (metrics_ == nullptr) return;
  std::map<std::string, double> phases = {{api::kPodPending, 0},
                                          {api::kPodRunning, 0},
                                          {api::kPodSucceeded, 0},
                                          {api::kPodFailed, 0}};
  absl::MutexLock lock(&mu_);
  for (const PodState& pod : pods) {
    phases[pod.status.phase().empty() ? api::kPodPending
                                      : pod.status.phase()] += 1;
    // Each pod's end counts once.
    if (PodFinished(pod.status) && exited_.insert(pod.uid).second) {
      std::string reason = pod.status.reason();
      if (reason.empty() && pod.status.container_statuses_size() > 0)
        reason = pod.status.container_statuses(0).reason();
      metrics_->exits.Add({{"reason", reason}}).Increment();
    }
  }
  for (const auto& [phase, n] : phases)
    metrics_->pods.Add({{"phase", phase}}).Set(n);
}

}  // namespace jobset::agent
