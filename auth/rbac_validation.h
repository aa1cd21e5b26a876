#ifndef JOBSET_AUTH_RBAC_VALIDATION_H_
#define JOBSET_AUTH_RBAC_VALIDATION_H_

// Validation of RBAC objects before they are stored, as Kubernetes'
// pkg/apis/rbac/validation does, reported through api::FieldErrors.

#include "absl/status/status.h"
#include "proto/auth.pb.h"

namespace jobset::auth {

// Checks an RBAC object before it is stored: kind and apiVersion, names
// (Kubernetes' path segment names; a DNS-1123 label for a namespace, given
// for the namespaced kinds and not for the others), labels and annotations,
// rule verbs/resources non-empty, subjects' kinds, roleRef kind (a
// RoleBinding may refer to a Role or a ClusterRole; a ClusterRoleBinding only
// to a ClusterRole), and sizes. OK, or kInvalidArgument naming every field
// that is wrong, in Kubernetes' words:
//   ClusterRole.rbac.authorization.k8s.io "r" is invalid: rules[0].verbs:
//   Required value: verbs must contain at least one value
// Thread-safe (pure).
absl::Status ValidateRbacObject(const api::RbacObject& object);

}  // namespace jobset::auth

#endif  // JOBSET_AUTH_RBAC_VALIDATION_H_
