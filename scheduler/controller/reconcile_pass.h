#ifndef JOBSET_SCHEDULER_CONTROLLER_RECONCILE_PASS_H_
#define JOBSET_SCHEDULER_CONTROLLER_RECONCILE_PASS_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/features.h"
#include "api/resilience_annotations.h"
#include "scheduler/controller/controller_metrics.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/event_log.h"
#include "scheduler/controller/gang_placement.h"
#include "scheduler/controller/pass_metrics.h"
#include "scheduler/controller/pass_writes.h"
#include "scheduler/controller/placement_caches.h"
#include "scheduler/controller/progress_source.h"
#include "scheduler/resilience/node_fault.h"
#include "scheduler/resilience/quarantine_ledger.h"

namespace jobset::scheduler {

// What a reconcile pass works on besides its writes: the controller's parts
// it changes. All outlive the pass.
// Bad-host quarantine (node_faults.cc; --quarantine_after): the ledger,
// the operator's device-error codes, and the nodes this pass decided to
// quarantine (tainted after its commit).
struct QuarantineState {
  resilience::QuarantineLedger ledger;
  resilience::DeviceErrorPolicy devices;
  std::vector<resilience::QuarantineDecision> decided;
};

struct PassParts {
  ControllerState& state;
  GangQueue& gangs;
  RequirementsCache& requirements;
  EventLog& events;
  DeferredJobDeletions& deferred;
  ControllerMetrics* metrics;  // May be null.
  api::Features features;
  // The most pods one attempt may have; a JobSet over it fails.
  int64_t max_pods_per_attempt;
  // Pods' training progress (hang detection); may be null.
  const ProgressSource* progress = nullptr;
  // Quarantine; null when off.
  QuarantineState* quarantine = nullptr;
};

// The JobSet and Job layers of one pass, applied to the controller's state:
// for each JobSet, agents' reports first, then the Job layer and the JobSet
// layer in rounds to a fixed point (the pure reconcilers decide; this class
// applies their actions: creating and erasing Jobs and pods, stopping pods,
// storing statuses), collecting what to write and tell in `writes`. Used
// only from the controller thread, for one pass.
class ReconcilePass {
 public:
  // Begins the pass by recording the earlier attempts' pods that the last
  // pass erased (parts.deferred.retired(), attempt_pods.h).
  ReconcilePass(PassParts parts, PassWrites& writes, absl::Time now);

  // Reconciles JobSet `key`, or cascades its deletion through the API.
  void Reconcile(const std::string& key);

 private:
  void ReconcileOne(TrackedJobSet& t);
  // Whether `t` restarts in place (restartStrategy InPlaceRestart, gate on)
  // and is still running.
  bool InPlace(const TrackedJobSet& t) const;
  // One step of `t`'s restart in place (in_place_restart.h), applied.
  void RestartInPlace(TrackedJobSet& t);
  // Fails `t` instead of expanding it when it cannot run: t.fail is set, or
  // its attempt has more pods than the limit. Returns whether it failed it.
  bool FailIfUnrunnable(TrackedJobSet& t);
  // Hang and straggler detection (progress_checks.cc): fails a Job of a
  // stalled attempt (ProgressStalled), flags stragglers (and with Replace
  // fails their Job, reason Straggler, their node excluded), and sets
  // t.wake for the next look.
  void CheckProgress(TrackedJobSet& t);
  // The current attempt's pods on nodes: their progress, records and Jobs.
  struct AttemptPods {
    std::vector<resilience::PodProgress> progress;
    std::vector<api::PodRecord*> pods;
    std::vector<JobState*> jobs;
  };
  // Returns whether it failed the attempt.
  bool CheckHang(TrackedJobSet& t, const AttemptPods& attempt,
                 absl::Duration timeout);
  void CheckStragglers(TrackedJobSet& t, const AttemptPods& attempt,
                       const api::ResilienceSpec& spec);
  // Feeds the gang's progress (highest step, latest checkpoint, advanced at
  // `last_progress`) to t's goodput.
  void FeedProgress(TrackedJobSet& t, const AttemptPods& attempt,
                    absl::Time last_progress);
  // Fails `job` (FailureTarget and Failed) with `reason`, with an event.
  void FailJobFor(TrackedJobSet& t, JobState& job, absl::string_view reason,
                  const std::string& message);
  // Attributes `pod`'s failure to its node (node_faults.cc): a node's fault
  // fails `job` with reason NodeFault; the evidence goes to the ledger.
  void AttributeFailure(TrackedJobSet& t, JobState& job,
                        const api::PodRecord& pod);
  // Records evidence against `node`; a quarantine it decides is queued in
  // parts_.quarantine->decided with a NodeQuarantined event.
  void RecordFault(TrackedJobSet& t, const std::string& node,
                   resilience::FaultKind kind, const std::string& pod,
                   const std::string& detail);
  // Sets t.wake to `at` if sooner (InfiniteFuture: no change).
  void Wake(TrackedJobSet& t, absl::Time at);
  // Goodput (goodput_tracking.cc): t's ledger (from status.goodput, or new);
  // what this reconcile changed since `before`, fed to it; a progress
  // transition fed to it; the ledger written to status.goodput if changed.
  resilience::GoodputLedger& Goodput(TrackedJobSet& t);
  // `in_place_previous`: status.previousInPlaceRestartAttempt before this
  // reconcile's restart in place step (a restart in place began when it
  // rises).
  void TrackGoodput(TrackedJobSet& t, const api::JobSetStatus& before,
                    std::optional<int32_t> in_place_previous);
  void FeedGoodput(TrackedJobSet& t, const resilience::GoodputTransition& tr);
  void StoreGoodput(TrackedJobSet& t);
  // The Job layer, over the Jobs in t.dirty_jobs.
  void ReconcileJobs(TrackedJobSet& t);
  // Creates `job`'s pods of completion indexes `indexes` (-1: NonIndexed).
  void AddPods(TrackedJobSet& t, JobState& job,
               const std::vector<int>& indexes);
  // Stops `pod` if it runs, erases it otherwise.
  void RemovePod(TrackedJobSet& t, JobState& job, api::PodRecord& pod);
  void ErasePod(TrackedJobSet& t, JobState& job, const std::string& name);
  // Erases Job `name` and its stored records (its pods must be gone).
  void EraseJob(TrackedJobSet& t, const std::string& name);
  // Stops every pod of `t` and erases its children, events and itself.
  void DeleteJobSet(TrackedJobSet& t);

  PassParts parts_;
  PassWrites& writes_;
  const absl::Time now_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_RECONCILE_PASS_H_
