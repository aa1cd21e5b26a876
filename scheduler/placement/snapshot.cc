#include "scheduler/placement/snapshot.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace jobset::scheduler::placement {
namespace {

constexpr int64_t kUnlimitedPods = int64_t{1} << 40;

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

std::vector<HostRecord> ClusterSnapshot::ReleaseHosts() && {
  std::vector<HostRecord> hosts = std::move(hosts_);
  *this = ClusterSnapshot();
  return hosts;
}

ClusterSnapshotBuilder::ClusterSnapshotBuilder(size_t expected_hosts) {
  hosts_.reserve(expected_hosts);
  for (absl::string_view key : kDefaultTopologyKeys) {
    index_keys_.emplace(key);
  }
}

ClusterSnapshotBuilder& ClusterSnapshotBuilder::IndexLabel(std::string key) {
  index_keys_.insert(std::move(key));
  return *this;
}

ClusterSnapshotBuilder& ClusterSnapshotBuilder::AddHost(HostRecord host) {
  // Gather while the record is hot: name order, and resource names.
  if (!hosts_.empty() && !(hosts_.back().name < host.name)) sorted_ = false;
  for (const Resources* resources : {&host.allocatable, &host.allocated}) {
    for (const auto& [name, amount] : resources->extended) {
      // Clusters have few resource names: a linear search beats hashing.
      if (std::find(extended_.begin(), extended_.end(), name) ==
          extended_.end()) {
        extended_.push_back(name);
      }
    }
  }
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

// Writes allocatable minus allocated of each resource into `free`.
void FillFree(const HostRecord& host,
              const std::vector<std::string>& resource_names, int64_t* free) {
  free[0] = host.allocatable.cpu_millis - host.allocated.cpu_millis;
  free[1] = host.allocatable.memory_bytes - host.allocated.memory_bytes;
  for (size_t r = 2; r < resource_names.size(); ++r) free[r] = 0;
  // Both the host's maps and resource_names are sorted: merge.
  auto add = [&](const Resources& resources, int sign) {
    size_t r = 2;
    for (const auto& [name, amount] : resources.extended) {
      while (r < resource_names.size() && resource_names[r] < name) ++r;
      free[r] += sign * amount;
    }
  };
  add(host.allocatable, 1);
  add(host.allocated, -1);
  for (size_t r = 2; r < resource_names.size(); ++r) {
    // A host that does not count its pods takes any number of them.
    if (resource_names[r] == kPods &&
        !host.allocatable.extended.contains(kPods)) {
      free[r] = kUnlimitedPods;
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

absl::StatusOr<ClusterSnapshot> ClusterSnapshotBuilder::Build() {
  ClusterSnapshot s;
  // Name order makes every later decision independent of the order in which
  // the caller happened to list its hosts.
  if (!sorted_) {
    // Sort copies of the names (short names sit inline, so the sort stays
    // in one array), then move each record once.
    std::vector<std::pair<std::string, int32_t>> order;
    order.reserve(hosts_.size());
    for (size_t i = 0; i < hosts_.size(); ++i) {
      order.emplace_back(hosts_[i].name, static_cast<int32_t>(i));
    }
    std::sort(order.begin(), order.end());
    std::vector<HostRecord> sorted;
    sorted.reserve(hosts_.size());
    for (const auto& [name, i] : order) sorted.push_back(std::move(hosts_[i]));
    hosts_.swap(sorted);
  }
  for (const DomainHold& hold : holds_) {
    if (hold.topology_key.empty() || hold.domain.empty() ||
        hold.job_key.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hold of \"", hold.topology_key, "=", hold.domain, "\" by \"",
          hold.job_key, "\": topology key, domain and job key are required"));
    }
  }

  // Resources: cpu, memory, then extended names in order.
  s.resource_names_ = {std::string(kCpu), std::string(kMemory)};
  const size_t first_extended = s.resource_names_.size();
  s.resource_names_.insert(s.resource_names_.end(), extended_.begin(),
                           extended_.end());
  std::sort(s.resource_names_.begin() + first_extended,
            s.resource_names_.end());
  const int num_resources = static_cast<int>(s.resource_names_.size());

  // One pass over the hosts, so that each record is read once.
  const int num_hosts = static_cast<int>(hosts_.size());
  s.host_by_name_.reserve(num_hosts);
  s.free_.resize(static_cast<size_t>(num_hosts) * num_resources);
  s.plain_.reserve(num_hosts);
  s.job_offsets_.reserve(num_hosts + 1);
  s.job_offsets_.push_back(0);
  auto intern = [&s](const std::string& job_key) {
    auto [it, inserted] = s.job_by_key_.try_emplace(
        job_key, static_cast<ClusterSnapshot::JobId>(s.job_keys_.size()));
    if (inserted) s.job_keys_.push_back(job_key);
    return it->second;
  };
  for (const DomainHold& hold : holds_) index_keys_.insert(hold.topology_key);
  for (const std::string& key : index_keys_) {
    s.topologies_[key].domain_of_host.assign(num_hosts, -1);
  }
  TopologyFinder topologies(&s.topologies_);
  for (int h = 0; h < num_hosts; ++h) {
    HostRecord& host = hosts_[h];
    if (host.name.empty()) {
      return absl::InvalidArgumentError("host with an empty name");
    }
    if (h > 0 && hosts_[h - 1].name == host.name) {
      return absl::InvalidArgumentError(
          absl::StrCat("duplicate host ", host.name));
    }
    if (absl::Status status = CheckNonNegative(host); !status.ok()) {
      return status;
    }
    s.host_by_name_.emplace(host.name, h);
    FillFree(host, s.resource_names_,
             &s.free_[static_cast<size_t>(h) * num_resources]);
    for (const auto& [key, value] : host.labels) topologies.Add(key, value, h);
    for (const HostJob& job : host.jobs) {
      s.jobs_on_host_.push_back({intern(job.job_key), job.priority});
    }
    s.job_offsets_.push_back(static_cast<uint32_t>(s.jobs_on_host_.size()));
    std::sort(host.used_host_ports.begin(), host.used_host_ports.end());
    const bool hard_taint =
        std::any_of(host.taints.begin(), host.taints.end(), [](const Taint& t) {
          return t.effect != TaintEffect::kPreferNoSchedule;
        });
    s.plain_.push_back(host.ready && !host.cordoned && !hard_taint &&
                       host.used_host_ports.empty());
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

  // Holds: on their domain, and on every host of the domain.
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
  s.holds_on_host_.reserve(host_holds.size());
  for (const auto& [h, holder] : host_holds) s.holds_on_host_.push_back(holder);

  s.hosts_ = std::move(hosts_);
  hosts_.clear();
  holds_.clear();
  extended_.clear();
  sorted_ = true;
  index_keys_.clear();
  for (absl::string_view key : kDefaultTopologyKeys) index_keys_.emplace(key);
  return s;
}

}  // namespace jobset::scheduler::placement
