#ifndef JOBSET_AGENT_METRICS_H_
#define JOBSET_AGENT_METRICS_H_

#include <memory>

#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace jobset::agent {

// jobset-agent's Prometheus metrics (docs/metrics.md). Thread-safe.
struct AgentMetrics {
  AgentMetrics();

  std::shared_ptr<prometheus::Registry> registry;
  prometheus::Family<prometheus::Gauge>& pods;  // by phase
  prometheus::Counter& launches;
  prometheus::Family<prometheus::Counter>& exits;  // by reason
  prometheus::Histogram& launch_seconds;
  prometheus::Histogram& heartbeat_rtt_seconds;
  prometheus::Counter& reattached;
  // The agent's health: 1 while it holds a welcomed stream to jobsetd.
  prometheus::Gauge& connected;
  // Progress heartbeats (progress_watcher.h): inputs ignored, by reason
  // (progress_file.h's ProgressRejectName), and reports sent.
  prometheus::Family<prometheus::Counter>& progress_rejected;
  prometheus::Counter& progress_reports;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_METRICS_H_
