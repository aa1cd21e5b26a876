#ifndef JOBSET_AUTH_RBAC_AUTHORIZER_H_
#define JOBSET_AUTH_RBAC_AUTHORIZER_H_

// Kubernetes RBAC (rbac.authorization.k8s.io/v1) decisions, as
// kube-apiserver's RBAC authorizer makes them (plugin/pkg/auth/authorizer/rbac
// and the rule resolver of pkg/registry/rbac/validation): default deny,
// additive rules, no deny rules; a RoleBinding grants its Role or a
// ClusterRole inside its namespace; a ClusterRoleBinding grants a ClusterRole
// everywhere. Pure functions over the objects in force (RbacObjects);
// auth/rbac.h's RbacPolicy keeps them.

#include <map>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "proto/auth.pb.h"

namespace jobset::auth {

inline constexpr absl::string_view kRbacGroup = "rbac.authorization.k8s.io";
inline constexpr absl::string_view kRbacApiVersion =
    "rbac.authorization.k8s.io/v1";
inline constexpr absl::string_view kJobSetGroup = "jobset.x-k8s.io";
// Kueue's objects (scheduler/server/kueue_api.h).
inline constexpr absl::string_view kKueueGroup = "kueue.x-k8s.io";
// Kueue's visibility API: clusterqueues/pendingworkloads and
// localqueues/pendingworkloads ("get").
inline constexpr absl::string_view kVisibilityGroup =
    "visibility.kueue.x-k8s.io";
// Groups every authenticated caller is in, and the one cluster-admin is
// bound to (as in Kubernetes).
inline constexpr absl::string_view kAuthenticatedGroup = "system:authenticated";
inline constexpr absl::string_view kMastersGroup = "system:masters";
inline constexpr absl::string_view kNodesGroup = "system:nodes";
inline constexpr absl::string_view kNodeUserPrefix = "system:node:";

// The RBAC kinds, and the kinds of subject a binding names.
inline constexpr absl::string_view kRoleKind = "Role";
inline constexpr absl::string_view kClusterRoleKind = "ClusterRole";
inline constexpr absl::string_view kRoleBindingKind = "RoleBinding";
inline constexpr absl::string_view kClusterRoleBindingKind =
    "ClusterRoleBinding";
inline constexpr absl::string_view kUserKind = "User";
inline constexpr absl::string_view kGroupKind = "Group";
inline constexpr absl::string_view kServiceAccountKind = "ServiceAccount";

struct UserInfo {
  std::string name = {};
  std::vector<std::string> groups = {};
};

// What a request does (Kubernetes' authorizer attributes).
struct Attributes {
  std::string verb = {};       // get list watch create update patch delete ...
  std::string api_group = {};  // "" (core), "jobset.x-k8s.io", kRbacGroup
  std::string resource = {};   // "jobsets", "pods", "nodes", ...
  std::string subresource = {};  // "log" for pods/log, else empty
  std::string namespace_ = {};   // empty: cluster-scoped, or all namespaces
  std::string name = {};         // empty: a collection (list, watch, create)
};

// The API group of each resource jobsetd serves: jobsets in
// jobset.x-k8s.io; jobs in batch; pods, events, secrets, configmaps, nodes,
// namespaces in core; tokens and snapshots in jobset.x-k8s.io; roles,
// rolebindings, clusterroles, clusterrolebindings in kRbacGroup;
// resourceflavors, clusterqueues, cohorts, localqueues,
// workloadpriorityclasses, workloads in kKueueGroup. Empty for an unknown
// resource.
std::string ApiGroupOf(absl::string_view resource);
// Whether the resource is cluster-scoped (nodes, namespaces, tokens,
// snapshots, clusterroles, clusterrolebindings, resourceflavors,
// clusterqueues, cohorts, workloadpriorityclasses).
bool IsClusterScoped(absl::string_view resource);
// The resource of an RBAC kind: "roles" for Role, ..., "clusterrolebindings"
// for ClusterRoleBinding; empty for any other kind.
absl::string_view ResourceOfRbacKind(absl::string_view kind);
// Whether the kind is ClusterRole or ClusterRoleBinding.
bool IsClusterRbacKind(absl::string_view kind);

// A rule's list (verbs, apiGroups, resources, resourceNames) names `value`
// exactly; or (ListHasOrAll) names it or "*".
bool ListHas(const google::protobuf::RepeatedPtrField<std::string>& list,
             absl::string_view value);
bool ListHasOrAll(const google::protobuf::RepeatedPtrField<std::string>& list,
                  absl::string_view value);

// kube-apiserver's forbidden message, e.g.
//   jobsets.jobset.x-k8s.io is forbidden: User "alice" cannot create
//   resource "jobsets" in API group "jobset.x-k8s.io" in the namespace
//   "team-b"
// ("... \"train\" is forbidden", "at the cluster scope" as Kubernetes says).
// Names are quoted as Go's %q (common/quote.h).
std::string ForbiddenMessage(const UserInfo& user, const Attributes& attrs);

// Kubernetes' RuleAllows: whether one rule allows the request. "*" matches
// every verb, group and resource; "pods" matches pods, never pods/log;
// "pods/log" and "*/log" match pods/log; a rule that names resources applies
// only to a request on one of those names (never to a collection). A rule of
// nonResourceURLs matches no request (jobsetd serves none).
bool RuleAllows(const api::PolicyRule& rule, const Attributes& attrs);

// The RBAC objects in force, keyed by RbacObjectKey.
using RbacObjects = std::map<std::string, api::RbacObject>;

// "<kind>/<namespace>/<name>": the bindings of one kind and namespace are
// one range of RbacObjects.
std::string RbacObjectKey(absl::string_view kind, absl::string_view namespace_,
                          absl::string_view name);

// The role a binding in `binding_namespace` (empty: a ClusterRoleBinding)
// refers to: a Role in that namespace, or a ClusterRole. Null if there is
// none.
const api::Role* FindRole(const RbacObjects& objects, const api::RoleRef& ref,
                          absl::string_view binding_namespace);

// Receives one rule granted to a user, with the binding and the subject of it
// that grant it; returns false to stop the visit.
using RuleVisitor = absl::FunctionRef<bool(const api::RoleBinding& binding,
                                           const api::Subject& subject,
                                           const api::PolicyRule& rule)>;

// Kubernetes' VisitRulesFor: visits every rule granted to `user` in
// `namespace_` (empty: cluster-wide only), ClusterRoleBindings first, until
// `visit` returns false. O(log objects + bindings in scope x their subjects),
// plus a lookup and a scan of the rules of each binding that applies; nothing
// is copied.
void VisitRulesFor(const RbacObjects& objects, const UserInfo& user,
                   absl::string_view namespace_, RuleVisitor visit);

// Kubernetes' RBAC authorizer: whether a rule granted to `user` in
// attrs.namespace_, as given, allows the request (RbacPolicy::Allows first
// drops a namespace given for a cluster-scoped resource; the escalation check
// asks about clusterroles in a namespace on purpose, as Kubernetes does).
// When it does and `reason` is not null,
// says which binding ("allowed by ClusterRoleBinding \"cluster-admin\" of
// ClusterRole \"cluster-admin\" to Group \"system:masters\"", as Kubernetes'
// describers).
bool Authorize(const RbacObjects& objects, const UserInfo& user,
               const Attributes& attrs, std::string* reason = nullptr);

}  // namespace jobset::auth

#endif  // JOBSET_AUTH_RBAC_AUTHORIZER_H_
