#ifndef JOBSET_SCHEDULER_PLACEMENT_TEST_CLUSTER_H_
#define JOBSET_SCHEDULER_PLACEMENT_TEST_CLUSTER_H_

// Builders of nodes, clusters and requests for the tests and the benchmark.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/placement/placement.h"
#include "scheduler/placement/requirements.h"
#include "scheduler/placement/snapshot.h"

namespace jobset::scheduler::placement::testing {

inline constexpr char kGpu[] = "nvidia.com/gpu";
inline constexpr char kPool[] = "cloud.google.com/gke-nodepool";

// A ready node with 64 cpus, 512Gi of memory and `gpus` GPUs.
NodeRecord GpuNode(std::string name, int64_t gpus = 8, Labels labels = {});

// `num_nodes` nodes named node-00000..., in slices (node pools) of
// `slice_size` labelled cloud.google.com/gke-nodepool=pool-0000...; each has
// 8 GPUs and a kubernetes.io/hostname and topology.kubernetes.io/zone label.
std::vector<NodeRecord> SliceCluster(int num_nodes, int slice_size);

// Builds a snapshot; aborts on error (test input is trusted).
ClusterSnapshot MustBuild(std::vector<NodeRecord> nodes,
                          std::vector<DomainHold> holds = {});

// A pod template requesting `gpus` GPUs and one cpu.
std::shared_ptr<const PodRequirements> GpuPod(int64_t gpus);

// A request of `num_jobs` Jobs "ns/<prefix>-<i>" of `pods` pods each, sharing
// `requirements`, exclusive on `topology_key` when it is not empty.
PlacementRequest JobSetRequest(
    const std::string& prefix, int num_jobs, int pods,
    std::shared_ptr<const PodRequirements> requirements,
    const std::string& topology_key = kPool, int32_t priority = 0);

}  // namespace jobset::scheduler::placement::testing

#endif  // JOBSET_SCHEDULER_PLACEMENT_TEST_CLUSTER_H_
