#include "agent/metrics.h"

namespace jobset::agent {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

AgentMetrics::AgentMetrics()
    : registry(std::make_shared<prometheus::Registry>()),
      pods(BuildGauge()
               .Name("jobset_agent_pods")
               .Help("Pods this agent holds, by phase")
               .Register(*registry)),
      launches(BuildCounter()
                   .Name("jobset_agent_launches_total")
                   .Help("Pods started")
                   .Register(*registry)
                   .Add({})),
      exits(BuildCounter()
                .Name("jobset_agent_exits_total")
                .Help("Pods that ended, by reason (Completed, Error, "
                      "OOMKilled, Stopped, LeaseExpired, StartError, ...)")
                .Register(*registry)),
      launch_seconds(
          BuildHistogram()
              .Name("jobset_agent_launch_duration_seconds")
              .Help("From the order to run a pod to the pod "
                    "running")
              .Register(*registry)
              .Add({},
                   prometheus::Histogram::BucketBoundaries{
                       0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30})),
      heartbeat_rtt_seconds(
          BuildHistogram()
              .Name("jobset_agent_heartbeat_round_trip_seconds")
              .Help("From a heartbeat sent to its acknowledgement")
              .Register(*registry)
              .Add({},
                   prometheus::Histogram::BucketBoundaries{
                       0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                       0.25, 0.5, 1, 2.5})),
      reattached(BuildCounter()
                     .Name("jobset_agent_reattached_pods_total")
                     .Help("Pods found running or finished under the work "
                           "directory when the agent started (re-attached to "
                           "their supervisors)")
                     .Register(*registry)
                     .Add({})),
      connected(BuildGauge()
                    .Name("jobset_agent_connected")
                    .Help("1 while the agent holds a welcomed stream to "
                          "jobsetd, else 0 (its health)")
                    .Register(*registry)
                    .Add({})),
      progress_rejected(
          BuildCounter()
              .Name("jobset_agent_progress_rejected_total")
              .Help("Pods' progress inputs ignored, by reason (too_long, "
                    "malformed, negative, out_of_range, decreasing, "
                    "checkpoint_after_step, not_a_file, unreadable)")
              .Register(*registry)),
      progress_reports(BuildCounter()
                           .Name("jobset_agent_progress_reports_total")
                           .Help("Pod progress reports sent to jobsetd")
                           .Register(*registry)
                           .Add({})) {}

}  // namespace jobset::agent
