#include "scheduler/controller/placement_caches.h"

#include <utility>

#include "common/status_macros.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace jobset::scheduler {

void SnapshotCache::Forget() {
  last_.reset();
  ++generation_;
}

placement::ClusterSnapshotBuilder SnapshotCache::TakeBuilder(
    const std::map<std::string, NodeInfo>& nodes) {
  lent_generation_ = generation_;
  if (last_.has_value()) {
    placement::ClusterSnapshotBuilder builder(*std::move(last_));
    last_.reset();
    return builder;
  }
  placement::ClusterSnapshotBuilder builder(nodes.size());
  node_of_.clear();
  node_of_.reserve(nodes.size());
  node_at_.clear();
  node_at_.reserve(nodes.size());
  for (const auto& [name, node] : nodes) {
    node_of_[name] = node_at_.size();
    node_at_.push_back(&node);
    placement::NodeRecord r;
    r.name = name;
    r.labels = node.labels;
    r.taints = node.taints;
    r.allocatable = node.allocatable;
    r.ready = node.ready;
    r.cordoned = node.cordoned;
    builder.AddNode(std::move(r));
  }
  return builder;
}

void SnapshotCache::Recycle(
    absl::StatusOr<placement::ClusterSnapshot> snapshot) {
  if (!snapshot.ok() || lent_generation_ != generation_) return;
  last_ = *std::move(snapshot);
}

std::optional<size_t> SnapshotCache::NodeOf(absl::string_view name) const {
  auto it = node_of_.find(name);
  if (it == node_of_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<std::shared_ptr<const placement::PodRequirements>>
RequirementsCache::Get(const api::Job& job) {
  auto it = by_job_.find(job.metadata().uid());
  if (it != by_job_.end()) return it->second;
  const api::PodSpec& spec = job.spec().template_().spec();
  std::string key;
  {
    google::protobuf::io::StringOutputStream out(&key);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    spec.SerializeToCodedStream(&coded);
  }
  std::weak_ptr<const placement::PodRequirements>& by_spec = by_spec_[key];
  std::shared_ptr<const placement::PodRequirements> shared = by_spec.lock();
  if (shared == nullptr) {
    JOBSET_ASSIGN_OR_RETURN(placement::PodRequirements r,
                            placement::RequirementsFromPodSpec(spec));
    shared = std::make_shared<const placement::PodRequirements>(std::move(r));
    by_spec = shared;
    // Specs no Job uses any more go once they are most of the entries.
    if (by_spec_.size() > 2 * swept_specs_ + 16) {
      absl::erase_if(by_spec_,
                     [](const auto& entry) { return entry.second.expired(); });
      swept_specs_ = by_spec_.size();
    }
  }
  by_job_[job.metadata().uid()] = shared;
  return shared;
}

}  // namespace jobset::scheduler
