#ifndef JOBSET_SCHEDULER_CONTROLLER_JOB_RECONCILE_H_
#define JOBSET_SCHEDULER_CONTROLLER_JOB_RECONCILE_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "proto/cluster.pb.h"

namespace jobset::scheduler {

// The Kubernetes Job layer JobSet stands on (jobset-semantics.md Appendix A),
// re-implemented as a pure function over one Job and its pods.

// What a pod-failure-policy rule decided about one failed pod.
struct PodFailureVerdict {
  enum class Action { kCount, kIgnore, kFailJob };
  Action action = Action::kCount;
  // For kFailJob: upstream's message, e.g. "Container main for pod default/x
  // failed with exit code 42 matching FailJob rule at index 0".
  std::string message;
};

// Evaluates spec.podFailurePolicy against a failed pod: the first rule whose
// onExitCodes (a non-zero exit code of the named container, or of any) or
// onPodConditions (a condition of the given type and status, "True" by
// default) match decides; no match counts the failure.
PodFailureVerdict EvaluatePodFailurePolicy(const api::Job& job,
                                           const api::PodRecord& pod);

// What one Job reconcile decides; the caller applies it in the controller's
// commit.
struct JobActions {
  api::JobStatus status;
  bool status_changed = false;
  // Completion indexes to start a new pod for (-1 for NonIndexed Jobs).
  std::vector<int> create;
  // Names of pods to stop and delete.
  std::vector<std::string> remove;
};

// Reconciles `job` against `pods` (every pod it still has: active, finished
// and terminating ones, which carry metadata.deletionTimestamp):
//   - counts active (pending or running), ready, succeeded and failed pods;
//   - fails the Job, with FailureTarget then Failed, on a FailJob
//     pod-failure-policy rule (PodFailurePolicy), on more counted failures
//     than spec.backoffLimit (default 6; with restartPolicy OnFailure,
//     container restarts count) (BackoffLimitExceeded), or after
//     spec.activeDeadlineSeconds (DeadlineExceeded); a failed Job's active
//     pods are removed;
//   - completes it when every completion index succeeded (Indexed) or
//     `completions` pods did (NonIndexed);
//   - while spec.suspend, removes active pods and sets Suspended;
//   - otherwise starts pods up to `parallelism` for the indexes that need
//     one, counting them as active. A new pod for an index waits until the
//     old one is gone, so that two pods never hold one hostname.
JobActions ReconcileJob(const api::Job& job,
                        const std::vector<const api::PodRecord*>& pods,
                        absl::Time now);

// Returns whether a pod finished ("Succeeded" or "Failed").
bool PodFinished(const api::PodRecord& pod);

// Formats sorted indexes as Kubernetes' completedIndexes ("1,3-5,7").
std::string FormatIndexes(const std::vector<int>& sorted);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_JOB_RECONCILE_H_
