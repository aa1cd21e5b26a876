#include "scheduler/queues/queue_order.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/quota.h"

namespace jobset::scheduler::queues {
namespace {

void CollectQueues(const QuotaTree& tree, QuotaTree::NodeId node,
                   std::vector<std::string>& out) {
  for (QuotaTree::NodeId cq : tree.ChildClusterQueues(node)) {
    out.push_back(tree.Name(cq));
  }
  for (QuotaTree::NodeId child : tree.ChildCohorts(node)) {
    CollectQueues(tree, child, out);
  }
}

// Whether workload `a` of `queue` goes before `b`: the sticky one first,
// then QueueOrderLess.
bool HeapLess(const PendingQueue& queue, size_t a, size_t b) {
  const Workload& wa = *queue.workloads[a].workload;
  const Workload& wb = *queue.workloads[b].workload;
  const bool sticky_a = !queue.sticky_uid.empty() && wa.uid == queue.sticky_uid;
  const bool sticky_b = !queue.sticky_uid.empty() && wb.uid == queue.sticky_uid;
  if (sticky_a != sticky_b) return sticky_a;
  return QueueOrderLess(wa, wb);
}

bool Offered(const PendingWorkload& p, absl::Time now) {
  return !p.parked && p.requeue_at <= now;
}

}  // namespace

bool QueueOrderLess(const Workload& a, const Workload& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.times.queue_order != b.times.queue_order) {
    return a.times.queue_order < b.times.queue_order;
  }
  return a.uid < b.uid;
}

std::vector<size_t> HeapOrder(const PendingQueue& queue, absl::Time now) {
  std::vector<size_t> order;
  for (size_t i = 0; i < queue.workloads.size(); ++i) {
    if (Offered(queue.workloads[i], now)) order.push_back(i);
  }
  std::sort(order.begin(), order.end(),
            [&queue](size_t a, size_t b) { return HeapLess(queue, a, b); });
  return order;
}

std::optional<size_t> Head(const PendingQueue& queue, absl::Time now) {
  // The least in heap order, without ordering the rest: each cycle asks
  // every ClusterQueue for its head.
  std::optional<size_t> head;
  for (size_t i = 0; i < queue.workloads.size(); ++i) {
    if (!Offered(queue.workloads[i], now)) continue;
    if (!head.has_value() || HeapLess(queue, i, *head)) head = i;
  }
  return head;
}

Requeue RequeueAfter(QueueingStrategy strategy, RequeueReason reason) {
  if (strategy == QueueingStrategy::kStrictFIFO) {
    return reason == RequeueReason::kNamespaceMismatch ? Requeue::kPark
                                                       : Requeue::kHeap;
  }
  switch (reason) {
    case RequeueReason::kFailedAfterNomination:
    case RequeueReason::kPendingPreemption:
      return Requeue::kHeap;
    default:
      return Requeue::kPark;
  }
}

bool BecomesSticky(QueueingStrategy strategy, RequeueReason reason) {
  return strategy == QueueingStrategy::kBestEffortFIFO &&
         reason == RequeueReason::kPendingPreemption;
}

std::vector<std::string> QueuesToUnpark(const QuotaTree& tree,
                                        absl::string_view cq) {
  std::vector<std::string> out;
  QuotaTree::NodeId node = tree.ClusterQueueNode(cq);
  if (node == QuotaTree::kNoNode) return out;
  if (tree.Parent(node) == QuotaTree::kNoNode) {
    out.push_back(std::string(cq));
    return out;
  }
  while (tree.Parent(node) != QuotaTree::kNoNode) node = tree.Parent(node);
  CollectQueues(tree, node, out);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace jobset::scheduler::queues
