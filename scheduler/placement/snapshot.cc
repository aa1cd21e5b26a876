#include "scheduler/placement/snapshot.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace jobset::scheduler::placement {
namespace {

constexpr int64_t kUnlimitedPods = int64_t{1} << 40;
bool HasUsage(const Resources& r) {
  return r.cpu_millis != 0 || r.memory_bytes != 0 || !r.extended.empty();
}

absl::Status CheckNonNegative(const NodeRecord& node) {
  auto negative = [&](absl::string_view resource) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node ", node.name, ": allocatable ", resource, " is negative"));
  };
  if (node.allocatable.cpu_millis < 0) return negative(kCpu);
  if (node.allocatable.memory_bytes < 0) return negative(kMemory);
  for (const auto& [name, amount] : node.allocatable.extended) {
    if (amount < 0) return negative(name);
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<ClusterSnapshot::NodeId> ClusterSnapshot::FindNode(
    absl::string_view name) const {
  auto it = node_by_name_.find(name);
  if (it == node_by_name_.end()) return std::nullopt;
  return it->second;
}

const ClusterSnapshot::Topology* ClusterSnapshot::FindTopology(
    absl::string_view key) const {
  auto it = topologies_.find(key);
  return it == topologies_.end() ? nullptr : &it->second;
}

std::optional<int> ClusterSnapshot::FindResource(absl::string_view name) const {
  if (name == kCpu) return 0;
  if (name == kMemory) return 1;
  auto it = std::lower_bound(resource_names_.begin() + 2, resource_names_.end(),
                             name);
  if (it == resource_names_.end() || *it != name) return std::nullopt;
  return static_cast<int>(it - resource_names_.begin());
}

std::optional<ClusterSnapshot::JobId> ClusterSnapshot::FindJob(
    absl::string_view job_key) const {
  auto it = holders_.job_by_key.find(job_key);
  if (it == holders_.job_by_key.end()) return std::nullopt;
  return it->second;
}

ClusterSnapshotBuilder::ClusterSnapshotBuilder(size_t expected_nodes) {
  nodes_.reserve(expected_nodes);
  Reset();
}

ClusterSnapshotBuilder::ClusterSnapshotBuilder(ClusterSnapshot previous)
    : base_(std::move(previous)) {
  Reset();
  base_->holds_.clear();
  for (NodeRecord& node : base_->nodes_) {
    if (HasUsage(node.allocated)) node.allocated = {};
    node.used_host_ports.clear();
    node.jobs.clear();
  }
}

ClusterSnapshotBuilder ClusterSnapshotBuilder::Adding(
    ClusterSnapshot previous) {
  ClusterSnapshotBuilder builder(1);
  builder.holds_ = std::move(previous.holds_);
  builder.base_ = std::move(previous);
  return builder;
}

void ClusterSnapshotBuilder::Reset() {
  nodes_.clear();
  holds_.clear();
  sorted_ = true;
  index_keys_.clear();
  for (absl::string_view key : kDefaultTopologyKeys) index_keys_.emplace(key);
}

ClusterSnapshotBuilder& ClusterSnapshotBuilder::IndexLabel(std::string key) {
  index_keys_.insert(std::move(key));
  return *this;
}

ClusterSnapshotBuilder& ClusterSnapshotBuilder::AddNode(NodeRecord node) {
  if (!nodes_.empty() && !(nodes_.back().name < node.name)) sorted_ = false;
  nodes_.push_back(std::move(node));
  return *this;
}

ClusterSnapshotBuilder& ClusterSnapshotBuilder::AddHold(DomainHold hold) {
  holds_.push_back(std::move(hold));
  return *this;
}

namespace {

// Finds the Topology of a label key. Nodes mostly carry the same few keys,
// so a short list of recent keys saves hashing long keys for every node.
class TopologyFinder {
 public:
  // `topologies` holds an empty Topology for every indexed key.
  explicit TopologyFinder(
      absl::flat_hash_map<std::string, ClusterSnapshot::Topology>* topologies)
      : topologies_(topologies) {}

  // Records the domain of key=value as node h's, adding it if new.
  void Add(const std::string& key, const std::string& value, int h) {
    Entry* entry = nullptr;
    for (Entry& e : recent_) {
      if (e.key == key) {
        entry = &e;
        break;
      }
    }
    if (entry == nullptr) {
      auto it = topologies_->find(key);
      if (recent_.size() == kRecent) recent_.erase(recent_.begin());
      recent_.push_back(
          {key, it == topologies_->end() ? nullptr : &it->second, {}, -1});
      entry = &recent_.back();
    }
    if (entry->topology == nullptr) return;  // not indexed
    ClusterSnapshot::Topology& topology = *entry->topology;
    if (entry->last_domain < 0 || entry->last_value != value) {
      auto [it, inserted] = topology.domain_by_value.try_emplace(
          value, static_cast<int32_t>(topology.domains.size()));
      if (inserted) {
        topology.domains.push_back(ClusterSnapshot::Domain{value, {}, {}});
      }
      entry->last_value = value;  // the node's string: stable while building
      entry->last_domain = it->second;
    }
    topology.domain_of_node[h] = entry->last_domain;
  }

 private:
  static constexpr size_t kRecent = 8;
  // Views into the nodes' label strings, which stay put while building.
  struct Entry {
    absl::string_view key;
    ClusterSnapshot::Topology* topology;
    absl::string_view last_value;
    int32_t last_domain;
  };
  absl::flat_hash_map<std::string, ClusterSnapshot::Topology>* topologies_;
  std::vector<Entry> recent_;
};

// Adds `sign` times each amount of `resources` to `row`, a row of free_
// (every extended resource named is in resource_names).
void AddResources(const Resources& resources, int sign,
                  const std::vector<std::string>& resource_names,
                  int64_t* row) {
  row[0] += sign * resources.cpu_millis;
  row[1] += sign * resources.memory_bytes;
  // Both the map and resource_names are sorted: merge.
  size_t r = 2;
  for (const auto& [name, amount] : resources.extended) {
    while (r < resource_names.size() && resource_names[r] < name) ++r;
    row[r] += sign * amount;
  }
}

// Writes the node's allocatable amount of each resource into `row`.
void FillCapacity(const NodeRecord& node,
                  const std::vector<std::string>& resource_names,
                  int64_t* row) {
  std::fill(row, row + resource_names.size(), 0);
  AddResources(node.allocatable, 1, resource_names, row);
  for (size_t r = 2; r < resource_names.size(); ++r) {
    // A node that does not count its pods takes any number of them.
    if (resource_names[r] == kPods &&
        !node.allocatable.extended.contains(kPods)) {
      row[r] = kUnlimitedPods;
    }
  }
}

// Fills node_storage and each domain's nodes from domain_of_node.
void LayOut(ClusterSnapshot::Topology* topology) {
  std::vector<uint32_t> offsets(topology->domains.size() + 1, 0);
  for (int32_t d : topology->domain_of_node) {
    if (d >= 0) ++offsets[d + 1];
  }
  for (size_t d = 0; d < topology->domains.size(); ++d) {
    offsets[d + 1] += offsets[d];
  }
  topology->node_storage.resize(offsets.back());
  std::vector<uint32_t> next(offsets.begin(), offsets.end() - 1);
  const int num_nodes = static_cast<int>(topology->domain_of_node.size());
  for (int h = 0; h < num_nodes; ++h) {
    const int32_t d = topology->domain_of_node[h];
    if (d >= 0) topology->node_storage[next[d]++] = h;
  }
  for (size_t d = 0; d < topology->domains.size(); ++d) {
    topology->domains[d].nodes =
        absl::MakeConstSpan(topology->node_storage)
            .subspan(offsets[d], offsets[d + 1] - offsets[d]);
  }
}

}  // namespace

ClusterSnapshot::Topology ClusterSnapshot::ScanTopology(
    absl::string_view key) const {
  Topology topology;
  topology.domain_of_node.assign(nodes_.size(), -1);
  for (size_t h = 0; h < nodes_.size(); ++h) {
    auto label = nodes_[h].labels.find(key);
    if (label == nodes_[h].labels.end()) continue;
    auto [it, inserted] = topology.domain_by_value.try_emplace(
        label->second, static_cast<int32_t>(topology.domains.size()));
    if (inserted) topology.domains.push_back(Domain{label->second, {}, {}});
    topology.domain_of_node[h] = it->second;
  }
  LayOut(&topology);
  return topology;
}

bool ClusterSnapshotBuilder::UsageFits(const ClusterSnapshot& s) {
  for (const NodeRecord& node : s.nodes_) {
    for (const auto& [name, amount] : node.allocated.extended) {
      if (!s.FindResource(name).has_value()) return false;
    }
  }
  return true;
}

absl::Status ClusterSnapshotBuilder::BuildIndexes(ClusterSnapshot& s) {
  // Name order makes every later decision independent of the order in which
  // the caller happened to list its nodes.
  std::vector<NodeRecord>& nodes = s.nodes_;
  if (!sorted_) {
    // Sort copies of the names (short names sit inline, so the sort stays
    // in one array), then move each record once.
    std::vector<std::pair<std::string, int32_t>> order;
    order.reserve(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      order.emplace_back(nodes[i].name, static_cast<int32_t>(i));
    }
    std::sort(order.begin(), order.end());
    std::vector<NodeRecord> sorted;
    sorted.reserve(nodes.size());
    for (const auto& [name, i] : order) sorted.push_back(std::move(nodes[i]));
    nodes.swap(sorted);
  }

  // Resources: cpu, memory, then extended names in order. Clusters have few
  // resource names: a linear search beats hashing.
  std::vector<std::string> extended;
  for (const NodeRecord& node : nodes) {
    for (const Resources* resources : {&node.allocatable, &node.allocated}) {
      for (const auto& [name, amount] : resources->extended) {
        if (std::find(extended.begin(), extended.end(), name) ==
            extended.end()) {
          extended.push_back(name);
        }
      }
    }
  }
  std::sort(extended.begin(), extended.end());
  s.resource_names_ = {std::string(kCpu), std::string(kMemory)};
  s.resource_names_.insert(s.resource_names_.end(), extended.begin(),
                           extended.end());

  const int num_nodes = static_cast<int>(nodes.size());
  s.node_by_name_.clear();
  s.node_by_name_.reserve(num_nodes);
  s.topologies_.clear();
  for (const std::string& key : index_keys_) {
    s.topologies_[key].domain_of_node.assign(num_nodes, -1);
  }
  s.indexed_keys_ = index_keys_;
  TopologyFinder topologies(&s.topologies_);
  for (int h = 0; h < num_nodes; ++h) {
    const NodeRecord& node = nodes[h];
    if (node.name.empty()) {
      return absl::InvalidArgumentError("node with an empty name");
    }
    if (h > 0 && nodes[h - 1].name == node.name) {
      return absl::InvalidArgumentError(
          absl::StrCat("duplicate node ", node.name));
    }
    JOBSET_RETURN_IF_ERROR(CheckNonNegative(node));
    s.node_by_name_.emplace(node.name, h);
    for (const auto& [key, value] : node.labels) topologies.Add(key, value, h);
  }
  const int num_resources = s.num_resources();
  s.capacity_.resize(static_cast<size_t>(num_nodes) * num_resources);
  s.schedulable_.clear();
  s.schedulable_.reserve(num_nodes);
  for (int h = 0; h < num_nodes; ++h) {
    const NodeRecord& node = nodes[h];
    FillCapacity(node, s.resource_names_,
                 &s.capacity_[static_cast<size_t>(h) * num_resources]);
    const bool hard_taint =
        std::any_of(node.taints.begin(), node.taints.end(), [](const Taint& t) {
          return t.effect != TaintEffect::kPreferNoSchedule;
        });
    s.schedulable_.push_back(node.ready && !node.cordoned && !hard_taint);
  }
  // Lay out the nodes of each key's domains; drop keys no node carries.
  for (auto it = s.topologies_.begin(); it != s.topologies_.end();) {
    if (it->second.domains.empty()) {
      s.topologies_.erase(it++);
    } else {
      LayOut(&it->second);
      ++it;
    }
  }
  return absl::OkStatus();
}

void ClusterSnapshotBuilder::IndexMissingKeys(ClusterSnapshot& s) {
  for (const std::string& key : index_keys_) {
    if (!s.indexed_keys_.insert(key).second) continue;
    ClusterSnapshot::Topology topology = s.ScanTopology(key);
    if (!topology.domains.empty()) s.topologies_[key] = std::move(topology);
  }
}

void ClusterSnapshotBuilder::BuildUsage(ClusterSnapshot& s) {
  const int num_nodes = s.num_nodes();
  const int num_resources = s.num_resources();
  s.free_ = s.capacity_;
  const std::optional<int> pods = s.FindResource(kPods);
  s.plain_.clear();
  s.plain_.reserve(num_nodes);
  s.holders_.job_keys.clear();
  s.holders_.job_by_key.clear();
  s.holders_.jobs_on_node.clear();
  s.holders_.job_offsets.clear();
  s.holders_.job_offsets.reserve(num_nodes + 1);
  s.holders_.job_offsets.push_back(0);
  auto intern = [&s](const std::string& job_key) {
    auto [it, inserted] = s.holders_.job_by_key.try_emplace(
        job_key,
        static_cast<ClusterSnapshot::JobId>(s.holders_.job_keys.size()));
    if (inserted) s.holders_.job_keys.push_back(job_key);
    return it->second;
  };
  for (int h = 0; h < num_nodes; ++h) {
    NodeRecord& node = s.nodes_[h];
    if (HasUsage(node.allocated)) {
      int64_t* row = &s.free_[static_cast<size_t>(h) * num_resources];
      const int64_t pod_room = pods.has_value() ? row[*pods] : 0;
      AddResources(node.allocated, -1, s.resource_names_, row);
      if (pod_room == kUnlimitedPods) row[*pods] = kUnlimitedPods;
    }
    for (const NodeJob& job : node.jobs) {
      s.holders_.jobs_on_node.push_back({intern(job.job_key), job.priority});
    }
    s.holders_.job_offsets.push_back(
        static_cast<uint32_t>(s.holders_.jobs_on_node.size()));
    std::sort(node.used_host_ports.begin(), node.used_host_ports.end());
    s.plain_.push_back(s.schedulable_[h] && node.used_host_ports.empty());
  }

  // Holds: on their domain, and on every node of the domain.
  for (auto& [key, topology] : s.topologies_) {
    for (ClusterSnapshot::Domain& domain : topology.domains) {
      domain.holds.clear();
    }
  }
  s.holders_.num_holds = 0;
  std::vector<std::pair<ClusterSnapshot::NodeId, ClusterSnapshot::Holder>>
      node_holds;
  for (const DomainHold& hold : holds_) {
    auto topology = s.topologies_.find(hold.topology_key);
    if (topology == s.topologies_.end()) continue;
    auto domain = topology->second.domain_by_value.find(hold.domain);
    if (domain == topology->second.domain_by_value.end()) continue;
    const ClusterSnapshot::Holder holder{intern(hold.job_key), hold.priority};
    ClusterSnapshot::Domain& d = topology->second.domains[domain->second];
    d.holds.push_back(holder);
    for (ClusterSnapshot::NodeId h : d.nodes) node_holds.push_back({h, holder});
    ++s.holders_.num_holds;
  }
  std::stable_sort(
      node_holds.begin(), node_holds.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  s.holders_.hold_offsets.assign(num_nodes + 1, 0);
  for (const auto& [h, holder] : node_holds) ++s.holders_.hold_offsets[h + 1];
  for (int h = 0; h < num_nodes; ++h) {
    s.holders_.hold_offsets[h + 1] += s.holders_.hold_offsets[h];
  }
  s.holders_.holds_on_node.clear();
  s.holders_.holds_on_node.reserve(node_holds.size());
  for (const auto& [h, holder] : node_holds)
    s.holders_.holds_on_node.push_back(holder);
}

absl::StatusOr<ClusterSnapshot> ClusterSnapshotBuilder::Build() {
  for (const DomainHold& hold : holds_) {
    if (hold.topology_key.empty() || hold.domain.empty() ||
        hold.job_key.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hold of \"", hold.topology_key, "=", hold.domain, "\" by \"",
          hold.job_key, "\": topology key, domain and job key are required"));
    }
    index_keys_.insert(hold.topology_key);
  }
  ClusterSnapshot s;
  if (base_.has_value() && UsageFits(*base_)) {
    s = *std::move(base_);
    IndexMissingKeys(s);
  } else {
    s.nodes_ = base_.has_value() ? std::move(base_->nodes_) : std::move(nodes_);
    JOBSET_RETURN_IF_ERROR(BuildIndexes(s));
  }
  BuildUsage(s);
  s.holds_ = std::move(holds_);
  base_.reset();
  Reset();
  return s;
}

}  // namespace jobset::scheduler::placement
