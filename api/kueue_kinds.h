#ifndef JOBSET_API_KUEUE_KINDS_H_
#define JOBSET_API_KUEUE_KINDS_H_

// Kueue's six kinds as jobsetd serves them: one table of each kind's name,
// RBAC resource (also its store key's segment, store/keys.h KueueKey),
// scope and KueueObject oneof case, for the API server, the controller and
// the clients alike.

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "proto/k8s.pb.h"
#include "proto/kueue.pb.h"

namespace jobset::api {

// Kueue's API group: the RBAC group of its resources and the group in
// Kubernetes' messages (`clusterqueues.kueue.x-k8s.io "cq" not found`).
inline constexpr absl::string_view kKueueApiGroup = "kueue.x-k8s.io";

// One of Kueue's six kinds.
struct KueueKind {
  absl::string_view kind;      // "ClusterQueue"
  absl::string_view resource;  // "clusterqueues"
  bool namespaced;             // LocalQueue and Workload only
  KueueObject::ObjectCase object_case;
};

// The six kinds: ResourceFlavor, ClusterQueue, Cohort, LocalQueue,
// WorkloadPriorityClass, Workload, in that order.
absl::Span<const KueueKind> KueueKinds();
// The kind named `kind` ("ClusterQueue"), or null.
const KueueKind* FindKueueKind(absl::string_view kind);
// The kind of the oneof case, or null (OBJECT_NOT_SET).
const KueueKind* FindKueueKind(KueueObject::ObjectCase object_case);
// The kind whose resource is `resource` ("clusterqueues"), or null.
const KueueKind* FindKueueKindByResource(absl::string_view resource);
// FindKueueKind, or kInvalidArgument in Kubernetes' words:
//   kind: Unsupported value: "Foo": supported values: "ResourceFlavor", ...
absl::StatusOr<const KueueKind*> KueueKindNamed(absl::string_view kind);

// The metadata of the object `object` holds (an empty one when none).
const ObjectMeta& KueueObjectMeta(const KueueObject& object);
// The same, to change; null when `object` holds no object.
ObjectMeta* MutableKueueObjectMeta(KueueObject* object);

}  // namespace jobset::api

#endif  // JOBSET_API_KUEUE_KINDS_H_
