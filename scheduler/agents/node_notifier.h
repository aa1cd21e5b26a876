#ifndef JOBSET_SCHEDULER_AGENTS_NODE_NOTIFIER_H_
#define JOBSET_SCHEDULER_AGENTS_NODE_NOTIFIER_H_

#include <deque>
#include <string>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/controller/node_sink.h"

namespace jobset::scheduler {

class AgentHub;  // agent_hub.h

// What the hub tells the controller (its NodeSink), queued in the order the
// hub decides it and delivered in that order, with none of the hub's locks
// held. The hub queues under its lock (so the queue's order is the order of
// its state changes: a node's LoseNode and a reconnect's SetNode reach the
// sink in the order the hub saw them, and the sink's last word on a node is
// the hub's) and calls Deliver after releasing it.
//
// One delivery runs at a time: Deliver takes deliver_mu_ for the whole of a
// batch, so the sink is called from one thread at a time, in queue order;
// when Deliver returns, everything queued before the call has reached the
// sink (by this thread or one that was delivering). The sink must not call
// back into the hub's methods that notify (Connect, OnMessage, ...), nor
// Deliver or Detach. Thread-safe.
class NodeNotifier {
 public:
  // Starts queueing for `sink` (the controller), which must outlive this
  // or a later Detach.
  void Attach(NodeSink* sink);
  // Drops what is queued and stops queueing; waits for a delivery in
  // progress, so that the sink is not called once this returns.
  void Detach();

  // Queue a call of the sink's method of the same name (nothing while
  // detached). Cheap; callable under the hub's lock.
  void SetNode(NodeInfo node);
  void ReportPod(PodReport report);
  void LoseNode(std::string name, std::string reason, std::string message);

  // Delivers everything queued, in order. Call with no lock of the hub held.
  void Deliver();

 private:
  friend class AgentHub;  // Names mu_ in its lock order.
  struct Loss {
    std::string name;
    std::string reason;
    std::string message;
  };
  using Call = std::variant<NodeInfo, PodReport, Loss>;
  void Queue(Call call);

  // Held for a whole delivery (the sink's calls); taken before mu_.
  absl::Mutex deliver_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  absl::Mutex mu_ ABSL_ACQUIRED_AFTER(deliver_mu_);
  NodeSink* sink_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::deque<Call> queue_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_NODE_NOTIFIER_H_
