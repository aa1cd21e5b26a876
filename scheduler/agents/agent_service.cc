#include "scheduler/agents/agent_service.h"

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "scheduler/agents/agent_stream.h"

namespace jobset::scheduler {
namespace {

grpc::Status Reply(absl::StatusOr<api::Node> node, api::Node* response) {
  if (!node.ok()) return ToGrpcStatus(node.status());
  *response = *std::move(node);
  return grpc::Status::OK;
}

auth::Attributes NodeAttrs(absl::string_view verb, absl::string_view name) {
  return {.verb = std::string(verb),
          .resource = "nodes",
          .name = std::string(name)};
}

}  // namespace

grpc::ServerBidiReactor<api::AgentMessage, api::SchedulerMessage>*
AgentServiceImpl::Connect(grpc::CallbackServerContext* context) {
  return new AgentStream(context, hub_, auth_, &pump_);
}

grpc::Status NodeServiceImpl::ListNodes(grpc::ServerContext* context,
                                        const api::ListNodesRequest*,
                                        api::ListNodesResponse* response) {
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context, NodeAttrs("list", ""));
  for (api::Node& node : hub_->ListNodes())
    *response->add_items() = std::move(node);
  return grpc::Status::OK;
}

grpc::Status NodeServiceImpl::GetNode(grpc::ServerContext* context,
                                      const api::GetNodeRequest* request,
                                      api::Node* response) {
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context, NodeAttrs("get", request->name()));
  return Reply(hub_->GetNode(request->name()), response);
}

grpc::Status NodeServiceImpl::CordonNode(grpc::ServerContext* context,
                                         const api::GetNodeRequest* request,
                                         api::Node* response) {
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context,
                             NodeAttrs("update", request->name()));
  return Reply(hub_->SetCordoned(request->name(), true), response);
}

grpc::Status NodeServiceImpl::UncordonNode(grpc::ServerContext* context,
                                           const api::GetNodeRequest* request,
                                           api::Node* response) {
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context,
                             NodeAttrs("update", request->name()));
  return Reply(hub_->SetCordoned(request->name(), false), response);
}

grpc::Status NodeServiceImpl::DrainNode(grpc::ServerContext* context,
                                        const api::GetNodeRequest* request,
                                        api::Node* response) {
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context,
                             NodeAttrs("update", request->name()));
  return Reply(hub_->Drain(request->name()), response);
}

grpc::Status NodeServiceImpl::DeleteNode(grpc::ServerContext* context,
                                         const api::GetNodeRequest* request,
                                         api::Node* response) {
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context,
                             NodeAttrs("delete", request->name()));
  // Revoked first: the node must not come back between the two.
  absl::Status revoked = auth_->access()->RevokeNode(request->name());
  if (!revoked.ok() && !absl::IsNotFound(revoked)) {
    return ToGrpcStatus(revoked);
  }
  absl::StatusOr<api::Node> removed = hub_->Remove(request->name());
  if (absl::IsNotFound(removed.status()) && revoked.ok()) {
    // Joined but never connected: the revocation was all there was.
    response->set_api_version("v1");
    response->set_kind("Node");
    response->mutable_metadata()->set_name(request->name());
    return grpc::Status::OK;
  }
  return Reply(std::move(removed), response);
}

}  // namespace jobset::scheduler
