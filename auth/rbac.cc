#include "auth/rbac.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "api/field_errors.h"
#include "common/quote.h"

namespace jobset::auth {
namespace {

struct Identity {
  absl::string_view kind;
  absl::string_view ns;
  absl::string_view name;
};

Identity IdentityOf(const api::RbacObject& object) {
  if (object.has_role()) {
    const api::Role& r = object.role();
    return {r.kind(), r.metadata().namespace_(), r.metadata().name()};
  }
  const api::RoleBinding& b = object.binding();
  return {b.kind(), b.metadata().namespace_(), b.metadata().name()};
}

}  // namespace

RbacPolicy::RbacPolicy() {
  for (api::RbacObject& object : BuiltInObjects()) {
    const Identity id = IdentityOf(object);
    std::string key = RbacObjectKey(id.kind, id.ns, id.name);
    objects_.emplace(std::move(key), std::move(object));
  }
}

absl::Status RbacPolicy::Put(const api::RbacObject& object) {
  if (absl::Status s = ValidateRbacObject(object); !s.ok()) return s;
  const Identity id = IdentityOf(object);
  if (IsBuiltInObject(id.kind, id.ns, id.name)) {
    return absl::InvalidArgumentError(absl::StrCat(
        id.kind, " ", Quote(id.name), " is built in and cannot be changed"));
  }
  objects_[RbacObjectKey(id.kind, id.ns, id.name)] = object;
  return absl::OkStatus();
}

absl::StatusOr<api::RbacObject> RbacPolicy::Remove(
    const api::RbacObjectRef& ref) {
  const absl::string_view resource = ResourceOfRbacKind(ref.kind());
  if (resource.empty()) {
    api::FieldErrors errors;
    errors.NotSupported("kind", ref.kind(),
                        {kRoleKind, kClusterRoleKind, kRoleBindingKind,
                         kClusterRoleBindingKind});
    return errors.ToStatus("RBAC object reference");
  }
  // Kubernetes ignores a namespace given for a cluster-scoped kind.
  const bool cluster = IsClusterRbacKind(ref.kind());
  const absl::string_view ns =
      cluster ? absl::string_view() : absl::string_view(ref.namespace_());
  if (ns.empty() && !cluster) {
    return absl::InvalidArgumentError(absl::StrCat(
        ref.kind(), " ", Quote(ref.name()), ": namespace: Required value"));
  }
  if (IsBuiltInObject(ref.kind(), ns, ref.name())) {
    return absl::InvalidArgumentError(
        absl::StrCat(ref.kind(), " ", Quote(ref.name()),
                     " is built in and cannot be changed"));
  }
  auto it = objects_.find(RbacObjectKey(ref.kind(), ns, ref.name()));
  if (it == objects_.end()) {
    // Kubernetes' NotFound wording.
    return absl::NotFoundError(absl::StrCat(resource, ".", kRbacGroup, " ",
                                            Quote(ref.name()), " not found"));
  }
  api::RbacObject removed = std::move(it->second);
  objects_.erase(it);
  return removed;
}

std::vector<api::RbacObject> RbacPolicy::List(
    absl::string_view kind, absl::string_view namespace_) const {
  std::vector<api::RbacObject> out;
  if (kind.empty()) {
    for (absl::string_view k : {kClusterRoleKind, kClusterRoleBindingKind,
                                kRoleKind, kRoleBindingKind}) {
      std::vector<api::RbacObject> of_kind = List(k, namespace_);
      for (api::RbacObject& o : of_kind) out.push_back(std::move(o));
    }
    return out;
  }
  if (ResourceOfRbacKind(kind).empty()) return out;
  std::string prefix = absl::StrCat(kind, "/");
  if (IsClusterRbacKind(kind)) {
    prefix.push_back('/');
  } else if (!namespace_.empty()) {
    absl::StrAppend(&prefix, namespace_, "/");
  }
  for (auto it = objects_.lower_bound(prefix);
       it != objects_.end() && absl::StartsWith(it->first, prefix); ++it) {
    out.push_back(it->second);
  }
  return out;
}

bool RbacPolicy::Allows(const UserInfo& user, const Attributes& attrs,
                        std::string* reason) const {
  // A request on a cluster-scoped resource has no namespace, whatever the
  // caller passed: no RoleBinding reaches nodes or tokens.
  if (!attrs.namespace_.empty() && IsClusterScoped(attrs.resource)) {
    Attributes cluster = attrs;
    cluster.namespace_.clear();
    return Authorize(objects_, user, cluster, reason);
  }
  return Authorize(objects_, user, attrs, reason);
}

absl::Status RbacPolicy::CheckCanGrant(
    const UserInfo& user, absl::string_view namespace_,
    const std::vector<api::PolicyRule>& rules, absl::string_view verb) const {
  return auth::CheckCanGrant(objects_, user, namespace_, rules, verb);
}

absl::Status RbacPolicy::CheckCanApply(const UserInfo& user,
                                       const api::RbacObject& object) const {
  // Escalation first, as kube-apiserver: a binding of a missing role grants
  // nothing, so it passes and is then refused as not found.
  if (absl::Status s = auth::CheckCanApply(objects_, user, object); !s.ok()) {
    return s;
  }
  return ValidateRoleRefExists(objects_, object);
}

std::vector<api::PolicyRule> RbacPolicy::RulesOf(
    const api::RoleRef& ref, absl::string_view namespace_) const {
  const api::Role* role = FindRole(objects_, ref, namespace_);
  if (role == nullptr) return {};
  return {role->rules().begin(), role->rules().end()};
}

}  // namespace jobset::auth
