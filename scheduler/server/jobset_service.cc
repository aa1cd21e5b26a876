#include "scheduler/server/jobset_service.h"

#include <utility>

#include "common/grpc_status.h"

namespace jobset::scheduler {
namespace {

// How often a watch looks up from waiting to notice cancellation.
constexpr absl::Duration kWatchPoll = absl::Milliseconds(200);

// Copies an OK result into `response`; returns the status as gRPC's.
template <typename T>
grpc::Status Reply(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status JobSetServiceImpl::CreateJobSet(
    grpc::ServerContext*, const api::CreateJobSetRequest* request,
    api::CreateJobSetResponse* response) {
  absl::StatusOr<JobSetApi::CreateResult> result =
      api_->Create(request->jobset(), request->dry_run());
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response->mutable_jobset() = std::move(result->jobset);
  response->set_created(result->created);
  return grpc::Status::OK;
}

grpc::Status JobSetServiceImpl::GetJobSet(grpc::ServerContext*,
                                          const api::GetJobSetRequest* request,
                                          api::JobSet* response) {
  return Reply(api_->Get(request->namespace_(), request->name()), response);
}

grpc::Status JobSetServiceImpl::ListJobSets(
    grpc::ServerContext*, const api::ListJobSetsRequest* request,
    api::ListJobSetsResponse* response) {
  return Reply(api_->List(*request), response);
}

grpc::Status JobSetServiceImpl::UpdateJobSet(
    grpc::ServerContext*, const api::UpdateJobSetRequest* request,
    api::JobSet* response) {
  return Reply(api_->Update(request->jobset(), request->dry_run()), response);
}

grpc::Status JobSetServiceImpl::DeleteJobSet(
    grpc::ServerContext*, const api::DeleteJobSetRequest* request,
    api::JobSet* response) {
  return Reply(api_->Delete(request->namespace_(), request->name(),
                            request->resource_version()),
               response);
}

grpc::Status JobSetServiceImpl::WatchJobSets(
    grpc::ServerContext* context, const api::WatchJobSetsRequest* request,
    grpc::ServerWriter<api::WatchEvent>* writer) {
  absl::StatusOr<JobSetApi::Watch> watch = api_->StartWatch(*request);
  if (!watch.ok()) return ToGrpcStatus(watch.status());
  while (!context->IsCancelled() && !shutting_down_) {
    absl::StatusOr<std::vector<api::WatchEvent>> events =
        watch->Next(absl::Now() + kWatchPoll);
    if (!events.ok()) return ToGrpcStatus(events.status());
    for (const api::WatchEvent& event : *events) {
      if (!writer->Write(event)) return grpc::Status::OK;  // Client went away.
    }
  }
  return grpc::Status::OK;
}

grpc::Status JobSetServiceImpl::SuspendJobSet(
    grpc::ServerContext*, const api::SuspendJobSetRequest* request,
    api::JobSet* response) {
  return Reply(api_->SetSuspend(request->namespace_(), request->name(), true),
               response);
}

grpc::Status JobSetServiceImpl::ResumeJobSet(
    grpc::ServerContext*, const api::ResumeJobSetRequest* request,
    api::JobSet* response) {
  return Reply(api_->SetSuspend(request->namespace_(), request->name(), false),
               response);
}

grpc::Status JobSetServiceImpl::ListJobs(grpc::ServerContext*,
                                         const api::ListJobsRequest* request,
                                         api::ListJobsResponse* response) {
  return Reply(api_->ListJobs(*request), response);
}

grpc::Status JobSetServiceImpl::ListPods(grpc::ServerContext*,
                                         const api::ListPodsRequest* request,
                                         api::ListPodsResponse* response) {
  return Reply(api_->ListPods(*request), response);
}

grpc::Status JobSetServiceImpl::ListEvents(
    grpc::ServerContext*, const api::ListEventsRequest* request,
    api::ListEventsResponse* response) {
  return Reply(api_->ListEvents(*request), response);
}

}  // namespace jobset::scheduler
