#include "scheduler/agents/agent_service.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"

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

grpc::Status AgentServiceImpl::Connect(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<api::SchedulerMessage, api::AgentMessage>*
        stream) {
  absl::StatusOr<Caller> caller =
      auth_->AuthenticateNode(context, "the agent stream");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  api::AgentMessage first;
  if (!stream->Read(&first)) return grpc::Status::CANCELLED;
  if (!first.has_hello()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "the first message of a stream must be a hello");
  }
  // A node is its certificate, never the name it claims.
  if (!caller->node.empty() && first.hello().node().name() != caller->node) {
    return grpc::Status(
        grpc::StatusCode::PERMISSION_DENIED,
        absl::StrCat("node \"", caller->node, "\" cannot register as node \"",
                     first.hello().node().name(), "\""));
  }
  absl::StatusOr<std::shared_ptr<AgentHub::Session>> session =
      hub_->Connect(first.hello(), [context] { context->TryCancel(); });
  if (!session.ok()) return ToGrpcStatus(session.status());
  std::thread writer([&stream, s = *session] {
    api::SchedulerMessage msg;
    while (true) {
      bool timed_out = false;
      if (s->Pop(&msg, absl::Seconds(1), &timed_out)) {
        if (!stream->Write(msg)) return;
      } else if (!timed_out) {
        return;
      }
    }
  });
  grpc::Status result = grpc::Status::OK;
  api::AgentMessage msg;
  while (stream->Read(&msg)) {
    absl::Status handled = hub_->OnMessage(session->get(), msg);
    if (!handled.ok()) {
      result = ToGrpcStatus(handled);
      break;
    }
  }
  hub_->Disconnect(session->get());
  writer.join();
  return result;
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
