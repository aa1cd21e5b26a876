#ifndef JOBSET_AGENT_FAKE_RUNTIME_H_
#define JOBSET_AGENT_FAKE_RUNTIME_H_

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "agent/runtime/runtime.h"
#include "common/clock.h"

namespace jobset::agent {

// A runtime that runs nothing: started pods are Running at once, and tests
// end them with Exit. Stop ends a pod as killed (Failed, reason Stopped, its
// containers exit 137 of SIGKILL). It refuses a bad or known uid as the
// Runtime contract says; runtime_contract_test runs it (the cases that need
// a real process are skipped there). Thread-safe.
class FakeRuntime final : public Runtime {
 public:
  // Containers' start times are read from `clock` (the host's wall clock by
  // default, as a real runtime's); it must outlive the runtime.
  explicit FakeRuntime(Clock* clock = RealClock::Get()) : clock_(clock) {}

  absl::Status Start(const api::PodAssignment& assignment) override;
  absl::Status Stop(const std::string& uid, absl::Duration grace) override;
  absl::Status Remove(const std::string& uid) override;
  std::vector<PodState> List() override;
  absl::Status UpdateHosts(
      const std::string& uid,
      const google::protobuf::RepeatedPtrField<api::HostEntry>& hosts) override;
  // The host table pod `uid` was last given.
  std::vector<std::string> HostNames(const std::string& uid);
  // Every container's log is the file set_log_path names ("" until then:
  // no log).
  std::string LogPath(const std::string&, const std::string&) const override {
    absl::MutexLock lock(&log_mu_);
    return log_path_;
  }
  void set_log_path(std::string path) {
    absl::MutexLock lock(&log_mu_);
    log_path_ = std::move(path);
  }
  // Whether those files are read as CRI log files (as the cri runtime's).
  bool CriLogFormat() const override { return cri_log_format_.load(); }
  void set_cri_log_format(bool cri) { cri_log_format_ = cri; }

  // Pod events: AddEvent queues one for pod `uid`, TakeEvents takes all.
  void AddEvent(const std::string& uid, api::PodEvent event);
  std::map<std::string, std::vector<api::PodEvent>> TakeEvents() override;

  // Ends pod `uid`'s containers with `exit_code` (Succeeded if 0).
  void Exit(const std::string& uid, int exit_code);
  // Every assignment ever started, in order (to count launches).
  std::vector<api::PodAssignment> started();
  bool Has(const std::string& uid);

 private:
  Clock* const clock_;
  absl::Mutex mu_;
  std::map<std::string, PodState> pods_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, google::protobuf::RepeatedPtrField<api::HostEntry>>
      hosts_ ABSL_GUARDED_BY(mu_);
  std::vector<api::PodAssignment> started_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<api::PodEvent>> events_
      ABSL_GUARDED_BY(mu_);
  mutable absl::Mutex log_mu_;
  std::string log_path_ ABSL_GUARDED_BY(log_mu_);
  std::atomic<bool> cri_log_format_ = false;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_FAKE_RUNTIME_H_
