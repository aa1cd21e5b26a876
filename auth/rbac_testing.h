#ifndef JOBSET_AUTH_RBAC_TESTING_H_
#define JOBSET_AUTH_RBAC_TESTING_H_

// Builders for the RBAC tests: rules, roles, bindings, subjects, requests
// and users, as short as the tables that use them.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "auth/rbac.h"
#include "proto/auth.pb.h"

namespace jobset::auth::testing {

api::PolicyRule Rule(std::vector<std::string> verbs,
                     std::vector<std::string> groups,
                     std::vector<std::string> resources,
                     std::vector<std::string> names = {});

// A Role or ClusterRole (kind) of rbac.authorization.k8s.io/v1.
api::RbacObject RoleObject(absl::string_view kind, absl::string_view ns,
                           absl::string_view name,
                           std::vector<api::PolicyRule> rules);
api::RbacObject ClusterRole(absl::string_view name,
                            std::vector<api::PolicyRule> rules);
api::RbacObject Role(absl::string_view ns, absl::string_view name,
                     std::vector<api::PolicyRule> rules);

// A subject; a User or Group in the RBAC API group.
api::Subject Subject(absl::string_view kind, absl::string_view name,
                     absl::string_view ns = "");
api::Subject User(absl::string_view name);
api::Subject Group(absl::string_view name);
api::Subject ServiceAccount(absl::string_view ns, absl::string_view name);

// A RoleBinding or ClusterRoleBinding (kind) of a role_kind named role_name.
api::RbacObject BindingObject(absl::string_view kind, absl::string_view ns,
                              absl::string_view name,
                              absl::string_view role_kind,
                              absl::string_view role_name,
                              std::vector<api::Subject> subjects);
api::RbacObject RoleBinding(absl::string_view ns, absl::string_view name,
                            absl::string_view role_kind,
                            absl::string_view role_name,
                            std::vector<api::Subject> subjects);
api::RbacObject ClusterRoleBinding(absl::string_view name,
                                   absl::string_view role_name,
                                   std::vector<api::Subject> subjects);

// A request on "res" or "res/sub", its group as jobsetd serves it.
Attributes Req(absl::string_view verb, absl::string_view resource,
               absl::string_view ns = "", absl::string_view name = "");

// A user in `groups` and system:authenticated.
UserInfo U(absl::string_view name, std::vector<std::string> groups = {});

// "verb resource[/sub] ns=... name=...", for failure messages.
std::string Describe(const Attributes& a);

// The rules of the role `kind`/`name` (a Role in `ns`) in force.
std::vector<api::PolicyRule> RulesOf(const RbacPolicy& policy,
                                     absl::string_view kind,
                                     absl::string_view name,
                                     absl::string_view ns = "");

}  // namespace jobset::auth::testing

#endif  // JOBSET_AUTH_RBAC_TESTING_H_
