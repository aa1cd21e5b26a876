#ifndef JOBSET_SCHEDULER_AGENTS_NODE_OBJECT_H_
#define JOBSET_SCHEDULER_AGENTS_NODE_OBJECT_H_

#include <map>
#include <string>

#include "absl/time/time.h"
#include "proto/agent.pb.h"

namespace jobset::scheduler {

// jobsetd's extras on a node, as annotations of its v1 Node.
inline constexpr char kConnectedAnnotation[] = "jobsetd.x-k8s.io/connected";
inline constexpr char kPodsAnnotation[] = "jobsetd.x-k8s.io/pods";
inline constexpr char kAllocatedAnnotation[] = "jobsetd.x-k8s.io/allocated";
inline constexpr char kAcceleratorsAnnotation[] =
    "jobsetd.x-k8s.io/accelerators";

// What the hub knows of a node beyond its stored record.
struct NodeLiveness {
  // Not declared lost (a node whose agent disconnected stays ready until the
  // node-lost timeout).
  bool ready = false;
  // Its agent's stream is open.
  bool connected = false;
  // The last message from its agent; InfinitePast when none since jobsetd
  // started.
  absl::Time last_heartbeat = absl::InfinitePast();
  // When `ready` last changed (or jobsetd started); InfinitePast: unknown.
  absl::Time last_transition = absl::InfinitePast();
  // Resource name -> quantity requested by the pods placed on the node.
  std::map<std::string, std::string> allocated;
  // Pods placed on the node and not stopped.
  int pods = 0;
};

// Returns the node as Kubernetes' core/v1 Node:
// - metadata: the name, the labels (node_admin.h: an admin's over the
//   agent's) with kubernetes.io/hostname (the
//   name) and kubernetes.io/os ("linux") added where the agent set none, the
//   creation time, and jobsetd's extras as annotations: connected ("true",
//   "false"), pods (a count), allocated ("cpu=4,memory=1073741824", sorted;
//   absent when nothing is), accelerators (comma-separated; absent when none).
// - spec: unschedulable when cordoned; the node's taints (node_admin.h),
//   plus node.kubernetes.io/unschedulable:NoSchedule when cordoned and
//   node.kubernetes.io/unreachable with NoSchedule and NoExecute when lost,
//   as Kubernetes' node controllers add them.
// - status: capacity, allocatable (equal: jobsetd reserves nothing), the
//   Ready condition (True with reason KubeletReady; Unknown with reason
//   NodeStatusUnknown once lost), the addresses (InternalIP, Hostname) and
//   nodeInfo (kubeletVersion: the agent's version; operatingSystem linux;
//   architecture from the kubernetes.io/arch label).
// A pure function.
api::Node ToNodeObject(const api::NodeRecord& record,
                       const NodeLiveness& liveness);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_NODE_OBJECT_H_
