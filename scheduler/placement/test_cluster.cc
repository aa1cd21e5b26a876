#include "scheduler/placement/test_cluster.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log.h"

namespace jobset::scheduler::placement::testing {

NodeRecord GpuNode(std::string name, int64_t gpus, Labels labels) {
  NodeRecord node;
  node.name = std::move(name);
  node.labels = std::move(labels);
  node.allocatable.cpu_millis = 64'000;
  node.allocatable.memory_bytes = int64_t{512} << 30;
  if (gpus > 0) node.allocatable.extended[kGpu] = gpus;
  return node;
}

std::vector<NodeRecord> SliceCluster(int num_nodes, int slice_size) {
  std::vector<NodeRecord> nodes;
  nodes.reserve(num_nodes);
  for (int i = 0; i < num_nodes; ++i) {
    std::string name = absl::StrFormat("node-%05d", i);
    Labels labels;
    labels.reserve(3);
    labels.emplace(kPool, absl::StrFormat("pool-%04d", i / slice_size));
    labels.emplace("topology.kubernetes.io/zone",
                   absl::StrCat("zone-", i * 4 / num_nodes));
    labels.emplace("kubernetes.io/hostname", name);
    nodes.push_back(GpuNode(std::move(name), 8, std::move(labels)));
  }
  return nodes;
}

ClusterSnapshot MustBuild(std::vector<NodeRecord> nodes,
                          std::vector<DomainHold> holds) {
  ClusterSnapshotBuilder builder(nodes.size());
  for (NodeRecord& node : nodes) builder.AddNode(std::move(node));
  for (DomainHold& hold : holds) builder.AddHold(std::move(hold));
  absl::StatusOr<ClusterSnapshot> snapshot = builder.Build();
  JOBSET_CHECK(snapshot.ok()) << "test cluster does not build";
  return *std::move(snapshot);
}

std::shared_ptr<const PodRequirements> GpuPod(int64_t gpus) {
  auto requirements = std::make_shared<PodRequirements>();
  requirements->resources.cpu_millis = 1000;
  if (gpus > 0) requirements->resources.extended[kGpu] = gpus;
  return requirements;
}

PlacementRequest JobSetRequest(
    const std::string& prefix, int num_jobs, int pods,
    std::shared_ptr<const PodRequirements> requirements,
    const std::string& topology_key, int32_t priority) {
  PlacementRequest request;
  request.jobset_uid = absl::StrCat("uid-", prefix);
  request.priority = priority;
  request.jobs.reserve(num_jobs);
  for (int i = 0; i < num_jobs; ++i) {
    JobRequest job;
    job.job_key = absl::StrCat("ns/", prefix, "-", i);
    job.requirements = requirements;
    job.pod_count = pods;
    job.exclusive_topology_key = topology_key;
    request.jobs.push_back(std::move(job));
  }
  return request;
}

}  // namespace jobset::scheduler::placement::testing
