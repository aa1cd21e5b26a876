#include "scheduler/agents/launch_stages.h"

#include <algorithm>

#include "scheduler/controller/controller_metrics.h"
#include "scheduler/metrics.h"

namespace jobset::scheduler {
namespace {

absl::Duration ToDuration(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

}  // namespace

void LaunchStages::Sent(const std::string& uid, absl::Time bound,
                        absl::Time now) {
  if (metrics_ == nullptr || bound == absl::InfinitePast()) return;
  {
    absl::MutexLock lock(&mu_);
    if (sent_.size() >= kMaxInFlight || !sent_.emplace(uid, now).second) return;
  }
  metrics_->PodStage(kStageBoundToSent, now - bound, 1);
}

bool LaunchStages::Reported(const std::string& uid,
                            const api::LaunchTimings& launch, absl::Time now) {
  if (metrics_ == nullptr || !launch.has_received_to_reported()) return false;
  absl::Time sent;
  {
    absl::MutexLock lock(&mu_);
    auto it = sent_.find(uid);
    if (it == sent_.end()) return false;
    sent = it->second;
    sent_.erase(it);
  }
  const absl::Duration on_agent = ToDuration(launch.received_to_reported());
  metrics_->PodStage(kStageSentToReceived,
                     std::max(now - sent - on_agent, absl::ZeroDuration()), 1);
  if (launch.has_received_to_started()) {
    const absl::Duration to_start = ToDuration(launch.received_to_started());
    metrics_->PodStage(kStageReceivedToStarted, to_start, 1);
    metrics_->PodStage(kStageStartedToReported, on_agent - to_start, 1);
  }
  return true;
}

void LaunchStages::Forget(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  sent_.erase(uid);
}

}  // namespace jobset::scheduler
