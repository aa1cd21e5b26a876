#include "auth/rbac_testing.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace jobset::auth::testing {
namespace {

constexpr absl::string_view kVersion = "rbac.authorization.k8s.io/v1";

}  // namespace

api::PolicyRule Rule(std::vector<std::string> verbs,
                     std::vector<std::string> groups,
                     std::vector<std::string> resources,
                     std::vector<std::string> names) {
  api::PolicyRule rule;
  for (const std::string& v : verbs) rule.add_verbs(v);
  for (const std::string& g : groups) rule.add_api_groups(g);
  for (const std::string& r : resources) rule.add_resources(r);
  for (const std::string& n : names) rule.add_resource_names(n);
  return rule;
}

api::RbacObject RoleObject(absl::string_view kind, absl::string_view ns,
                           absl::string_view name,
                           std::vector<api::PolicyRule> rules) {
  api::RbacObject object;
  api::Role* role = object.mutable_role();
  role->set_api_version(std::string(kVersion));
  role->set_kind(std::string(kind));
  role->mutable_metadata()->set_name(std::string(name));
  role->mutable_metadata()->set_namespace_(std::string(ns));
  for (const api::PolicyRule& r : rules) *role->add_rules() = r;
  return object;
}

api::RbacObject ClusterRole(absl::string_view name,
                            std::vector<api::PolicyRule> rules) {
  return RoleObject("ClusterRole", "", name, std::move(rules));
}

api::RbacObject Role(absl::string_view ns, absl::string_view name,
                     std::vector<api::PolicyRule> rules) {
  return RoleObject("Role", ns, name, std::move(rules));
}

api::Subject Subject(absl::string_view kind, absl::string_view name,
                     absl::string_view ns) {
  api::Subject s;
  s.set_kind(std::string(kind));
  s.set_name(std::string(name));
  s.set_namespace_(std::string(ns));
  if (kind != "ServiceAccount") s.set_api_group(std::string(kRbacGroup));
  return s;
}

api::Subject User(absl::string_view name) { return Subject("User", name); }
api::Subject Group(absl::string_view name) { return Subject("Group", name); }
api::Subject ServiceAccount(absl::string_view ns, absl::string_view name) {
  return Subject("ServiceAccount", name, ns);
}

api::RbacObject BindingObject(absl::string_view kind, absl::string_view ns,
                              absl::string_view name,
                              absl::string_view role_kind,
                              absl::string_view role_name,
                              std::vector<api::Subject> subjects) {
  api::RbacObject object;
  api::RoleBinding* b = object.mutable_binding();
  b->set_api_version(std::string(kVersion));
  b->set_kind(std::string(kind));
  b->mutable_metadata()->set_name(std::string(name));
  b->mutable_metadata()->set_namespace_(std::string(ns));
  b->mutable_role_ref()->set_api_group(std::string(kRbacGroup));
  b->mutable_role_ref()->set_kind(std::string(role_kind));
  b->mutable_role_ref()->set_name(std::string(role_name));
  for (const api::Subject& s : subjects) *b->add_subjects() = s;
  return object;
}

api::RbacObject RoleBinding(absl::string_view ns, absl::string_view name,
                            absl::string_view role_kind,
                            absl::string_view role_name,
                            std::vector<api::Subject> subjects) {
  return BindingObject("RoleBinding", ns, name, role_kind, role_name,
                       std::move(subjects));
}

api::RbacObject ClusterRoleBinding(absl::string_view name,
                                   absl::string_view role_name,
                                   std::vector<api::Subject> subjects) {
  return BindingObject("ClusterRoleBinding", "", name, "ClusterRole", role_name,
                       std::move(subjects));
}

// A request on "res" or "res/sub", its group as jobsetd serves it.
Attributes Req(absl::string_view verb, absl::string_view resource,
               absl::string_view ns, absl::string_view name) {
  Attributes a;
  a.verb = std::string(verb);
  a.api_group = ApiGroupOf(resource);
  const size_t slash = resource.find('/');
  a.resource = std::string(resource.substr(0, slash));
  if (slash != absl::string_view::npos) {
    a.subresource = std::string(resource.substr(slash + 1));
  }
  a.namespace_ = std::string(ns);
  a.name = std::string(name);
  return a;
}

UserInfo U(absl::string_view name, std::vector<std::string> groups) {
  UserInfo u;
  u.name = std::string(name);
  u.groups = std::move(groups);
  u.groups.push_back(std::string(kAuthenticatedGroup));
  return u;
}

std::string Describe(const Attributes& a) {
  return absl::StrCat(a.verb, " ", a.resource, a.subresource.empty() ? "" : "/",
                      a.subresource, " ns=", a.namespace_, " name=", a.name);
}

std::vector<api::PolicyRule> RulesOf(const RbacPolicy& policy,
                                     absl::string_view kind,
                                     absl::string_view name,
                                     absl::string_view ns) {
  api::RoleRef ref;
  ref.set_api_group(std::string(kRbacGroup));
  ref.set_kind(std::string(kind));
  ref.set_name(std::string(name));
  return policy.RulesOf(ref, ns);
}

}  // namespace jobset::auth::testing
