#include "scheduler/metrics.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/clock.h"

namespace jobset::scheduler {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Histogram;

// Seconds, from 1 ms to about 2 minutes.
Histogram::BucketBoundaries LatencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
          0.5,   1,      2.5,   5,    10,    30,   60,  120};
}

// Seconds, from 100 us to about 2 minutes: a pod's startup stages take from
// tens of microseconds to (waiting for room) minutes.
Histogram::BucketBoundaries StageBuckets() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
          0.1,    0.25,    0.5,    1,     2.5,    5,     10,   30,    120};
}

// Seconds, from 1 s to about 3 hours: Kueue's buckets for waiting times
// (1, then 2.5 doubling).
Histogram::BucketBoundaries WaitBuckets() {
  Histogram::BucketBoundaries b = {1};
  for (double v = 2.5; b.size() < 14; v *= 2) b.push_back(v);
  return b;
}

// The label every Kueue metric carries: only the leader runs the
// controller.
const prometheus::Labels& KueueLabels() {
  static const prometheus::Labels* const kLabels =
      new prometheus::Labels{{"replica_role", "leader"}};
  return *kLabels;
}

// gRPC's status code names, as grpc_code labels usually read.
std::string CodeName(grpc::StatusCode code) {
  static constexpr const char* kNames[] = {"OK",
                                           "CANCELLED",
                                           "UNKNOWN",
                                           "INVALID_ARGUMENT",
                                           "DEADLINE_EXCEEDED",
                                           "NOT_FOUND",
                                           "ALREADY_EXISTS",
                                           "PERMISSION_DENIED",
                                           "RESOURCE_EXHAUSTED",
                                           "FAILED_PRECONDITION",
                                           "ABORTED",
                                           "OUT_OF_RANGE",
                                           "UNIMPLEMENTED",
                                           "INTERNAL",
                                           "UNAVAILABLE",
                                           "DATA_LOSS",
                                           "UNAUTHENTICATED"};
  const int i = static_cast<int>(code);
  return i >= 0 && i < 17 ? kNames[i] : absl::StrCat(i);
}

}  // namespace

SchedulerMetrics::SchedulerMetrics()
    : registry(std::make_shared<prometheus::Registry>()),
      completed(BuildCounter()
                    .Name("jobset_completed_total")
                    .Help("JobSets that completed (upstream's metric)")
                    .Register(*registry)),
      failed(BuildCounter()
                 .Name("jobset_failed_total")
                 .Help("JobSets that failed (upstream's metric)")
                 .Register(*registry)),
      restarts(BuildCounter()
                   .Name("jobsetd_restarts_total")
                   .Help("Restarts of a whole JobSet or of one Job, by action "
                         "and by the reason of the event that decided it")
                   .Register(*registry)),
      jobsets(BuildGauge()
                  .Name("jobsetd_jobsets")
                  .Help("JobSets by state: pending, running, suspended, "
                        "completed, failed")
                  .Register(*registry)),
      pods(BuildGauge()
               .Name("jobsetd_pods")
               .Help("Pods by phase")
               .Register(*registry)),
      pending(BuildGauge()
                  .Name("jobsetd_pending_jobsets")
                  .Help("JobSets whose current attempt waits for placement")
                  .Register(*registry)
                  .Add({})),
      placement_seconds(
          BuildHistogram()
              .Name("jobsetd_placement_duration_seconds")
              .Help("Time to place one JobSet attempt as a gang (whether it "
                    "fit or not)")
              .Register(*registry)
              .Add({}, LatencyBuckets())),
      submit_to_running_seconds(
          BuildHistogram()
              .Name("jobsetd_submit_to_running_seconds")
              .Help("From a JobSet's creation to all pods of its first "
                    "attempt running")
              .Register(*registry)
              .Add({}, LatencyBuckets())),
      restart_seconds(BuildHistogram()
                          .Name("jobsetd_restart_duration_seconds")
                          .Help("From the restart decision (a failure "
                                "reported) to all pods of the new attempt "
                                "running")
                          .Register(*registry)
                          .Add({}, LatencyBuckets())),
      pod_startup_seconds(
          BuildHistogram()
              .Name("jobsetd_pod_startup_stage_seconds")
              .Help("A pod's startup by stage: created_to_bound, "
                    "bound_to_sent, sent_to_received, received_to_started, "
                    "started_to_reported, reported_to_committed")
              .Register(*registry)),
      nodes(BuildGauge()
                .Name("jobsetd_nodes")
                .Help("Nodes by state: Ready, NotReady, Cordoned")
                .Register(*registry)),
      nodes_lost(BuildCounter()
                     .Name("jobsetd_node_lost_total")
                     .Help("Nodes declared lost (no heartbeat for "
                           "--node_lost_timeout)")
                     .Register(*registry)
                     .Add({})),
      fenced_reports(BuildCounter()
                         .Name("jobsetd_fenced_reports_total")
                         .Help("Agent reports about pods not assigned to the "
                               "reporting node, or not current: ignored")
                         .Register(*registry)
                         .Add({})),
      stragglers(BuildCounter()
                     .Name("jobsetd_stragglers_total")
                     .Help("Pods flagged as stragglers: slower than "
                           "jobsetd.io/straggler-threshold x their gang's "
                           "median step rate for the window")
                     .Register(*registry)
                     .Add({})),
      goodput_ratio(BuildGauge()
                        .Name("jobsetd_jobset_goodput_ratio")
                        .Help("A JobSet's productive time over its wall time "
                              "since submission (docs/resilience.md)")
                        .Register(*registry)),
      goodput_seconds(BuildGauge()
                          .Name("jobsetd_jobset_time_seconds")
                          .Help("A JobSet's wall time by phase: Queued, "
                                "Starting, Productive, Stalled, Restarting")
                          .Register(*registry)),
      fleet_goodput_ratio(BuildGauge()
                              .Name("jobsetd_goodput_ratio")
                              .Help("Every JobSet's productive time over "
                                    "their wall time together")
                              .Register(*registry)
                              .Add({})),
      refused_reports(BuildCounter()
                          .Name("jobsetd_refused_agent_messages_total")
                          .Help("Agent reports and registrations refused "
                                "(over a limit, malformed, or about a pod "
                                "the node does not hold), by reason")
                          .Register(*registry)),
      rejected(BuildCounter()
                   .Name("jobsetd_rejected_records_total")
                   .Help("Stored records that did not decode (set aside), "
                         "and JobSets whose records the store refused, by "
                         "reason")
                   .Register(*registry)),
      commit_seconds(BuildHistogram()
                         .Name("jobsetd_store_commit_duration_seconds")
                         .Help("Store commits (synced writes), API and "
                               "controller")
                         .Register(*registry)
                         .Add({}, LatencyBuckets())),
      commit_bytes(BuildCounter()
                       .Name("jobsetd_store_commit_bytes_total")
                       .Help("Bytes of keys and values committed to the store")
                       .Register(*registry)
                       .Add({})),
      grpc_requests(BuildCounter()
                        .Name("jobsetd_grpc_requests_total")
                        .Help("gRPC calls served, by method and status code")
                        .Register(*registry)),
      grpc_seconds(BuildHistogram()
                       .Name("jobsetd_grpc_request_duration_seconds")
                       .Help("gRPC call durations by method (streams: their "
                             "whole life)")
                       .Register(*registry)),
      kueue_pending(BuildGauge()
                        .Name("kueue_pending_workloads")
                        .Help("Pending workloads by cluster_queue and status: "
                              "active (in the queue), inadmissible")
                        .Labels(KueueLabels())
                        .Register(*registry)),
      kueue_reserving(BuildGauge()
                          .Name("kueue_reserving_active_workloads")
                          .Help("Workloads holding quota, by cluster_queue")
                          .Labels(KueueLabels())
                          .Register(*registry)),
      kueue_admitted_active(
          BuildGauge()
              .Name("kueue_admitted_active_workloads")
              .Help("Admitted workloads not finished, by cluster_queue")
              .Labels(KueueLabels())
              .Register(*registry)),
      kueue_cluster_queue_status(
          BuildGauge()
              .Name("kueue_cluster_queue_status")
              .Help("1 for the status of each cluster_queue: pending, active, "
                    "terminated")
              .Labels(KueueLabels())
              .Register(*registry)),
      kueue_resource_reservation(
          BuildGauge()
              .Name("kueue_cluster_queue_resource_reservation")
              .Help("Quota reserved in a cluster_queue, by flavor and resource")
              .Labels(KueueLabels())
              .Register(*registry)),
      kueue_resource_usage(BuildGauge()
                               .Name("kueue_cluster_queue_resource_usage")
                               .Help("Quota used by admitted workloads in a "
                                     "cluster_queue, by flavor and resource")
                               .Labels(KueueLabels())
                               .Register(*registry)),
      kueue_nominal_quota(
          BuildGauge()
              .Name("kueue_cluster_queue_nominal_quota")
              .Help("Nominal quota of a cluster_queue, by flavor and resource")
              .Labels(KueueLabels())
              .Register(*registry)),
      kueue_borrowing_limit(BuildGauge()
                                .Name("kueue_cluster_queue_borrowing_limit")
                                .Help("Borrowing limit of a cluster_queue, by "
                                      "flavor and resource (+Inf: none)")
                                .Labels(KueueLabels())
                                .Register(*registry)),
      kueue_lending_limit(BuildGauge()
                              .Name("kueue_cluster_queue_lending_limit")
                              .Help("Lending limit of a cluster_queue, by "
                                    "flavor and resource (+Inf: none)")
                              .Labels(KueueLabels())
                              .Register(*registry)),
      kueue_cluster_queue_weighted_share(
          BuildGauge()
              .Name("kueue_cluster_queue_weighted_share")
              .Help("With fair sharing: a cluster_queue's usage above its "
                    "nominal quota per 1000 of what its cohort could lend, "
                    "for its dominant resource, divided by its weight (NaN: "
                    "weight 0 while borrowing)")
              .Labels(KueueLabels())
              .Register(*registry)),
      kueue_cohort_weighted_share(
          BuildGauge()
              .Name("kueue_cohort_weighted_share")
              .Help("With fair sharing: the same for a cohort within its "
                    "parent")
              .Labels(KueueLabels())
              .Register(*registry)),
      kueue_quota_reserved(BuildCounter()
                               .Name("kueue_quota_reserved_workloads_total")
                               .Help("Workloads that reserved quota, by "
                                     "cluster_queue and priority_class")
                               .Labels(KueueLabels())
                               .Register(*registry)),
      kueue_admitted(
          BuildCounter()
              .Name("kueue_admitted_workloads_total")
              .Help("Workloads admitted, by cluster_queue and priority_class")
              .Labels(KueueLabels())
              .Register(*registry)),
      kueue_finished(
          BuildCounter()
              .Name("kueue_finished_workloads_total")
              .Help("Workloads finished, by cluster_queue and priority_class")
              .Labels(KueueLabels())
              .Register(*registry)),
      kueue_evicted(BuildCounter()
                        .Name("kueue_evicted_workloads_total")
                        .Help("Workloads evicted, by cluster_queue, reason and "
                              "underlying_cause")
                        .Labels(KueueLabels())
                        .Register(*registry)),
      kueue_preempted(
          BuildCounter()
              .Name("kueue_preempted_workloads_total")
              .Help(
                  "Workloads preempted, by preempting_cluster_queue and reason")
              .Labels(KueueLabels())
              .Register(*registry)),
      kueue_admission_attempts(
          BuildCounter()
              .Name("kueue_admission_attempts_total")
              .Help("Admission attempts (one queue stage run's cycles), by "
                    "result: success, inadmissible")
              .Labels(KueueLabels())
              .Register(*registry)),
      kueue_attempt_seconds(
          BuildHistogram()
              .Name("kueue_admission_attempt_duration_seconds")
              .Help("Duration of an admission attempt, by result")
              .Labels(KueueLabels())
              .Register(*registry)),
      kueue_quota_reserved_wait_seconds(
          BuildHistogram()
              .Name("kueue_quota_reserved_wait_time_seconds")
              .Help("From a workload's creation or last requeue to its quota "
                    "reservation")
              .Labels(KueueLabels())
              .Register(*registry)),
      kueue_admission_wait_seconds(
          BuildHistogram()
              .Name("kueue_admission_wait_time_seconds")
              .Help(
                  "From a workload's creation or last requeue to its admission")
              .Labels(KueueLabels())
              .Register(*registry)) {}

namespace {

class GrpcMetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  GrpcMetricsInterceptor(SchedulerMetrics* metrics, std::string method)
      : metrics_(metrics), method_(std::move(method)) {}

  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(
            InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      metrics_->grpc_requests
          .Add({{"method", method_}, {"code", CodeName(status.error_code())}})
          .Increment();
      metrics_->grpc_seconds.Add({{"method", method_}}, LatencyBuckets())
          .Observe(absl::ToDoubleSeconds(call_time_.Elapsed()));
    }
    methods->Proceed();
  }

 private:
  SchedulerMetrics* const metrics_;
  const std::string method_;
  const Stopwatch call_time_;
};

}  // namespace

grpc::experimental::Interceptor*
GrpcMetricsInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new GrpcMetricsInterceptor(metrics_, info->method());
}

void PrometheusControllerMetrics::FencedReport() {
  metrics_->fenced_reports.Increment();
}

void PrometheusControllerMetrics::SetSeries(
    prometheus::Family<prometheus::Gauge>& family,
    const prometheus::Labels& labels, double value,
    std::set<GaugeSeries>* seen) {
  prometheus::Gauge& gauge = family.Add(labels);
  gauge.Set(value);
  seen->insert({&family, &gauge});
}

void PrometheusControllerMetrics::ReplaceSeries(std::set<GaugeSeries> now,
                                                std::set<GaugeSeries>* last) {
  for (const GaugeSeries& old : *last) {
    if (!now.contains(old)) old.first->Remove(old.second);
  }
  *last = std::move(now);
}

void PrometheusControllerMetrics::StragglerFlagged() {
  metrics_->stragglers.Increment();
}

void PrometheusControllerMetrics::GoodputGauges(
    const std::vector<JobSetGoodput>& jobsets) {
  std::set<GaugeSeries> now;
  auto set = [&now](prometheus::Family<prometheus::Gauge>& family,
                    const prometheus::Labels& labels,
                    double value) { SetSeries(family, labels, value, &now); };
  double productive = 0;
  double wall = 0;
  for (const JobSetGoodput& g : jobsets) {
    const prometheus::Labels jobset = {{"namespace", g.namespace_name},
                                       {"name", g.name}};
    set(metrics_->goodput_ratio, jobset, g.ratio);
    for (const auto& [phase, seconds] : g.seconds) {
      prometheus::Labels labels = jobset;
      labels["phase"] = phase;
      set(metrics_->goodput_seconds, labels, seconds);
      wall += seconds;
      if (phase == "Productive") productive += seconds;
    }
  }
  metrics_->fleet_goodput_ratio.Set(wall > 0 ? productive / wall : 0);
  absl::MutexLock lock(&mu_);
  ReplaceSeries(std::move(now), &goodput_series_);
}

void PrometheusControllerMetrics::Rejected(absl::string_view reason) {
  metrics_->rejected.Add({{"reason", std::string(reason)}}).Increment();
}

void PrometheusControllerMetrics::Placed(absl::Duration took) {
  metrics_->placement_seconds.Observe(absl::ToDoubleSeconds(took));
}

void PrometheusControllerMetrics::Finished(const std::string& ns,
                                           const std::string& name,
                                           bool completed) {
  (completed ? metrics_->completed : metrics_->failed)
      .Add({{"jobset_name", name}, {"namespace", ns}})
      .Increment();
}

void PrometheusControllerMetrics::Restarted(absl::string_view action,
                                            absl::string_view reason,
                                            int64_t n) {
  metrics_->restarts
      .Add({{"action", std::string(action)}, {"reason", std::string(reason)}})
      .Increment(static_cast<double>(n));
}

void PrometheusControllerMetrics::SubmittedToRunning(absl::Duration took) {
  metrics_->submit_to_running_seconds.Observe(absl::ToDoubleSeconds(took));
}

void PrometheusControllerMetrics::RestartedToRunning(absl::Duration took) {
  metrics_->restart_seconds.Observe(absl::ToDoubleSeconds(took));
}

void SchedulerMetrics::PodStage(absl::string_view stage, absl::Duration took,
                                int64_t pods) {
  if (pods <= 0) return;
  const Histogram::BucketBoundaries bounds = StageBuckets();
  Histogram& h =
      pod_startup_seconds.Add({{"stage", std::string(stage)}}, bounds);
  const double seconds = std::max(0.0, absl::ToDoubleSeconds(took));
  if (pods == 1) {
    h.Observe(seconds);
    return;
  }
  // One observation of `pods` at once: the buckets' increments (the last
  // is +Inf's) and the sum.
  std::vector<double> increments(bounds.size() + 1, 0);
  const size_t bucket =
      std::lower_bound(bounds.begin(), bounds.end(), seconds) - bounds.begin();
  increments[bucket] = static_cast<double>(pods);
  h.ObserveMultiple(increments, seconds * static_cast<double>(pods));
}

void PrometheusControllerMetrics::PodStage(absl::string_view stage,
                                           absl::Duration took, int64_t pods) {
  metrics_->PodStage(stage, took, pods);
}

void PrometheusControllerMetrics::Gauges(
    const std::map<std::string, int64_t>& jobsets_by_state,
    const std::map<std::string, int64_t>& pods_by_phase, int64_t pending) {
  for (const auto& [state, n] : jobsets_by_state)
    metrics_->jobsets.Add({{"state", state}}).Set(static_cast<double>(n));
  for (const auto& [phase, n] : pods_by_phase)
    metrics_->pods.Add({{"phase", phase}}).Set(static_cast<double>(n));
  metrics_->pending.Set(static_cast<double>(pending));
}

void PrometheusControllerMetrics::QueueGauges(
    const std::vector<ClusterQueueGauges>& cluster_queues,
    const std::vector<CohortGauges>& cohorts) {
  std::set<GaugeSeries> now;
  auto set = [&now](prometheus::Family<prometheus::Gauge>& family,
                    const prometheus::Labels& labels,
                    double value) { SetSeries(family, labels, value, &now); };
  SchedulerMetrics& m = *metrics_;
  for (const ClusterQueueGauges& cq : cluster_queues) {
    set(m.kueue_pending, {{"cluster_queue", cq.name}, {"status", "active"}},
        static_cast<double>(cq.pending_active));
    set(m.kueue_pending,
        {{"cluster_queue", cq.name}, {"status", "inadmissible"}},
        static_cast<double>(cq.pending_inadmissible));
    set(m.kueue_reserving, {{"cluster_queue", cq.name}},
        static_cast<double>(cq.reserving));
    set(m.kueue_admitted_active, {{"cluster_queue", cq.name}},
        static_cast<double>(cq.admitted));
    for (const char* status :
         {kClusterQueuePending, kClusterQueueActive, kClusterQueueTerminated}) {
      set(m.kueue_cluster_queue_status,
          {{"cluster_queue", cq.name}, {"status", status}},
          cq.status == status ? 1 : 0);
    }
    for (const ClusterQueueGauges::Resource& r : cq.resources) {
      const prometheus::Labels labels = {{"cohort", cq.cohort},
                                         {"cluster_queue", cq.name},
                                         {"flavor", r.flavor},
                                         {"resource", r.resource}};
      set(m.kueue_resource_reservation, labels, r.reservation);
      set(m.kueue_resource_usage, labels, r.usage);
      set(m.kueue_nominal_quota, labels, r.nominal_quota);
      set(m.kueue_borrowing_limit, labels, r.borrowing_limit);
      set(m.kueue_lending_limit, labels, r.lending_limit);
    }
    if (cq.weighted_share.has_value()) {
      set(m.kueue_cluster_queue_weighted_share,
          {{"cluster_queue", cq.name}, {"cohort", cq.cohort}},
          *cq.weighted_share);
    }
  }
  for (const CohortGauges& cohort : cohorts) {
    set(m.kueue_cohort_weighted_share, {{"cohort", cohort.name}},
        cohort.weighted_share);
  }
  absl::MutexLock lock(&mu_);
  ReplaceSeries(std::move(now), &queue_series_);
}

namespace {

// Counts one Workload of `cluster_queue` and `priority_class` in `counter`
// and observes its wait in `wait`.
void CountWithWait(prometheus::Family<prometheus::Counter>& counter,
                   prometheus::Family<Histogram>& wait,
                   absl::string_view cluster_queue,
                   absl::string_view priority_class, absl::Duration waited) {
  const prometheus::Labels labels = {
      {"cluster_queue", std::string(cluster_queue)},
      {"priority_class", std::string(priority_class)}};
  counter.Add(labels).Increment();
  wait.Add(labels, WaitBuckets())
      .Observe(std::max(0.0, absl::ToDoubleSeconds(waited)));
}

}  // namespace

void PrometheusControllerMetrics::WorkloadQuotaReserved(
    absl::string_view cluster_queue, absl::string_view priority_class,
    absl::Duration waited) {
  CountWithWait(metrics_->kueue_quota_reserved,
                metrics_->kueue_quota_reserved_wait_seconds, cluster_queue,
                priority_class, waited);
}

void PrometheusControllerMetrics::WorkloadAdmitted(
    absl::string_view cluster_queue, absl::string_view priority_class,
    absl::Duration waited) {
  CountWithWait(metrics_->kueue_admitted,
                metrics_->kueue_admission_wait_seconds, cluster_queue,
                priority_class, waited);
}

void PrometheusControllerMetrics::WorkloadEvicted(
    absl::string_view cluster_queue, absl::string_view reason,
    absl::string_view underlying_cause) {
  metrics_->kueue_evicted
      .Add({{"cluster_queue", std::string(cluster_queue)},
            {"reason", std::string(reason)},
            {"underlying_cause", std::string(underlying_cause)}})
      .Increment();
}

void PrometheusControllerMetrics::WorkloadPreempted(
    absl::string_view preempting_cluster_queue, absl::string_view reason) {
  metrics_->kueue_preempted
      .Add({{"preempting_cluster_queue", std::string(preempting_cluster_queue)},
            {"reason", std::string(reason)}})
      .Increment();
}

void PrometheusControllerMetrics::WorkloadFinished(
    absl::string_view cluster_queue, absl::string_view priority_class) {
  metrics_->kueue_finished
      .Add({{"cluster_queue", std::string(cluster_queue)},
            {"priority_class", std::string(priority_class)}})
      .Increment();
}

void PrometheusControllerMetrics::AdmissionAttempt(bool admitted,
                                                   absl::Duration took) {
  const prometheus::Labels labels = {
      {"result", admitted ? "success" : "inadmissible"}};
  metrics_->kueue_admission_attempts.Add(labels).Increment();
  metrics_->kueue_attempt_seconds.Add(labels, LatencyBuckets())
      .Observe(absl::ToDoubleSeconds(took));
}

}  // namespace jobset::scheduler
