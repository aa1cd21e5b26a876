#ifndef JOBSET_SCHEDULER_METRICS_H_
#define JOBSET_SCHEDULER_METRICS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

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
  void PodStage(absl::string_view stage, absl::Duration took,
                int64_t pods) override;
  void Rejected(absl::string_view reason) override;
  void Gauges(const std::map<std::string, int64_t>& jobsets_by_state,
              const std::map<std::string, int64_t>& pods_by_phase,
              int64_t pending) override;

 private:
  SchedulerMetrics* const metrics_;
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
