#include "scheduler/agents/liveness.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace jobset::scheduler {

std::optional<absl::Duration> SilentTooLong(const LivenessRules& rules,
                                            bool ready, absl::Time last_seen,
                                            absl::Time now) {
  if (!ready) return std::nullopt;
  // The grace is for the nodes known before this jobsetd started (a
  // restart, a failover) to reconnect; a node that has connected to this
  // one is under the normal timeout at once.
  const bool connected_here = last_seen != absl::InfinitePast();
  if (!connected_here && now < rules.started + rules.restart_grace) {
    return std::nullopt;
  }
  const absl::Duration silent =
      now - (connected_here ? last_seen : rules.started);
  if (silent < rules.node_lost_timeout) return std::nullopt;
  return silent;
}

std::string NodeLostMessage(const std::string& name, absl::Duration silent,
                            absl::Duration timeout) {
  return absl::StrCat("node ", name, " sent no heartbeat for ",
                      absl::FormatDuration(silent), " (timeout ",
                      absl::FormatDuration(timeout), ")");
}

absl::Duration LivenessTick(absl::Duration node_lost_timeout) {
  return std::clamp(node_lost_timeout / 10, absl::Milliseconds(20),
                    absl::Milliseconds(500));
}

void LivenessMonitor::Start(absl::Duration tick, std::function<void()> check) {
  thread_ = std::thread([this, tick, check = std::move(check)] {
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_;
        };
        if (mu_.AwaitWithTimeout(absl::Condition(&stopping), tick)) return;
      }
      check();
    }
  });
}

void LivenessMonitor::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace jobset::scheduler
