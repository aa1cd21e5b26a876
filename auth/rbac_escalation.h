#ifndef JOBSET_AUTH_RBAC_ESCALATION_H_
#define JOBSET_AUTH_RBAC_ESCALATION_H_

// Kubernetes' RBAC escalation prevention (pkg/registry/rbac and its
// validation package): a user may create or update a Role or ClusterRole, or
// bind one, only if it already holds every permission that grants, or may
// "escalate" roles (for a role) or "bind" them (for a binding), or is in
// system:masters. Pure functions over the objects in force.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "auth/rbac_authorizer.h"
#include "proto/auth.pb.h"

namespace jobset::auth {

// The most (group, resource, verb, name) combinations the checks below
// expand rules into; beyond it a check would cost more than any real role
// needs, and is refused (kResourceExhausted).
inline constexpr int64_t kMaxGrantCombinations = 1 << 16;

// Kubernetes' ConfirmNoEscalation: OK if `user` holds, in `namespace_`
// (empty: cluster-wide), every permission `rules` grant. Otherwise
// kPermissionDenied naming every permission it lacks, broken down and
// compacted as Kubernetes does (one line per API group, resource and
// resource name, with its verbs; one per non-resource URL and verb), sorted:
//
//   user "u" (groups=["devs" "system:authenticated"]) is attempting to grant
//   RBAC permissions not currently held:
//   {APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}
//   {NonResourceURLs:["/healthz"], Verbs:["get"]}
//
// (after "grant", one line). Lines beyond 4 KiB of them are counted, not
// listed. kResourceExhausted if the rules that no rule of the user covers
// whole expand into more than kMaxGrantCombinations permissions.
absl::Status ConfirmNoEscalation(const RbacObjects& objects,
                                 const UserInfo& user,
                                 absl::string_view namespace_,
                                 absl::Span<const api::PolicyRule> rules);

// Whether `user` may grant anything (Kubernetes' EscalationAllowed: it is in
// system:masters).
bool EscalationAllowed(const UserInfo& user);

// The escalation check of a write that grants `rules` in `namespace_`
// (empty: cluster-wide): OK if EscalationAllowed, or if `user` may `verb`
// ("escalate" for a role, "bind" for a binding; empty: neither) roles in
// `namespace_` (clusterroles cluster-wide; in a namespace, "bind" must be
// held on roles and clusterroles both, as the caller does not say which a
// RoleBinding refers to, and a rule limited to resourceNames does not count);
// otherwise ConfirmNoEscalation.
absl::Status CheckCanGrant(const RbacObjects& objects, const UserInfo& user,
                           absl::string_view namespace_,
                           absl::Span<const api::PolicyRule> rules,
                           absl::string_view verb);

// The check Kubernetes' RBAC storage makes before a create or update of
// `object`: CheckCanGrant of what it would grant (a role's rules, with
// "escalate"; the rules of the role a binding refers to, with "bind"; none if
// that role does not exist), in its namespace (none for the cluster kinds).
// A refusal is worded as kube-apiserver's:
//
//   rolebindings.rbac.authorization.k8s.io "mine" is forbidden: user "u"
//   (groups=["system:authenticated"]) is attempting to grant RBAC permissions
//   not currently held:
//   {APIGroups:["*"], Resources:["*"], Verbs:["*"]}
//   {NonResourceURLs:["*"], Verbs:["*"]}
//
// with roles, clusterroles, rolebindings or clusterrolebindings as fits.
absl::Status CheckCanApply(const RbacObjects& objects, const UserInfo& user,
                           const api::RbacObject& object);

}  // namespace jobset::auth

#endif  // JOBSET_AUTH_RBAC_ESCALATION_H_
