#ifndef JOBSET_AUTH_RBAC_H_
#define JOBSET_AUTH_RBAC_H_

// Kubernetes RBAC (rbac.authorization.k8s.io/v1) over jobsetd's resources:
// the objects in force (RbacPolicy) and, through the headers below, the
// decisions over them, laid out as Kubernetes keeps them:
//   rbac_authorizer.h     rule matching, Authorize, the forbidden message
//   rbac_escalation.h     escalation prevention: escalate, bind, covering
//   rbac_validation.h     object validation (api::FieldErrors)
//   rbac_builtin_roles.h  cluster-admin, admin, edit, view
// Callers include this header.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "auth/rbac_authorizer.h"
#include "auth/rbac_builtin_roles.h"
#include "auth/rbac_escalation.h"
#include "auth/rbac_validation.h"
#include "proto/auth.pb.h"

namespace jobset::auth {

// The RBAC objects in force and the decisions over them. Not thread-safe;
// the caller guards it (reads far outnumber writes).
class RbacPolicy {
 public:
  // Starts with BuiltInObjects().
  RbacPolicy();

  // Creates or replaces the object (by kind, namespace, name) once
  // ValidateRbacObject accepts it. Built-in objects may not be replaced or
  // deleted (kInvalidArgument).
  absl::Status Put(const api::RbacObject& object);
  // kNotFound if absent.
  absl::StatusOr<api::RbacObject> Remove(const api::RbacObjectRef& ref);
  std::vector<api::RbacObject> List(absl::string_view kind,
                                    absl::string_view namespace_) const;

  // Whether some binding grants `user` the request (a namespace given for a
  // cluster-scoped resource is ignored: no RoleBinding reaches nodes or
  // tokens); when it does and `reason` is not null, says which ("allowed by
  // ClusterRoleBinding \"cluster-admin\" of ClusterRole \"cluster-admin\" to
  // Group \"system:masters\"").
  bool Allows(const UserInfo& user, const Attributes& attrs,
              std::string* reason = nullptr) const;

  // auth::CheckCanGrant over the objects in force: whether `user` may grant
  // `rules` in `namespace_` (empty: cluster-wide), holding them or the
  // `verb` ("escalate"/"bind") on roles. OK, or kPermissionDenied naming
  // every permission not held ("user \"u\" (groups=[...]) is attempting to
  // grant RBAC permissions not currently held:\n{...}").
  absl::Status CheckCanGrant(const UserInfo& user, absl::string_view namespace_,
                             const std::vector<api::PolicyRule>& rules,
                             absl::string_view verb) const;

  // auth::CheckCanApply over the objects in force: the escalation check of a
  // create or update of `object`, refused in kube-apiserver's words
  // ("rolebindings.rbac.authorization.k8s.io \"b\" is forbidden: user ...").
  absl::Status CheckCanApply(const UserInfo& user,
                             const api::RbacObject& object) const;

  // The rules of the role a binding refers to (empty if it does not exist).
  std::vector<api::PolicyRule> RulesOf(const api::RoleRef& ref,
                                       absl::string_view namespace_) const;

 private:
  // Keyed by RbacObjectKey.
  RbacObjects objects_;
};

}  // namespace jobset::auth

#endif  // JOBSET_AUTH_RBAC_H_
