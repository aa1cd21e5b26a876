#ifndef JOBSET_API_FEATURES_H_
#define JOBSET_API_FEATURES_H_

namespace jobset::api {

// Upstream JobSet's alpha feature gates. All are off by default, as upstream.
// Validation reads them (what a spec may say) and so does the controller (what
// it does with it).
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
};

}  // namespace jobset::api

#endif  // JOBSET_API_FEATURES_H_
