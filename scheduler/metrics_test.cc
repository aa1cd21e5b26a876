// Kueue's metrics as PrometheusControllerMetrics exports them: Kueue's
// names and labels (replica_role on each), base units, and the gauges of a
// ClusterQueue that went away removed rather than left stale.
#include "scheduler/metrics.h"

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::scheduler {
namespace {

using ::testing::Optional;
using Labels = std::map<std::string, std::string>;

// The series of `name` whose labels are exactly `labels`, if any.
std::optional<prometheus::ClientMetric> Series(SchedulerMetrics& metrics,
                                               const std::string& name,
                                               const Labels& labels) {
  for (const prometheus::MetricFamily& family : metrics.registry->Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& m : family.metric) {
      Labels have;
      for (const prometheus::ClientMetric::Label& l : m.label)
        have[l.name] = l.value;
      if (have == labels) return m;
    }
  }
  return std::nullopt;
}

// The value of the series of `name` with exactly `labels`: a gauge's or a
// counter's value, a histogram's sample count; nullopt when absent.
std::optional<double> Value(SchedulerMetrics& metrics, const std::string& name,
                            const Labels& labels) {
  std::optional<prometheus::ClientMetric> m = Series(metrics, name, labels);
  if (!m.has_value()) return std::nullopt;
  if (m->histogram.sample_count > 0)
    return static_cast<double>(m->histogram.sample_count);
  return m->gauge.value + m->counter.value;
}

// How many series `name` has.
size_t SeriesCount(SchedulerMetrics& metrics, const std::string& name) {
  for (const prometheus::MetricFamily& family : metrics.registry->Collect()) {
    if (family.name == name) return family.metric.size();
  }
  return 0;
}

ClusterQueueGauges TeamA() {
  ClusterQueueGauges cq;
  cq.name = "cq-a";
  cq.cohort = "team";
  cq.status = kClusterQueueActive;
  cq.pending_active = 2;
  cq.pending_inadmissible = 1;
  cq.reserving = 3;
  cq.admitted = 3;
  cq.resources.push_back({.flavor = "default",
                          .resource = "cpu",
                          .nominal_quota = 8,
                          .borrowing_limit = INFINITY,
                          .lending_limit = 2,
                          .reservation = 1.5,
                          .usage = 1.5});
  cq.resources.push_back({.flavor = "default",
                          .resource = "memory",
                          .nominal_quota = 8.0 * (1 << 30),
                          .borrowing_limit = 0,
                          .lending_limit = INFINITY,
                          .reservation = 1 << 30,
                          .usage = 1 << 30});
  return cq;
}

TEST(KueueMetricsTest, QueueGaugesCarryKueuesNamesAndLabels) {
  SchedulerMetrics metrics;
  PrometheusControllerMetrics exported(&metrics);
  exported.QueueGauges({TeamA()}, {});

  const Labels cq = {{"cluster_queue", "cq-a"}, {"replica_role", "leader"}};
  auto with = [&](Labels more) {
    more.insert(cq.begin(), cq.end());
    return more;
  };
  EXPECT_THAT(
      Value(metrics, "kueue_pending_workloads", with({{"status", "active"}})),
      Optional(2));
  EXPECT_THAT(Value(metrics, "kueue_pending_workloads",
                    with({{"status", "inadmissible"}})),
              Optional(1));
  EXPECT_THAT(Value(metrics, "kueue_reserving_active_workloads", cq),
              Optional(3));
  EXPECT_THAT(Value(metrics, "kueue_admitted_active_workloads", cq),
              Optional(3));
  for (const auto& [status, value] : std::map<std::string, double>{
           {"pending", 0}, {"active", 1}, {"terminated", 0}}) {
    EXPECT_THAT(Value(metrics, "kueue_cluster_queue_status",
                      with({{"status", status}})),
                Optional(value))
        << status;
  }

  const Labels cpu =
      with({{"cohort", "team"}, {"flavor", "default"}, {"resource", "cpu"}});
  const Labels memory =
      with({{"cohort", "team"}, {"flavor", "default"}, {"resource", "memory"}});
  for (const auto& [name, want_cpu, want_memory] :
       std::vector<std::tuple<std::string, double, double>>{
           {"kueue_cluster_queue_nominal_quota", 8, 8.0 * (1 << 30)},
           {"kueue_cluster_queue_borrowing_limit", INFINITY, 0},
           {"kueue_cluster_queue_lending_limit", 2, INFINITY},
           {"kueue_cluster_queue_resource_reservation", 1.5, 1 << 30},
           {"kueue_cluster_queue_resource_usage", 1.5, 1 << 30}}) {
    EXPECT_THAT(Value(metrics, name, cpu), Optional(want_cpu)) << name;
    EXPECT_THAT(Value(metrics, name, memory), Optional(want_memory)) << name;
  }
}

TEST(KueueMetricsTest, WeightedSharesWithFairSharing) {
  SchedulerMetrics metrics;
  PrometheusControllerMetrics exported(&metrics);
  ClusterQueueGauges a = TeamA();
  exported.QueueGauges({a}, {});
  const Labels cq = {{"cluster_queue", "cq-a"},
                     {"cohort", "team"},
                     {"replica_role", "leader"}};
  EXPECT_EQ(Value(metrics, "kueue_cluster_queue_weighted_share", cq),
            std::nullopt)
      << "not without fair sharing";
  a.weighted_share = 250;
  exported.QueueGauges({a}, {CohortGauges{"team", 12.5}});
  EXPECT_THAT(Value(metrics, "kueue_cluster_queue_weighted_share", cq),
              Optional(250));
  EXPECT_THAT(Value(metrics, "kueue_cohort_weighted_share",
                    {{"cohort", "team"}, {"replica_role", "leader"}}),
              Optional(12.5));
  exported.QueueGauges({a}, {});
  EXPECT_EQ(Value(metrics, "kueue_cohort_weighted_share",
                  {{"cohort", "team"}, {"replica_role", "leader"}}),
            std::nullopt)
      << "a deleted cohort's gauge goes";
}

TEST(GoodputMetricsTest, PerJobSetAndFleetWide) {
  SchedulerMetrics metrics;
  PrometheusControllerMetrics exported(&metrics);
  JobSetGoodput a{"default", "a", {{"Queued", 10}, {"Productive", 30}}, 0.75};
  JobSetGoodput b{
      "default", "b", {{"Starting", 40}, {"Productive", 20}}, 1.0 / 3};
  exported.GoodputGauges({a, b});
  const Labels la = {{"namespace", "default"}, {"name", "a"}};
  EXPECT_THAT(Value(metrics, "jobsetd_jobset_goodput_ratio", la),
              Optional(0.75));
  Labels productive = la;
  productive["phase"] = "Productive";
  EXPECT_THAT(Value(metrics, "jobsetd_jobset_time_seconds", productive),
              Optional(30));
  // 50 productive seconds of 100.
  EXPECT_THAT(Value(metrics, "jobsetd_goodput_ratio", {}), Optional(0.5));
  exported.GoodputGauges({b});
  EXPECT_EQ(Value(metrics, "jobsetd_jobset_goodput_ratio", la), std::nullopt)
      << "a deleted JobSet's series go";
}

TEST(KueueMetricsTest, GaugesOfADeletedClusterQueueAreRemoved) {
  SchedulerMetrics metrics;
  PrometheusControllerMetrics exported(&metrics);
  ClusterQueueGauges b;
  b.name = "cq-b";
  b.status = kClusterQueuePending;
  b.resources.push_back({.flavor = "spot", .resource = "cpu"});
  exported.QueueGauges({TeamA(), b}, {});
  EXPECT_EQ(SeriesCount(metrics, "kueue_pending_workloads"), 4);
  EXPECT_EQ(SeriesCount(metrics, "kueue_cluster_queue_nominal_quota"), 3);

  // cq-a is deleted; cq-b's flavor is renamed: only what is set now stays.
  b.resources[0].flavor = "on-demand";
  exported.QueueGauges({b}, {});
  EXPECT_EQ(SeriesCount(metrics, "kueue_pending_workloads"), 2);
  EXPECT_EQ(SeriesCount(metrics, "kueue_reserving_active_workloads"), 1);
  EXPECT_EQ(SeriesCount(metrics, "kueue_cluster_queue_status"), 3);
  for (const char* name : {"kueue_cluster_queue_nominal_quota",
                           "kueue_cluster_queue_borrowing_limit",
                           "kueue_cluster_queue_lending_limit",
                           "kueue_cluster_queue_resource_reservation",
                           "kueue_cluster_queue_resource_usage"}) {
    EXPECT_EQ(SeriesCount(metrics, name), 1) << name;
    EXPECT_TRUE(Series(metrics, name,
                       {{"cohort", ""},
                        {"cluster_queue", "cq-b"},
                        {"flavor", "on-demand"},
                        {"resource", "cpu"},
                        {"replica_role", "leader"}})
                    .has_value())
        << name;
  }
  EXPECT_THAT(Value(metrics, "kueue_cluster_queue_status",
                    {{"cluster_queue", "cq-b"},
                     {"status", "pending"},
                     {"replica_role", "leader"}}),
              Optional(1));

  exported.QueueGauges({}, {});
  EXPECT_EQ(SeriesCount(metrics, "kueue_pending_workloads"), 0);
  EXPECT_EQ(SeriesCount(metrics, "kueue_cluster_queue_lending_limit"), 0);
}

TEST(KueueMetricsTest, CountersAndHistogramsCarryKueuesLabels) {
  SchedulerMetrics metrics;
  PrometheusControllerMetrics exported(&metrics);
  exported.WorkloadQuotaReserved("cq-a", "high", absl::Seconds(30));
  exported.WorkloadAdmitted("cq-a", "high", absl::Seconds(30));
  exported.WorkloadAdmitted("cq-a", "", absl::Seconds(3));
  exported.WorkloadEvicted("cq-b", "Preempted", "");
  exported.WorkloadPreempted("cq-a", "InCohortReclamation");
  exported.WorkloadFinished("cq-a", "high");
  exported.AdmissionAttempt(true, absl::Milliseconds(2));
  exported.AdmissionAttempt(false, absl::Milliseconds(1));
  exported.AdmissionAttempt(false, absl::Milliseconds(1));

  const Labels high = {{"cluster_queue", "cq-a"},
                       {"priority_class", "high"},
                       {"replica_role", "leader"}};
  EXPECT_THAT(Value(metrics, "kueue_quota_reserved_workloads_total", high),
              Optional(1));
  EXPECT_THAT(Value(metrics, "kueue_admitted_workloads_total", high),
              Optional(1));
  EXPECT_THAT(Value(metrics, "kueue_admitted_workloads_total",
                    {{"cluster_queue", "cq-a"},
                     {"priority_class", ""},
                     {"replica_role", "leader"}}),
              Optional(1));
  EXPECT_THAT(Value(metrics, "kueue_finished_workloads_total", high),
              Optional(1));
  for (const char* name : {"kueue_quota_reserved_wait_time_seconds",
                           "kueue_admission_wait_time_seconds"}) {
    std::optional<prometheus::ClientMetric> m = Series(metrics, name, high);
    ASSERT_TRUE(m.has_value()) << name;
    EXPECT_EQ(m->histogram.sample_count, 1) << name;
    EXPECT_EQ(m->histogram.sample_sum, 30) << name;
  }
  EXPECT_THAT(Value(metrics, "kueue_evicted_workloads_total",
                    {{"cluster_queue", "cq-b"},
                     {"reason", "Preempted"},
                     {"underlying_cause", ""},
                     {"replica_role", "leader"}}),
              Optional(1));
  EXPECT_THAT(Value(metrics, "kueue_preempted_workloads_total",
                    {{"preempting_cluster_queue", "cq-a"},
                     {"reason", "InCohortReclamation"},
                     {"replica_role", "leader"}}),
              Optional(1));
  for (const auto& [result, n] :
       std::map<std::string, double>{{"success", 1}, {"inadmissible", 2}}) {
    const Labels labels = {{"result", result}, {"replica_role", "leader"}};
    EXPECT_THAT(Value(metrics, "kueue_admission_attempts_total", labels),
                Optional(n))
        << result;
    EXPECT_THAT(
        Value(metrics, "kueue_admission_attempt_duration_seconds", labels),
        Optional(n))
        << result;
  }
}

}  // namespace
}  // namespace jobset::scheduler
