#ifndef JOBSET_SCHEDULER_SERVER_JOBSET_SERVICE_H_
#define JOBSET_SCHEDULER_SERVER_JOBSET_SERVICE_H_

#include <atomic>

#include "proto/jobset_service.grpc.pb.h"
#include "scheduler/auth/request_auth.h"
#include "scheduler/server/config_api.h"
#include "scheduler/server/jobset_api.h"
#include "scheduler/server/namespace_api.h"
#include "scheduler/server/stream_limiter.h"
#include "scheduler/server/stream_ticker.h"

namespace jobset::scheduler {

// The gRPC JobSetService: each handler converts the request, calls JobSetApi
// and converts the result back (absl::Status -> grpc::Status). Unary calls
// are synchronous; WatchJobSets is a callback stream (watch_stream.h), which
// holds no thread. Thread-safe.
class JobSetServiceImpl final
    : public api::JobSetService::WithCallbackMethod_WatchJobSets<
          api::JobSetService::Service> {
 public:
  // Every call is authorized by `auth` (which must outlive it) first. A
  // watch is kept going by `ticker` and takes a slot of its user from
  // `streams` (null: no limit); both must outlive it.
  JobSetServiceImpl(JobSetApi* api, NamespaceApi* namespaces,
                    SecretApi* secrets, ConfigMapApi* config_maps,
                    const RequestAuth* auth, StreamTicker* ticker,
                    StreamLimiter* streams = nullptr)
      : api_(api),
        namespaces_(namespaces),
        secrets_(secrets),
        config_maps_(config_maps),
        auth_(auth),
        ticker_(ticker),
        streams_(streams) {}

  // Ends open watches (they finish with OK) so that the server can drain.
  void Shutdown() {
    shutting_down_ = true;
    ticker_->PollNow();
  }

  grpc::Status CreateJobSet(grpc::ServerContext* context,
                            const api::CreateJobSetRequest* request,
                            api::CreateJobSetResponse* response) override;
  grpc::Status GetJobSet(grpc::ServerContext* context,
                         const api::GetJobSetRequest* request,
                         api::JobSet* response) override;
  grpc::Status ListJobSets(grpc::ServerContext* context,
                           const api::ListJobSetsRequest* request,
                           api::ListJobSetsResponse* response) override;
  grpc::Status UpdateJobSet(grpc::ServerContext* context,
                            const api::UpdateJobSetRequest* request,
                            api::JobSet* response) override;
  grpc::Status DeleteJobSet(grpc::ServerContext* context,
                            const api::DeleteJobSetRequest* request,
                            api::JobSet* response) override;
  grpc::ServerWriteReactor<api::WatchEvent>* WatchJobSets(
      grpc::CallbackServerContext* context,
      const api::WatchJobSetsRequest* request) override;
  grpc::Status SuspendJobSet(grpc::ServerContext* context,
                             const api::SuspendJobSetRequest* request,
                             api::JobSet* response) override;
  grpc::Status ResumeJobSet(grpc::ServerContext* context,
                            const api::ResumeJobSetRequest* request,
                            api::JobSet* response) override;
  grpc::Status ListJobs(grpc::ServerContext* context,
                        const api::ListJobsRequest* request,
                        api::ListJobsResponse* response) override;
  grpc::Status ListPods(grpc::ServerContext* context,
                        const api::ListPodsRequest* request,
                        api::ListPodsResponse* response) override;
  grpc::Status ListEvents(grpc::ServerContext* context,
                          const api::ListEventsRequest* request,
                          api::ListEventsResponse* response) override;
  grpc::Status GetVersion(grpc::ServerContext* context,
                          const api::GetVersionRequest* request,
                          api::VersionInfo* response) override;
  grpc::Status ApplyNamespace(grpc::ServerContext* context,
                              const api::ApplyNamespaceRequest* request,
                              api::ApplyNamespaceResponse* response) override;
  grpc::Status GetNamespace(grpc::ServerContext* context,
                            const api::GetNamespaceRequest* request,
                            api::Namespace* response) override;
  grpc::Status ListNamespaces(grpc::ServerContext* context,
                              const api::ListNamespacesRequest* request,
                              api::ListNamespacesResponse* response) override;
  grpc::Status DeleteNamespace(grpc::ServerContext* context,
                               const api::DeleteNamespaceRequest* request,
                               api::Namespace* response) override;
  grpc::Status ApplySecret(grpc::ServerContext* context,
                           const api::ApplySecretRequest* request,
                           api::ApplySecretResponse* response) override;
  grpc::Status GetSecret(grpc::ServerContext* context,
                         const api::GetSecretRequest* request,
                         api::Secret* response) override;
  grpc::Status ListSecrets(grpc::ServerContext* context,
                           const api::ListSecretsRequest* request,
                           api::ListSecretsResponse* response) override;
  grpc::Status DeleteSecret(grpc::ServerContext* context,
                            const api::DeleteSecretRequest* request,
                            api::Secret* response) override;
  grpc::Status ApplyConfigMap(grpc::ServerContext* context,
                              const api::ApplyConfigMapRequest* request,
                              api::ApplyConfigMapResponse* response) override;
  grpc::Status GetConfigMap(grpc::ServerContext* context,
                            const api::GetConfigMapRequest* request,
                            api::ConfigMap* response) override;
  grpc::Status ListConfigMaps(grpc::ServerContext* context,
                              const api::ListConfigMapsRequest* request,
                              api::ListConfigMapsResponse* response) override;
  grpc::Status DeleteConfigMap(grpc::ServerContext* context,
                               const api::DeleteConfigMapRequest* request,
                               api::ConfigMap* response) override;

 private:
  JobSetApi* const api_;
  NamespaceApi* const namespaces_;
  SecretApi* const secrets_;
  ConfigMapApi* const config_maps_;
  const RequestAuth* const auth_;
  StreamTicker* const ticker_;
  StreamLimiter* const streams_;
  std::atomic<bool> shutting_down_ = false;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_SERVER_JOBSET_SERVICE_H_
