#include "scheduler/agents/pod_progress_table.h"

#include <utility>

namespace jobset::scheduler {
namespace {

absl::Duration FromProto(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

}  // namespace

void PodProgressTable::Update(const std::string& node,
                              const std::string& pod_uid,
                              int32_t in_place_restart_attempt,
                              const api::PodProgress& progress,
                              absl::Time received_at) {
  PodProgressEntry entry;
  entry.node = node;
  entry.in_place_restart_attempt = in_place_restart_attempt;
  if (progress.has_step()) entry.step = progress.step();
  entry.checkpoint_step = progress.checkpoint_step();
  entry.steps_per_second = progress.steps_per_second();
  entry.since_last_advance = FromProto(progress.since_last_advance());
  entry.rejected_lines = progress.rejected_lines();
  entry.received_at = received_at;
  absl::MutexLock lock(&mu_);
  auto [it, added] = pods_.try_emplace(pod_uid);
  if (!added && it->second.node != node) {
    // The pod's record moved (a report of its new node): the old node's
    // index drops it.
    auto old = by_node_.find(it->second.node);
    if (old != by_node_.end()) {
      old->second.erase(pod_uid);
      if (old->second.empty()) by_node_.erase(old);
    }
  }
  it->second = std::move(entry);
  by_node_[node].insert(pod_uid);
}

void PodProgressTable::Forget(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(pod_uid);
  if (it == pods_.end()) return;
  auto node = by_node_.find(it->second.node);
  if (node != by_node_.end()) {
    node->second.erase(pod_uid);
    if (node->second.empty()) by_node_.erase(node);
  }
  pods_.erase(it);
}

void PodProgressTable::ForgetNode(const std::string& node) {
  absl::MutexLock lock(&mu_);
  auto it = by_node_.find(node);
  if (it == by_node_.end()) return;
  for (const std::string& uid : it->second) pods_.erase(uid);
  by_node_.erase(it);
}

std::optional<PodProgressEntry> PodProgressTable::Get(
    const std::string& pod_uid) const {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(pod_uid);
  if (it == pods_.end()) return std::nullopt;
  return it->second;
}

absl::flat_hash_map<std::string, PodProgressEntry> PodProgressTable::Snapshot()
    const {
  absl::MutexLock lock(&mu_);
  return pods_;
}

size_t PodProgressTable::size() const {
  absl::MutexLock lock(&mu_);
  return pods_.size();
}

std::optional<resilience::PodProgress> PodProgressTable::Of(
    const std::string& pod_uid) const {
  std::optional<PodProgressEntry> e = Get(pod_uid);
  if (!e.has_value()) return std::nullopt;
  resilience::PodProgress p;
  p.step = e->step;
  if (e->checkpoint_step > 0) p.checkpoint_step = e->checkpoint_step;
  if (e->step.has_value()) {
    p.advanced_at = e->AdvancedAt();
    p.steps_per_second = e->steps_per_second;
  }
  p.reported_at = e->received_at;
  return p;
}

}  // namespace jobset::scheduler
