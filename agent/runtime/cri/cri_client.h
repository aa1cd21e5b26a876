#ifndef JOBSET_AGENT_RUNTIME_CRI_CRI_CLIENT_H_
#define JOBSET_AGENT_RUNTIME_CRI_CRI_CLIENT_H_

// The CRI runtime (containerd, CRI-O) as jobset-agent's cri runtime calls
// it: the two runtime.v1 services on one gRPC channel, one method per call
// it makes, each with its deadline and its error as an absl::Status that
// starts with the call's name ("RunPodSandbox: ..."). Thread-safe (gRPC
// stubs are).

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/runtime/cri/api.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace jobset::agent::cri {

class CriClient {
 public:
  struct Options {
    // "unix:///run/containerd/containerd.sock".
    std::string endpoint;
    // Deadline of every call but PullImage (kubelet's
    // --runtime-request-timeout).
    absl::Duration request_timeout = absl::Minutes(2);
    // Deadline of one PullImage (kubelet has none; a stop cancels it).
    absl::Duration pull_timeout = absl::Minutes(30);
  };

  // Connects to options.endpoint and checks that it speaks runtime.v1
  // (Version, with a deadline of at most 10 s). kUnavailable naming the
  // endpoint when it does not answer, kFailedPrecondition when it speaks
  // another CRI version.
  static absl::StatusOr<std::unique_ptr<CriClient>> Connect(
      const Options& options);

  // What Version said of the runtime ("containerd", "v1.7.2").
  const std::string& runtime_name() const { return runtime_name_; }
  const std::string& runtime_version() const { return runtime_version_; }

  absl::StatusOr<runtime::v1::RunPodSandboxResponse> RunPodSandbox(
      const runtime::v1::RunPodSandboxRequest& request) const;
  absl::StatusOr<runtime::v1::StopPodSandboxResponse> StopPodSandbox(
      const runtime::v1::StopPodSandboxRequest& request) const;
  absl::StatusOr<runtime::v1::RemovePodSandboxResponse> RemovePodSandbox(
      const runtime::v1::RemovePodSandboxRequest& request) const;
  absl::StatusOr<runtime::v1::ListPodSandboxResponse> ListPodSandbox(
      const runtime::v1::ListPodSandboxRequest& request) const;
  absl::StatusOr<runtime::v1::CreateContainerResponse> CreateContainer(
      const runtime::v1::CreateContainerRequest& request) const;
  absl::StatusOr<runtime::v1::StartContainerResponse> StartContainer(
      const runtime::v1::StartContainerRequest& request) const;
  // Its deadline is request_timeout past the stop's `grace`.
  absl::StatusOr<runtime::v1::StopContainerResponse> StopContainer(
      const runtime::v1::StopContainerRequest& request,
      absl::Duration grace) const;
  absl::StatusOr<runtime::v1::RemoveContainerResponse> RemoveContainer(
      const runtime::v1::RemoveContainerRequest& request) const;
  absl::StatusOr<runtime::v1::ListContainersResponse> ListContainers(
      const runtime::v1::ListContainersRequest& request) const;
  absl::StatusOr<runtime::v1::ContainerStatusResponse> ContainerStatus(
      const runtime::v1::ContainerStatusRequest& request) const;
  absl::StatusOr<runtime::v1::ReopenContainerLogResponse> ReopenContainerLog(
      const runtime::v1::ReopenContainerLogRequest& request) const;
  // Its deadline is `deadline` (an exec probe's timeout and a second).
  absl::StatusOr<runtime::v1::ExecSyncResponse> ExecSync(
      const runtime::v1::ExecSyncRequest& request,
      absl::Duration deadline) const;
  absl::StatusOr<runtime::v1::ImageStatusResponse> ImageStatus(
      const runtime::v1::ImageStatusRequest& request) const;
  // Pulls with `context` (which the caller may TryCancel from another
  // thread), its deadline set to pull_timeout. The error's message is the
  // runtime's as it is, without the call's name: it is what ErrImagePull
  // shows.
  absl::StatusOr<runtime::v1::PullImageResponse> PullImage(
      const runtime::v1::PullImageRequest& request,
      grpc::ClientContext* context) const;

 private:
  CriClient(const Options& options,
            const std::shared_ptr<grpc::Channel>& channel);

  // Calls `rpc` of `stub` with `request`, its deadline `deadline` from now.
  template <typename Stub, typename Request, typename Response>
  absl::StatusOr<Response> Call(Stub* stub,
                                grpc::Status (Stub::*rpc)(grpc::ClientContext*,
                                                          const Request&,
                                                          Response*),
                                absl::string_view name, const Request& request,
                                absl::Duration deadline) const;

  const Options options_;
  const std::unique_ptr<runtime::v1::RuntimeService::Stub> runtime_;
  const std::unique_ptr<runtime::v1::ImageService::Stub> images_;
  std::string runtime_name_;
  std::string runtime_version_;
};

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_CRI_CLIENT_H_
