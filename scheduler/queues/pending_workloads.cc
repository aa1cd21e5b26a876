#include "scheduler/queues/pending_workloads.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "scheduler/queues/api_objects.h"

namespace jobset::scheduler::queues {
namespace {

bool HasTrue(const api::Workload& wl, absl::string_view type) {
  for (const api::Condition& c : wl.status().conditions()) {
    if (c.type() == type) return c.status() == "True";
  }
  return false;
}

struct Entry {
  const api::Workload* workload;
  absl::Time queue_order;
};

}  // namespace

std::vector<PendingPosition> PendingInClusterQueue(
    absl::string_view cluster_queue, absl::Span<const api::Workload> workloads,
    const absl::flat_hash_map<std::string, std::string>& local_queues) {
  std::vector<Entry> entries;
  for (const api::Workload& wl : workloads) {
    if (HasTrue(wl, "Finished") || wl.status().has_admission()) continue;
    if (wl.spec().has_active() && !wl.spec().active()) continue;
    if (wl.spec().queue_name().empty()) continue;
    auto lq = local_queues.find(
        absl::StrCat(wl.metadata().namespace_(), "/", wl.spec().queue_name()));
    if (lq == local_queues.end() || lq->second != cluster_queue) continue;
    entries.push_back({&wl, QueueOrderTime(wl)});
  }
  // The heap's order (queue_order.h QueueOrderLess), on the stored fields.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    const int32_t pa = a.workload->spec().priority();
    const int32_t pb = b.workload->spec().priority();
    if (pa != pb) return pa > pb;
    if (a.queue_order != b.queue_order) return a.queue_order < b.queue_order;
    return a.workload->metadata().uid() < b.workload->metadata().uid();
  });
  std::vector<PendingPosition> out;
  out.reserve(entries.size());
  absl::flat_hash_map<std::string, int32_t> in_local_queue;
  for (const Entry& e : entries) {
    const api::Workload& wl = *e.workload;
    int32_t& lq_position = in_local_queue[absl::StrCat(
        wl.metadata().namespace_(), "/", wl.spec().queue_name())];
    out.push_back(
        {.workload = &wl,
         .position_in_cluster_queue = static_cast<int32_t>(out.size()),
         .position_in_local_queue = lq_position++});
  }
  return out;
}

}  // namespace jobset::scheduler::queues
