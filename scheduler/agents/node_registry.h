#ifndef JOBSET_SCHEDULER_AGENTS_NODE_REGISTRY_H_
#define JOBSET_SCHEDULER_AGENTS_NODE_REGISTRY_H_

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/agent.pb.h"
#include "scheduler/agents/desired_sets.h"
#include "scheduler/agents/session.h"
#include "scheduler/controller/node_sink.h"
#include "store/store.h"

namespace jobset::scheduler {

// One node as the hub knows it.
struct NodeEntry {
  api::NodeRecord node;                   // What is stored (nodes/<name>).
  std::shared_ptr<AgentSession> session;  // Its agent's stream, if open.
  // Its agent's last message to this jobsetd; InfinitePast: none yet.
  absl::Time last_seen = absl::InfinitePast();
  bool ready = false;  // Not declared lost.
  // When `ready` last changed, or the hub started.
  absl::Time transition = absl::InfinitePast();
};

// The nodes jobsetd knows: their stored records (registration, cordon,
// creation time), their streams, and whether each is Ready and since when.
// Records are read from the store here; writes (StoreNode) are the
// caller's, made outside its lock. Thread-compatible (the hub guards it
// with its lock).
class NodeRegistry {
 public:
  // What the nodes gauge shows.
  struct Counts {
    int ready = 0;
    int not_ready = 0;
    int cordoned = 0;
  };

  // Reads the stored nodes: each counts as Ready since `started` (its pods
  // keep running while its agent reconnects, within the restart grace). A
  // record that does not decode is logged, left in the store and counted in
  // `*undecodable`: its node registers again when its agent says hello.
  static absl::StatusOr<NodeRegistry> Load(store::Store& store,
                                           absl::Time started,
                                           int* undecodable);

  // Returns node `name`, or null.
  NodeEntry* Find(const std::string& name);
  // Every node, by name.
  std::map<std::string, NodeEntry>& nodes() { return nodes_; }
  const std::map<std::string, NodeEntry>& nodes() const { return nodes_; }

  // Its agent said hello with `registration` (its restricted labels
  // dropped) at `now`, on `session`: the registration is merged into the
  // record as NodeRestriction allows (node_admin.h MergeHello: the admin's
  // taints and labels stay), the node is Ready (a transition at `now` if it
  // was not), seen at `now`, and dated if it had no creation time. Returns
  // the session it replaces (null if none), in `*to_store` the record to
  // store when it changed (nullopt when not), and in `*taints_ignored`
  // (when given) whether the Hello's taints differ from the node's.
  std::shared_ptr<AgentSession> Register(
      const api::NodeRegistration& registration,
      std::shared_ptr<AgentSession> session, absl::Time now,
      std::optional<api::NodeRecord>* to_store, bool* taints_ignored = nullptr);
  // Declares `entry` lost at `now` (Ready no more); returns its session,
  // to be closed.
  static std::shared_ptr<AgentSession> MarkLost(NodeEntry& entry,
                                                absl::Time now);
  // Forgets node `name`; returns its session (to close), or null.
  std::shared_ptr<AgentSession> Erase(const std::string& name);
  Counts Count() const;

 private:
  std::map<std::string, NodeEntry> nodes_;
};

// Returns what the controller is told of `node` (Ready, its cordon, its
// labels and taints as node_admin.h merges them);
// kInvalidArgument naming the registration's field ("hello.node.taints[0]
// .effect", "hello.node.capacity[memory]") when it cannot be placed on. A
// pure function.
absl::StatusOr<NodeInfo> ToNodeInfo(const api::NodeRecord& node);

// Returns `entry` as a Kubernetes v1 Node (node_object.h), with `load`, what
// its desired set takes. A pure function.
api::Node Describe(const NodeEntry& entry, const NodeLoad& load);

// Writes `node` to the store (nodes/<name>).
absl::Status StoreNode(store::Store& store, const api::NodeRecord& node);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_NODE_REGISTRY_H_
