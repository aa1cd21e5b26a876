#ifndef JOBSET_SCHEDULER_CONTROLLER_IN_PLACE_RESTART_H_
#define JOBSET_SCHEDULER_CONTROLLER_IN_PLACE_RESTART_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"
#include "scheduler/controller/jobset_reconcile.h"

namespace jobset::scheduler {

// restartStrategy InPlaceRestart (KEP-467), done by jobsetd itself rather
// than by upstream's sidecar: the agents own the processes, so the
// controller stops every pod of the JobSet where it is and starts it again
// on the same node, with the same name and uid, once all have stopped.
//
// Each pod record carries the attempt it is to run
// (PodRecord.in_place_restart_attempt, the pod's
// jobset.sigs.k8s.io/in-place-restart-attempt annotation) and whether it has
// stopped its previous one (in_place_stopped). The JobSet's
// status.currentInPlaceRestartAttempt is the attempt every pod runs;
// previousInPlaceRestartAttempt the one being left while a restart waits at
// its barrier. A restart goes:
//   1. A pod of the current attempt T fails (its agent reported it; the
//      controller gives InPlaceRestart pods restartPolicy Never, so no
//      container restarts alone). If T + 1 restarts (with the Recreate
//      restarts that count) would exceed maxRestarts, the JobSet fails with
//      ReachedMaxRestarts. Otherwise every bound, unfinished pod is told to
//      run T + 1: running ones are stopped, finished ones (the failed pod)
//      have stopped already. previous = T.
//   2. Each stop confirmation marks its pod stopped (Pending, containers
//      waiting with reason InPlaceRestarting, restartCount + 1). Nothing
//      restarts yet: that is the barrier.
//   3. When every pod of T + 1 has stopped, current = T + 1 and every pod
//      is sent again, now at T + 1: its agent starts it in place.
// Succeeded pods are left alone (their work is done), and pods without a
// node (a Job layer replacement for a pod of a lost node, which cannot
// restart in place) take the new attempt; placement leaves them until the
// barrier is down (InPlaceRestartWaits), so they start with the others. Every
// step is stored before agents are told, so a crash between steps resumes from
// the records.

// A pod's part in one step: `reported` when an agent's report about it came
// since the last pass.
struct InPlacePod {
  api::PodRecord* pod = nullptr;
  bool reported = false;
};

// What a step decided, beyond the records and status it changed in place.
struct InPlaceStep {
  bool status_changed = false;
  // Indexes (into the step's pods) of records that changed.
  std::vector<size_t> changed;
  // Indexes of running pods to stop for the new attempt.
  std::vector<size_t> stop;
  // The barrier is down: send every pod again, at the new attempt.
  bool launch = false;
  // maxRestarts reached: the JobSet fails with this reason and message.
  std::optional<std::pair<std::string, std::string>> fail;
  std::vector<JobSetEvent> events;
};

// Whether `status`'s JobSet has a restart in place waiting at its barrier:
// step 1 set previousInPlaceRestartAttempt to the current attempt, and step
// 3 has not yet moved currentInPlaceRestartAttempt past it. Its pods without
// a node (a lost host's replacement) are placed once the barrier is down, so
// that they start with the others, at the new attempt.
bool InPlaceRestartWaits(const api::JobSetStatus& status);

// The reason given to containers waiting at the barrier.
inline constexpr char kReasonInPlaceRestarting[] = "InPlaceRestarting";

// One step of `jobset`'s restart in place over its pods (those of its
// current Recreate attempt), after agents' reports were applied to them.
InPlaceStep StepInPlaceRestart(api::JobSet& jobset,
                               const std::vector<InPlacePod>& pods);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_IN_PLACE_RESTART_H_
