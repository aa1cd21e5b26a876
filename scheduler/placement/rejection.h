#ifndef JOBSET_SCHEDULER_PLACEMENT_REJECTION_H_
#define JOBSET_SCHEDULER_PLACEMENT_REJECTION_H_

// Rejection messages people can act on, in Kubernetes' style.

#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/string_view.h"

namespace jobset::scheduler::placement {

// Formats a per-node tally as kube-scheduler does: "0/16 nodes are
// available: 8 Insufficient nvidia.com/gpu, 8 node(s) didn't match Pod's node
// affinity/selector." Like Kubernetes, the "<count> <reason>" entries are
// sorted as strings.
std::string FormatNodeReasons(int available, int total,
                              const std::map<std::string, int>& reasons);

// How the domains of an exclusive topology key stood for one Job.
struct DomainTally {
  int total = 0;
  int held = 0;   // held by Jobs outside this request (same priority)
  int taken = 0;  // taken by an earlier Job of this request
  int busy = 0;   // hosting pods of other Jobs (same priority)
  int small = 0;  // free, but with room for fewer pods than the Job has
  int64_t max_small_room = 0;
};

// Formats why no domain of `topology_key` took a Job of `pods` pods:
// `exclusive topology "rack": no free domain has room for the 4 pods (4
// domains: 2 held by other jobs, 1 with room for at most 2 pods)`.
std::string FormatDomainReasons(absl::string_view topology_key, int64_t pods,
                                const DomainTally& tally);

}  // namespace jobset::scheduler::placement

#endif  // JOBSET_SCHEDULER_PLACEMENT_REJECTION_H_
