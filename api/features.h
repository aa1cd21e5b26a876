#ifndef JOBSET_API_FEATURES_H_
#define JOBSET_API_FEATURES_H_

namespace jobset::api {

// Upstream JobSet's alpha feature gates, and Kueue's configuration switches
// jobsetd honours. All are off by default, as upstream. Validation reads them
// (what a spec may say) and so does the controller (what it does with it).
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
};

}  // namespace jobset::api

#endif  // JOBSET_API_FEATURES_H_
