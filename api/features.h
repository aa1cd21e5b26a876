#ifndef JOBSET_API_FEATURES_H_
#define JOBSET_API_FEATURES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace jobset::api {

// Kueue's waitForPodsReady (kueue-semantics.md §3.6; on by default since
// Kueue v0.19, with these defaults): an admitted Workload whose pods are not
// all ready (or succeeded) within `timeout` of its admission, or within
// `recovery_timeout` of one failing after they all were, is evicted with
// reason PodsReadyTimeout and queued again after
// min(backoff_base_seconds * 2^(n-1), backoff_max_seconds) for its n-th
// time; past `backoff_limit_count` (-1: no limit) it is deactivated.
struct WaitForPodsReady {
  bool enable = true;
  absl::Duration timeout = absl::Minutes(30);
  absl::Duration recovery_timeout = absl::Minutes(30);
  int32_t backoff_base_seconds = 60;
  int32_t backoff_max_seconds = 3600;
  int32_t backoff_limit_count = -1;
};

// Kueue's fairSharing configuration (kueue-semantics.md §4.5), off by
// default as in Kueue: ClusterQueues of a cohort share by dominant resource
// share and their weights, in admission order and in preemption.
struct FairSharingConfig {
  bool enable = false;
  // Kueue's preemptionStrategies, in order; its default is both. Allowed:
  // LessThanOrEqualToFinalShare, LessThanInitialShare, or the two in this
  // order.
  std::vector<std::string> preemption_strategies = {
      "LessThanOrEqualToFinalShare", "LessThanInitialShare"};
};

// Upstream JobSet's alpha feature gates, and Kueue's configuration switches
// jobsetd honours. The gates are off by default, as upstream; Kueue's
// switches have Kueue's defaults. Validation reads them (what a spec may
// say) and so does the controller (what it does with it).
struct Features {
  // Gate "RestartJob": allows the failure-policy actions RestartJob and
  // RestartJobAndIgnoreMaxRestarts.
  bool restart_job = false;
  // Gate "InPlaceRestart": allows failurePolicy.restartStrategy
  // InPlaceRestart.
  bool in_place_restart = false;
  // Gate "ElasticJobSet": allows changing parallelism and completions of
  // Indexed ReplicatedJobs after creation.
  bool elastic_jobset = false;
  // Kueue's manageJobsWithoutQueueName (jobsetd
  // --manage_jobs_without_queue_name): JobSets without the
  // kueue.x-k8s.io/queue-name label are held suspended too, with a Workload
  // that is never admitted until a queue is named.
  bool manage_jobs_without_queue_name = false;
  // Kueue's waitForPodsReady (jobsetd --wait_for_pods_ready and kin).
  WaitForPodsReady wait_for_pods_ready = {};
  // Kueue's fairSharing (jobsetd --fair_sharing and kin).
  FairSharingConfig fair_sharing = {};
  // jobsetd --attempt_history (ours, not a gate; here because it reaches
  // the controller's policies with the rest): how many restart attempts of
  // a JobSet, the current one included, its goodput lists and keeps the
  // pods of for their logs (scheduler/records/attempt_pods.h, 1 to 100).
  int32_t attempt_history = 10;
};

}  // namespace jobset::api

#endif  // JOBSET_API_FEATURES_H_
