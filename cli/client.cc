#include "cli/client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cli/client_internal.h"
#include "common/grpc_status.h"
#include "common/leader_redirect.h"
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
// gRPC's own reconnect back-off (1 s growing by 1.6 to 2 min) would hide a
// replica that came back for many seconds (a call meanwhile fails at once
// with the cached error): kept short, as python/jobset/client.py and
// EtcdStore keep it, so that the next leader is used within about a second
// of serving; the calls' back-off (cli/retry.h) paces the rest.
constexpr int kInitialReconnectBackoffMs = 100;
constexpr int kMaxReconnectBackoffMs = 1000;

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

Client::Client(std::string address, absl::Duration timeout, Clock* clock)
    : Client(Plaintext(std::move(address)), timeout, clock) {}

Client::Client(Connection connection, absl::Duration timeout, Clock* clock)
    : connection_(std::move(connection)),
      timeout_(timeout),
      clock_(clock),
      replicas_(Replicas::Parse("server", connection_.address)) {}

std::string Client::address() const {
  return replicas_.ok() ? replicas_->current() : connection_.address;
}

std::shared_ptr<const Client::Stubs> Client::CurrentStubs() {
  const std::string address = replicas_->current();
  absl::MutexLock lock(&mu_);
  if (stubs_ == nullptr || stubs_->address != address) {
    auto stubs = std::make_shared<Stubs>();
    stubs->address = address;
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
                kInitialReconnectBackoffMs);
    // Not GRPC_ARG_MIN_RECONNECT_BACKOFF_MS: gRPC also takes it as the
    // shortest time a connection attempt is given, and 100 ms to connect
    // and shake hands fails every attempt while jobsetd accepts a fleet
    // of agents (side_by_side.py's 64 could not be waited for).
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, kMaxReconnectBackoffMs);
    std::shared_ptr<grpc::Channel> channel = grpc::CreateCustomChannel(
        address, ChannelCredentials(connection_, &args), args);
    stubs->jobsets = api::JobSetService::NewStub(channel);
    stubs->nodes = api::NodeService::NewStub(channel);
    stubs->logs = api::PodLogService::NewStub(channel);
    stubs->access = api::AccessService::NewStub(channel);
    stubs->kueue = api::KueueService::NewStub(channel);
    stubs_ = std::move(stubs);
  }
  return stubs_;
}

bool Client::TryAgain(const grpc::ClientContext& context,
                      const grpc::Status& status, const std::string& address,
                      Attempts* attempts) {
  if (status.ok()) {
    replicas_->Reached();
    return false;
  }
  const bool redirected = RedirectedLeader(context, status).has_value();
  // Also moves the next call on (to the leader named, or the next replica).
  const bool at_once = replicas_->After(context, status);
  return attempts->AfterAndWait(status, ClassifyFailure(status, redirected),
                                at_once, replicas_->size(), address);
}

absl::Status Client::Convert(const grpc::Status& status,
                             absl::string_view method,
                             absl::string_view address,
                             absl::string_view note) {
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      return absl::OkStatus();
    case grpc::StatusCode::UNAVAILABLE:
      return absl::UnavailableError(absl::StrCat(
          "cannot reach jobsetd at ", address, ": ", status.error_message(),
          connection_.tls
              ? " (TLS handshake failed? check certificate-authority / "
                "tls-server-name; 'certificate signed by unknown authority' "
                "if the CA is wrong)"
              : " (is jobsetd running there? It serves TLS unless started "
                "with --insecure: pass --config=<its data_dir>/admin.conf or "
                "set JOBSETCONFIG)",
          note));
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
          "jobsetd at ", address, " did not answer ", method, " within ",
          absl::FormatDuration(timeout_), " (--request-timeout)", note));
    case grpc::StatusCode::UNIMPLEMENTED:
      return absl::UnimplementedError(
          absl::StrCat("jobsetd at ", address, " does not serve ", method,
                       " (an older jobsetd?): ", status.error_message()));
    default:
      return FromGrpcStatus(status);
  }
}

template <typename Response, typename Request, typename Call>
absl::StatusOr<Response> Client::ListAll(absl::string_view method,
                                         const Request& request, Call call) {
  Response all;
  Request page_request = request;
  int restarts = 0;
  for (int pages = 0; pages < kMaxPages; ++pages) {
    absl::StatusOr<Response> page = Unary<Response>(
        method, [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
          return call(s, c, page_request, r);
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
      "jobsetd at ", address(), " kept returning continue tokens for ", method,
      " after ", kMaxPages, " pages"));
}

absl::StatusOr<api::CreateJobSetResponse> Client::Create(
    const api::CreateJobSetRequest& request, bool* repeated) {
  return Unary<api::CreateJobSetResponse>(
      "CreateJobSet",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->CreateJobSet(c, request, r);
      },
      request.jobset().metadata().name().empty() ? Repeat::kUnsafe
                                                 : Repeat::kSafe,
      repeated);
}

absl::StatusOr<api::ApplyNamespaceResponse> Client::ApplyNamespace(
    const api::ApplyNamespaceRequest& request) {
  return Unary<api::ApplyNamespaceResponse>(
      "ApplyNamespace",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->ApplyNamespace(c, request, r);
      },
      // A create-only repeat would answer AlreadyExists for its own object.
      request.create_only() ? Repeat::kUnsafe : Repeat::kSafe);
}

absl::StatusOr<api::Namespace> Client::GetNamespace(const std::string& name) {
  api::GetNamespaceRequest request;
  request.set_name(name);
  return Unary<api::Namespace>(
      "GetNamespace", [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->GetNamespace(c, request, r);
      });
}

absl::StatusOr<api::ListNamespacesResponse> Client::ListNamespaces(
    const api::ListNamespacesRequest& request) {
  return Unary<api::ListNamespacesResponse>(
      "ListNamespaces", [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->ListNamespaces(c, request, r);
      });
}

absl::StatusOr<api::Namespace> Client::DeleteNamespace(
    const std::string& name) {
  api::DeleteNamespaceRequest request;
  request.set_name(name);
  return Unary<api::Namespace>(
      "DeleteNamespace",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->DeleteNamespace(c, request, r);
      },
      Repeat::kUnsafe);
}

absl::StatusOr<api::ApplySecretResponse> Client::ApplySecret(
    const api::ApplySecretRequest& request) {
  return Unary<api::ApplySecretResponse>(
      "ApplySecret",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->ApplySecret(c, request, r);
      },
      // A create-only repeat would answer AlreadyExists for its own object.
      request.create_only() ? Repeat::kUnsafe : Repeat::kSafe);
}

absl::StatusOr<api::Secret> Client::GetSecret(const std::string& ns,
                                              const std::string& name) {
  api::GetSecretRequest request;
  request.set_namespace_(ns);
  request.set_name(name);
  return Unary<api::Secret>(
      "GetSecret", [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->GetSecret(c, request, r);
      });
}

absl::StatusOr<api::ListSecretsResponse> Client::ListSecrets(
    const api::ListSecretsRequest& request) {
  return Unary<api::ListSecretsResponse>(
      "ListSecrets", [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->ListSecrets(c, request, r);
      });
}

absl::StatusOr<api::Secret> Client::DeleteSecret(const std::string& ns,
                                                 const std::string& name) {
  api::DeleteSecretRequest request;
  request.set_namespace_(ns);
  request.set_name(name);
  return Unary<api::Secret>(
      "DeleteSecret",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->DeleteSecret(c, request, r);
      },
      Repeat::kUnsafe);
}

absl::StatusOr<api::ApplyConfigMapResponse> Client::ApplyConfigMap(
    const api::ApplyConfigMapRequest& request) {
  return Unary<api::ApplyConfigMapResponse>(
      "ApplyConfigMap",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->ApplyConfigMap(c, request, r);
      },
      // A create-only repeat would answer AlreadyExists for its own object.
      request.create_only() ? Repeat::kUnsafe : Repeat::kSafe);
}

absl::StatusOr<api::ConfigMap> Client::GetConfigMap(const std::string& ns,
                                                    const std::string& name) {
  api::GetConfigMapRequest request;
  request.set_namespace_(ns);
  request.set_name(name);
  return Unary<api::ConfigMap>(
      "GetConfigMap", [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->GetConfigMap(c, request, r);
      });
}

absl::StatusOr<api::ListConfigMapsResponse> Client::ListConfigMaps(
    const api::ListConfigMapsRequest& request) {
  return Unary<api::ListConfigMapsResponse>(
      "ListConfigMaps", [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->ListConfigMaps(c, request, r);
      });
}

absl::StatusOr<api::ConfigMap> Client::DeleteConfigMap(
    const std::string& ns, const std::string& name) {
  api::DeleteConfigMapRequest request;
  request.set_namespace_(ns);
  request.set_name(name);
  return Unary<api::ConfigMap>(
      "DeleteConfigMap",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->DeleteConfigMap(c, request, r);
      },
      Repeat::kUnsafe);
}

absl::StatusOr<api::JobSet> Client::Get(const api::GetJobSetRequest& request) {
  return Unary<api::JobSet>(
      "GetJobSet", [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->GetJobSet(c, request, r);
      });
}

absl::StatusOr<api::ListJobSetsResponse> Client::List(
    const api::ListJobSetsRequest& request) {
  return ListAll<api::ListJobSetsResponse>(
      "ListJobSets", request,
      [&](const Stubs& s, grpc::ClientContext* c, const auto& page, auto* r) {
        return s.jobsets->ListJobSets(c, page, r);
      });
}

absl::StatusOr<api::JobSet> Client::Update(
    const api::UpdateJobSetRequest& request) {
  return Unary<api::JobSet>(
      "UpdateJobSet", [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->UpdateJobSet(c, request, r);
      });
}

absl::StatusOr<api::JobSet> Client::Delete(
    const api::DeleteJobSetRequest& request) {
  return Unary<api::JobSet>(
      "DeleteJobSet",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->DeleteJobSet(c, request, r);
      },
      Repeat::kUnsafe);
}

absl::StatusOr<api::JobSet> Client::Suspend(
    const api::SuspendJobSetRequest& request) {
  return Unary<api::JobSet>(
      "SuspendJobSet", [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->SuspendJobSet(c, request, r);
      });
}

absl::StatusOr<api::JobSet> Client::Resume(
    const api::ResumeJobSetRequest& request) {
  return Unary<api::JobSet>(
      "ResumeJobSet", [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->ResumeJobSet(c, request, r);
      });
}

absl::StatusOr<api::ListJobsResponse> Client::ListJobs(
    const api::ListJobsRequest& request) {
  return ListAll<api::ListJobsResponse>(
      "ListJobs", request,
      [&](const Stubs& s, grpc::ClientContext* c, const auto& page, auto* r) {
        return s.jobsets->ListJobs(c, page, r);
      });
}

absl::StatusOr<api::ListPodsResponse> Client::ListPods(
    const api::ListPodsRequest& request) {
  return ListAll<api::ListPodsResponse>(
      "ListPods", request,
      [&](const Stubs& s, grpc::ClientContext* c, const auto& page, auto* r) {
        return s.jobsets->ListPods(c, page, r);
      });
}

absl::StatusOr<api::ListEventsResponse> Client::ListEvents(
    const api::ListEventsRequest& request) {
  return ListAll<api::ListEventsResponse>(
      "ListEvents", request,
      [&](const Stubs& s, grpc::ClientContext* c, const auto& page, auto* r) {
        return s.jobsets->ListEvents(c, page, r);
      });
}

absl::StatusOr<api::VersionInfo> Client::GetVersion() {
  return Unary<api::VersionInfo>(
      "GetVersion", [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.jobsets->GetVersion(c, api::GetVersionRequest(), r);
      });
}

absl::StatusOr<api::ListNodesResponse> Client::ListNodes() {
  return Unary<api::ListNodesResponse>(
      "NodeService.ListNodes",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.nodes->ListNodes(c, api::ListNodesRequest(), r);
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
                          [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
                            return s.nodes->GetNode(c, NodeRequest(name), r);
                          });
}

absl::StatusOr<api::Node> Client::CordonNode(const std::string& name) {
  return Unary<api::Node>("NodeService.CordonNode",
                          [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
                            return s.nodes->CordonNode(c, NodeRequest(name), r);
                          });
}

absl::StatusOr<api::Node> Client::UncordonNode(const std::string& name) {
  return Unary<api::Node>("NodeService.UncordonNode",
                          [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
                            return s.nodes->UncordonNode(c, NodeRequest(name),
                                                         r);
                          });
}

absl::StatusOr<api::Node> Client::DrainNode(const std::string& name) {
  return Unary<api::Node>("NodeService.DrainNode",
                          [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
                            return s.nodes->DrainNode(c, NodeRequest(name), r);
                          });
}

absl::StatusOr<api::Node> Client::DeleteNode(const std::string& name) {
  return Unary<api::Node>(
      "NodeService.DeleteNode",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.nodes->DeleteNode(c, NodeRequest(name), r);
      },
      Repeat::kUnsafe);
}

absl::StatusOr<api::Node> Client::LabelNode(
    const api::LabelNodeRequest& request) {
  return Unary<api::Node>("NodeService.LabelNode",
                          [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
                            return s.nodes->LabelNode(c, request, r);
                          });
}

absl::StatusOr<api::Node> Client::TaintNode(
    const api::TaintNodeRequest& request) {
  return Unary<api::Node>(
      "NodeService.TaintNode",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.nodes->TaintNode(c, request, r);
      },
      Repeat::kUnsafe);
}

absl::StatusOr<api::CreateTokenResponse> Client::CreateToken(
    const api::CreateTokenRequest& request) {
  return Unary<api::CreateTokenResponse>(
      "AccessService.CreateToken",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.access->CreateToken(c, request, r);
      },
      Repeat::kUnsafe);
}

absl::StatusOr<api::ListTokensResponse> Client::ListTokens() {
  return Unary<api::ListTokensResponse>(
      "AccessService.ListTokens",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.access->ListTokens(c, api::ListTokensRequest(), r);
      });
}

absl::StatusOr<api::TokenInfo> Client::DeleteToken(const std::string& name) {
  api::DeleteTokenRequest request;
  request.set_name(name);
  return Unary<api::TokenInfo>(
      "AccessService.DeleteToken",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.access->DeleteToken(c, request, r);
      },
      Repeat::kUnsafe);
}

absl::StatusOr<api::RotateJoinTokenResponse> Client::RotateJoinToken(
    const api::RotateJoinTokenRequest& request) {
  return Unary<api::RotateJoinTokenResponse>(
      "AccessService.RotateJoinToken",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.access->RotateJoinToken(c, request, r);
      },
      Repeat::kUnsafe);
}

absl::StatusOr<api::RbacObject> Client::ApplyRbac(
    const api::RbacObject& object) {
  return Unary<api::RbacObject>(
      "AccessService.ApplyRbac",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.access->ApplyRbac(c, object, r);
      });
}

absl::StatusOr<api::RbacObject> Client::DeleteRbac(
    const api::RbacObjectRef& ref) {
  return Unary<api::RbacObject>(
      "AccessService.DeleteRbac",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.access->DeleteRbac(c, ref, r);
      });
}

absl::StatusOr<api::ListRbacResponse> Client::ListRbac(
    const api::ListRbacRequest& request) {
  return Unary<api::ListRbacResponse>(
      "AccessService.ListRbac",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.access->ListRbac(c, request, r);
      });
}

absl::StatusOr<api::AccessReviewResult> Client::ReviewAccess(
    const api::AccessReview& review) {
  return Unary<api::AccessReviewResult>(
      "AccessService.ReviewAccess",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.access->ReviewAccess(c, review, r);
      });
}

absl::Status Client::Watch(
    const api::WatchJobSetsRequest& request, absl::Time deadline,
    const std::function<bool(const api::WatchEvent&)>& on_event) {
  return WatchStream<api::WatchEvent>(
      "WatchJobSets", deadline,
      [&](const Stubs& s, grpc::ClientContext* c) {
        return s.jobsets->WatchJobSets(c, request);
      },
      on_event);
}

absl::Status Client::SaveSnapshot(
    absl::Time deadline,
    const std::function<bool(const api::SnapshotChunk&)>& on_chunk) {
  if (!replicas_.ok()) return replicas_.status();
  std::string address;
  std::string note;
  const api::SaveSnapshotRequest request;
  const grpc::Status status = ReadStream<api::SnapshotChunk>(
      "SaveSnapshot", deadline,
      [&](const Stubs& s, grpc::ClientContext* c) {
        return s.access->SaveSnapshot(c, request);
      },
      on_chunk, &address, &note);
  return Convert(status, "SaveSnapshot", address, note);
}

absl::Status Client::Logs(
    const api::GetPodLogsRequest& request,
    const std::function<void(const std::string&)>& on_data) {
  if (!replicas_.ok()) return replicas_.status();
  std::string address;
  std::string note;
  const grpc::Status status = ReadStream<api::PodLogs>(
      "GetPodLogs",
      request.follow() ? absl::InfiniteFuture()
                       : RealClock::Get()->Now() + timeout_,
      [&](const Stubs& s, grpc::ClientContext* c) {
        return s.logs->GetPodLogs(c, request);
      },
      [&](const api::PodLogs& chunk) {
        on_data(chunk.data());
        return true;
      },
      &address, &note);
  return Convert(status, "GetPodLogs", address, note);
}

}  // namespace jobset::cli
