#ifndef JOBSET_AGENT_SWEEP_RECORDER_H_
#define JOBSET_AGENT_SWEEP_RECORDER_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/runtime/runtime.h"
#include "proto/agent.pb.h"

namespace jobset::agent {

// A Runtime that runs nothing and records the retention sweeps asked of it
// (PruneLogs), for the agent's and the log server's tests. Thread-safe.
class SweepRecorder final : public Runtime {
 public:
  absl::Status Start(const api::PodAssignment&) override {
    return absl::OkStatus();
  }
  absl::Status Stop(const std::string&, absl::Duration) override {
    return absl::OkStatus();
  }
  absl::Status Remove(const std::string&) override { return absl::OkStatus(); }
  std::vector<PodState> List() override { return {}; }
  absl::Status UpdateHosts(
      const std::string&,
      const google::protobuf::RepeatedPtrField<api::HostEntry>&) override {
    return absl::NotFoundError("none");
  }
  std::string LogPath(const std::string&, const std::string&) const override {
    return "";
  }
  absl::StatusOr<int> PruneLogs(absl::Time now,
                                const LogRetention& retention) override {
    absl::MutexLock lock(&mu_);
    sweeps_.push_back(now);
    retention_ = retention;
    return 0;
  }

  // Waits (real time, at most 10 s) until `n` sweeps happened; returns them.
  std::vector<absl::Time> WaitSweeps(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return sweeps_.size() >= n;
    };
    mu_.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(10));
    return sweeps_;
  }
  std::vector<absl::Time> sweeps() {
    absl::MutexLock lock(&mu_);
    return sweeps_;
  }
  LogRetention retention() {
    absl::MutexLock lock(&mu_);
    return retention_;
  }

 private:
  absl::Mutex mu_;
  std::vector<absl::Time> sweeps_ ABSL_GUARDED_BY(mu_);
  LogRetention retention_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_SWEEP_RECORDER_H_
