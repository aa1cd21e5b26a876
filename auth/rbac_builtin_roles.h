#ifndef JOBSET_AUTH_RBAC_BUILTIN_ROLES_H_
#define JOBSET_AUTH_RBAC_BUILTIN_ROLES_H_

// The RBAC objects jobsetd starts with, as Kubernetes' bootstrap policy
// (plugin/pkg/auth/authorizer/rbac/bootstrappolicy) has them.

#include <vector>

#include "absl/strings/string_view.h"
#include "auth/rbac_authorizer.h"
#include "proto/auth.pb.h"

namespace jobset::auth {

// cluster-admin, admin, edit, view (meaning what they mean in Kubernetes,
// over jobsetd's resources), as ClusterRoles labelled
// kubernetes.io/bootstrapping=rbac-defaults, and the ClusterRoleBinding of
// cluster-admin to system:masters. Thread-safe (pure).
std::vector<api::RbacObject> BuiltInObjects();

// Whether (kind, namespace, name) is one of BuiltInObjects(), which may be
// neither replaced nor removed.
bool IsBuiltInObject(absl::string_view kind, absl::string_view namespace_,
                     absl::string_view name);

// The verb of AccessService.SaveSnapshot, on resource "snapshots" in
// jobset.x-k8s.io (cluster-scoped). A snapshot holds every Secret, every
// token hash and the sealed CA, so it has a verb of its own: no "get" or
// "list" grant, however wide (`get` on "*"), reaches it. Among the built-in
// roles only cluster-admin (verbs "*") holds it; admin, edit and view do not.
inline constexpr absl::string_view kSaveSnapshotVerb = "save";

// The request SaveSnapshot is authorized as: verb kSaveSnapshotVerb on
// "snapshots" in jobset.x-k8s.io, cluster-wide.
Attributes SaveSnapshotAttributes();

}  // namespace jobset::auth

#endif  // JOBSET_AUTH_RBAC_BUILTIN_ROLES_H_
