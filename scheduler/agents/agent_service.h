#ifndef JOBSET_SCHEDULER_AGENTS_AGENT_SERVICE_H_
#define JOBSET_SCHEDULER_AGENTS_AGENT_SERVICE_H_

#include "proto/agent.grpc.pb.h"
#include "scheduler/agents/agent_hub.h"

namespace jobset::scheduler {

// The agents' stream, over AgentHub: the first message must be a Hello; a
// writer thread sends what the hub queues for the session while this thread
// reads. Thin: every decision is the hub's.
class AgentServiceImpl final : public api::AgentService::Service {
 public:
  explicit AgentServiceImpl(AgentHub* hub) : hub_(hub) {}

  grpc::Status Connect(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<api::SchedulerMessage, api::AgentMessage>*
          stream) override;

 private:
  AgentHub* const hub_;
};

// The node registry for operators, over AgentHub.
class NodeServiceImpl final : public api::NodeService::Service {
 public:
  explicit NodeServiceImpl(AgentHub* hub) : hub_(hub) {}

  grpc::Status ListNodes(grpc::ServerContext* context,
                         const api::ListNodesRequest* request,
                         api::ListNodesResponse* response) override;
  grpc::Status GetNode(grpc::ServerContext* context,
                       const api::GetNodeRequest* request,
                       api::Node* response) override;
  grpc::Status CordonNode(grpc::ServerContext* context,
                          const api::GetNodeRequest* request,
                          api::Node* response) override;
  grpc::Status UncordonNode(grpc::ServerContext* context,
                            const api::GetNodeRequest* request,
                            api::Node* response) override;
  grpc::Status DrainNode(grpc::ServerContext* context,
                         const api::GetNodeRequest* request,
                         api::Node* response) override;

 private:
  AgentHub* const hub_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_AGENT_SERVICE_H_
