#ifndef JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_METRICS_H_
#define JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_METRICS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace jobset::scheduler {

// What the controller measures, without saying how it is exported:
// jobsetd implements it over Prometheus (scheduler/metrics.h,
// docs/metrics.md), so the controller links neither gRPC nor
// prometheus-cpp. Called by one pass at a time (from the controller thread
// or the thread its pass borrows), never concurrently.
// The stages of a pod's startup, each a label of
// jobsetd_pod_startup_stage_seconds (docs/metrics.md): from the first
// placement attempt of its gang (the pass that created it) to its binding;
// to its launch order's sending on its node's stream; to the order's
// arrival (the round trip less the agent's own time); to its last container
// started; to the agent's report of it Running; to that status committed.
inline constexpr char kStageCreatedToBound[] = "created_to_bound";
inline constexpr char kStageBoundToSent[] = "bound_to_sent";
inline constexpr char kStageSentToReceived[] = "sent_to_received";
inline constexpr char kStageReceivedToStarted[] = "received_to_started";
inline constexpr char kStageStartedToReported[] = "started_to_reported";
inline constexpr char kStageReportedToCommitted[] = "reported_to_committed";

// Kueue's cluster_queue_status values (kueue_cluster_queue_status).
inline constexpr char kClusterQueuePending[] = "pending";  // inactive
inline constexpr char kClusterQueueActive[] = "active";
inline constexpr char kClusterQueueTerminated[] = "terminated";

// One ClusterQueue as Kueue's gauges show it after a queue stage's run
// (docs/metrics.md, kueue_*).
struct ClusterQueueGauges {
  // One (flavor, resource) of its quota, in Kubernetes' base units: cpu in
  // cores, memory in bytes, anything else in its own unit (a count).
  struct Resource {
    std::string flavor;
    std::string resource;
    double nominal_quota = 0;
    double borrowing_limit = 0;  // +Inf when unset (unlimited)
    double lending_limit = 0;    // +Inf when unset (lends everything)
    double reservation = 0;      // reserved by workloads
    double usage = 0;            // held by admitted workloads
  };
  std::string name;
  std::string cohort;  // "" for none
  std::string status;  // kClusterQueuePending, kClusterQueueActive
  // Pending workloads in the cycle's heap, and those that are not: parked
  // (BestEffortFIFO's inadmissible set) or held back before the cycle (a
  // stopped LocalQueue, a namespace the ClusterQueue does not select).
  int64_t pending_active = 0;
  int64_t pending_inadmissible = 0;
  int64_t reserving = 0;  // holding quota (evicted ones until released)
  int64_t admitted = 0;   // the same: jobsetd has no admission checks
  std::vector<Resource> resources;
  // With fair sharing: its dominant resource share (NaN for weight 0 while
  // borrowing, as Kueue reports +Inf).
  std::optional<double> weighted_share;
};

// One JobSet's goodput for the gauges.
struct JobSetGoodput {
  std::string namespace_name;
  std::string name;
  // Seconds in Queued, Starting, Productive, Stalled, Restarting.
  std::vector<std::pair<std::string, double>> seconds;
  double ratio = 0;  // productive / wall
};

// A Cohort's gauges (fair sharing only).
struct CohortGauges {
  std::string name;
  double weighted_share = 0;  // as ClusterQueueGauges'
};

class ControllerMetrics {
 public:
  virtual ~ControllerMetrics() = default;

  // A pod report that changed nothing (another node's pod, an unknown or
  // finished pod).
  virtual void FencedReport() = 0;
  // One call of placement::Place took `took`.
  virtual void Placed(absl::Duration took) = 0;
  // JobSet `name` in `ns` reached its terminal state.
  virtual void Finished(const std::string& ns, const std::string& name,
                        bool completed) = 0;
  // `n` restarts by `action` (RestartJobSet, RestartJob), decided by an
  // event with `reason`.
  virtual void Restarted(absl::string_view action, absl::string_view reason,
                         int64_t n) = 0;
  // A JobSet's first attempt all running, `took` after it was created.
  virtual void SubmittedToRunning(absl::Duration took) = 0;
  // A restarted JobSet's new attempt all running, `took` after the restart
  // was decided.
  virtual void RestartedToRunning(absl::Duration took) = 0;
  // `pods` pods passed pod startup stage `stage` (kStage*) in `took` each.
  virtual void PodStage(absl::string_view stage, absl::Duration took,
                        int64_t pods) = 0;
  // Something the controller was given and set aside instead of stopping:
  // `reason` is "undecodable_record" (a stored record that did not decode,
  // left in the store and skipped), "commit_refused" (the store refused a
  // JobSet's records; the JobSet fails) or "jobset_set_aside" (refused again
  // once failed: no longer managed until jobsetd restarts).
  virtual void Rejected(absl::string_view reason) = 0;
  // The gauges: JobSets by state (pending, running, suspended, completed,
  // failed), pods by phase, JobSets waiting for placement.
  virtual void Gauges(const std::map<std::string, int64_t>& jobsets_by_state,
                      const std::map<std::string, int64_t>& pods_by_phase,
                      int64_t pending) = 0;

  // Every JobSet's goodput (docs/resilience.md): its productive share and
  // seconds per phase; those of a JobSet not listed (deleted) go away.
  virtual void GoodputGauges(const std::vector<JobSetGoodput>& /*jobsets*/) {}

  // A pod was flagged a straggler (jobsetd.io/straggler-threshold).
  virtual void StragglerFlagged() {}

  // Kueue's metrics, reported by the queue stage only once its commit
  // succeeded (a failed or ABORTED commit reports nothing). Empty by
  // default, so that a fake need not implement them.

  // Sets the gauges of every ClusterQueue in `cluster_queues` and Cohort in
  // `cohorts`; those of one not listed (deleted) go away.
  virtual void QueueGauges(
      const std::vector<ClusterQueueGauges>& /*cluster_queues*/,
      const std::vector<CohortGauges>& /*cohorts*/) {}
  // A Workload with priority class `priority_class` ("" for none) reserved
  // quota in `cluster_queue`, `waited` after its creation or last requeue.
  virtual void WorkloadQuotaReserved(absl::string_view /*cluster_queue*/,
                                     absl::string_view /*priority_class*/,
                                     absl::Duration /*waited*/) {}
  // The same Workload admitted (at once: no admission checks).
  virtual void WorkloadAdmitted(absl::string_view /*cluster_queue*/,
                                absl::string_view /*priority_class*/,
                                absl::Duration /*waited*/) {}
  // A Workload admitted in `cluster_queue` evicted for `reason` (Preempted,
  // ...), with `underlying_cause` ("" for none).
  virtual void WorkloadEvicted(absl::string_view /*cluster_queue*/,
                               absl::string_view /*reason*/,
                               absl::string_view /*underlying_cause*/) {}
  // A Workload preempted for one in `preempting_cluster_queue`, for
  // `reason` (InClusterQueue, InCohortReclamation, ...).
  virtual void WorkloadPreempted(absl::string_view /*preempting_cluster_queue*/,
                                 absl::string_view /*reason*/) {}
  // A Workload of `cluster_queue` finished (Finished True).
  virtual void WorkloadFinished(absl::string_view /*cluster_queue*/,
                                absl::string_view /*priority_class*/) {}
  // One queue stage run's admission cycles took `took`; `admitted`: they
  // admitted at least one Workload (result success, else inadmissible).
  virtual void AdmissionAttempt(bool /*admitted*/, absl::Duration /*took*/) {}
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_CONTROLLER_METRICS_H_
