#ifndef JOBSET_AUTH_RBAC_H_
#define JOBSET_AUTH_RBAC_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/auth.pb.h"

namespace jobset::auth {

// Kubernetes RBAC (rbac.authorization.k8s.io/v1), evaluated as
// kube-apiserver's RBAC authorizer does: default deny, additive rules, no
// deny rules; a RoleBinding grants its Role or a ClusterRole inside its
// namespace; a ClusterRoleBinding grants a ClusterRole everywhere.

inline constexpr absl::string_view kRbacGroup = "rbac.authorization.k8s.io";
inline constexpr absl::string_view kJobSetGroup = "jobset.x-k8s.io";
// Groups every authenticated caller is in, and the one cluster-admin is
// bound to (as in Kubernetes).
inline constexpr absl::string_view kAuthenticatedGroup = "system:authenticated";
inline constexpr absl::string_view kMastersGroup = "system:masters";
inline constexpr absl::string_view kNodesGroup = "system:nodes";
inline constexpr absl::string_view kNodeUserPrefix = "system:node:";

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
// jobset.x-k8s.io; jobs in batch; pods, events, nodes in core; tokens in
// jobset.x-k8s.io; roles, rolebindings, clusterroles, clusterrolebindings in
// kRbacGroup. Empty for an unknown resource.
std::string ApiGroupOf(absl::string_view resource);
// Whether the resource is cluster-scoped (nodes, tokens, clusterroles,
// clusterrolebindings).
bool IsClusterScoped(absl::string_view resource);

// kube-apiserver's forbidden message, e.g.
//   jobsets.jobset.x-k8s.io is forbidden: User "alice" cannot create
//   resource "jobsets" in API group "jobset.x-k8s.io" in the namespace
//   "team-b"
// ("... \"train\" is forbidden", "at the cluster scope" as Kubernetes says).
std::string ForbiddenMessage(const UserInfo& user, const Attributes& attrs);

// cluster-admin, admin, edit, view (meaning what they mean in Kubernetes,
// over jobsetd's resources), as ClusterRoles, and the ClusterRoleBinding of
// cluster-admin to system:masters.
std::vector<api::RbacObject> BuiltInObjects();

// Checks an RBAC object before it is stored: kind and apiVersion, names
// (DNS-1123 subdomain; a namespace for the namespaced kinds and none for the
// others), rule verbs/resources non-empty, subjects' kinds, roleRef kind (a
// RoleBinding may refer to a Role or a ClusterRole; a ClusterRoleBinding only
// to a ClusterRole), and sizes. kInvalidArgument naming the field path.
absl::Status ValidateRbacObject(const api::RbacObject& object);

// The RBAC objects in force and the decisions over them. Not thread-safe;
// the caller guards it (reads far outnumber writes).
class RbacPolicy {
 public:
  // Starts with BuiltInObjects().
  RbacPolicy();

  // Creates or replaces the object (by kind, namespace, name). Built-in
  // objects may not be replaced or deleted (kInvalidArgument).
  absl::Status Put(const api::RbacObject& object);
  // kNotFound if absent.
  absl::StatusOr<api::RbacObject> Remove(const api::RbacObjectRef& ref);
  std::vector<api::RbacObject> List(absl::string_view kind,
                                    absl::string_view namespace_) const;

  // Whether some binding grants `user` the request; when it does and
  // `reason` is not null, says which ("allowed by ClusterRoleBinding
  // \"cluster-admin\" of ClusterRole \"cluster-admin\" to Group
  // \"system:masters\"").
  bool Allows(const UserInfo& user, const Attributes& attrs,
              std::string* reason = nullptr) const;

  // Kubernetes' escalation check: whether `user` already holds every
  // permission `rules` grant, in `namespace_` (empty: cluster-wide). A
  // user may create or update a role, or bind one, only if so (or if it
  // may "escalate"/"bind" roles). OK or kPermissionDenied naming the first
  // rule not held ("... attempting to grant RBAC permissions not currently
  // held: ...").
  absl::Status CheckCanGrant(const UserInfo& user, absl::string_view namespace_,
                             const std::vector<api::PolicyRule>& rules,
                             absl::string_view verb) const;

  // The rules of the role a binding refers to (empty if it does not exist).
  std::vector<api::PolicyRule> RulesOf(const api::RoleRef& ref,
                                       absl::string_view namespace_) const;

 private:
  // Keyed "<kind>/<namespace>/<name>".
  std::map<std::string, api::RbacObject> objects_;
};

}  // namespace jobset::auth

#endif  // JOBSET_AUTH_RBAC_H_
