// describe's reads of how Kueue holds a JobSet or a Workload (rendered by
// cli/describe_kueue.cc): the Workload by its kueue.x-k8s.io/job-uid label,
// and its place among its LocalQueue's pending Workloads. A read that fails
// is recorded, not returned: describe prints what it could read.
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/cmd/kind_calls.h"

namespace jobset::cli {
namespace {

constexpr char kQueueNameLabel[] = "kueue.x-k8s.io/queue-name";
constexpr char kJobUidLabel[] = "kueue.x-k8s.io/job-uid";
// A page of ListPendingWorkloads: Kueue's default limit.
constexpr int64_t kPendingPage = 1000;
// At most a million pending Workloads are searched, so that a server that
// ignored the offset could not keep describe paging.
constexpr int kMaxPendingPages = 1000;

}  // namespace

PendingPosition FindPendingPosition(Client& client,
                                    const api::Workload& workload) {
  PendingPosition position;
  if (!WaitsForQuota(workload)) return position;
  position.looked_up = true;
  if (workload.spec().queue_name().empty()) {
    position.error = absl::FailedPreconditionError(
        "the Workload names no LocalQueue (spec.queueName)");
    return position;
  }
  api::ListPendingWorkloadsRequest request;
  request.set_local_queue(workload.spec().queue_name());
  request.set_namespace_(workload.metadata().namespace_());
  request.set_limit(kPendingPage);
  for (int page = 0; page < kMaxPendingPages; ++page) {
    request.set_offset(page * kPendingPage);
    absl::StatusOr<api::PendingWorkloadsSummary> listed =
        client.ListPendingWorkloads(request);
    if (!listed.ok()) {
      position.error = listed.status();
      return position;
    }
    for (const api::PendingWorkload& item : listed->items()) {
      if (item.metadata().name() == workload.metadata().name()) {
        position.entry = item;
        return position;
      }
    }
    if (listed->items_size() < kPendingPage) break;
  }
  return position;
}

KueueLookup LookUpKueue(Client& client, const api::JobSet& jobset) {
  KueueLookup lookup;
  const api::ObjectMeta& meta = jobset.metadata();
  if (auto it = meta.labels().find(kQueueNameLabel);
      it != meta.labels().end()) {
    lookup.queue_name = it->second;
  }
  if (meta.uid().empty()) return lookup;  // Nothing to select by.
  api::ListKueueObjectsRequest request;
  request.set_kind("Workload");
  request.set_namespace_(meta.namespace_());
  request.set_label_selector(absl::StrCat(kJobUidLabel, "=", meta.uid()));
  absl::StatusOr<api::ListKueueObjectsResponse> listed =
      client.ListKueueObjects(request);
  if (!listed.ok()) {
    lookup.workload_error = listed.status();
    return lookup;
  }
  for (const api::KueueObject& object : listed->items()) {
    if (object.has_workload()) {
      lookup.workload = object.workload();
      break;
    }
  }
  if (lookup.workload.has_value()) {
    lookup.position = FindPendingPosition(client, *lookup.workload);
  }
  return lookup;
}

}  // namespace jobset::cli
