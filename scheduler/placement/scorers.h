#ifndef JOBSET_SCHEDULER_PLACEMENT_SCORERS_H_
#define JOBSET_SCHEDULER_PLACEMENT_SCORERS_H_

// The scorers: among nodes and domains that pass every filter, which to
// prefer. In order of precedence: the nodes of the previous attempt (sticky
// restart), then best fit (the smallest domain that holds the Job, so big
// slices stay whole), then, for Jobs without exclusive topology, as few
// topology domains as possible.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "scheduler/placement/snapshot.h"

namespace jobset::scheduler::placement {

// Returns the domain of `topology` that holds the most of `previous_nodes`
// (ties: the lower domain index), or -1 when none of them carries the key.
int32_t StickyDomain(absl::Span<const ClusterSnapshot::NodeId> previous_nodes,
                     const ClusterSnapshot::Topology& topology);

// A domain that passes the filters, and how many of the Job's pods it has
// room for.
struct DomainCandidate {
  int32_t domain = 0;
  int32_t num_nodes = 0;  // all nodes of the domain, fitting or not
  int64_t capacity = 0;   // pods of the Job that fit
  absl::string_view value;
};

// Orders domains by best fit: fewer nodes first (a 4-node Job takes a 4-node
// slice before a 16-node one), then less room, then value.
bool BestFitLess(const DomainCandidate& a, const DomainCandidate& b);

// Returns the domains to spread `pods` over so that they touch as few
// domains as possible: the best-fitting single domain when one holds them
// all, else the roomiest domains first (ties by value) until the pods are
// covered. Returns every candidate in that order when even all together are
// too small.
std::vector<int32_t> FewestDomains(std::vector<DomainCandidate> candidates,
                                   int64_t pods);

}  // namespace jobset::scheduler::placement

#endif  // JOBSET_SCHEDULER_PLACEMENT_SCORERS_H_
