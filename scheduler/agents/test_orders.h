#ifndef JOBSET_SCHEDULER_AGENTS_TEST_ORDERS_H_
#define JOBSET_SCHEDULER_AGENTS_TEST_ORDERS_H_

// Builders for the tests of scheduler/agents: hellos, Jobs and orders.

#include <memory>
#include <string>
#include <vector>

#include "proto/agent.pb.h"
#include "scheduler/agents/session.h"
#include "scheduler/controller/agent_fleet.h"

namespace jobset::scheduler::testing {

// A Hello of node `node` (127.0.0.2; 8 CPUs, 32Gi, 4 GPUs; slice=a).
api::Hello HelloFrom(const std::string& node);

// A Job of one-container pods (500m CPU each) that read their node's name.
std::shared_ptr<const api::Job> MakeJob();

// An order for pod `uid` (index `index` of `job`) bound to `node`.
Assignment OrderOn(const std::string& node, const std::string& uid,
                   std::vector<HostEntry> hosts = {},
                   std::shared_ptr<const api::Job> job = MakeJob(),
                   int index = 0);

// The host table `a` carries in hosts_table (decoded; a failure fails the
// test), after checking that it carries none in `hosts`, as jobsetd sends.
api::HostTable HostsOf(const api::PodAssignment& a);

// The value of variable `name` of the pod's first container, or "<unset>".
std::string Env(const api::Pod& pod, const std::string& name);

// Drains what the session has queued, without waiting.
std::vector<api::SchedulerMessage> Drain(AgentSession& s);

}  // namespace jobset::scheduler::testing

#endif  // JOBSET_SCHEDULER_AGENTS_TEST_ORDERS_H_
