#ifndef JOBSET_SCHEDULER_PLACEMENT_SNAPSHOT_H_
#define JOBSET_SCHEDULER_PLACEMENT_SNAPSHOT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "scheduler/placement/requirements.h"

namespace jobset::scheduler::placement {

using Labels = absl::flat_hash_map<std::string, std::string>;

// Topology label keys, from slice to zone: node pool or slice, NVLink domain,
// rack, zone. A snapshot indexes them; Jobs without exclusive topology pack
// into the first of them that the nodes carry.
inline constexpr std::array<absl::string_view, 5> kDefaultTopologyKeys = {
    "cloud.google.com/gke-nodepool", "nvidia.com/gpu.clique",
    "topology.kubernetes.io/rack", "rack", "topology.kubernetes.io/zone"};

// A Kubernetes node taint. NoSchedule and NoExecute taints keep pods without
// a matching toleration off the node; PreferNoSchedule does not filter.
struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
};

// A Job with pods on a node (running, or terminating after a restart), at the
// pods' priority. Exclusive placement keeps other Jobs of the same priority
// out of every domain this Job's pods are in.
struct NodeJob {
  std::string job_key;  // "<namespace>/<jobName>"
  int32_t priority = 0;
};

// One node as the controller sees it when it takes a snapshot.
struct NodeRecord {
  std::string name;
  // Topology labels among them: see README.md.
  Labels labels;
  std::vector<Taint> taints;
  Resources allocatable;
  // Capacity in use, including pods of old attempts that are still
  // terminating: the caller counts them, placement treats them as used.
  Resources allocated;
  bool ready = true;
  bool cordoned = false;
  // Ports bound by the node's current pods.
  std::vector<HostPort> used_host_ports;
  std::vector<NodeJob> jobs;
};

// An exclusive topology domain held by a placed Job: the domain (one value of
// a topology label) is closed to pods of every other Job of the same priority.
struct DomainHold {
  std::string topology_key;  // for example "cloud.google.com/gke-nodepool"
  std::string domain;        // the label's value
  std::string job_key;       // "<namespace>/<jobName>"
  int32_t priority = 0;
};

// An immutable view of the cluster with the indexes placement needs: nodes
// sorted by name, nodes by label value, capacity as dense arrays, and the
// exclusive holds on topology domains. Build one with ClusterSnapshotBuilder.
// The indexes point into the node records, which never move: the snapshot
// can be moved but not copied. Immutable, hence thread-safe.
class ClusterSnapshot {
 public:
  // Nodes are numbered 0..num_nodes()-1 in name order.
  using NodeId = int32_t;
  // An interned job key (see FindJob and job_key).
  using JobId = int32_t;

  // A Job that holds a domain, or has pods on a node.
  struct Holder {
    JobId job = 0;
    int32_t priority = 0;
  };

  // One value of a topology label and the nodes that carry it.
  struct Domain {
    absl::string_view value;         // points into the nodes' labels
    absl::Span<const NodeId> nodes;  // ascending
    std::vector<Holder> holds;       // exclusive holds on this domain
  };

  // Every value of one label key. Domains appear in the order their first
  // node appears in name order. Move-only: domains point into node_storage.
  struct Topology {
    Topology() = default;
    Topology(Topology&&) = default;
    Topology& operator=(Topology&&) = default;
    Topology(const Topology&) = delete;
    Topology& operator=(const Topology&) = delete;

    std::vector<Domain> domains;
    absl::flat_hash_map<absl::string_view, int32_t> domain_by_value;
    std::vector<int32_t> domain_of_node;  // -1 where the node lacks the key
    std::vector<NodeId> node_storage;     // the nodes of every domain
  };

  ClusterSnapshot(ClusterSnapshot&&) = default;
  ClusterSnapshot& operator=(ClusterSnapshot&&) = default;

  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const NodeRecord& node(NodeId id) const { return nodes_[id]; }
  // Returns whether the node is ready, not cordoned, has no NoSchedule or
  // NoExecute taint and no bound host port: then only labels and capacity
  // decide whether a pod fits.
  bool plain(NodeId id) const { return plain_[id] != 0; }
  std::optional<NodeId> FindNode(absl::string_view name) const;

  // Returns the domains of an indexed label key (see
  // ClusterSnapshotBuilder::IndexLabel), or nullptr when the key is not
  // indexed or no node carries it.
  const Topology* FindTopology(absl::string_view key) const;
  // Returns the domains of any label key, by a scan of every node. For keys
  // that FindTopology does not know.
  Topology ScanTopology(absl::string_view key) const;

  // Dense capacity. Resource 0 is cpu (millicores), 1 memory (bytes), the
  // rest extended resources in name order.
  int num_resources() const { return static_cast<int>(resource_names_.size()); }
  const std::string& resource_name(int index) const {
    return resource_names_[index];
  }
  std::optional<int> FindResource(absl::string_view name) const;
  // Returns allocatable minus allocated of every resource (may be negative on
  // an overcommitted node). A node that declares no "pods" resource has room
  // for any number of pods.
  absl::Span<const int64_t> free(NodeId id) const {
    return absl::MakeConstSpan(free_).subspan(
        static_cast<size_t>(id) * resource_names_.size(),
        resource_names_.size());
  }

  std::optional<JobId> FindJob(absl::string_view job_key) const;
  const std::string& job_key(JobId id) const { return holders_.job_keys[id]; }
  // Returns the Jobs with pods on a node.
  absl::Span<const Holder> jobs_on_node(NodeId id) const {
    return Slice(holders_.job_offsets, holders_.jobs_on_node, id);
  }
  // Returns the exclusive holds on every domain (of any key) containing a node.
  absl::Span<const Holder> holds_on_node(NodeId id) const {
    return Slice(holders_.hold_offsets, holders_.holds_on_node, id);
  }
  size_t num_holds() const { return holders_.num_holds; }

 private:
  friend class ClusterSnapshotBuilder;
  ClusterSnapshot() = default;

  static absl::Span<const Holder> Slice(const std::vector<uint32_t>& offsets,
                                        const std::vector<Holder>& values,
                                        NodeId id) {
    return absl::MakeConstSpan(values).subspan(offsets[id],
                                               offsets[id + 1] - offsets[id]);
  }

  std::vector<NodeRecord> nodes_;
  // The holds it was built with, for a builder that adds to them.
  std::vector<DomainHold> holds_;
  std::vector<uint8_t> plain_;
  absl::flat_hash_map<absl::string_view, NodeId> node_by_name_;
  absl::flat_hash_map<std::string, Topology> topologies_;
  // Every key the snapshot indexed, carried by a node (in topologies_) or
  // not.
  absl::flat_hash_set<std::string> indexed_keys_;
  std::vector<std::string> resource_names_;
  // Per node: allocatable (indexed with the nodes), and that minus the usage.
  std::vector<int64_t> capacity_;
  std::vector<int64_t> free_;
  // Per node: ready, not cordoned, no NoSchedule or NoExecute taint.
  std::vector<uint8_t> schedulable_;
  // Who holds each node: the Jobs with pods on it, and the exclusive
  // holds of its topology domains, per node as offsets into flat arrays.
  struct Holders {
    std::vector<std::string> job_keys;
    absl::flat_hash_map<std::string, JobId> job_by_key;
    std::vector<uint32_t> job_offsets;
    std::vector<Holder> jobs_on_node;
    std::vector<uint32_t> hold_offsets;
    std::vector<Holder> holds_on_node;
    size_t num_holds = 0;
  };
  Holders holders_;
};

// Collects node records and holds, then builds a ClusterSnapshot.
// Thread-compatible.
//
//   ClusterSnapshotBuilder builder(records.size());
//   for (NodeRecord& r : records) builder.AddNode(std::move(r));
//   builder.AddHold({"cloud.google.com/gke-nodepool", "pool-3", "ns/a", 0});
//   absl::StatusOr<ClusterSnapshot> snapshot = builder.Build();
//
// A caller that snapshots the same nodes again with new usage starts from
// the last snapshot, which keeps its node records and label indexes:
//
//   ClusterSnapshotBuilder again(*std::move(snapshot));  // usage cleared
//   again.node(id).allocated = ...;
//   snapshot = again.Build();
class ClusterSnapshotBuilder {
 public:
  explicit ClusterSnapshotBuilder(size_t expected_nodes = 0);
  // Starts from the nodes of `previous`, in its node id order, with their
  // usage (allocated, used_host_ports, jobs) and its holds cleared. Their
  // names, labels, taints, allocatable and readiness must not be changed:
  // Build() keeps the indexes `previous` built from them, and so costs
  // little more than the usage does. AddNode() must not be called.
  explicit ClusterSnapshotBuilder(ClusterSnapshot previous);
  // Starts from `previous` with its usage and holds kept, for adding the
  // usage of pods placed since it was built (node(i)'s allocated,
  // used_host_ports and jobs, AddHold): Build() then costs what the usage of
  // every node does, not a walk of every pod. Same restrictions as above.
  static ClusterSnapshotBuilder Adding(ClusterSnapshot previous);

  ClusterSnapshotBuilder& AddNode(NodeRecord node);
  // The i-th node added, or the node of id i of the snapshot started from:
  // for setting its usage before Build().
  NodeRecord& node(size_t i) { return base_ ? base_->nodes_[i] : nodes_[i]; }
  // Adds an exclusive hold; its topology key is indexed.
  ClusterSnapshotBuilder& AddHold(DomainHold hold);
  // Indexes the domains of a label key, besides kDefaultTopologyKeys. The
  // controller indexes the exclusive-topology keys of the JobSets it knows;
  // Place() scans the nodes for any other key a request names. Indexing
  // every label (a Kubernetes node has dozens) would cost more than it saves.
  ClusterSnapshotBuilder& IndexLabel(std::string key);

  // Returns the snapshot and leaves the builder empty, or kInvalidArgument
  // for an empty or duplicate node name, a negative allocatable amount, or a
  // hold with an empty field.
  absl::StatusOr<ClusterSnapshot> Build();

 private:
  // Whether `s`, started from, can keep its indexes: every resource the
  // nodes' usage names is indexed.
  static bool UsageFits(const ClusterSnapshot& s);
  // Builds the node and label indexes of s.nodes_.
  absl::Status BuildIndexes(ClusterSnapshot& s);
  // Indexes the keys not indexed yet (of holds, or IndexLabel).
  void IndexMissingKeys(ClusterSnapshot& s);
  // Fills in the usage: free capacity, plain nodes, Jobs on nodes, holds.
  void BuildUsage(ClusterSnapshot& s);
  // Empties the builder, but for base_.
  void Reset();

  std::optional<ClusterSnapshot> base_;  // The snapshot started from.
  std::vector<NodeRecord> nodes_;
  std::vector<DomainHold> holds_;
  absl::flat_hash_set<std::string> index_keys_;
  bool sorted_ = true;  // nodes_ in name order so far
};

}  // namespace jobset::scheduler::placement

#endif  // JOBSET_SCHEDULER_PLACEMENT_SNAPSHOT_H_
