#ifndef JOBSET_SCHEDULER_CONTROLLER_ATTEMPT_PODS_H_
#define JOBSET_SCHEDULER_CONTROLLER_ATTEMPT_PODS_H_

// Every attempt kept (docs/resilience.md): the controller's side of the
// records of earlier attempts' pods (scheduler/records/attempt_pods.h), so
// that `jobsetctl logs POD --attempt N` finds a pod a restart erased. A pass
// that erases pods of a live JobSet (a restart's previous attempt, a
// suspension's, a finished JobSet's leftovers) keeps them in RetiredPods;
// the next pass writes them as one AttemptPods part per attempt and trims the
// JobSet's history to the last --attempt_history attempts. Recording 15,000
// pods in the pass that launches the next attempt would delay its launch;
// the pass after it runs at once, while the new pods start.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/cluster.pb.h"
#include "scheduler/controller/controller_state.h"
#include "store/store.h"

namespace jobset::scheduler {

class PassWrites;

// Pods of live JobSets that a pass erased, until the next pass records them.
// Used only from the controller thread.
class RetiredPods {
 public:
  RetiredPods() = default;
  RetiredPods(RetiredPods&&) = default;
  RetiredPods& operator=(RetiredPods&&) = default;

  // Keeps erased Job `job` of `t` (its attempt is its restart-attempt
  // label) until the next pass; one without a placed pod goes to `writes`
  // to be freed when the pass ends.
  void KeepJob(const TrackedJobSet& t, JobState job, PassWrites& writes);
  // Keeps pod `pod`, erased alone from Job `job` of `t`; one not placed (or
  // never sent) goes to `writes`.
  void KeepPod(const TrackedJobSet& t, const JobState& job,
               std::map<std::string, api::PodRecord>::node_type pod,
               PassWrites& writes);
  // JobSet `key` is being deleted: what was kept of it is not recorded
  // (`writes` frees it when the pass ends).
  void Forget(const std::string& key, PassWrites& writes);

  bool empty() const { return kept_.empty(); }

  // Records what earlier passes kept, for the JobSets `state` still tracks:
  // one AttemptPods part per JobSet and attempt within the last `history`
  // attempts (and the attempt's 1 MiB and 16 parts; pods beyond are
  // counted, not kept), the JobSet's AttemptHistory updated and trimmed to
  // those attempts (their parts deleted). The kept records go to `writes`,
  // freed when the pass ends.
  void Record(ControllerState& state, int history, PassWrites& writes);

 private:
  struct Pod {
    std::string job;
    std::string replicated_job;
    std::map<std::string, api::PodRecord>::node_type record;
  };
  struct Kept {
    std::vector<JobState> jobs;
    std::vector<Pod> pods;
  };
  // By JobSet key, then attempt.
  std::map<std::string, std::map<int32_t, Kept>> kept_;
};

// Deletes every record of `t`'s earlier attempts (it is being deleted).
void EraseAttemptPods(TrackedJobSet& t, PassWrites& writes);

// Reads every JobSet's AttemptHistory into the TrackedJobSet `state` holds
// (ControllerState::Load calls it after the JobSets): a history whose JobSet
// is gone, or is another JobSet of the name, becomes orphan keys with its
// parts; one that does not decode is set aside (Undecodable). Errors are
// the store's.
absl::Status LoadAttemptHistories(store::Store& store, ControllerState& state);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_ATTEMPT_PODS_H_
