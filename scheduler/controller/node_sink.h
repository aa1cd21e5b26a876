#ifndef JOBSET_SCHEDULER_CONTROLLER_NODE_SINK_H_
#define JOBSET_SCHEDULER_CONTROLLER_NODE_SINK_H_

// What the node registry (scheduler/agents) tells the controller, and the
// types it says it with. The registry depends on this header only, not on
// the controller behind it.

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "proto/agent.pb.h"
#include "proto/cluster.pb.h"
#include "scheduler/placement/requirements.h"
#include "scheduler/placement/snapshot.h"

namespace jobset::scheduler {

// A node the controller may place pods on (the node registry feeds
// these).
struct NodeInfo {
  std::string name;
  std::string address;  // What the host table maps pod hostnames to.
  placement::Labels labels;
  std::vector<placement::Taint> taints;
  placement::Resources allocatable;
  bool ready = true;
  bool cordoned = false;
};

// A pod's status as its agent reports it. Fenced by pod uid: a report for a
// pod that is not current changes nothing.
struct PodReport {
  std::string node;
  std::string pod_uid;
  api::PodStatus status;
  // The restart in place attempt the status is of (0 when none).
  int32_t in_place_restart_attempt = 0;
  // What happened to the pod since its last report (image pulls), checked
  // by the hub (scheduler/agents/agent_input.h); the JobSet's events.
  std::vector<api::PodEvent> events;
  // The report that ended the pod's launch (its first of it Running, timed
  // by the hub): when it arrived, for the reported_to_committed stage.
  // InfinitePast for every other report.
  absl::Time launch_reported = absl::InfinitePast();
};

// What the node registry tells the controller. Implemented by Controller
// (which queues each call for its thread); thread-safe.
class NodeSink {
 public:
  virtual ~NodeSink() = default;
  virtual void SetNode(NodeInfo node) = 0;
  virtual void ReportPod(PodReport report) = 0;
  // The node is gone (lost, or drained): its unfinished pods fail with
  // `reason` and `message` (ControllerCore::LoseNode).
  virtual void LoseNode(std::string name, std::string reason,
                        std::string message) = 0;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_NODE_SINK_H_
