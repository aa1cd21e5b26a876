// NodeService's admin edits: jobsetctl label|taint node (NodeRestriction:
// node_admin.h). A node's own certificate is never authorized here
// (request_auth.h: nodes call only the agents' methods).
#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "scheduler/agents/agent_service.h"

namespace jobset::scheduler {
namespace {

// kubectl label|taint patch a node; jobsetd, as for cordon, asks for
// "update" (cluster-admin has it; a role for node operators grants it).
auth::Attributes UpdateNode(const std::string& name) {
  return {.verb = "update", .resource = "nodes", .name = name};
}

grpc::Status Reply(absl::StatusOr<api::Node> node, api::Node* response) {
  if (!node.ok()) return ToGrpcStatus(node.status());
  *response = *std::move(node);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status NodeServiceImpl::LabelNode(grpc::ServerContext* context,
                                        const api::LabelNodeRequest* request,
                                        api::Node* response) {
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context, UpdateNode(request->name()));
  return Reply(hub_->LabelNode(*request), response);
}

grpc::Status NodeServiceImpl::TaintNode(grpc::ServerContext* context,
                                        const api::TaintNodeRequest* request,
                                        api::Node* response) {
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context, UpdateNode(request->name()));
  return Reply(hub_->TaintNode(*request), response);
}

}  // namespace jobset::scheduler
