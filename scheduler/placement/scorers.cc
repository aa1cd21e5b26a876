#include "scheduler/placement/scorers.h"

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace jobset::scheduler::placement {

int32_t StickyDomain(absl::Span<const ClusterSnapshot::NodeId> previous_nodes,
                     const ClusterSnapshot::Topology& topology) {
  absl::flat_hash_map<int32_t, int> counts;
  int32_t best = -1;
  int best_count = 0;
  for (ClusterSnapshot::NodeId node : previous_nodes) {
    const int32_t domain = topology.domain_of_node[node];
    if (domain < 0) continue;
    const int count = ++counts[domain];
    if (count > best_count || (count == best_count && domain < best)) {
      best = domain;
      best_count = count;
    }
  }
  return best;
}

bool BestFitLess(const DomainCandidate& a, const DomainCandidate& b) {
  return std::tie(a.num_nodes, a.capacity, a.value) <
         std::tie(b.num_nodes, b.capacity, b.value);
}

std::vector<int32_t> FewestDomains(std::vector<DomainCandidate> candidates,
                                   int64_t pods) {
  const DomainCandidate* single = nullptr;
  for (const DomainCandidate& c : candidates) {
    if (c.capacity >= pods && (single == nullptr || BestFitLess(c, *single))) {
      single = &c;
    }
  }
  if (single != nullptr) return {single->domain};
  std::sort(candidates.begin(), candidates.end(),
            [](const DomainCandidate& a, const DomainCandidate& b) {
              return std::tie(b.capacity, a.value) <
                     std::tie(a.capacity, b.value);
            });
  std::vector<int32_t> chosen;
  int64_t covered = 0;
  for (const DomainCandidate& c : candidates) {
    if (c.capacity <= 0) break;
    chosen.push_back(c.domain);
    covered += c.capacity;
    if (covered >= pods) break;
  }
  return chosen;
}

}  // namespace jobset::scheduler::placement
