#ifndef JOBSET_SCHEDULER_METRICS_H_
#define JOBSET_SCHEDULER_METRICS_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/support/server_interceptor.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "scheduler/controller/controller_metrics.h"

namespace jobset::scheduler {

// jobsetd's Prometheus metrics, every one documented in docs/metrics.md. The
// parts update what they own: the controller (JobSets, pods, restarts,
// placement), the hub (nodes, fencing), the store wrapper (commits) and the
// gRPC interceptor (requests). Thread-safe (prometheus-cpp's metrics are).
struct SchedulerMetrics {
  SchedulerMetrics();

  std::shared_ptr<prometheus::Registry> registry;

  // Upstream's, labelled jobset_name and namespace.
  prometheus::Family<prometheus::Counter>& completed;
  prometheus::Family<prometheus::Counter>& failed;
  // Restarts of a JobSet or of one Job, by action (RestartJobSet,
  // RestartJob) and by the reason of the event that decided it.
  prometheus::Family<prometheus::Counter>& restarts;
  // JobSets by state (pending, running, suspended, completed, failed).
  prometheus::Family<prometheus::Gauge>& jobsets;
  // Pods by phase (Pending, Running, Succeeded, Failed).
  prometheus::Family<prometheus::Gauge>& pods;
  // JobSets whose current attempt waits for placement.
  prometheus::Gauge& pending;
  prometheus::Histogram& placement_seconds;
  prometheus::Histogram& submit_to_running_seconds;
  prometheus::Histogram& restart_seconds;
  // A pod's startup, stage by stage (controller_metrics.h kStage*).
  prometheus::Family<prometheus::Histogram>& pod_startup_seconds;
  // Nodes by state (Ready, NotReady, Cordoned).
  prometheus::Family<prometheus::Gauge>& nodes;
  prometheus::Counter& nodes_lost;
  prometheus::Counter& fenced_reports;
  prometheus::Counter& stragglers;
  prometheus::Family<prometheus::Gauge>& goodput_ratio;
  prometheus::Family<prometheus::Gauge>& goodput_seconds;
  prometheus::Gauge& fleet_goodput_ratio;
  // Agent reports and registrations the hub refused, by reason
  // (scheduler/agents/report_limits.h).
  prometheus::Family<prometheus::Counter>& refused_reports;
  // Stored records and JobSets the controller set aside, by reason
  // (ControllerMetrics::Rejected).
  prometheus::Family<prometheus::Counter>& rejected;
  prometheus::Histogram& commit_seconds;
  prometheus::Counter& commit_bytes;
  prometheus::Family<prometheus::Counter>& grpc_requests;
  prometheus::Family<prometheus::Histogram>& grpc_seconds;

  // Kueue's, with Kueue's names and labels, each also labelled
  // replica_role="leader" (only the leader runs the controller).
  // Gauges by cluster_queue (pending also by status: active, inadmissible).
  prometheus::Family<prometheus::Gauge>& kueue_pending;
  prometheus::Family<prometheus::Gauge>& kueue_reserving;
  prometheus::Family<prometheus::Gauge>& kueue_admitted_active;
  // 1 for a ClusterQueue's status (pending, active, terminated), 0 else.
  prometheus::Family<prometheus::Gauge>& kueue_cluster_queue_status;
  // By cohort, cluster_queue, flavor, resource; in base units.
  prometheus::Family<prometheus::Gauge>& kueue_resource_reservation;
  prometheus::Family<prometheus::Gauge>& kueue_resource_usage;
  prometheus::Family<prometheus::Gauge>& kueue_nominal_quota;
  prometheus::Family<prometheus::Gauge>& kueue_borrowing_limit;
  prometheus::Family<prometheus::Gauge>& kueue_lending_limit;
  prometheus::Family<prometheus::Gauge>& kueue_cluster_queue_weighted_share;
  prometheus::Family<prometheus::Gauge>& kueue_cohort_weighted_share;
  // By cluster_queue and priority_class.
  prometheus::Family<prometheus::Counter>& kueue_quota_reserved;
  prometheus::Family<prometheus::Counter>& kueue_admitted;
  prometheus::Family<prometheus::Counter>& kueue_finished;
  // By cluster_queue, reason, underlying_cause.
  prometheus::Family<prometheus::Counter>& kueue_evicted;
  // By preempting_cluster_queue, reason.
  prometheus::Family<prometheus::Counter>& kueue_preempted;
  // By result (success, inadmissible).
  prometheus::Family<prometheus::Counter>& kueue_admission_attempts;
  prometheus::Family<prometheus::Histogram>& kueue_attempt_seconds;
  // By cluster_queue and priority_class.
  prometheus::Family<prometheus::Histogram>& kueue_quota_reserved_wait_seconds;
  prometheus::Family<prometheus::Histogram>& kueue_admission_wait_seconds;

  // Observes `took` `pods` times in stage `stage` of pod_startup_seconds.
  void PodStage(absl::string_view stage, absl::Duration took, int64_t pods);
};

// The controller's measures, exported as `metrics`' Prometheus metrics.
// Thread-safe (prometheus-cpp's metrics are).
class PrometheusControllerMetrics final : public ControllerMetrics {
 public:
  explicit PrometheusControllerMetrics(SchedulerMetrics* metrics)
      : metrics_(metrics) {}

  void FencedReport() override;
  void Placed(absl::Duration took) override;
  void Finished(const std::string& ns, const std::string& name,
                bool completed) override;
  void Restarted(absl::string_view action, absl::string_view reason,
                 int64_t n) override;
  void SubmittedToRunning(absl::Duration took) override;
  void RestartedToRunning(absl::Duration took) override;
  void StragglerFlagged() override;
  void GoodputGauges(const std::vector<JobSetGoodput>& jobsets) override;
  void PodStage(absl::string_view stage, absl::Duration took,
                int64_t pods) override;
  void Rejected(absl::string_view reason) override;
  void Gauges(const std::map<std::string, int64_t>& jobsets_by_state,
              const std::map<std::string, int64_t>& pods_by_phase,
              int64_t pending) override;
  void QueueGauges(const std::vector<ClusterQueueGauges>& cluster_queues,
                   const std::vector<CohortGauges>& cohorts) override;
  void WorkloadQuotaReserved(absl::string_view cluster_queue,
                             absl::string_view priority_class,
                             absl::Duration waited) override;
  void WorkloadAdmitted(absl::string_view cluster_queue,
                        absl::string_view priority_class,
                        absl::Duration waited) override;
  void WorkloadEvicted(absl::string_view cluster_queue,
                       absl::string_view reason,
                       absl::string_view underlying_cause) override;
  void WorkloadPreempted(absl::string_view preempting_cluster_queue,
                         absl::string_view reason) override;
  void WorkloadFinished(absl::string_view cluster_queue,
                        absl::string_view priority_class) override;
  void AdmissionAttempt(bool admitted, absl::Duration took) override;

 private:
  using GaugeSeries =
      std::pair<prometheus::Family<prometheus::Gauge>*, prometheus::Gauge*>;
  // Sets one series of `family` and adds it to `seen`.
  static void SetSeries(prometheus::Family<prometheus::Gauge>& family,
                        const prometheus::Labels& labels, double value,
                        std::set<GaugeSeries>* seen);
  // Removes the series of `last` not in `now`, then makes `now` the last.
  static void ReplaceSeries(std::set<GaugeSeries> now,
                            std::set<GaugeSeries>* last);

  SchedulerMetrics* const metrics_;
  absl::Mutex mu_;
  // The series the last QueueGauges set: those it does not set again (a
  // ClusterQueue deleted, a flavor or cohort changed) are removed.
  std::set<GaugeSeries> queue_series_ ABSL_GUARDED_BY(mu_);
  // The same for GoodputGauges (a JobSet deleted).
  std::set<GaugeSeries> goodput_series_ ABSL_GUARDED_BY(mu_);
};

// Counts and times every gRPC call by method and status code.
class GrpcMetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit GrpcMetricsInterceptorFactory(SchedulerMetrics* metrics)
      : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  SchedulerMetrics* const metrics_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_METRICS_H_
