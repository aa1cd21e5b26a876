#include "scheduler/placement/test_cluster.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log.h"

namespace jobset::scheduler::placement::testing {

HostRecord GpuHost(std::string name, int64_t gpus, Labels labels) {
  HostRecord host;
  host.name = std::move(name);
  host.labels = std::move(labels);
  host.allocatable.cpu_millis = 64'000;
  host.allocatable.memory_bytes = int64_t{512} << 30;
  if (gpus > 0) host.allocatable.extended[kGpu] = gpus;
  return host;
}

std::vector<HostRecord> SliceCluster(int num_hosts, int slice_size) {
  std::vector<HostRecord> hosts;
  hosts.reserve(num_hosts);
  for (int i = 0; i < num_hosts; ++i) {
    std::string name = absl::StrFormat("host-%05d", i);
    Labels labels;
    labels.reserve(3);
    labels.emplace(kPool, absl::StrFormat("pool-%04d", i / slice_size));
    labels.emplace("topology.kubernetes.io/zone",
                   absl::StrCat("zone-", i * 4 / num_hosts));
    labels.emplace("kubernetes.io/hostname", name);
    hosts.push_back(GpuHost(std::move(name), 8, std::move(labels)));
  }
  return hosts;
}

ClusterSnapshot MustBuild(std::vector<HostRecord> hosts,
                          std::vector<DomainHold> holds) {
  ClusterSnapshotBuilder builder(hosts.size());
  for (HostRecord& host : hosts) builder.AddHost(std::move(host));
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
