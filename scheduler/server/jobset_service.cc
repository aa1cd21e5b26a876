#include "scheduler/server/jobset_service.h"

#include <utility>

#include "auth/rbac.h"
#include "common/clock.h"
#include "common/grpc_status.h"
#include "common/version.h"
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

// The namespace a request means: its own, "default" when empty, or all
// (empty) when it asks for all namespaces.
std::string Namespace(absl::string_view ns, bool all = false) {
  if (all) return "";
  return ns.empty() ? "default" : std::string(ns);
}

auth::Attributes Attrs(absl::string_view verb, absl::string_view resource,
                       std::string ns, absl::string_view name = "") {
  return {.verb = std::string(verb),
          .api_group = auth::ApiGroupOf(resource),
          .resource = std::string(resource),
          .namespace_ = std::move(ns),
          .name = std::string(name)};
}

}  // namespace

grpc::Status JobSetServiceImpl::CreateJobSet(
    grpc::ServerContext* context, const api::CreateJobSetRequest* request,
    api::CreateJobSetResponse* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("create", "jobsets",
            Namespace(request->jobset().metadata().namespace_()),
            request->jobset().metadata().name()));
  absl::StatusOr<JobSetApi::CreateResult> result =
      api_->Create(request->jobset(), request->dry_run());
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response->mutable_jobset() = std::move(result->jobset);
  response->set_created(result->created);
  for (std::string& warning : result->warnings) {
    response->add_warnings(std::move(warning));
  }
  return grpc::Status::OK;
}

grpc::Status JobSetServiceImpl::GetJobSet(grpc::ServerContext* context,
                                          const api::GetJobSetRequest* request,
                                          api::JobSet* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("get", "jobsets", Namespace(request->namespace_()),
            request->name()));
  return Reply(api_->Get(request->namespace_(), request->name()), response);
}

grpc::Status JobSetServiceImpl::ListJobSets(
    grpc::ServerContext* context, const api::ListJobSetsRequest* request,
    api::ListJobSetsResponse* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("list", "jobsets",
            Namespace(request->namespace_(), request->all_namespaces())));
  return Reply(api_->List(*request), response);
}

grpc::Status JobSetServiceImpl::UpdateJobSet(
    grpc::ServerContext* context, const api::UpdateJobSetRequest* request,
    api::JobSet* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("update", "jobsets",
            Namespace(request->jobset().metadata().namespace_()),
            request->jobset().metadata().name()));
  return Reply(api_->Update(request->jobset(), request->dry_run()), response);
}

grpc::Status JobSetServiceImpl::DeleteJobSet(
    grpc::ServerContext* context, const api::DeleteJobSetRequest* request,
    api::JobSet* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("delete", "jobsets", Namespace(request->namespace_()),
            request->name()));
  return Reply(api_->Delete(request->namespace_(), request->name(),
                            request->resource_version()),
               response);
}

grpc::ServerWriteReactor<api::WatchEvent>* JobSetServiceImpl::WatchJobSets(
    grpc::CallbackServerContext* context,
    const api::WatchJobSetsRequest* request) {
  absl::StatusOr<Caller> caller = auth_->Authorize(
      context,
      Attrs("watch", "jobsets",
            Namespace(request->namespace_(), request->all_namespaces())));
  if (!caller.ok()) {
    return new RefusedStream<api::WatchEvent>(ToGrpcStatus(caller.status()));
  }
  return ServeWatch<api::WatchEvent>(
      context, *auth_, *caller, streams_, shutting_down_, ticker_,
      [&] { return api_->StartWatch(*request); });
}

grpc::Status JobSetServiceImpl::SuspendJobSet(
    grpc::ServerContext* context, const api::SuspendJobSetRequest* request,
    api::JobSet* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("patch", "jobsets", Namespace(request->namespace_()),
            request->name()));
  return Reply(api_->SetSuspend(request->namespace_(), request->name(), true),
               response);
}

grpc::Status JobSetServiceImpl::ResumeJobSet(
    grpc::ServerContext* context, const api::ResumeJobSetRequest* request,
    api::JobSet* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("patch", "jobsets", Namespace(request->namespace_()),
            request->name()));
  return Reply(api_->SetSuspend(request->namespace_(), request->name(), false),
               response);
}

grpc::Status JobSetServiceImpl::ListJobs(grpc::ServerContext* context,
                                         const api::ListJobsRequest* request,
                                         api::ListJobsResponse* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context, Attrs("list", "jobs", Namespace(request->namespace_())));
  return Reply(api_->ListJobs(*request), response);
}

grpc::Status JobSetServiceImpl::ListPods(grpc::ServerContext* context,
                                         const api::ListPodsRequest* request,
                                         api::ListPodsResponse* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context, Attrs("list", "pods", Namespace(request->namespace_())));
  return Reply(api_->ListPods(*request), response);
}

grpc::Status JobSetServiceImpl::ListEvents(
    grpc::ServerContext* context, const api::ListEventsRequest* request,
    api::ListEventsResponse* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("list", "events", Namespace(request->namespace_())));
  return Reply(api_->ListEvents(*request), response);
}

grpc::Status JobSetServiceImpl::GetVersion(grpc::ServerContext* context,
                                           const api::GetVersionRequest*,
                                           api::VersionInfo* response) {
  // Any authenticated caller, as kube-apiserver's /version.
  if (absl::StatusOr<Caller> caller = auth_->Authenticate(*context);
      !caller.ok()) {
    return ToGrpcStatus(caller.status());
  }
  response->set_major(std::string(kVersionMajor));
  response->set_minor(std::string(kVersionMinor));
  response->set_git_version(std::string(kGitVersion));
  response->set_platform(std::string(kPlatform));
  return grpc::Status::OK;
}

// Namespaces are cluster-scoped: "namespaces" in the core group, with the
// object's name.
grpc::Status JobSetServiceImpl::ApplyNamespace(
    grpc::ServerContext* context, const api::ApplyNamespaceRequest* request,
    api::ApplyNamespaceResponse* response) {
  const std::string& name = request->namespace_().metadata().name();
  // Authorized before anything is read, so without knowing whether it
  // exists: create_only needs "create"; an apply, which creates or updates,
  // needs both "create" and "update".
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context,
                             Attrs("create", "namespaces", "", name));
  if (!request->create_only()) {
    JOBSET_AUTHORIZE_OR_RETURN(auth_, context,
                               Attrs("update", "namespaces", "", name));
  }
  return Reply(namespaces_->Apply(*request), response);
}

grpc::Status JobSetServiceImpl::GetNamespace(
    grpc::ServerContext* context, const api::GetNamespaceRequest* request,
    api::Namespace* response) {
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context,
                             Attrs("get", "namespaces", "", request->name()));
  return Reply(namespaces_->Get(request->name()), response);
}

grpc::Status JobSetServiceImpl::ListNamespaces(
    grpc::ServerContext* context, const api::ListNamespacesRequest* request,
    api::ListNamespacesResponse* response) {
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context, Attrs("list", "namespaces", ""));
  return Reply(namespaces_->List(*request), response);
}

grpc::Status JobSetServiceImpl::DeleteNamespace(
    grpc::ServerContext* context, const api::DeleteNamespaceRequest* request,
    api::Namespace* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context, Attrs("delete", "namespaces", "", request->name()));
  return Reply(namespaces_->Delete(request->name()), response);
}

// Secrets and ConfigMaps are namespaced: "secrets" and "configmaps" in the
// core group, in the request's namespace ("default" when empty), with the
// object's name. As in Kubernetes, reading a Secret's values needs "get" or
// "list" on secrets, which view does not grant.
grpc::Status JobSetServiceImpl::ApplySecret(
    grpc::ServerContext* context, const api::ApplySecretRequest* request,
    api::ApplySecretResponse* response) {
  const api::ObjectMeta& meta = request->secret().metadata();
  const std::string ns = Namespace(meta.namespace_());
  // As ApplyNamespace: authorized before anything is read.
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context,
                             Attrs("create", "secrets", ns, meta.name()));
  if (!request->create_only()) {
    JOBSET_AUTHORIZE_OR_RETURN(auth_, context,
                               Attrs("update", "secrets", ns, meta.name()));
  }
  return Reply(secrets_->Apply(*request), response);
}

grpc::Status JobSetServiceImpl::GetSecret(grpc::ServerContext* context,
                                          const api::GetSecretRequest* request,
                                          api::Secret* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("get", "secrets", Namespace(request->namespace_()),
            request->name()));
  return Reply(secrets_->Get(request->namespace_(), request->name()), response);
}

grpc::Status JobSetServiceImpl::ListSecrets(
    grpc::ServerContext* context, const api::ListSecretsRequest* request,
    api::ListSecretsResponse* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("list", "secrets", Namespace(request->namespace_())));
  return Reply(secrets_->List(*request), response);
}

grpc::Status JobSetServiceImpl::DeleteSecret(
    grpc::ServerContext* context, const api::DeleteSecretRequest* request,
    api::Secret* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("delete", "secrets", Namespace(request->namespace_()),
            request->name()));
  return Reply(secrets_->Delete(request->namespace_(), request->name()),
               response);
}

grpc::Status JobSetServiceImpl::ApplyConfigMap(
    grpc::ServerContext* context, const api::ApplyConfigMapRequest* request,
    api::ApplyConfigMapResponse* response) {
  const api::ObjectMeta& meta = request->config_map().metadata();
  const std::string ns = Namespace(meta.namespace_());
  JOBSET_AUTHORIZE_OR_RETURN(auth_, context,
                             Attrs("create", "configmaps", ns, meta.name()));
  if (!request->create_only()) {
    JOBSET_AUTHORIZE_OR_RETURN(auth_, context,
                               Attrs("update", "configmaps", ns, meta.name()));
  }
  return Reply(config_maps_->Apply(*request), response);
}

grpc::Status JobSetServiceImpl::GetConfigMap(
    grpc::ServerContext* context, const api::GetConfigMapRequest* request,
    api::ConfigMap* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("get", "configmaps", Namespace(request->namespace_()),
            request->name()));
  return Reply(config_maps_->Get(request->namespace_(), request->name()),
               response);
}

grpc::Status JobSetServiceImpl::ListConfigMaps(
    grpc::ServerContext* context, const api::ListConfigMapsRequest* request,
    api::ListConfigMapsResponse* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("list", "configmaps", Namespace(request->namespace_())));
  return Reply(config_maps_->List(*request), response);
}

grpc::Status JobSetServiceImpl::DeleteConfigMap(
    grpc::ServerContext* context, const api::DeleteConfigMapRequest* request,
    api::ConfigMap* response) {
  JOBSET_AUTHORIZE_OR_RETURN(
      auth_, context,
      Attrs("delete", "configmaps", Namespace(request->namespace_()),
            request->name()));
  return Reply(config_maps_->Delete(request->namespace_(), request->name()),
               response);
}

}  // namespace jobset::scheduler
