#include "scheduler/server/kueue_visibility.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/quote.h"
#include "common/status_macros.h"
#include "scheduler/queues/pending_workloads.h"

namespace jobset::scheduler {
namespace {

absl::Status CheckRequest(const api::ListPendingWorkloadsRequest& request) {
  if (request.cluster_queue().empty() == request.local_queue().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "name exactly one of cluster_queue (", Quote(request.cluster_queue()),
        ") and local_queue (", Quote(request.local_queue()), ")"));
  }
  if (request.limit() < 0 || request.limit() > kPendingWorkloadsMaxLimit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "limit: Invalid value: ", request.limit(),
        ": must be between 0 (Kueue's default, ", kPendingWorkloadsDefaultLimit,
        ") and ", kPendingWorkloadsMaxLimit));
  }
  if (request.offset() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "offset: Invalid value: ", request.offset(), ": must be 0 or more"));
  }
  return absl::OkStatus();
}

// Every object of `kind`, in all namespaces.
absl::StatusOr<std::vector<api::KueueObject>> All(KueueApi& api,
                                                  absl::string_view kind) {
  api::ListKueueObjectsRequest list;
  list.set_kind(std::string(kind));
  list.set_all_namespaces(true);
  JOBSET_ASSIGN_OR_RETURN(api::ListKueueObjectsResponse response,
                          api.List(list));
  return std::vector<api::KueueObject>(
      std::make_move_iterator(response.mutable_items()->begin()),
      std::make_move_iterator(response.mutable_items()->end()));
}

api::PendingWorkload ToApi(const queues::PendingPosition& p) {
  const api::Workload& wl = *p.workload;
  api::PendingWorkload out;
  api::ObjectMeta* meta = out.mutable_metadata();
  meta->set_name(wl.metadata().name());
  meta->set_namespace_(wl.metadata().namespace_());
  meta->set_uid(wl.metadata().uid());
  *meta->mutable_labels() = wl.metadata().labels();
  if (wl.metadata().has_creation_timestamp()) {
    *meta->mutable_creation_timestamp() = wl.metadata().creation_timestamp();
  }
  out.set_priority(wl.spec().priority());
  out.set_local_queue_name(wl.spec().queue_name());
  out.set_position_in_cluster_queue(p.position_in_cluster_queue);
  out.set_position_in_local_queue(p.position_in_local_queue);
  for (const api::Condition& c : wl.status().conditions()) {
    if (c.type() != "QuotaReserved") continue;
    out.set_reason(c.reason());
    out.set_message(c.message());
  }
  return out;
}

}  // namespace

absl::StatusOr<api::PendingWorkloadsSummary> ListPendingWorkloads(
    KueueApi& api, const api::ListPendingWorkloadsRequest& request) {
  JOBSET_RETURN_IF_ERROR(CheckRequest(request));
  const std::string ns =
      request.namespace_().empty() ? "default" : request.namespace_();
  std::string cluster_queue = request.cluster_queue();
  api::KueueObjectRef ref;
  if (!cluster_queue.empty()) {
    ref.set_kind("ClusterQueue");
    ref.set_name(cluster_queue);
    JOBSET_RETURN_IF_ERROR(api.Get(ref).status());
  } else {
    ref.set_kind("LocalQueue");
    ref.set_namespace_(ns);
    ref.set_name(request.local_queue());
    JOBSET_ASSIGN_OR_RETURN(api::KueueObject lq, api.Get(ref));
    cluster_queue = lq.local_queue().spec().cluster_queue();
    // Pointing at no ClusterQueue, its Workloads wait in none.
    if (cluster_queue.empty()) return api::PendingWorkloadsSummary();
    ref.Clear();
    ref.set_kind("ClusterQueue");
    ref.set_name(cluster_queue);
    if (absl::Status s = api.Get(ref).status(); !s.ok()) {
      if (absl::IsNotFound(s)) return api::PendingWorkloadsSummary();
      return s;
    }
  }
  JOBSET_ASSIGN_OR_RETURN(std::vector<api::KueueObject> local_queues,
                          All(api, "LocalQueue"));
  absl::flat_hash_map<std::string, std::string> points_at;
  for (const api::KueueObject& o : local_queues) {
    const api::LocalQueue& lq = o.local_queue();
    points_at[absl::StrCat(lq.metadata().namespace_(), "/",
                           lq.metadata().name())] = lq.spec().cluster_queue();
  }
  JOBSET_ASSIGN_OR_RETURN(std::vector<api::KueueObject> objects,
                          All(api, "Workload"));
  std::vector<api::Workload> workloads;
  workloads.reserve(objects.size());
  for (api::KueueObject& o : objects) {
    workloads.push_back(std::move(*o.mutable_workload()));
  }
  const int64_t limit =
      request.limit() == 0 ? kPendingWorkloadsDefaultLimit : request.limit();
  int64_t skipped = 0;
  api::PendingWorkloadsSummary summary;
  for (const queues::PendingPosition& p :
       queues::PendingInClusterQueue(cluster_queue, workloads, points_at)) {
    if (!request.local_queue().empty() &&
        (p.workload->metadata().namespace_() != ns ||
         p.workload->spec().queue_name() != request.local_queue())) {
      continue;
    }
    if (skipped++ < request.offset()) continue;
    if (summary.items_size() >= limit) break;
    api::PendingWorkload* item = summary.add_items();
    *item = ToApi(p);
    item->set_cluster_queue(cluster_queue);
  }
  return summary;
}

}  // namespace jobset::scheduler
