#ifndef JOBSET_SCHEDULER_QUEUES_CYCLE_H_
#define JOBSET_SCHEDULER_QUEUES_CYCLE_H_

// One scheduling cycle (kueue-semantics.md §3.2, SCH schedule):
//   1. Pop one head per ClusterQueue (queue_order.h).
//   2. Snapshot quota and usage (ClusterState).
//   3. Nominate each head: an inactive or missing ClusterQueue makes it
//      inadmissible; else assign flavors and, if it needs preemption, find
//      the targets.
//   4. Order the nominated: no borrowing before borrowing, then priority,
//      then queue-order timestamp; with fair sharing, each next one is the
//      winner of its cohort tree's tournament (fair_sharing.h).
//   5. Process them on the shared snapshot, adding each admission's usage
//      at once so quota is never booked twice: NoFit is requeued; Preempt
//      without targets is requeued (reserving the quota it could use unless
//      reclaimWithinCohort is Any); targets another head already claimed,
//      or no fit any more, skip the head; Preempt issues the preemptions;
//      Fit admits.
//   6. Every head not admitted gets its QuotaReserved False reason and
//      message, and where it goes back (heap or parked).
// The caller applies the decisions: writes admissions and evictions, moves
// heads back, parks, unparks (QueuesToUnpark) and runs the next cycle.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "scheduler/queues/cluster_state.h"
#include "scheduler/queues/fair_sharing.h"
#include "scheduler/queues/flavor_assigner.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/queue_order.h"

namespace jobset::scheduler::queues {

// QuotaReserved False reasons decided here besides flavor_assigner.h's.
inline constexpr absl::string_view kReasonWaitingForPreemptedWorkloads =
    "WaitingForPreemptedWorkloads";
inline constexpr absl::string_view kReasonSuspended = "Suspended";
inline constexpr absl::string_view kReasonMisconfigured = "Misconfigured";

// Everything one cycle reads.
struct CycleInput {
  std::vector<ResourceFlavor> flavors;
  std::vector<Cohort> cohorts;
  std::vector<ClusterQueue> cluster_queues;
  // Workloads holding quota (admission set), those being evicted included;
  // shared as the pending ones are (queue_order.h).
  std::vector<std::shared_ptr<const Workload>> admitted;
  // The pending workloads, one entry per ClusterQueue.
  std::vector<PendingQueue> pending;
  // Set: fair sharing (fair_sharing.h) orders the heads, and preemption
  // follows its strategies (fair_preemption.h).
  std::optional<FairSharing> fair_sharing;
};

enum class DecisionKind {
  kAdmit,    // reserve quota: write `admission`, QuotaReserved/Admitted True
  kPreempt,  // evict `victims`; the workload waits for them (sticky head)
  kPending,  // not admitted this cycle
};

struct Victim {
  std::string workload;  // "<namespace>/<name>"
  std::string uid;
  std::string reason;   // Preempted condition reason: InClusterQueue, ...
  std::string message;  // Evicted and Preempted condition message
  bool already_evicted = false;  // an earlier cycle evicted it: no new write
};

// Where a head that was not admitted goes, and what its QuotaReserved False
// condition says.
struct QueueOutcome {
  std::string reason;  // WaitingForQuota, ExceedsMaxQuota, Suspended, ...
  // "couldn't assign flavors to pod set w: ...", "ClusterQueue cq is
  // inactive", "Workload no longer fits after processing another workload".
  std::string message;
  RequeueReason requeue_reason = RequeueReason::kGeneric;
  Requeue requeue = Requeue::kHeap;
  bool sticky = false;  // becomes its queue's sticky head
};

struct Decision {
  DecisionKind kind = DecisionKind::kPending;
  std::string workload;  // "<namespace>/<name>"
  std::string uid;
  std::string cluster_queue;
  std::optional<Admission> admission;  // kAdmit
  std::vector<Victim> victims;         // kPreempt
  QueueOutcome outcome;                // kPreempt and kPending
};

struct CycleResult {
  // The nominated heads in processing order, then the others.
  std::vector<Decision> decisions;
};

// Runs one cycle over `input` at `now`. Returns kInvalidArgument for
// repeated names or two pending entries for one ClusterQueue. Performs no
// I/O and reads no clock: the same input and `now` give the same decisions.
// Thread-compatible.
absl::StatusOr<CycleResult> RunCycle(const CycleInput& input, absl::Time now);

// Runs one cycle as above on `state`, the snapshot the caller keeps across
// the cycles of a run instead of one built per cycle: ClusterState::Build of
// `input`'s flavors, cohorts, ClusterQueues and admitted workloads, with
// ClusterState::AddAdmitted of each admission the caller has appended to
// `input.admitted` since. Returns with `state`'s
// usage as it found it: what the cycle books for its heads (admissions,
// preemptors, reservations) is taken back, so the same decisions come as
// from RunCycle(input, now). Thread-compatible.
absl::StatusOr<CycleResult> RunCycle(const CycleInput& input,
                                     ClusterState& state, absl::Time now);

// A ClusterQueue's Active condition (SC/clusterqueue.go inactiveReason).
struct ActiveCondition {
  bool active = true;
  std::string reason;   // Ready, Stopped, FlavorNotFound, Unknown
  std::string message;  // "Can admit new workloads", "Can't admit ...: ..."
};

// Returns the Active condition of `cq`: inactive when stopped (stopPolicy
// Hold or HoldAndDrain), when it references a flavor not in `flavors`, or
// when its cohort chain has a cycle.
ActiveCondition ClusterQueueActive(const ClusterQueue& cq,
                                   const FlavorIndex& flavors,
                                   bool in_cohort_cycle);

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_CYCLE_H_
