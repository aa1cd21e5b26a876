#ifndef JOBSET_SCHEDULER_SERVER_KUEUE_SERVICE_H_
#define JOBSET_SCHEDULER_SERVER_KUEUE_SERVICE_H_

#include <atomic>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "auth/rbac.h"
#include "proto/kueue_service.grpc.pb.h"
#include "scheduler/auth/request_auth.h"
#include "scheduler/server/kueue_api.h"
#include "scheduler/server/stream_limiter.h"
#include "scheduler/server/stream_ticker.h"

namespace jobset::scheduler {

// The gRPC KueueService (proto/kueue_service.proto): each handler
// authorizes the call as JobSetServiceImpl does (RBAC in kueue.x-k8s.io on
// the kind's resource, "resourceflavors" ... "workloads", in the request's
// namespace for LocalQueues and Workloads, at the cluster scope for the
// rest; Apply needs "create", and "update" too unless create_only), then
// calls KueueApi. A request that names no kind jobsetd knows is
// INVALID_ARGUMENT, answered to an authenticated caller only. Unary calls
// are synchronous; WatchKueueObjects is a callback stream (watch_stream.h).
// Thread-safe.
class KueueServiceImpl final
    : public api::KueueService::WithCallbackMethod_WatchKueueObjects<
          api::KueueService::Service> {
 public:
  // Every call is authorized by `auth` (which must outlive it) first. A
  // watch is kept going by `ticker` and takes a slot of its user from
  // `streams` (null: no limit); both must outlive it.
  KueueServiceImpl(KueueApi* api, const RequestAuth* auth, StreamTicker* ticker,
                   StreamLimiter* streams = nullptr)
      : api_(api), auth_(auth), ticker_(ticker), streams_(streams) {}

  // Ends open watches (they finish with OK) so that the server can drain.
  void Shutdown() {
    shutting_down_ = true;
    ticker_->PollNow();
  }

  grpc::Status ApplyKueueObject(
      grpc::ServerContext* context, const api::ApplyKueueObjectRequest* request,
      api::ApplyKueueObjectResponse* response) override;
  grpc::Status GetKueueObject(grpc::ServerContext* context,
                              const api::KueueObjectRef* request,
                              api::KueueObject* response) override;
  grpc::Status ListKueueObjects(
      grpc::ServerContext* context, const api::ListKueueObjectsRequest* request,
      api::ListKueueObjectsResponse* response) override;
  grpc::Status DeleteKueueObject(grpc::ServerContext* context,
                                 const api::KueueObjectRef* request,
                                 api::KueueObject* response) override;
  // As WatchJobSets: a slot of the caller's stream limit for as long as it
  // lasts; ends when the client goes, the server shuts down, or the
  // caller's credential is revoked or expires (within a poll).
  grpc::ServerWriteReactor<api::KueueWatchEvent>* WatchKueueObjects(
      grpc::CallbackServerContext* context,
      const api::WatchKueueObjectsRequest* request) override;
  // Kueue's visibility API (kueue_visibility.h): "get" on
  // clusterqueues/pendingworkloads or localqueues/pendingworkloads (in the
  // request's namespace) in API group visibility.kueue.x-k8s.io.
  grpc::Status ListPendingWorkloads(
      grpc::ServerContext* context,
      const api::ListPendingWorkloadsRequest* request,
      api::PendingWorkloadsSummary* response) override;

 private:
  // The RBAC request of `verb` on the object (or, without a name, the
  // collection) a request names, or the status to answer: an unknown kind
  // is INVALID_ARGUMENT once the caller is authenticated.
  absl::StatusOr<auth::Attributes> AttrsOf(
      const grpc::ServerContextBase& context, absl::string_view verb,
      absl::string_view kind, absl::string_view ns, absl::string_view name,
      bool all_namespaces = false) const;

  KueueApi* const api_;
  const RequestAuth* const auth_;
  StreamTicker* const ticker_;
  StreamLimiter* const streams_;
  std::atomic<bool> shutting_down_ = false;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_SERVER_KUEUE_SERVICE_H_
