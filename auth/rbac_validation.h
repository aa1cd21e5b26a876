#ifndef JOBSET_AUTH_RBAC_VALIDATION_H_
#define JOBSET_AUTH_RBAC_VALIDATION_H_

// Validation of RBAC objects before they are stored, as Kubernetes'
// pkg/apis/rbac/validation does, reported through api::FieldErrors.

#include "absl/status/status.h"
#include "auth/rbac_authorizer.h"
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

// Refuses a RoleBinding or ClusterRoleBinding whose roleRef names a Role (in
// the binding's namespace) or ClusterRole that is not in `objects` (the
// built-in ClusterRoles are): kNotFound naming roleRef.name,
//   RoleBinding.rbac.authorization.k8s.io "b" is invalid: roleRef.name: Not
//   found: "r" (no ClusterRole "r")
// Stricter than upstream on purpose: Kubernetes accepts a binding to a
// missing role (it grants nothing until one of that name appears), so that a
// typo or a deleted role goes unnoticed and a role created later under that
// name is granted silently. OK for roles. Checked when an object is applied
// through the API, not when stored objects are loaded (a role may be deleted
// while bindings name it, as in Kubernetes). Thread-safe (pure).
absl::Status ValidateRoleRefExists(const RbacObjects& objects,
                                   const api::RbacObject& object);

}  // namespace jobset::auth

#endif  // JOBSET_AUTH_RBAC_VALIDATION_H_
