#include "scheduler/server/server.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/clock.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"

namespace jobset::scheduler {

Server::Server(store::Store* store, const Options& options)
    : end_streams_(options.end_streams),
      api_(store, options.clock, options.features, options.api_limits),
      namespaces_(store, options.clock),
      secrets_(store, options.clock),
      config_maps_(store, options.clock),
      kueue_(store, options.clock),
      ticker_(store),
      service_(&api_, &namespaces_, &secrets_, &config_maps_, options.auth,
               &ticker_, options.streams),
      kueue_service_(&kueue_, options.auth, &ticker_, options.streams) {}

std::shared_ptr<grpc::ServerCredentials> Server::Credentials(
    const ClusterPki* tls) {
  if (tls == nullptr) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl(
      GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = tls->ca.cert_pem;
  ssl.pem_key_cert_pairs.push_back({tls->server.key_pem, tls->server.cert_pem});
  return grpc::SslServerCredentials(ssl);
}

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const Options& options,
                                                      store::Store* store) {
  if (options.auth == nullptr) {
    return absl::InvalidArgumentError("Server::Options::auth is required");
  }
  if (options.tls == nullptr && !options.auth->insecure()) {
    return absl::InvalidArgumentError(
        "plaintext needs an insecure RequestAuth (--insecure)");
  }
  grpc::EnableDefaultHealthCheckService(true);
  // Reflection answers anyone: only for --insecure development, never on
  // the TLS port (where only health is open).
  if (options.auth->insecure()) {
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  }
  auto server = absl::WrapUnique(new Server(store, options));

  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.listen, Credentials(options.tls), &port);
  // One builder for every service: these limits hold for the agents'
  // streams as for the JobSet API.
  const Limits& limits = options.grpc_limits;
  builder.SetMaxReceiveMessageSize(limits.max_receive_bytes);
  builder.SetMaxSendMessageSize(limits.max_send_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             limits.max_concurrent_streams);
  grpc::ResourceQuota quota("jobsetd");
  quota.SetMaxThreads(limits.max_threads);
  builder.SetResourceQuota(quota);
  // gRPC sets SO_REUSEPORT by default, which would let a second jobsetd
  // silently share the port (and split the traffic) with the first.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(&server->service_);
  builder.RegisterService(&server->kueue_service_);
  for (grpc::Service* service : options.services)
    builder.RegisterService(service);
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  if (options.metrics != nullptr) {
    interceptors.push_back(
        std::make_unique<GrpcMetricsInterceptorFactory>(options.metrics));
  }
  if (options.audit != nullptr) {
    interceptors.push_back(options.audit->InterceptorFactory());
  }
  if (!interceptors.empty()) {
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
  }
  server->grpc_server_ = builder.BuildAndStart();
  if (server->grpc_server_ == nullptr || port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options.listen,
                     " (is the address valid and the port free?)"));
  }
  absl::string_view host = options.listen;
  host = host.substr(0, host.rfind(':'));
  server->address_ = absl::StrCat(host, ":", port);
  grpc::HealthCheckServiceInterface* health =
      server->grpc_server_->GetHealthCheckService();
  health->SetServingStatus(true);
  health->SetServingStatus(api::JobSetService::service_full_name(), true);
  health->SetServingStatus(api::KueueService::service_full_name(), true);
  return server;
}

void Server::Shutdown(absl::Time deadline) {
  if (grpc_server_ == nullptr || shut_down_.exchange(true)) return;
  grpc_server_->GetHealthCheckService()->SetServingStatus(false);
  service_.Shutdown();
  kueue_service_.Shutdown();
  if (end_streams_) end_streams_();
  grpc_server_->Shutdown(absl::ToChronoTime(deadline));
  grpc_server_->Wait();
}

Server::~Server() { Shutdown(RealDeadline(absl::Seconds(1))); }

}  // namespace jobset::scheduler
