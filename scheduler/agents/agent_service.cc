#include "scheduler/agents/agent_service.h"

#include <thread>

#include "common/grpc_status.h"

namespace jobset::scheduler {
namespace {

grpc::Status Reply(absl::StatusOr<api::Node> node, api::Node* response) {
  if (!node.ok()) return ToGrpcStatus(node.status());
  *response = *std::move(node);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status AgentServiceImpl::Connect(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<api::SchedulerMessage, api::AgentMessage>*
        stream) {
  api::AgentMessage first;
  if (!stream->Read(&first)) return grpc::Status::CANCELLED;
  if (!first.has_hello()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "the first message of a stream must be a hello");
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

grpc::Status NodeServiceImpl::ListNodes(grpc::ServerContext*,
                                        const api::ListNodesRequest*,
                                        api::ListNodesResponse* response) {
  for (api::Node& node : hub_->ListNodes())
    *response->add_nodes() = std::move(node);
  return grpc::Status::OK;
}

grpc::Status NodeServiceImpl::GetNode(grpc::ServerContext*,
                                      const api::GetNodeRequest* request,
                                      api::Node* response) {
  return Reply(hub_->GetNode(request->name()), response);
}

grpc::Status NodeServiceImpl::CordonNode(grpc::ServerContext*,
                                         const api::GetNodeRequest* request,
                                         api::Node* response) {
  return Reply(hub_->SetCordoned(request->name(), true), response);
}

grpc::Status NodeServiceImpl::UncordonNode(grpc::ServerContext*,
                                           const api::GetNodeRequest* request,
                                           api::Node* response) {
  return Reply(hub_->SetCordoned(request->name(), false), response);
}

grpc::Status NodeServiceImpl::DrainNode(grpc::ServerContext*,
                                        const api::GetNodeRequest* request,
                                        api::Node* response) {
  return Reply(hub_->Drain(request->name()), response);
}

}  // namespace jobset::scheduler
