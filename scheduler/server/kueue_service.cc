#include "scheduler/server/kueue_service.h"

#include <string>
#include <utility>

#include "auth/rbac.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "scheduler/server/kueue_visibility.h"
#include "scheduler/server/watch_stream.h"

namespace jobset::scheduler {
namespace {

// Copies an OK result into `response`; returns the status as gRPC's.
template <typename T>
grpc::Status Reply(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

// The RBAC request for `verb` on `kind`: its resource in kueue.x-k8s.io, in
// the namespace a request names ("default" when empty, none with
// `all_namespaces`) for a namespaced kind, at the cluster scope otherwise.
auth::Attributes Attrs(absl::string_view verb, const api::KueueKind& kind,
                       absl::string_view ns, absl::string_view name = "",
                       bool all_namespaces = false) {
  std::string scope;
  if (kind.namespaced && !all_namespaces) {
    scope = ns.empty() ? "default" : std::string(ns);
  }
  return {.verb = std::string(verb),
          .api_group = std::string(api::kKueueApiGroup),
          .resource = std::string(kind.resource),
          .namespace_ = std::move(scope),
          .name = std::string(name)};
}

}  // namespace

absl::StatusOr<auth::Attributes> KueueServiceImpl::AttrsOf(
    const grpc::ServerContextBase& context, absl::string_view verb,
    absl::string_view kind, absl::string_view ns, absl::string_view name,
    bool all_namespaces) const {
  absl::StatusOr<const api::KueueKind*> found = api::KueueKindNamed(kind);
  if (!found.ok()) {
    // Nothing is authorized about a kind that is none; only who asks.
    JOBSET_RETURN_IF_ERROR(auth_->Authenticate(context).status());
    return found.status();
  }
  return Attrs(verb, **found, ns, name, all_namespaces);
}

grpc::Status KueueServiceImpl::ApplyKueueObject(
    grpc::ServerContext* context, const api::ApplyKueueObjectRequest* request,
    api::ApplyKueueObjectResponse* response) {
  const api::KueueKind* kind =
      api::FindKueueKind(request->object().object_case());
  if (kind == nullptr) {
    // KueueApi says what is missing, to an authenticated caller.
    if (absl::StatusOr<Caller> caller = auth_->Authenticate(*context);
        !caller.ok()) {
      return ToGrpcStatus(caller.status());
    }
    return Reply(api_->Apply(*request), response);
  }
  const api::ObjectMeta& meta = api::KueueObjectMeta(request->object());
  // As ApplySecret: authorized before anything is read, so without knowing
  // whether it exists: create_only needs "create"; an apply, which creates
  // or updates, needs both "create" and "update".
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context, Attrs("create", *kind, meta.namespace_(), meta.name()));
  if (!request->create_only()) {
    JOBSET_AUTHORIZE_OR_RETURN(
        auth_, context, Attrs("update", *kind, meta.namespace_(), meta.name()));
  }
  return Reply(api_->Apply(*request), response);
}

grpc::Status KueueServiceImpl::GetKueueObject(
    grpc::ServerContext* context, const api::KueueObjectRef* request,
    api::KueueObject* response) {
  absl::StatusOr<auth::Attributes> attrs = AttrsOf(
      *context, "get", request->kind(), request->namespace_(), request->name());
  if (!attrs.ok()) return ToGrpcStatus(attrs.status());
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context, *attrs);
  return Reply(api_->Get(*request), response);
}

grpc::Status KueueServiceImpl::ListKueueObjects(
    grpc::ServerContext* context, const api::ListKueueObjectsRequest* request,
    api::ListKueueObjectsResponse* response) {
  absl::StatusOr<auth::Attributes> attrs =
      AttrsOf(*context, "list", request->kind(), request->namespace_(), "",
              request->all_namespaces());
  if (!attrs.ok()) return ToGrpcStatus(attrs.status());
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context, *attrs);
  return Reply(api_->List(*request), response);
}

grpc::Status KueueServiceImpl::DeleteKueueObject(
    grpc::ServerContext* context, const api::KueueObjectRef* request,
    api::KueueObject* response) {
  absl::StatusOr<auth::Attributes> attrs =
      AttrsOf(*context, "delete", request->kind(), request->namespace_(),
              request->name());
  if (!attrs.ok()) return ToGrpcStatus(attrs.status());
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context, *attrs);
  return Reply(api_->Delete(*request), response);
}

grpc::ServerWriteReactor<api::KueueWatchEvent>*
KueueServiceImpl::WatchKueueObjects(
    grpc::CallbackServerContext* context,
    const api::WatchKueueObjectsRequest* request) {
  using Refused = RefusedStream<api::KueueWatchEvent>;
  absl::StatusOr<auth::Attributes> attrs =
      AttrsOf(*context, "watch", request->kind(), request->namespace_(), "",
              request->all_namespaces());
  if (!attrs.ok()) return new Refused(ToGrpcStatus(attrs.status()));
  absl::StatusOr<Caller> caller = auth_->Authorize(context, *attrs);
  if (!caller.ok()) return new Refused(ToGrpcStatus(caller.status()));
  return ServeWatch<api::KueueWatchEvent>(
      context, *auth_, *caller, streams_, shutting_down_, ticker_,
      [&] { return api_->StartWatch(*request); });
}

grpc::Status KueueServiceImpl::ListPendingWorkloads(
    grpc::ServerContext* context,
    const api::ListPendingWorkloadsRequest* request,
    api::PendingWorkloadsSummary* response) {
  // Kueue's roles name these: a ClusterQueue's list at the cluster scope, a
  // LocalQueue's in its namespace. A request naming both or neither is
  // authorized as the ClusterQueue form, then refused.
  auth::Attributes attrs = {.verb = "get",
                            .api_group = std::string(auth::kVisibilityGroup),
                            .resource = "clusterqueues",
                            .subresource = "pendingworkloads",
                            .name = request->cluster_queue()};
  if (request->cluster_queue().empty() && !request->local_queue().empty()) {
    attrs.resource = "localqueues";
    attrs.namespace_ =
        request->namespace_().empty() ? "default" : request->namespace_();
    attrs.name = request->local_queue();
  }
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context, attrs);
  return Reply(scheduler::ListPendingWorkloads(*api_, *request), response);
}

}  // namespace jobset::scheduler
