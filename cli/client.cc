#include "cli/client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/grpc_status.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/tls_certificate_verifier.h"
#include "grpcpp/security/tls_credentials_options.h"
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

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(
    const Connection& connection, grpc::ChannelArguments* args) {
  if (!connection.tls) return grpc::InsecureChannelCredentials();
  if (connection.insecure_skip_tls_verify) {
    // Allowed for loopback servers only (ResolveConnection checks).
    grpc::experimental::TlsChannelCredentialsOptions tls;
    tls.set_verify_server_certs(false);
    tls.set_check_call_host(false);
    tls.set_certificate_verifier(
        std::make_shared<grpc::experimental::NoOpCertificateVerifier>());
    std::shared_ptr<grpc::ChannelCredentials> creds =
        grpc::experimental::TlsCredentials(tls);
    if (!connection.token.empty()) {
      creds = grpc::CompositeChannelCredentials(
          creds, grpc::AccessTokenCredentials(connection.token));
    }
    return creds;
  }
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = connection.ca_pem;
  options.pem_private_key = connection.key_pem;
  options.pem_cert_chain = connection.cert_pem;
  std::shared_ptr<grpc::ChannelCredentials> creds =
      grpc::SslCredentials(options);
  if (!connection.server_name.empty()) {
    args->SetSslTargetNameOverride(connection.server_name);
  }
  if (!connection.token.empty()) {
    creds = grpc::CompositeChannelCredentials(
        creds, grpc::AccessTokenCredentials(connection.token));
  }
  return creds;
}

namespace {
Connection Plaintext(std::string address) {
  Connection connection;
  connection.address = std::move(address);
  return connection;
}
}  // namespace

Client::Client(std::string address, absl::Duration timeout)
    : Client(Plaintext(std::move(address)), timeout) {}

Client::Client(Connection connection, absl::Duration timeout)
    : connection_(std::move(connection)),
      address_(connection_.address),
      timeout_(timeout) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  channel_ = grpc::CreateCustomChannel(
      address_, ChannelCredentials(connection_, &args), args);
  jobsets_ = api::JobSetService::NewStub(channel_);
  nodes_ = api::NodeService::NewStub(channel_);
  logs_ = api::PodLogService::NewStub(channel_);
  access_ = api::AccessService::NewStub(channel_);
}

void Client::Prepare(grpc::ClientContext* context) const {
  if (!connection_.tls && !connection_.token.empty()) {
    context->AddMetadata("authorization",
                         absl::StrCat("Bearer ", connection_.token));
  }
}

absl::Status Client::Convert(const grpc::Status& status,
                             absl::string_view method) {
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      return absl::OkStatus();
    case grpc::StatusCode::UNAVAILABLE:
      return absl::UnavailableError(absl::StrCat(
          "cannot reach jobsetd at ", address_, ": ", status.error_message(),
          connection_.tls
              ? " (TLS handshake failed? check certificate-authority / "
                "tls-server-name; 'certificate signed by unknown authority' "
                "if the CA is wrong)"
              : " (is jobsetd running there? It serves TLS unless started "
                "with --insecure: pass --config=<its data_dir>/admin.conf or "
                "set JOBSETCONFIG)"));
    case grpc::StatusCode::UNAUTHENTICATED:
      return absl::UnauthenticatedError(absl::StrCat(
          "jobsetd refused the credentials: ", status.error_message(),
          " (check the token or certificate in ",
          connection_.config_path.empty() ? "--token" : connection_.config_path,
          ")"));
    case grpc::StatusCode::PERMISSION_DENIED:
      return absl::PermissionDeniedError(status.error_message());
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
  Prepare(&context);
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

absl::StatusOr<api::ApplyNamespaceResponse> Client::ApplyNamespace(
    const api::ApplyNamespaceRequest& request) {
  return Unary<api::ApplyNamespaceResponse>(
      "ApplyNamespace", [&](grpc::ClientContext* c, auto* r) {
        return jobsets_->ApplyNamespace(c, request, r);
      });
}

absl::StatusOr<api::Namespace> Client::GetNamespace(const std::string& name) {
  api::GetNamespaceRequest request;
  request.set_name(name);
  return Unary<api::Namespace>("GetNamespace",
                               [&](grpc::ClientContext* c, auto* r) {
                                 return jobsets_->GetNamespace(c, request, r);
                               });
}

absl::StatusOr<api::ListNamespacesResponse> Client::ListNamespaces(
    const api::ListNamespacesRequest& request) {
  return Unary<api::ListNamespacesResponse>(
      "ListNamespaces", [&](grpc::ClientContext* c, auto* r) {
        return jobsets_->ListNamespaces(c, request, r);
      });
}

absl::StatusOr<api::Namespace> Client::DeleteNamespace(
    const std::string& name) {
  api::DeleteNamespaceRequest request;
  request.set_name(name);
  return Unary<api::Namespace>(
      "DeleteNamespace", [&](grpc::ClientContext* c, auto* r) {
        return jobsets_->DeleteNamespace(c, request, r);
      });
}

absl::StatusOr<api::ApplySecretResponse> Client::ApplySecret(
    const api::ApplySecretRequest& request) {
  return Unary<api::ApplySecretResponse>(
      "ApplySecret", [&](grpc::ClientContext* c, auto* r) {
        return jobsets_->ApplySecret(c, request, r);
      });
}

absl::StatusOr<api::Secret> Client::GetSecret(const std::string& ns,
                                              const std::string& name) {
  api::GetSecretRequest request;
  request.set_namespace_(ns);
  request.set_name(name);
  return Unary<api::Secret>("GetSecret", [&](grpc::ClientContext* c, auto* r) {
    return jobsets_->GetSecret(c, request, r);
  });
}

absl::StatusOr<api::ListSecretsResponse> Client::ListSecrets(
    const api::ListSecretsRequest& request) {
  return Unary<api::ListSecretsResponse>(
      "ListSecrets", [&](grpc::ClientContext* c, auto* r) {
        return jobsets_->ListSecrets(c, request, r);
      });
}

absl::StatusOr<api::Secret> Client::DeleteSecret(const std::string& ns,
                                                 const std::string& name) {
  api::DeleteSecretRequest request;
  request.set_namespace_(ns);
  request.set_name(name);
  return Unary<api::Secret>("DeleteSecret",
                            [&](grpc::ClientContext* c, auto* r) {
                              return jobsets_->DeleteSecret(c, request, r);
                            });
}

absl::StatusOr<api::ApplyConfigMapResponse> Client::ApplyConfigMap(
    const api::ApplyConfigMapRequest& request) {
  return Unary<api::ApplyConfigMapResponse>(
      "ApplyConfigMap", [&](grpc::ClientContext* c, auto* r) {
        return jobsets_->ApplyConfigMap(c, request, r);
      });
}

absl::StatusOr<api::ConfigMap> Client::GetConfigMap(const std::string& ns,
                                                    const std::string& name) {
  api::GetConfigMapRequest request;
  request.set_namespace_(ns);
  request.set_name(name);
  return Unary<api::ConfigMap>("GetConfigMap",
                               [&](grpc::ClientContext* c, auto* r) {
                                 return jobsets_->GetConfigMap(c, request, r);
                               });
}

absl::StatusOr<api::ListConfigMapsResponse> Client::ListConfigMaps(
    const api::ListConfigMapsRequest& request) {
  return Unary<api::ListConfigMapsResponse>(
      "ListConfigMaps", [&](grpc::ClientContext* c, auto* r) {
        return jobsets_->ListConfigMaps(c, request, r);
      });
}

absl::StatusOr<api::ConfigMap> Client::DeleteConfigMap(
    const std::string& ns, const std::string& name) {
  api::DeleteConfigMapRequest request;
  request.set_namespace_(ns);
  request.set_name(name);
  return Unary<api::ConfigMap>(
      "DeleteConfigMap", [&](grpc::ClientContext* c, auto* r) {
        return jobsets_->DeleteConfigMap(c, request, r);
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

absl::StatusOr<api::VersionInfo> Client::GetVersion() {
  return Unary<api::VersionInfo>(
      "GetVersion", [&](grpc::ClientContext* c, auto* r) {
        return jobsets_->GetVersion(c, api::GetVersionRequest(), r);
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

absl::StatusOr<api::Node> Client::DeleteNode(const std::string& name) {
  return Unary<api::Node>("NodeService.DeleteNode",
                          [&](grpc::ClientContext* c, auto* r) {
                            return nodes_->DeleteNode(c, NodeRequest(name), r);
                          });
}

absl::StatusOr<api::CreateTokenResponse> Client::CreateToken(
    const api::CreateTokenRequest& request) {
  return Unary<api::CreateTokenResponse>(
      "AccessService.CreateToken", [&](grpc::ClientContext* c, auto* r) {
        return access_->CreateToken(c, request, r);
      });
}

absl::StatusOr<api::ListTokensResponse> Client::ListTokens() {
  return Unary<api::ListTokensResponse>(
      "AccessService.ListTokens", [&](grpc::ClientContext* c, auto* r) {
        return access_->ListTokens(c, api::ListTokensRequest(), r);
      });
}

absl::StatusOr<api::TokenInfo> Client::DeleteToken(const std::string& name) {
  api::DeleteTokenRequest request;
  request.set_name(name);
  return Unary<api::TokenInfo>("AccessService.DeleteToken",
                               [&](grpc::ClientContext* c, auto* r) {
                                 return access_->DeleteToken(c, request, r);
                               });
}

absl::StatusOr<api::RotateJoinTokenResponse> Client::RotateJoinToken(
    const api::RotateJoinTokenRequest& request) {
  return Unary<api::RotateJoinTokenResponse>(
      "AccessService.RotateJoinToken", [&](grpc::ClientContext* c, auto* r) {
        return access_->RotateJoinToken(c, request, r);
      });
}

absl::StatusOr<api::RbacObject> Client::ApplyRbac(
    const api::RbacObject& object) {
  return Unary<api::RbacObject>("AccessService.ApplyRbac",
                                [&](grpc::ClientContext* c, auto* r) {
                                  return access_->ApplyRbac(c, object, r);
                                });
}

absl::StatusOr<api::RbacObject> Client::DeleteRbac(
    const api::RbacObjectRef& ref) {
  return Unary<api::RbacObject>("AccessService.DeleteRbac",
                                [&](grpc::ClientContext* c, auto* r) {
                                  return access_->DeleteRbac(c, ref, r);
                                });
}

absl::StatusOr<api::ListRbacResponse> Client::ListRbac(
    const api::ListRbacRequest& request) {
  return Unary<api::ListRbacResponse>("AccessService.ListRbac",
                                      [&](grpc::ClientContext* c, auto* r) {
                                        return access_->ListRbac(c, request, r);
                                      });
}

absl::StatusOr<api::AccessReviewResult> Client::ReviewAccess(
    const api::AccessReview& review) {
  return Unary<api::AccessReviewResult>(
      "AccessService.ReviewAccess", [&](grpc::ClientContext* c, auto* r) {
        return access_->ReviewAccess(c, review, r);
      });
}

absl::Status Client::Watch(
    const api::WatchJobSetsRequest& request, absl::Time deadline,
    const std::function<bool(const api::WatchEvent&)>& on_event) {
  grpc::ClientContext context;
  if (deadline != absl::InfiniteFuture()) {
    context.set_deadline(ToChrono(deadline));
  }
  Prepare(&context);
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
  Prepare(&context);
  std::unique_ptr<grpc::ClientReader<api::PodLogs>> reader =
      logs_->GetPodLogs(&context, request);
  api::PodLogs chunk;
  while (reader->Read(&chunk)) on_data(chunk.data());
  return Convert(reader->Finish(), "GetPodLogs");
}

}  // namespace jobset::cli
