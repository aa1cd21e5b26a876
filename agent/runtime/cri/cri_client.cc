#include "agent/runtime/cri/cri_client.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace jobset::agent::cri {

namespace v1 = ::runtime::v1;

namespace {

absl::Status FromGrpc(const grpc::Status& s, absl::string_view call) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat(call, ": ", s.error_message()));
}

// gRPC deadlines are on the real clock whatever Clock the pod's worker
// reads; absl's arithmetic keeps an infinite timeout infinite.
void SetDeadline(grpc::ClientContext* context, absl::Duration timeout) {
  context->set_deadline(absl::ToChronoTime(RealDeadline(timeout)));
}

}  // namespace

CriClient::CriClient(const Options& options,
                     const std::shared_ptr<grpc::Channel>& channel)
    : options_(options),
      runtime_(v1::RuntimeService::NewStub(channel)),
      images_(v1::ImageService::NewStub(channel)) {}

absl::StatusOr<std::unique_ptr<CriClient>> CriClient::Connect(
    const Options& options) {
  std::unique_ptr<CriClient> client(new CriClient(
      options, grpc::CreateChannel(options.endpoint,
                                   grpc::InsecureChannelCredentials())));
  v1::VersionRequest request;
  request.set_version("0.1.0");
  grpc::ClientContext context;
  SetDeadline(&context, std::min(options.request_timeout, absl::Seconds(10)));
  v1::VersionResponse version;
  if (grpc::Status s = client->runtime_->Version(&context, request, &version);
      !s.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "cri runtime: ", options.endpoint,
        " does not answer runtime.v1 Version: ", s.error_message()));
  }
  if (version.runtime_api_version() != "v1") {
    return absl::FailedPreconditionError(
        absl::StrCat("cri runtime: ", options.endpoint, " speaks CRI \"",
                     version.runtime_api_version(), "\", not v1"));
  }
  client->runtime_name_ = version.runtime_name();
  client->runtime_version_ = version.runtime_version();
  return client;
}

template <typename Stub, typename Request, typename Response>
absl::StatusOr<Response> CriClient::Call(
    Stub* stub,
    grpc::Status (Stub::*rpc)(grpc::ClientContext*, const Request&, Response*),
    absl::string_view name, const Request& request,
    absl::Duration deadline) const {
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  Response response;
  grpc::Status s = (stub->*rpc)(&context, request, &response);
  if (!s.ok()) return FromGrpc(s, name);
  return response;
}

absl::StatusOr<v1::RunPodSandboxResponse> CriClient::RunPodSandbox(
    const v1::RunPodSandboxRequest& request) const {
  return Call(runtime_.get(), &v1::RuntimeService::Stub::RunPodSandbox,
              "RunPodSandbox", request, options_.request_timeout);
}

absl::StatusOr<v1::StopPodSandboxResponse> CriClient::StopPodSandbox(
    const v1::StopPodSandboxRequest& request) const {
  return Call(runtime_.get(), &v1::RuntimeService::Stub::StopPodSandbox,
              "StopPodSandbox", request, options_.request_timeout);
}

absl::StatusOr<v1::RemovePodSandboxResponse> CriClient::RemovePodSandbox(
    const v1::RemovePodSandboxRequest& request) const {
  return Call(runtime_.get(), &v1::RuntimeService::Stub::RemovePodSandbox,
              "RemovePodSandbox", request, options_.request_timeout);
}

absl::StatusOr<v1::ListPodSandboxResponse> CriClient::ListPodSandbox(
    const v1::ListPodSandboxRequest& request) const {
  return Call(runtime_.get(), &v1::RuntimeService::Stub::ListPodSandbox,
              "ListPodSandbox", request, options_.request_timeout);
}

absl::StatusOr<v1::CreateContainerResponse> CriClient::CreateContainer(
    const v1::CreateContainerRequest& request) const {
  return Call(runtime_.get(), &v1::RuntimeService::Stub::CreateContainer,
              "CreateContainer", request, options_.request_timeout);
}

absl::StatusOr<v1::StartContainerResponse> CriClient::StartContainer(
    const v1::StartContainerRequest& request) const {
  return Call(runtime_.get(), &v1::RuntimeService::Stub::StartContainer,
              "StartContainer", request, options_.request_timeout);
}

absl::StatusOr<v1::StopContainerResponse> CriClient::StopContainer(
    const v1::StopContainerRequest& request, absl::Duration grace) const {
  return Call(runtime_.get(), &v1::RuntimeService::Stub::StopContainer,
              "StopContainer", request, grace + options_.request_timeout);
}

absl::StatusOr<v1::RemoveContainerResponse> CriClient::RemoveContainer(
    const v1::RemoveContainerRequest& request) const {
  return Call(runtime_.get(), &v1::RuntimeService::Stub::RemoveContainer,
              "RemoveContainer", request, options_.request_timeout);
}

absl::StatusOr<v1::ListContainersResponse> CriClient::ListContainers(
    const v1::ListContainersRequest& request) const {
  return Call(runtime_.get(), &v1::RuntimeService::Stub::ListContainers,
              "ListContainers", request, options_.request_timeout);
}

absl::StatusOr<v1::ContainerStatusResponse> CriClient::ContainerStatus(
    const v1::ContainerStatusRequest& request) const {
  return Call(runtime_.get(), &v1::RuntimeService::Stub::ContainerStatus,
              "ContainerStatus", request, options_.request_timeout);
}

absl::StatusOr<v1::ReopenContainerLogResponse> CriClient::ReopenContainerLog(
    const v1::ReopenContainerLogRequest& request) const {
  return Call(runtime_.get(), &v1::RuntimeService::Stub::ReopenContainerLog,
              "ReopenContainerLog", request, options_.request_timeout);
}

absl::StatusOr<v1::ExecSyncResponse> CriClient::ExecSync(
    const v1::ExecSyncRequest& request, absl::Duration deadline) const {
  return Call(runtime_.get(), &v1::RuntimeService::Stub::ExecSync, "ExecSync",
              request, deadline);
}

absl::StatusOr<v1::ImageStatusResponse> CriClient::ImageStatus(
    const v1::ImageStatusRequest& request) const {
  return Call(images_.get(), &v1::ImageService::Stub::ImageStatus,
              "ImageStatus", request, options_.request_timeout);
}

absl::StatusOr<v1::PullImageResponse> CriClient::PullImage(
    const v1::PullImageRequest& request, grpc::ClientContext* context) const {
  SetDeadline(context, options_.pull_timeout);
  v1::PullImageResponse response;
  grpc::Status s = images_->PullImage(context, request, &response);
  if (!s.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                        s.error_message());
  }
  return response;
}

}  // namespace jobset::agent::cri
