#ifndef JOBSET_SCHEDULER_CONTROLLER_POD_CONFIGS_H_
#define JOBSET_SCHEDULER_CONTROLLER_POD_CONFIGS_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/pod_config.h"
#include "proto/cluster.pb.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/pass_writes.h"
#include "store/store.h"

namespace jobset::scheduler {

// Marks `pod` (of a pod with spec `spec`) as waiting for what it takes from
// Secrets and ConfigMaps: Pending, every container waiting with reason
// CreateContainerConfigError and `message` (restart counts kept). Returns
// whether the record changed.
bool HoldPod(const api::PodSpec& spec, const std::string& message,
             api::PodRecord* pod);
// Undoes HoldPod: the pod is to be sent.
void ReleaseHeldPod(api::PodRecord* pod);

// Reads the Secrets and ConfigMaps pods refer to from the store, each key
// once (one cache per pass, so that 1,000 Jobs of one template read their
// two Secrets twice, not 2,000 times). Only the pod's own namespace is
// read. Used only from the controller thread.
class ConfigReader {
 public:
  explicit ConfigReader(store::Store* store) : store_(store) {}

  // The objects of namespace `ns` that `refs` names and that exist.
  // Errors are the store's, or DATA_LOSS for a value that does not decode.
  absl::StatusOr<api::ConfigObjects> Read(absl::string_view ns,
                                          const api::ConfigReferences& refs);

 private:
  store::Store* const store_;
  std::map<std::string, std::shared_ptr<const api::Secret>> secrets_;
  std::map<std::string, std::shared_ptr<const api::ConfigMap>> config_maps_;
  std::set<std::string> absent_;  // Keys read and not found.
};

// Resolves, for the pods about to be sent, what they take from Secrets and
// ConfigMaps, and holds back those whose references do not resolve. Each
// Job is resolved once (JobState::config, shared by its pods' assignments)
// and again only while it fails. A pod not yet started whose Job fails
// waits (HoldPod, PodRecord.waiting_for_config: not sent); a pod already
// started (resent after a restart of jobsetd) is sent with what resolves
// (missing things left out) rather than stopped. JobSets with pods waiting
// are retried when a Secret or ConfigMap of their namespace changes
// (ConfigChanged), when a pass reconciles them, and every kRetryInterval.
// Used only from the controller thread.
class PodConfigs {
 public:
  static constexpr absl::Duration kRetryInterval = absl::Seconds(10);

  explicit PodConfigs(store::Store* store) : store_(store) {}

  // Forgets everything (before a Load).
  void Clear();

  // A Secret or ConfigMap of namespace `ns` changed: the JobSets of `ns`
  // with pods waiting are retried in the next pass.
  void ConfigChanged(absl::string_view ns);
  // Every JobSet with pods waiting is retried in the next pass (the watch
  // of Secrets and ConfigMaps fell behind, or after a Load).
  void RetryAll();
  // JobSet `key` may have pods waiting (found by Load).
  void Waiting(const std::string& key);

  // Resolves the Jobs of JobSets `keys` that have pods to send, and of
  // those due a retry: pods that resolve are released (and their JobSet
  // launched in `writes`), pods that do not are held (and their records
  // written). Events tell of each pod newly held.
  void Resolve(const std::set<std::string>& keys, ControllerState& state,
               PassWrites& writes, absl::Time now);
  // The same without a pass (Announce after a Load): Jobs are resolved for
  // AppendAssignments, nothing is written; JobSets whose pods must newly
  // wait are retried by the next pass, which holds them.
  void ResolveForAnnounce(ControllerState& state);

  // When the next pass is due for a retry: now if one is queued, else
  // the next periodic retry while pods wait.
  std::optional<absl::Time> NextWake() const;

 private:
  // Resolves `job` of `t` if it is not resolved or failed last time.
  void ResolveJob(TrackedJobSet& t, JobState& job, ConfigReader& reader);

  store::Store* const store_;
  // JobSets (keys) that have, or may have, pods waiting.
  std::set<std::string> waiting_;
  // Of those, the ones the next pass retries.
  std::set<std::string> retry_;
  absl::Time last_retry_ = absl::InfinitePast();
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_POD_CONFIGS_H_
