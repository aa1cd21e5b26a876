#include "auth/rbac_authorizer.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/quote.h"

namespace jobset::auth {
namespace {

using ::google::protobuf::RepeatedPtrField;

constexpr absl::string_view kServiceAccountPrefix = "system:serviceaccount:";
constexpr absl::string_view kAll = "*";

struct ResourceInfo {
  absl::string_view resource;
  absl::string_view group;
  bool cluster_scoped;
};

constexpr ResourceInfo kResources[] = {
    {"jobsets", kJobSetGroup, false},
    {"jobs", "batch", false},
    {"pods", "", false},
    {"events", "", false},
    {"secrets", "", false},
    {"configmaps", "", false},
    {"nodes", "", true},
    {"namespaces", "", true},
    {"tokens", kJobSetGroup, true},
    {"snapshots", kJobSetGroup, true},
    {"roles", kRbacGroup, false},
    {"rolebindings", kRbacGroup, false},
    {"clusterroles", kRbacGroup, true},
    {"clusterrolebindings", kRbacGroup, true},
    {"resourceflavors", kKueueGroup, true},
    {"clusterqueues", kKueueGroup, true},
    {"cohorts", kKueueGroup, true},
    {"localqueues", kKueueGroup, false},
    {"workloadpriorityclasses", kKueueGroup, true},
    {"workloads", kKueueGroup, false},
};

// "pods/log" is known as "pods".
const ResourceInfo* FindResource(absl::string_view resource) {
  resource = resource.substr(0, resource.find('/'));
  for (const ResourceInfo& info : kResources) {
    if (info.resource == resource) return &info;
  }
  return nullptr;
}

bool InGroup(const UserInfo& user, absl::string_view group) {
  for (const std::string& g : user.groups) {
    if (g == group) return true;
  }
  return false;
}

// ---- Matching a request (Kubernetes' RuleAllows) ----

// Whether `entry` names "<resource>/<subresource>".
bool IsCombined(absl::string_view entry, absl::string_view resource,
                absl::string_view subresource) {
  return entry.size() == resource.size() + 1 + subresource.size() &&
         absl::StartsWith(entry, resource) && entry[resource.size()] == '/' &&
         absl::EndsWith(entry, subresource);
}

bool ResourceMatches(const api::PolicyRule& rule, absl::string_view resource,
                     absl::string_view subresource) {
  for (const std::string& entry : rule.resources()) {
    if (entry == kAll) return true;
    if (subresource.empty()) {
      if (entry == resource) return true;
      continue;
    }
    if (IsCombined(entry, resource, subresource)) return true;
    if (IsCombined(entry, kAll, subresource)) return true;
  }
  return false;
}

bool ResourceNameMatches(const api::PolicyRule& rule, absl::string_view name) {
  if (rule.resource_names().empty()) return true;
  return !name.empty() && ListHas(rule.resource_names(), name);
}

// ---- Bindings ----

// Whether `user` is "system:serviceaccount:<ns>:<name>", compared in place.
bool IsServiceAccount(absl::string_view user, absl::string_view ns,
                      absl::string_view name) {
  if (!absl::ConsumePrefix(&user, kServiceAccountPrefix)) return false;
  if (!absl::ConsumePrefix(&user, ns)) return false;
  if (!absl::ConsumePrefix(&user, ":")) return false;
  return user == name;
}

// A ServiceAccount subject of a RoleBinding without a namespace means the
// binding's (Kubernetes' appliesToUser).
absl::string_view SubjectNamespace(const api::Subject& subject,
                                   absl::string_view binding_namespace) {
  return subject.namespace_().empty() ? binding_namespace
                                      : absl::string_view(subject.namespace_());
}

bool SubjectMatches(const api::Subject& subject, const UserInfo& user,
                    absl::string_view binding_namespace) {
  if (subject.kind() == kUserKind) return subject.name() == user.name;
  if (subject.kind() == kGroupKind) return InGroup(user, subject.name());
  if (subject.kind() == kServiceAccountKind) {
    absl::string_view ns = SubjectNamespace(subject, binding_namespace);
    return !ns.empty() && IsServiceAccount(user.name, ns, subject.name());
  }
  return false;
}

const api::Subject* AppliesTo(const api::RoleBinding& binding,
                              const UserInfo& user,
                              absl::string_view binding_namespace) {
  for (const api::Subject& subject : binding.subjects()) {
    if (SubjectMatches(subject, user, binding_namespace)) return &subject;
  }
  return nullptr;
}

void AppendKey(std::string* key, absl::string_view kind, absl::string_view ns,
               absl::string_view name) {
  key->clear();
  absl::StrAppend(key, kind, "/", ns, "/", name);
}

// FindRole with `key` as scratch space, kept by the caller so that one
// evaluation allocates it once.
const api::Role* FindRoleWithKey(const RbacObjects& objects,
                                 const api::RoleRef& ref,
                                 absl::string_view binding_namespace,
                                 std::string* key) {
  if (ref.kind() == kRoleKind) {
    if (binding_namespace.empty()) return nullptr;
    AppendKey(key, kRoleKind, binding_namespace, ref.name());
  } else if (ref.kind() == kClusterRoleKind) {
    AppendKey(key, kClusterRoleKind, "", ref.name());
  } else {
    return nullptr;
  }
  auto it = objects.find(*key);
  if (it == objects.end() || !it->second.has_role()) return nullptr;
  return &it->second.role();
}

// Whether `key` is "<kind>/<ns>/<name>" for some name.
bool InScope(absl::string_view key, absl::string_view kind,
             absl::string_view ns) {
  return absl::ConsumePrefix(&key, kind) && absl::ConsumePrefix(&key, "/") &&
         absl::ConsumePrefix(&key, ns) && absl::StartsWith(key, "/");
}

// `ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`, or
// `RoleBinding "x/ns" of Role "y" to ServiceAccount "sa/ns"`, as Kubernetes'
// describers.
std::string DescribeGrant(const api::RoleBinding& binding,
                          const api::Subject& subject) {
  const absl::string_view ns = binding.metadata().namespace_();
  std::string out = binding.kind();
  out.push_back(' ');
  AppendQuoted(&out, ns.empty()
                         ? binding.metadata().name()
                         : absl::StrCat(binding.metadata().name(), "/", ns));
  absl::StrAppend(&out, " of ", binding.role_ref().kind(), " ");
  AppendQuoted(&out, binding.role_ref().name());
  absl::StrAppend(&out, " to ", subject.kind(), " ");
  if (subject.kind() == kServiceAccountKind) {
    AppendQuoted(
        &out, absl::StrCat(subject.name(), "/", SubjectNamespace(subject, ns)));
  } else {
    AppendQuoted(&out, subject.name());
  }
  return out;
}

}  // namespace

std::string ApiGroupOf(absl::string_view resource) {
  const ResourceInfo* info = FindResource(resource);
  return info == nullptr ? std::string() : std::string(info->group);
}

bool IsClusterScoped(absl::string_view resource) {
  const ResourceInfo* info = FindResource(resource);
  return info != nullptr && info->cluster_scoped;
}

absl::string_view ResourceOfRbacKind(absl::string_view kind) {
  if (kind == kRoleKind) return "roles";
  if (kind == kClusterRoleKind) return "clusterroles";
  if (kind == kRoleBindingKind) return "rolebindings";
  if (kind == kClusterRoleBindingKind) return "clusterrolebindings";
  return "";
}

bool IsClusterRbacKind(absl::string_view kind) {
  return kind == kClusterRoleKind || kind == kClusterRoleBindingKind;
}

std::string ForbiddenMessage(const UserInfo& user, const Attributes& attrs) {
  // apierrors.NewForbidden(GroupResource, name, forbiddenMessage(attrs)).
  std::string out = attrs.resource;
  if (!attrs.api_group.empty()) absl::StrAppend(&out, ".", attrs.api_group);
  if (!attrs.name.empty()) {
    out.push_back(' ');
    AppendQuoted(&out, attrs.name);
  }
  out.append(" is forbidden: User ");
  AppendQuoted(&out, user.name);
  absl::StrAppend(&out, " cannot ", attrs.verb, " resource ");
  AppendQuoted(&out,
               attrs.subresource.empty()
                   ? attrs.resource
                   : absl::StrCat(attrs.resource, "/", attrs.subresource));
  out.append(" in API group ");
  AppendQuoted(&out, attrs.api_group);
  if (attrs.namespace_.empty()) {
    out.append(" at the cluster scope");
  } else {
    out.append(" in the namespace ");
    AppendQuoted(&out, attrs.namespace_);
  }
  return out;
}

bool RuleAllows(const api::PolicyRule& rule, const Attributes& attrs) {
  // jobsetd makes no non-resource requests: a rule of nonResourceURLs (no
  // resources) matches nothing here.
  return ListHasOrAll(rule.verbs(), attrs.verb) &&
         ListHasOrAll(rule.api_groups(), attrs.api_group) &&
         ResourceMatches(rule, attrs.resource, attrs.subresource) &&
         ResourceNameMatches(rule, attrs.name);
}

std::string RbacObjectKey(absl::string_view kind, absl::string_view namespace_,
                          absl::string_view name) {
  std::string key;
  AppendKey(&key, kind, namespace_, name);
  return key;
}

const api::Role* FindRole(const RbacObjects& objects, const api::RoleRef& ref,
                          absl::string_view binding_namespace) {
  std::string key;
  return FindRoleWithKey(objects, ref, binding_namespace, &key);
}

void VisitRulesFor(const RbacObjects& objects, const UserInfo& user,
                   absl::string_view namespace_, RuleVisitor visit) {
  // One scratch key serves the range lookups and the role lookups.
  std::string key;
  // Visits the bindings of `kind` in `scope`; false once visit said stop.
  // The bindings of a kind and namespace are one range of the map (a
  // namespace holds no '/').
  auto visit_bindings = [&](absl::string_view kind, absl::string_view scope) {
    AppendKey(&key, kind, scope, "");
    for (auto it = objects.lower_bound(key);
         it != objects.end() && InScope(it->first, kind, scope); ++it) {
      if (!it->second.has_binding()) continue;
      const api::RoleBinding& binding = it->second.binding();
      const api::Subject* subject = AppliesTo(binding, user, scope);
      if (subject == nullptr) continue;
      const api::Role* role =
          FindRoleWithKey(objects, binding.role_ref(), scope, &key);
      if (role == nullptr) continue;
      for (const api::PolicyRule& rule : role->rules()) {
        if (!visit(binding, *subject, rule)) return false;
      }
    }
    return true;
  };
  if (!visit_bindings(kClusterRoleBindingKind, "")) return;
  if (!namespace_.empty()) visit_bindings(kRoleBindingKind, namespace_);
}

bool Authorize(const RbacObjects& objects, const UserInfo& user,
               const Attributes& attrs, std::string* reason) {
  bool allowed = false;
  VisitRulesFor(objects, user, attrs.namespace_,
                [&](const api::RoleBinding& binding,
                    const api::Subject& subject, const api::PolicyRule& rule) {
                  if (!RuleAllows(rule, attrs)) return true;
                  allowed = true;
                  if (reason != nullptr) {
                    *reason = absl::StrCat("allowed by ",
                                           DescribeGrant(binding, subject));
                  }
                  return false;
                });
  return allowed;
}

bool ListHas(const RepeatedPtrField<std::string>& list,
             absl::string_view value) {
  for (const std::string& entry : list) {
    if (entry == value) return true;
  }
  return false;
}

bool ListHasOrAll(const RepeatedPtrField<std::string>& list,
                  absl::string_view value) {
  for (const std::string& entry : list) {
    if (entry == value || entry == kAll) return true;
  }
  return false;
}

}  // namespace jobset::auth
