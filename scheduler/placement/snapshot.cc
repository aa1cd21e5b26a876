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

absl::Status CheckNonNegative(const HostRecord& host) {
  auto negative = [&](absl::string_view resource) {
    return absl::InvalidArgumentError(absl::StrCat(
        "host ", host.name, ": allocatable ", resource, " is negative"));
  };
  if (host.allocatable.cpu_millis < 0) return negative(kCpu);
  if (host.allocatable.memory_bytes < 0) return negative(kMemory);
  for (const auto& [name, amount] : host.allocatable.extended) {
    if (amount < 0) return negative(name);
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<ClusterSnapshot::HostId> ClusterSnapshot::FindHost(
    absl::string_view name) const {
  auto it = host_by_name_.find(name);
  if (it == host_by_name_.end()) return std::nullopt;
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
  auto it = job_by_key_.find(job_key);
  if (it == job_by_key_.end()) return std::nullopt;
  return it->second;
}

ClusterSnapshotBuilder::ClusterSnapshotBuilder(size_t expected_hosts) {
  hosts_.reserve(expected_hosts);
  Reset();
}

ClusterSnapshotBuilder::ClusterSnapshotBuilder(ClusterSnapshot previous)
    : base_(std::move(previous)) {
  Reset();
  for (HostRecord& host : base_->hosts_) {
    if (HasUsage(host.allocated)) host.allocated = {};
    host.used_host_ports.clear();
    host.jobs.clear();
  }
}

void ClusterSnapshotBuilder::Reset() {
  hosts_.clear();
  holds_.clear();
  sorted_ = true;
  index_keys_.clear();
  for (absl::string_view key : kDefaultTopologyKeys) index_keys_.emplace(key);
}

ClusterSnapshotBuilder& ClusterSnapshotBuilder::IndexLabel(std::string key) {
  index_keys_.insert(std::move(key));
  return *this;
}

ClusterSnapshotBuilder& ClusterSnapshotBuilder::AddHost(HostRecord host) {
  if (!hosts_.empty() && !(hosts_.back().name < host.name)) sorted_ = false;
  hosts_.push_back(std::move(host));
  return *this;
}

ClusterSnapshotBuilder& ClusterSnapshotBuilder::AddHold(DomainHold hold) {
  holds_.push_back(std::move(hold));
  return *this;
}

namespace {

// Finds the Topology of a label key. Hosts mostly carry the same few keys,
// so a short list of recent keys saves hashing long keys for every host.
class TopologyFinder {
 public:
  // `topologies` holds an empty Topology for every indexed key.
  explicit TopologyFinder(
      absl::flat_hash_map<std::string, ClusterSnapshot::Topology>* topologies)
      : topologies_(topologies) {}

  // Records the domain of key=value as host h's, adding it if new.
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
      entry->last_value = value;  // the host's string: stable while building
      entry->last_domain = it->second;
    }
    topology.domain_of_host[h] = entry->last_domain;
  }

 private:
  static constexpr size_t kRecent = 8;
  // Views into the hosts' label strings, which stay put while building.
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

// Writes the host's allocatable amount of each resource into `row`.
void FillCapacity(const HostRecord& host,
                  const std::vector<std::string>& resource_names,
                  int64_t* row) {
  std::fill(row, row + resource_names.size(), 0);
  AddResources(host.allocatable, 1, resource_names, row);
  for (size_t r = 2; r < resource_names.size(); ++r) {
    // A host that does not count its pods takes any number of them.
    if (resource_names[r] == kPods &&
        !host.allocatable.extended.contains(kPods)) {
      row[r] = kUnlimitedPods;
    }
  }
}

// Fills host_storage and each domain's hosts from domain_of_host.
void LayOut(ClusterSnapshot::Topology* topology) {
  std::vector<uint32_t> offsets(topology->domains.size() + 1, 0);
  for (int32_t d : topology->domain_of_host) {
    if (d >= 0) ++offsets[d + 1];
  }
  for (size_t d = 0; d < topology->domains.size(); ++d) {
    offsets[d + 1] += offsets[d];
  }
  topology->host_storage.resize(offsets.back());
  std::vector<uint32_t> next(offsets.begin(), offsets.end() - 1);
  const int num_hosts = static_cast<int>(topology->domain_of_host.size());
  for (int h = 0; h < num_hosts; ++h) {
    const int32_t d = topology->domain_of_host[h];
    if (d >= 0) topology->host_storage[next[d]++] = h;
  }
  for (size_t d = 0; d < topology->domains.size(); ++d) {
    topology->domains[d].hosts =
        absl::MakeConstSpan(topology->host_storage)
            .subspan(offsets[d], offsets[d + 1] - offsets[d]);
  }
}

}  // namespace

ClusterSnapshot::Topology ClusterSnapshot::ScanTopology(
    absl::string_view key) const {
  Topology topology;
  topology.domain_of_host.assign(hosts_.size(), -1);
  for (size_t h = 0; h < hosts_.size(); ++h) {
    auto label = hosts_[h].labels.find(key);
    if (label == hosts_[h].labels.end()) continue;
    auto [it, inserted] = topology.domain_by_value.try_emplace(
        label->second, static_cast<int32_t>(topology.domains.size()));
    if (inserted) topology.domains.push_back(Domain{label->second, {}, {}});
    topology.domain_of_host[h] = it->second;
  }
  LayOut(&topology);
  return topology;
}

bool ClusterSnapshotBuilder::UsageFits(const ClusterSnapshot& s) {
  for (const HostRecord& host : s.hosts_) {
    for (const auto& [name, amount] : host.allocated.extended) {
      if (!s.FindResource(name).has_value()) return false;
    }
  }
  return true;
}

absl::Status ClusterSnapshotBuilder::BuildIndexes(ClusterSnapshot& s) {
  // Name order makes every later decision independent of the order in which
  // the caller happened to list its hosts.
  std::vector<HostRecord>& hosts = s.hosts_;
  if (!sorted_) {
    // Sort copies of the names (short names sit inline, so the sort stays
    // in one array), then move each record once.
    std::vector<std::pair<std::string, int32_t>> order;
    order.reserve(hosts.size());
    for (size_t i = 0; i < hosts.size(); ++i) {
      order.emplace_back(hosts[i].name, static_cast<int32_t>(i));
    }
    std::sort(order.begin(), order.end());
    std::vector<HostRecord> sorted;
    sorted.reserve(hosts.size());
    for (const auto& [name, i] : order) sorted.push_back(std::move(hosts[i]));
    hosts.swap(sorted);
  }

  // Resources: cpu, memory, then extended names in order. Clusters have few
  // resource names: a linear search beats hashing.
  std::vector<std::string> extended;
  for (const HostRecord& host : hosts) {
    for (const Resources* resources : {&host.allocatable, &host.allocated}) {
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

  const int num_hosts = static_cast<int>(hosts.size());
  s.host_by_name_.clear();
  s.host_by_name_.reserve(num_hosts);
  s.topologies_.clear();
  for (const std::string& key : index_keys_) {
    s.topologies_[key].domain_of_host.assign(num_hosts, -1);
  }
  s.indexed_keys_ = index_keys_;
  TopologyFinder topologies(&s.topologies_);
  for (int h = 0; h < num_hosts; ++h) {
    const HostRecord& host = hosts[h];
    if (host.name.empty()) {
      return absl::InvalidArgumentError("host with an empty name");
    }
    if (h > 0 && hosts[h - 1].name == host.name) {
      return absl::InvalidArgumentError(
          absl::StrCat("duplicate host ", host.name));
    }
    JOBSET_RETURN_IF_ERROR(CheckNonNegative(host));
    s.host_by_name_.emplace(host.name, h);
    for (const auto& [key, value] : host.labels) topologies.Add(key, value, h);
  }
  const int num_resources = s.num_resources();
  s.capacity_.resize(static_cast<size_t>(num_hosts) * num_resources);
  s.schedulable_.clear();
  s.schedulable_.reserve(num_hosts);
  for (int h = 0; h < num_hosts; ++h) {
    const HostRecord& host = hosts[h];
    FillCapacity(host, s.resource_names_,
                 &s.capacity_[static_cast<size_t>(h) * num_resources]);
    const bool hard_taint =
        std::any_of(host.taints.begin(), host.taints.end(), [](const Taint& t) {
          return t.effect != TaintEffect::kPreferNoSchedule;
        });
    s.schedulable_.push_back(host.ready && !host.cordoned && !hard_taint);
  }
  // Lay out the hosts of each key's domains; drop keys no host carries.
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
  const int num_hosts = s.num_hosts();
  const int num_resources = s.num_resources();
  s.free_ = s.capacity_;
  const std::optional<int> pods = s.FindResource(kPods);
  s.plain_.clear();
  s.plain_.reserve(num_hosts);
  s.job_keys_.clear();
  s.job_by_key_.clear();
  s.jobs_on_host_.clear();
  s.job_offsets_.clear();
  s.job_offsets_.reserve(num_hosts + 1);
  s.job_offsets_.push_back(0);
  auto intern = [&s](const std::string& job_key) {
    auto [it, inserted] = s.job_by_key_.try_emplace(
        job_key, static_cast<ClusterSnapshot::JobId>(s.job_keys_.size()));
    if (inserted) s.job_keys_.push_back(job_key);
    return it->second;
  };
  for (int h = 0; h < num_hosts; ++h) {
    HostRecord& host = s.hosts_[h];
    if (HasUsage(host.allocated)) {
      int64_t* row = &s.free_[static_cast<size_t>(h) * num_resources];
      const int64_t pod_room = pods.has_value() ? row[*pods] : 0;
      AddResources(host.allocated, -1, s.resource_names_, row);
      if (pod_room == kUnlimitedPods) row[*pods] = kUnlimitedPods;
    }
    for (const HostJob& job : host.jobs) {
      s.jobs_on_host_.push_back({intern(job.job_key), job.priority});
    }
    s.job_offsets_.push_back(static_cast<uint32_t>(s.jobs_on_host_.size()));
    std::sort(host.used_host_ports.begin(), host.used_host_ports.end());
    s.plain_.push_back(s.schedulable_[h] && host.used_host_ports.empty());
  }

  // Holds: on their domain, and on every host of the domain.
  for (auto& [key, topology] : s.topologies_) {
    for (ClusterSnapshot::Domain& domain : topology.domains) {
      domain.holds.clear();
    }
  }
  s.num_holds_ = 0;
  std::vector<std::pair<ClusterSnapshot::HostId, ClusterSnapshot::Holder>>
      host_holds;
  for (const DomainHold& hold : holds_) {
    auto topology = s.topologies_.find(hold.topology_key);
    if (topology == s.topologies_.end()) continue;
    auto domain = topology->second.domain_by_value.find(hold.domain);
    if (domain == topology->second.domain_by_value.end()) continue;
    const ClusterSnapshot::Holder holder{intern(hold.job_key), hold.priority};
    ClusterSnapshot::Domain& d = topology->second.domains[domain->second];
    d.holds.push_back(holder);
    for (ClusterSnapshot::HostId h : d.hosts) host_holds.push_back({h, holder});
    ++s.num_holds_;
  }
  std::stable_sort(
      host_holds.begin(), host_holds.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  s.hold_offsets_.assign(num_hosts + 1, 0);
  for (const auto& [h, holder] : host_holds) ++s.hold_offsets_[h + 1];
  for (int h = 0; h < num_hosts; ++h) {
    s.hold_offsets_[h + 1] += s.hold_offsets_[h];
  }
  s.holds_on_host_.clear();
  s.holds_on_host_.reserve(host_holds.size());
  for (const auto& [h, holder] : host_holds) s.holds_on_host_.push_back(holder);
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
    s.hosts_ = base_.has_value() ? std::move(base_->hosts_) : std::move(hosts_);
    JOBSET_RETURN_IF_ERROR(BuildIndexes(s));
  }
  BuildUsage(s);
  base_.reset();
  Reset();
  return s;
}

}  // namespace jobset::scheduler::placement
