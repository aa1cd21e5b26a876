#ifndef JOBSET_SCHEDULER_AGENTS_POD_PROGRESS_TABLE_H_
#define JOBSET_SCHEDULER_AGENTS_POD_PROGRESS_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "proto/agent.pb.h"
#include "scheduler/controller/progress_source.h"
#include "scheduler/resilience/progress.h"

namespace jobset::scheduler {

// A pod's latest progress as its agent reported it (PodReport.progress,
// checked by CheckPodProgress), with when jobsetd received it.
struct PodProgressEntry {
  std::string node;  // the reporting node: the pod's
  // The restart in place attempt the progress is of (the report's).
  int32_t in_place_restart_attempt = 0;
  // The last step written; nullopt while the pod (this instance of it) has
  // written none the agent took.
  std::optional<int64_t> step;
  int64_t checkpoint_step = 0;  // 0: none
  double steps_per_second = 0;  // over the agent's last 30 s of readings
  // How long before sending the report the agent read the last advance.
  absl::Duration since_last_advance = absl::ZeroDuration();
  int64_t rejected_lines = 0;  // inputs of the pod's the agent ignored
  absl::Time received_at = absl::InfinitePast();  // jobsetd's clock

  // How long ago, at `now` (jobsetd's clock), the step last advanced: the
  // agent's measure plus the time since the report arrived (an agent sends
  // nothing while a pod's progress does not change).
  absl::Duration SinceLastAdvance(absl::Time now) const {
    return since_last_advance + (now - received_at);
  }
  // When, on jobsetd's clock, the step last advanced (the same measure as
  // a time): received_at - since_last_advance.
  absl::Time AdvancedAt() const { return received_at - since_last_advance; }
};

// The latest progress of each current pod (docs/agent.md, "Progress
// heartbeats"; our addition), by pod uid, for the controller's hang and
// straggler detection. The hub writes it from the agents' reports of the
// pods in their nodes' desired sets; an entry goes when its pod is
// released, or when its node's stream ends, or the node is lost or removed
// (the agent reports it again after its next Hello). In memory only, never
// stored: it changes every second per pod. Thread-safe; its lock is a leaf
// (taken under the hub's, never the other way).
class PodProgressTable : public ProgressSource {
 public:
  // Records `progress` of pod `pod_uid` on `node`, received at
  // `received_at`, over what the table held of the pod.
  void Update(const std::string& node, const std::string& pod_uid,
              int32_t in_place_restart_attempt,
              const api::PodProgress& progress, absl::Time received_at);
  // Forgets pod `pod_uid`.
  void Forget(const std::string& pod_uid);
  // Forgets every pod of `node`.
  void ForgetNode(const std::string& node);

  // The pod's latest progress; nullopt when none is known.
  std::optional<PodProgressEntry> Get(const std::string& pod_uid) const;
  // The same as the controller reads it (a checkpoint step of 0 is none).
  std::optional<resilience::PodProgress> Of(
      const std::string& pod_uid) const override;
  // Every entry, by pod uid (a copy).
  absl::flat_hash_map<std::string, PodProgressEntry> Snapshot() const;
  size_t size() const;

 private:
  friend class AgentHub;  // Names mu_ in its lock order.

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, PodProgressEntry> pods_ ABSL_GUARDED_BY(mu_);
  // Each node's pods in pods_, so that a node's go without a scan.
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> by_node_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_POD_PROGRESS_TABLE_H_
