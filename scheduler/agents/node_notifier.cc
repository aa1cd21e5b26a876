#include "scheduler/agents/node_notifier.h"

#include <utility>

namespace jobset::scheduler {

void NodeNotifier::Attach(NodeSink* sink) {
  absl::MutexLock lock(&mu_);
  sink_ = sink;
}

void NodeNotifier::Detach() {
  absl::MutexLock delivering(&deliver_mu_);
  absl::MutexLock lock(&mu_);
  sink_ = nullptr;
  queue_.clear();
}

void NodeNotifier::SetNode(NodeInfo node) { Queue(std::move(node)); }

void NodeNotifier::ReportPod(PodReport report) { Queue(std::move(report)); }

void NodeNotifier::LoseNode(std::string name, std::string reason,
                            std::string message) {
  Queue(Loss{std::move(name), std::move(reason), std::move(message)});
}

void NodeNotifier::Queue(Call call) {
  absl::MutexLock lock(&mu_);
  if (sink_ != nullptr) queue_.push_back(std::move(call));
}

void NodeNotifier::Deliver() {
  absl::MutexLock delivering(&deliver_mu_);
  while (true) {
    std::deque<Call> batch;
    NodeSink* sink;
    {
      absl::MutexLock lock(&mu_);
      if (queue_.empty() || sink_ == nullptr) return;
      batch.swap(queue_);
      sink = sink_;
    }
    // Outside mu_, so that the hub may queue meanwhile; under deliver_mu_,
    // so that nobody else delivers (and overtakes this batch) meanwhile.
    for (Call& call : batch) {
      if (auto* node = std::get_if<NodeInfo>(&call)) {
        sink->SetNode(std::move(*node));
      } else if (auto* report = std::get_if<PodReport>(&call)) {
        sink->ReportPod(std::move(*report));
      } else {
        Loss& loss = std::get<Loss>(call);
        sink->LoseNode(std::move(loss.name), std::move(loss.reason),
                       std::move(loss.message));
      }
    }
  }
}

}  // namespace jobset::scheduler
