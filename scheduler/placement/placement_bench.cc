// Placement benchmark: prints a Markdown table of snapshot build and Place()
// times over clusters of 1,024 to 16,384 nodes in slices of 4 and 16 (8 GPUs
// each, labelled cloud.google.com/gke-nodepool), for JobSets of 1 x 4 pods up
// to 1,024 x 16 pods with exclusive topology, on empty and on half-full,
// fragmented clusters. Build with -c opt:
//
//   bazel run -c opt //scheduler/placement:placement_bench

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/log.h"
#include "scheduler/placement/placement.h"
#include "scheduler/placement/snapshot.h"
#include "scheduler/placement/test_cluster.h"

namespace jobset::scheduler::placement {
namespace {

using testing::kGpu;
using testing::kPool;

// Returns the median wall time of `reps` runs of `fn`, in milliseconds.
double MedianMs(int reps, const std::function<void()>& fn) {
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    const auto end = std::chrono::steady_clock::now();
    ms.push_back(
        std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Half of the slices (every other one) are held by another JobSet whose pods
// use every GPU; of the free slices, every other one has a node with half of
// its GPUs in use, so it cannot take a whole-slice Job.
std::vector<NodeRecord> HalfFull(int num_nodes, int slice,
                                 std::vector<DomainHold>* holds) {
  std::vector<NodeRecord> nodes = testing::SliceCluster(num_nodes, slice);
  for (int s = 0; s < num_nodes / slice; ++s) {
    const std::string pool = absl::StrFormat("pool-%04d", s);
    if (s % 2 == 0) {
      const std::string job = absl::StrFormat("other/job-%d", s);
      holds->push_back({kPool, pool, job, 0});
      for (int h = s * slice; h < (s + 1) * slice; ++h) {
        nodes[h].allocated.extended[kGpu] = 8;
        nodes[h].jobs.push_back({job, 0});
      }
    } else if (s % 4 == 1) {
      nodes[s * slice].allocated.extended[kGpu] = 4;
    }
  }
  return nodes;
}

struct Row {
  std::string scenario;
  int nodes;
  int slice;
  std::string shape;
  int64_t pods;
  bool placed;
  double ms;
};

void Print(const std::vector<Row>& rows) {
  std::printf(
      "| scenario | nodes | slice | jobs x pods | pods | placed | median ms "
      "| pods/s | ns/pod |\n");
  std::printf("|---|---:|---:|---|---:|---|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const std::string rate =
        r.pods > 0 && r.ms > 0
            ? absl::StrFormat("%.0f", r.pods / (r.ms / 1000.0))
            : "-";
    const std::string per_pod =
        r.pods > 0 ? absl::StrFormat("%.0f", r.ms * 1e6 / r.pods) : "-";
    std::printf("| %s | %d | %d | %s | %lld | %s | %.3f | %s | %s |\n",
                r.scenario.c_str(), r.nodes, r.slice, r.shape.c_str(),
                static_cast<long long>(r.pods), r.placed ? "yes" : "no", r.ms,
                rate.c_str(), per_pod.c_str());
  }
}

// Returns the median time to build a snapshot of `records` (sorted by name,
// or shuffled). Each build gets its own copy of the records, made before the
// clock starts; the previous snapshot is destroyed before the next build, as
// in a scheduler that keeps one snapshot at a time.
double BuildMs(const std::vector<NodeRecord>& records, bool shuffled, int reps,
               bool print_min = false) {
  std::vector<NodeRecord> input = records;
  if (shuffled) {
    std::mt19937 random(42);
    std::shuffle(input.begin(), input.end(), random);
  }
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    std::vector<NodeRecord> copy = input;
    std::optional<absl::StatusOr<ClusterSnapshot>> built;
    const auto start = std::chrono::steady_clock::now();
    ClusterSnapshotBuilder builder(copy.size());
    for (NodeRecord& h : copy) builder.AddNode(std::move(h));
    built = builder.Build();
    const auto end = std::chrono::steady_clock::now();
    JOBSET_CHECK(built->ok()) << "build failed";
    ms.push_back(
        std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(ms.begin(), ms.end());
  if (print_min) std::printf("min %.3f ms, ", ms[0]);
  return ms[ms.size() / 2];
}

void BuildOnly() {
  const std::vector<NodeRecord> records = testing::SliceCluster(16384, 16);
  const double median = BuildMs(records, false, 20, true);
  std::printf("median %.3f ms: snapshot build, 16384 nodes\n", median);
}

void Run() {
  constexpr int kReps = 7;
  std::vector<Row> rows;
  const auto whole_node = testing::GpuPod(8);
  const auto quarter_node = testing::GpuPod(2);

  for (int num_nodes : {1024, 4096, 16384}) {
    for (int slice : {4, 16}) {
      const int slices = num_nodes / slice;

      // Snapshot build from node records (copying the records is the
      // caller's and is left out).
      const std::vector<NodeRecord> records =
          testing::SliceCluster(num_nodes, slice);
      // Nodes listed in name order (as from a sorted map), then shuffled.
      for (bool shuffled : {false, true}) {
        rows.push_back({shuffled ? "snapshot build, shuffled input"
                                 : "snapshot build, sorted input",
                        num_nodes, slice, "-", 0, true,
                        BuildMs(records, shuffled, kReps)});
      }

      const ClusterSnapshot empty = testing::MustBuild(records);
      auto place = [&](const std::string& scenario,
                       const ClusterSnapshot& cluster, int jobs, int pods,
                       std::shared_ptr<const PodRequirements> pod,
                       const std::string& key = kPool) {
        const PlacementRequest request =
            testing::JobSetRequest("w", jobs, pods, pod, key);
        bool placed = false;
        const double ms = MedianMs(kReps, [&] {
          absl::StatusOr<Placement> p = Place(cluster, request);
          JOBSET_CHECK(p.ok()) << "bad request";
          placed = p->placed();
        });
        rows.push_back({scenario, num_nodes, slice,
                        absl::StrFormat("%d x %d", jobs, pods),
                        int64_t{jobs} * pods, placed, ms});
      };

      // Exclusive, one pod per node, on an empty cluster.
      place("exclusive, empty", empty, 1, 4, whole_node);
      if (slice == 16) place("exclusive, empty", empty, 1, 16, whole_node);
      place("exclusive, empty", empty, slices / 16, slice, whole_node);
      place("exclusive, empty (full)", empty, slices, slice, whole_node);
      // Small pods packed 4 to a node, one Job per slice.
      place("exclusive, 4 pods/node", empty, slices, slice * 4, quarter_node);
      // Without exclusive topology: fewest slices.
      place("spread, empty", empty, 1, num_nodes / 2, whole_node, "");

      // Half-full and fragmented.
      std::vector<DomainHold> holds;
      const ClusterSnapshot half =
          testing::MustBuild(HalfFull(num_nodes, slice, &holds), holds);
      place("exclusive, half-full", half, 1, slice, whole_node);
      place("exclusive, half-full (fill)", half, slices / 4, slice, whole_node);
      place("exclusive, half-full, no fit", half, slices / 4 + 1, slice,
            whole_node);
      place("spread, half-full", half, 1, num_nodes / 4, whole_node, "");
    }
  }
  Print(rows);
}

}  // namespace
}  // namespace jobset::scheduler::placement

int main(int argc, char** argv) {
  // "placement_bench build" times only the 16,384-node snapshot build (for
  // profiling).
  if (argc > 1 && std::string(argv[1]) == "build") {
    jobset::scheduler::placement::BuildOnly();
    return 0;
  }
  jobset::scheduler::placement::Run();
  return 0;
}
