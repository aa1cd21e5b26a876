#ifndef JOBSET_SCHEDULER_CONTROLLER_AGENT_FLEET_H_
#define JOBSET_SCHEDULER_CONTROLLER_AGENT_FLEET_H_

#include <memory>
#include <string>
#include <vector>

#include "proto/cluster.pb.h"
#include "scheduler/records/records.h"

namespace jobset::scheduler {

// A pod assigned to a node, in memory: what api::PodAssignment (the agents'
// wire and disk form) is built from as it is sent. It holds its Job (shared
// by all its pods; metadata and spec, which never change under a Job), what
// the agent needs of its record (placed and bound) and its JobSet attempt's
// host table (shared by the attempt, and encoded once for it). Cheap to copy:
// the full pod is built only where it is sent (Pod()), so a 15,000-pod attempt
// hands out its assignments without building 15,000 pods on the controller
// thread.
struct Assignment {
  std::shared_ptr<const api::Job> job;
  AssignedPod pod;
  std::shared_ptr<const SharedHostTable> hosts;
  // Stopped: kept in the node's desired set until released (the fleet sets
  // it on Stop; the controller never does).
  bool stop = false;
  // What the pod takes from its Secrets and ConfigMaps (shared by its
  // Job's pods; null when it takes nothing or is only being stopped). It
  // holds secret values: it goes to the pod's agent and nowhere else.
  std::shared_ptr<const api::PodConfig> config = nullptr;
  // A launch (the pod not yet reported by its agent): when the controller
  // bound it, for the pod startup stages. InfinitePast otherwise.
  absl::Time bound = absl::InfinitePast();

  const std::string& node() const { return pod.node; }
  const std::string& uid() const { return pod.uid; }
  // The full pod, environment resolved (with `config`'s values).
  api::Pod Pod() const { return ExpandPod(*job, pod, config.get()); }
};

// What the controller tells the node agents, after the commit that decided
// it. AgentHub implements it over the agents' streams; tests use a fake
// fleet. Called only from the controller thread.
class AgentFleet {
 public:
  virtual ~AgentFleet() = default;

  // Starts the pod of `order` on order.node() (or, for a pod already
  // running, hands it the attempt's grown host table). Takes the order, so
  // that a fleet keeping it need not copy the pod record again.
  virtual void Run(Assignment order) = 0;

  // Stops pod `pod_uid` on `node`; the agent reports its final status.
  virtual void Stop(const std::string& node, const std::string& pod_uid) = 0;

  // The pod's final status is durable (or the pod is gone): `node`'s agent
  // may forget it, and stops it first if it still runs.
  virtual void Release(const std::string& node, const std::string& pod_uid) = 0;

  // Quarantines `node` (--quarantine_after): taints it
  // jobsetd.io/quarantined:NoSchedule durably, as `jobsetctl taint` would;
  // `evidence` says why. The taint's removal releases it.
  virtual void Quarantine(const std::string& /*node*/,
                          const std::string& /*evidence*/) {}
};

// The fleet of a jobsetd that no agent has joined: with no node registered
// the controller places nothing, so there is never anything to tell.
class NoAgentFleet final : public AgentFleet {
 public:
  void Run(Assignment) override {}
  void Stop(const std::string&, const std::string&) override {}
  void Release(const std::string&, const std::string&) override {}
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_AGENT_FLEET_H_
