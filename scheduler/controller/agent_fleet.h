#ifndef JOBSET_SCHEDULER_CONTROLLER_AGENT_FLEET_H_
#define JOBSET_SCHEDULER_CONTROLLER_AGENT_FLEET_H_

#include <string>
#include <vector>

#include "proto/cluster.pb.h"
#include "scheduler/controller/pods.h"

namespace jobset::scheduler {

// What the controller tells the node agents, after the commit that decided
// it. The agent issue implements it over the agents' streams; tests use a
// fake fleet. Called only from the controller thread.
class AgentFleet {
 public:
  virtual ~AgentFleet() = default;

  // Starts `pod` (placed and bound: spec.nodeName set, environment
  // resolved) with its JobSet attempt's host table.
  virtual void Run(const api::Pod& pod,
                   const std::vector<HostEntry>& hosts) = 0;

  // Stops pod `pod_uid` on `node`; the agent reports its final status.
  virtual void Stop(const std::string& node, const std::string& pod_uid) = 0;

  // The pod's final status is durable (or the pod is gone): `node`'s agent
  // may forget it, and stops it first if it still runs.
  virtual void Release(const std::string& node, const std::string& pod_uid) = 0;
};

// The fleet of a jobsetd that no agent has joined: with no node registered
// the controller places nothing, so there is never anything to tell. The
// agent issue replaces it with the agents' streams.
class NoAgentFleet final : public AgentFleet {
 public:
  void Run(const api::Pod&, const std::vector<HostEntry>&) override {}
  void Stop(const std::string&, const std::string&) override {}
  void Release(const std::string&, const std::string&) override {}
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_AGENT_FLEET_H_
