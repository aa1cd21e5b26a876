#include "cli/client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "grpcpp/support/time.h"

namespace jobset::cli {
namespace {

// jobsetd pages lists at about 2 MiB (and sends at most 16 MiB by
// default): this leaves room.
constexpr int kMaxReceiveBytes = 64 << 20;
// A list is read page by page; these bound the loop whatever the server
// answers: pages of one list, and fresh starts after a continue expired.
constexpr int kMaxPages = 100'000;
constexpr int kMaxRestarts = 3;

std::chrono::system_clock::time_point ToChrono(absl::Time t) {
  return absl::ToChronoTime(t);
}

}  // namespace

Client::Client(std::string address, absl::Duration timeout)
    : address_(std::move(address)), timeout_(timeout) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  channel_ = grpc::CreateCustomChannel(
      address_, grpc::InsecureChannelCredentials(), args);
  jobsets_ = api::JobSetService::NewStub(channel_);
  nodes_ = api::NodeService::NewStub(channel_);
  logs_ = api::PodLogService::NewStub(channel_);
}

absl::Status Client::Convert(const grpc::Status& status,
                             absl::string_view method) {
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      return absl::OkStatus();
    case grpc::StatusCode::UNAVAILABLE:
      return absl::UnavailableError(absl::StrCat(
          "cannot reach jobsetd at ", address_, ": ", status.error_message(),
          " (is jobsetd running there? set --server or "
          "JOBSET_SERVER)"));
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return absl::DeadlineExceededError(absl::StrCat(
          "jobsetd at ", address_, " did not answer ", method, " within ",
          absl::FormatDuration(timeout_), " (--request-timeout)"));
    case grpc::StatusCode::UNIMPLEMENTED:
      return absl::UnimplementedError(
          absl::StrCat("jobsetd at ", address_, " does not serve ", method,
                       " (an older jobsetd?): ", status.error_message()));
    default:
      return FromGrpcStatus(status);
  }
}

template <typename Response, typename Call>
absl::StatusOr<Response> Client::Unary(absl::string_view method, Call call) {
  grpc::ClientContext context;
  context.set_deadline(ToChrono(absl::Now() + timeout_));
  Response response;
  grpc::Status status = call(&context, &response);
  if (!status.ok()) return Convert(status, method);
  return response;
}

template <typename Response, typename Request, typename Call>
absl::StatusOr<Response> Client::ListAll(absl::string_view method,
                                         const Request& request, Call call) {
  Response all;
  Request page_request = request;
  int restarts = 0;
  for (int pages = 0; pages < kMaxPages; ++pages) {
    absl::StatusOr<Response> page =
        Unary<Response>(method, [&](grpc::ClientContext* c, auto* r) {
          return call(c, page_request, r);
        });
    if (!page.ok() && page.status().code() == absl::StatusCode::kOutOfRange &&
        !page_request.continue_().empty() && restarts++ < kMaxRestarts) {
      // The list took so long that its resourceVersion left the history
      // (Kubernetes' 410 Gone): list again from the start.
      all.Clear();
      page_request.clear_continue_();
      continue;
    }
    if (!page.ok()) return page.status();
    if (page_request.continue_().empty()) {
      all.set_resource_version(page->resource_version());
    }
    for (auto& item : *page->mutable_items()) {
      *all.add_items() = std::move(item);
    }
    if (page->continue_().empty()) return all;
    page_request.set_continue_(page->continue_());
  }
  return absl::InternalError(absl::StrCat(
      "jobsetd at ", address_, " kept returning continue tokens for ", method,
      " after ", kMaxPages, " pages"));
}

absl::StatusOr<api::CreateJobSetResponse> Client::Create(
    const api::CreateJobSetRequest& request) {
  return Unary<api::CreateJobSetResponse>(
      "CreateJobSet", [&](grpc::ClientContext* c, auto* r) {
        return jobsets_->CreateJobSet(c, request, r);
      });
}

absl::StatusOr<api::JobSet> Client::Get(const api::GetJobSetRequest& request) {
  return Unary<api::JobSet>("GetJobSet", [&](grpc::ClientContext* c, auto* r) {
    return jobsets_->GetJobSet(c, request, r);
  });
}

absl::StatusOr<api::ListJobSetsResponse> Client::List(
    const api::ListJobSetsRequest& request) {
  return ListAll<api::ListJobSetsResponse>(
      "ListJobSets", request,
      [&](grpc::ClientContext* c, const auto& page, auto* r) {
        return jobsets_->ListJobSets(c, page, r);
      });
}

absl::StatusOr<api::JobSet> Client::Update(
    const api::UpdateJobSetRequest& request) {
  return Unary<api::JobSet>("UpdateJobSet",
                            [&](grpc::ClientContext* c, auto* r) {
                              return jobsets_->UpdateJobSet(c, request, r);
                            });
}

absl::StatusOr<api::JobSet> Client::Delete(
    const api::DeleteJobSetRequest& request) {
  return Unary<api::JobSet>("DeleteJobSet",
                            [&](grpc::ClientContext* c, auto* r) {
                              return jobsets_->DeleteJobSet(c, request, r);
                            });
}

absl::StatusOr<api::JobSet> Client::Suspend(
    const api::SuspendJobSetRequest& request) {
  return Unary<api::JobSet>("SuspendJobSet",
                            [&](grpc::ClientContext* c, auto* r) {
                              return jobsets_->SuspendJobSet(c, request, r);
                            });
}

absl::StatusOr<api::JobSet> Client::Resume(
    const api::ResumeJobSetRequest& request) {
  return Unary<api::JobSet>("ResumeJobSet",
                            [&](grpc::ClientContext* c, auto* r) {
                              return jobsets_->ResumeJobSet(c, request, r);
                            });
}

absl::StatusOr<api::ListJobsResponse> Client::ListJobs(
    const api::ListJobsRequest& request) {
  return ListAll<api::ListJobsResponse>(
      "ListJobs", request,
      [&](grpc::ClientContext* c, const auto& page, auto* r) {
        return jobsets_->ListJobs(c, page, r);
      });
}

absl::StatusOr<api::ListPodsResponse> Client::ListPods(
    const api::ListPodsRequest& request) {
  return ListAll<api::ListPodsResponse>(
      "ListPods", request,
      [&](grpc::ClientContext* c, const auto& page, auto* r) {
        return jobsets_->ListPods(c, page, r);
      });
}

absl::StatusOr<api::ListEventsResponse> Client::ListEvents(
    const api::ListEventsRequest& request) {
  return ListAll<api::ListEventsResponse>(
      "ListEvents", request,
      [&](grpc::ClientContext* c, const auto& page, auto* r) {
        return jobsets_->ListEvents(c, page, r);
      });
}

absl::StatusOr<api::ListNodesResponse> Client::ListNodes() {
  return Unary<api::ListNodesResponse>(
      "NodeService.ListNodes", [&](grpc::ClientContext* c, auto* r) {
        return nodes_->ListNodes(c, api::ListNodesRequest(), r);
      });
}

namespace {
api::GetNodeRequest NodeRequest(const std::string& name) {
  api::GetNodeRequest request;
  request.set_name(name);
  return request;
}
}  // namespace

absl::StatusOr<api::Node> Client::GetNode(const std::string& name) {
  return Unary<api::Node>("NodeService.GetNode",
                          [&](grpc::ClientContext* c, auto* r) {
                            return nodes_->GetNode(c, NodeRequest(name), r);
                          });
}

absl::StatusOr<api::Node> Client::CordonNode(const std::string& name) {
  return Unary<api::Node>("NodeService.CordonNode",
                          [&](grpc::ClientContext* c, auto* r) {
                            return nodes_->CordonNode(c, NodeRequest(name), r);
                          });
}

absl::StatusOr<api::Node> Client::UncordonNode(const std::string& name) {
  return Unary<api::Node>(
      "NodeService.UncordonNode", [&](grpc::ClientContext* c, auto* r) {
        return nodes_->UncordonNode(c, NodeRequest(name), r);
      });
}

absl::StatusOr<api::Node> Client::DrainNode(const std::string& name) {
  return Unary<api::Node>("NodeService.DrainNode",
                          [&](grpc::ClientContext* c, auto* r) {
                            return nodes_->DrainNode(c, NodeRequest(name), r);
                          });
}

absl::Status Client::Watch(
    const api::WatchJobSetsRequest& request, absl::Time deadline,
    const std::function<bool(const api::WatchEvent&)>& on_event) {
  grpc::ClientContext context;
  if (deadline != absl::InfiniteFuture()) {
    context.set_deadline(ToChrono(deadline));
  }
  std::unique_ptr<grpc::ClientReader<api::WatchEvent>> reader =
      jobsets_->WatchJobSets(&context, request);
  api::WatchEvent event;
  while (reader->Read(&event)) {
    if (!on_event(event)) {
      context.TryCancel();
      (void)reader->Finish();
      return absl::OkStatus();
    }
  }
  grpc::Status status = reader->Finish();
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::DeadlineExceededError("watch deadline passed");
  }
  return Convert(status, "WatchJobSets");
}

absl::Status Client::Logs(
    const api::GetPodLogsRequest& request,
    const std::function<void(const std::string&)>& on_data) {
  grpc::ClientContext context;
  if (!request.follow()) context.set_deadline(ToChrono(absl::Now() + timeout_));
  std::unique_ptr<grpc::ClientReader<api::PodLogs>> reader =
      logs_->GetPodLogs(&context, request);
  api::PodLogs chunk;
  while (reader->Read(&chunk)) on_data(chunk.data());
  return Convert(reader->Finish(), "GetPodLogs");
}

}  // namespace jobset::cli
