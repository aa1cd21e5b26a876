#ifndef JOBSET_SCHEDULER_AGENTS_AGENT_SERVICE_H_
#define JOBSET_SCHEDULER_AGENTS_AGENT_SERVICE_H_

#include "proto/agent.grpc.pb.h"
#include "scheduler/agents/agent_hub.h"
#include "scheduler/agents/stream_pump.h"
#include "scheduler/auth/request_auth.h"

namespace jobset::scheduler {

// The agents' stream, over AgentHub, on gRPC's callback API (agent_stream.h:
// no thread per stream). Thin: every decision is the hub's, but who the node
// is: a stream needs a node certificate (any caller in insecure mode), and
// its Hello may name only that node.
class AgentServiceImpl final : public api::AgentService::CallbackService {
 public:
  AgentServiceImpl(AgentHub* hub, const RequestAuth* auth)
      : hub_(hub), auth_(auth) {}

  grpc::ServerBidiReactor<api::AgentMessage, api::SchedulerMessage>* Connect(
      grpc::CallbackServerContext* context) override;

 private:
  AgentHub* const hub_;
  const RequestAuth* const auth_;
  // Declared last: destroyed first, running what streams posted while the
  // hub is still there.
  StreamPump pump_;
};

// The node registry for operators, over AgentHub; RBAC on resource "nodes"
// (cordon, uncordon, drain, label and taint are "update"). DeleteNode also
// revokes the node's certificates.
class NodeServiceImpl final : public api::NodeService::Service {
 public:
  NodeServiceImpl(AgentHub* hub, const RequestAuth* auth)
      : hub_(hub), auth_(auth) {}

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
  grpc::Status DeleteNode(grpc::ServerContext* context,
                          const api::GetNodeRequest* request,
                          api::Node* response) override;
  // node_admin_service.cc: jobsetctl label|taint node ("update").
  grpc::Status LabelNode(grpc::ServerContext* context,
                         const api::LabelNodeRequest* request,
                         api::Node* response) override;
  grpc::Status TaintNode(grpc::ServerContext* context,
                         const api::TaintNodeRequest* request,
                         api::Node* response) override;

 private:
  AgentHub* const hub_;
  const RequestAuth* const auth_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_AGENT_SERVICE_H_
