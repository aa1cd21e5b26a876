#ifndef JOBSET_SCHEDULER_PLACEMENT_PLACEMENT_H_
#define JOBSET_SCHEDULER_PLACEMENT_PLACEMENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "scheduler/placement/requirements.h"
#include "scheduler/placement/snapshot.h"

namespace jobset::scheduler::placement {

// One Job of a JobSet attempt: all of its pods share one pod template.
struct JobRequest {
  std::string job_key;  // "<namespace>/<jobName>", unique in the request
  // Computed once per pod template (RequirementsFromPodSpec) and shared by
  // the Jobs of a ReplicatedJob; placement evaluates each template once.
  std::shared_ptr<const PodRequirements> requirements;
  int32_t pod_count = 0;
  // The label key of alpha.jobset.sigs.k8s.io/exclusive-topology; empty for
  // none. Every pod of the Job then lands in one domain (one value of the
  // label) that no other Job of the same priority uses.
  std::string exclusive_topology_key;
  // The node of each pod index in the previous attempt ("" for none); may be
  // shorter than pod_count. Nodes no longer in the snapshot are ignored.
  std::vector<std::string> previous_nodes;
};

// The startable pods of one JobSet attempt, grouped by Job.
struct PlacementRequest {
  // Identify the decision; placement uses no randomness, so the same snapshot
  // and request always give the same placement.
  std::string jobset_uid;
  int32_t restart_attempt = 0;
  // The pods' priority. Exclusive domains are exclusive per priority level,
  // as upstream scopes them.
  int32_t priority = 0;
  std::vector<JobRequest> jobs;
  // Nodes this JobSet must not use (jobsetd's straggler replacement): they
  // take none of its pods. Names not in the snapshot are ignored.
  std::vector<std::string> excluded_nodes;
  // Hot spares (nodes labelled jobsetd.io/spare=true) take pods only of a
  // request that may use them: a JobSet replacing a lost host.
  bool use_spares = false;
};

// The label an operator gives a hot spare (jobsetd's addition).
inline constexpr absl::string_view kSpareLabel = "jobsetd.io/spare";

struct JobPlacement {
  std::string job_key;
  std::vector<std::string> nodes;  // node of each pod index
  // The same nodes, by snapshot node id.
  std::vector<ClusterSnapshot::NodeId> node_ids;
  std::string domain;  // the exclusive domain, "" for none
};

struct JobRejection {
  std::string job_key;
  // For example "0/16 nodes are available: 8 Insufficient nvidia.com/gpu, 8
  // node(s) didn't match Pod's node affinity/selector."
  std::string reason;
};

// Either a node for every pod of every Job (rejections empty), or no
// assignment at all (jobs empty) and the reason of each Job that did not fit.
struct Placement {
  std::vector<JobPlacement> jobs;  // in request order
  std::vector<JobRejection> rejections;

  bool placed() const { return rejections.empty(); }
  // Returns the rejections as one line: "ns/a: <reason>; ns/b: <reason>".
  std::string RejectionSummary() const;
};

// Chooses a node for every pod of a JobSet attempt, or for none of them (the
// gang rule). Hard constraints: resources, nodeSelector, required node
// affinity, taints and tolerations, host ports, cordoned and not-ready nodes,
// and exclusive topology (each exclusive Job in one free domain of its own;
// nodes of a domain held by another Job of the same priority, in the
// snapshot or earlier in this request, take no pod of this request).
// Preferences: previous nodes, then best fit, then fewest domains.
//
// "Does not fit" is a Placement with rejections, not an error. Returns
// kInvalidArgument for a malformed request (empty or duplicate job key,
// missing requirements, negative pod count, more previous nodes than pods).
// Place() performs no I/O and reads no clock: the same snapshot and request
// always yield the same result. Thread-compatible.
absl::StatusOr<Placement> Place(const ClusterSnapshot& cluster,
                                const PlacementRequest& request);

}  // namespace jobset::scheduler::placement

#endif  // JOBSET_SCHEDULER_PLACEMENT_PLACEMENT_H_
