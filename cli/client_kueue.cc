// Client's KueueService calls, with the retries, failover and deadlines of
// every other call (client_internal.h).
#include <functional>
#include <string>

#include "cli/client.h"
#include "cli/client_internal.h"

namespace jobset::cli {

absl::StatusOr<api::ApplyKueueObjectResponse> Client::ApplyKueueObject(
    const api::ApplyKueueObjectRequest& request) {
  return Unary<api::ApplyKueueObjectResponse>(
      "KueueService.ApplyKueueObject",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.kueue->ApplyKueueObject(c, request, r);
      },
      // A create-only repeat would answer AlreadyExists for its own object.
      request.create_only() ? Repeat::kUnsafe : Repeat::kSafe);
}

absl::StatusOr<api::KueueObject> Client::GetKueueObject(
    const api::KueueObjectRef& ref) {
  return Unary<api::KueueObject>(
      "KueueService.GetKueueObject",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.kueue->GetKueueObject(c, ref, r);
      });
}

absl::StatusOr<api::ListKueueObjectsResponse> Client::ListKueueObjects(
    const api::ListKueueObjectsRequest& request) {
  return Unary<api::ListKueueObjectsResponse>(
      "KueueService.ListKueueObjects",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.kueue->ListKueueObjects(c, request, r);
      });
}

absl::StatusOr<api::KueueObject> Client::DeleteKueueObject(
    const api::KueueObjectRef& ref) {
  return Unary<api::KueueObject>(
      "KueueService.DeleteKueueObject",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.kueue->DeleteKueueObject(c, ref, r);
      },
      Repeat::kUnsafe);
}

absl::StatusOr<api::PendingWorkloadsSummary> Client::ListPendingWorkloads(
    const api::ListPendingWorkloadsRequest& request) {
  return Unary<api::PendingWorkloadsSummary>(
      "KueueService.ListPendingWorkloads",
      [&](const Stubs& s, grpc::ClientContext* c, auto* r) {
        return s.kueue->ListPendingWorkloads(c, request, r);
      });
}

absl::Status Client::WatchKueueObjects(
    const api::WatchKueueObjectsRequest& request, absl::Time deadline,
    const std::function<bool(const api::KueueWatchEvent&)>& on_event) {
  return WatchStream<api::KueueWatchEvent>(
      "KueueService.WatchKueueObjects", deadline,
      [&](const Stubs& s, grpc::ClientContext* c) {
        return s.kueue->WatchKueueObjects(c, request);
      },
      on_event);
}

}  // namespace jobset::cli
