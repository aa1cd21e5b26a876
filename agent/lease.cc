#include "agent/lease.h"

#include "agent/restart_barrier.h"
#include "common/log.h"

namespace jobset::agent {

SchedulerLease::SchedulerLease(absl::Duration lease, Runtime* runtime,
                               Clock* clock)
    : lease_(lease), runtime_(runtime), last_heard_(clock->Now()) {}

absl::Status SchedulerLease::Install() { return runtime_->SetLease(lease_); }

void SchedulerLease::StreamOpened() {
  absl::MutexLock lock(&mu_);
  renewed_ = absl::InfinitePast();
}

void SchedulerLease::Heard(absl::Time now) {
  bool renew = false;
  {
    absl::MutexLock lock(&mu_);
    last_heard_ = now;
    if (lease_ > absl::ZeroDuration() &&
        now - renewed_ >= absl::Milliseconds(100)) {
      renewed_ = now;
      renew = true;
    }
  }
  if (renew) runtime_->RenewLease().IgnoreError();
}

bool SchedulerLease::Enforce(absl::Time now,
                             const std::vector<PodState>& pods) {
  {
    absl::MutexLock lock(&mu_);
    if (lease_ <= absl::ZeroDuration() || fired_ ||
        now - last_heard_ <= lease_) {
      return false;
    }
    fired_ = true;
  }
  JOBSET_LOG(WARNING) << "no word from the scheduler for "
                      << absl::FormatDuration(lease_)
                      << " (lease): stopping every pod";
  for (const PodState& pod : pods) {
    if (!PodFinished(pod.status))
      runtime_->Stop(pod.uid, kLeaseGrace).IgnoreError();
  }
  return true;
}

void SchedulerLease::Welcomed() {
  absl::MutexLock lock(&mu_);
  if (!fired_) return;
  JOBSET_LOG(INFO) << "reconnected after the lease ran out";
  fired_ = false;
}

}  // namespace jobset::agent
