#include "auth/rbac_validation.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "auth/rbac.h"
#include "auth/rbac_testing.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/auth.pb.h"

namespace jobset::auth {
namespace {

using ::jobset::auth::testing::ClusterRole;
using ::jobset::auth::testing::ClusterRoleBinding;
using ::jobset::auth::testing::Group;
using ::jobset::auth::testing::Role;
using ::jobset::auth::testing::RoleBinding;
using ::jobset::auth::testing::Rule;
using ::jobset::auth::testing::ServiceAccount;
using ::jobset::auth::testing::User;
using ::testing::HasSubstr;

// ---- roleRef existence (stricter than upstream) ----

// A binding must name a Role (in its namespace) or ClusterRole that exists;
// the built-in ClusterRoles exist. Checked on the API's apply path
// (RbacPolicy::CheckCanApply), so that even system:masters is refused.
TEST(ValidateRoleRefExistsTest, BindingsToMissingRolesAreRefused) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(Role("team-a", "r", {Rule({"get"}, {""}, {"pods"})})).ok());
  ASSERT_TRUE(
      policy.Put(ClusterRole("c", {Rule({"get"}, {""}, {"pods"})})).ok());
  const UserInfo admin = testing::U("root", {"system:masters"});
  struct Case {
    api::RbacObject object;
    bool ok;
    std::string message;
  };
  const std::vector<Case> cases = {
      {RoleBinding("team-a", "b", "Role", "r", {User("x")}), true, ""},
      {RoleBinding("team-a", "b", "ClusterRole", "c", {User("x")}), true, ""},
      {RoleBinding("team-a", "b", "ClusterRole", "view", {User("x")}), true,
       ""},
      {ClusterRoleBinding("b", "cluster-admin", {User("x")}), true, ""},
      {ClusterRoleBinding("b", "c", {User("x")}), true, ""},
      {RoleBinding("team-b", "b", "Role", "r", {User("x")}), false,
       "RoleBinding.rbac.authorization.k8s.io \"b\" is invalid: "
       "roleRef.name: Not found: \"r\" (no Role \"r\" in namespace "
       "\"team-b\")"},
      {RoleBinding("team-a", "b", "ClusterRole", "missing", {User("x")}), false,
       "RoleBinding.rbac.authorization.k8s.io \"b\" is invalid: "
       "roleRef.name: Not found: \"missing\" (no ClusterRole \"missing\")"},
      {ClusterRoleBinding("b", "no\nsuch", {User("x")}), false,
       "ClusterRoleBinding.rbac.authorization.k8s.io \"b\" is invalid: "
       "roleRef.name: Not found: \"no\\nsuch\" (no ClusterRole "
       "\"no\\nsuch\")"},
  };
  for (const Case& c : cases) {
    absl::Status s = policy.CheckCanApply(admin, c.object);
    if (c.ok) {
      EXPECT_TRUE(s.ok()) << s;
    } else {
      EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
      EXPECT_EQ(s.message(), c.message);
    }
  }
  // Roles themselves need nothing to exist.
  EXPECT_TRUE(policy
                  .CheckCanApply(admin, ClusterRole("new", {Rule({"get"}, {""},
                                                                 {"pods"})}))
                  .ok());
}

// ---- Validation ----

struct ValidationCase {
  std::string name;
  std::function<void(api::RbacObject*)> mutate;
  std::string want;  // empty: valid
};

api::RbacObject ValidRole() {
  return Role("team-a", "reader", {Rule({"get"}, {""}, {"pods"})});
}
api::RbacObject ValidClusterRole() {
  return ClusterRole("reader", {Rule({"get"}, {""}, {"pods"})});
}
api::RbacObject ValidRoleBinding() {
  return RoleBinding("team-a", "b", "Role", "reader", {User("u")});
}
api::RbacObject ValidClusterRoleBinding() {
  return ClusterRoleBinding("b", "reader", {User("u")});
}

void ExpectValidation(const api::RbacObject& base,
                      const std::vector<ValidationCase>& cases) {
  for (const ValidationCase& c : cases) {
    api::RbacObject object = base;
    c.mutate(&object);
    absl::Status s = ValidateRbacObject(object);
    if (c.want.empty()) {
      EXPECT_TRUE(s.ok()) << c.name << ": " << s;
      continue;
    }
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(s.message(), HasSubstr(c.want)) << c.name;
    // Put refuses what validation refuses.
    RbacPolicy policy;
    EXPECT_EQ(policy.Put(object).code(), absl::StatusCode::kInvalidArgument)
        << c.name;
  }
}

TEST(ValidateRbacObjectTest, Roles) {
  auto role = [](api::RbacObject* o) { return o->mutable_role(); };
  auto rule0 = [](api::RbacObject* o) {
    return o->mutable_role()->mutable_rules(0);
  };
  ExpectValidation(
      ValidRole(),
      {
          {"valid", [](api::RbacObject*) {}, ""},
          {"api version",
           [&](api::RbacObject* o) { role(o)->set_api_version("v1"); },
           "apiVersion: Unsupported value: \"v1\": supported values: "
           "\"rbac.authorization.k8s.io/v1\""},
          {"no api version",
           [&](api::RbacObject* o) { role(o)->clear_api_version(); },
           "apiVersion: Required value"},
          {"binding kind on a role",
           [&](api::RbacObject* o) { role(o)->set_kind("RoleBinding"); },
           "kind: Unsupported value: \"RoleBinding\": supported values: "
           "\"Role\", \"ClusterRole\""},
          {"no kind", [&](api::RbacObject* o) { role(o)->clear_kind(); },
           "kind: Unsupported value: \"\""},
          {"no name",
           [&](api::RbacObject* o) {
             role(o)->mutable_metadata()->clear_name();
           },
           "metadata.name: Required value"},
          {"dot",
           [&](api::RbacObject* o) {
             role(o)->mutable_metadata()->set_name(".");
           },
           "metadata.name: Invalid value: \".\": may not be '.'"},
          {"dotdot",
           [&](api::RbacObject* o) {
             role(o)->mutable_metadata()->set_name("..");
           },
           "may not be '..'"},
          {"slash",
           [&](api::RbacObject* o) {
             role(o)->mutable_metadata()->set_name("a/b");
           },
           "metadata.name: Invalid value: \"a/b\": may not contain '/'"},
          {"percent",
           [&](api::RbacObject* o) {
             role(o)->mutable_metadata()->set_name("a%b");
           },
           "may not contain '%'"},
          {"colon names are fine",
           [&](api::RbacObject* o) {
             role(o)->mutable_metadata()->set_name("system:Reader@x");
           },
           ""},
          {"long name",
           [&](api::RbacObject* o) {
             role(o)->mutable_metadata()->set_name(std::string(254, 'a'));
           },
           "metadata.name: Too long: may not be more than 253 bytes"},
          {"no namespace",
           [&](api::RbacObject* o) {
             role(o)->mutable_metadata()->clear_namespace_();
           },
           "metadata.namespace: Required value"},
          {"bad namespace",
           [&](api::RbacObject* o) {
             role(o)->mutable_metadata()->set_namespace_("Team_A");
           },
           "metadata.namespace: Invalid value: \"Team_A\": a lowercase RFC "
           "1123 label"},
          {"generate name",
           [&](api::RbacObject* o) {
             role(o)->mutable_metadata()->set_generate_name("r-");
           },
           "metadata.generateName: Forbidden"},
          {"bad label",
           [&](api::RbacObject* o) {
             (*role(o)->mutable_metadata()->mutable_labels())["a b"] = "x";
           },
           "metadata.labels[a b]: Invalid value: \"a b\""},
          {"bad label value",
           [&](api::RbacObject* o) {
             (*role(o)->mutable_metadata()->mutable_labels())["a"] = "-x";
           },
           "metadata.labels[a]: Invalid value: \"-x\""},
          {"bad annotation",
           [&](api::RbacObject* o) {
             (*role(o)->mutable_metadata()->mutable_annotations())["/"] = "x";
           },
           "metadata.annotations[/]: Invalid value"},
          {"no verbs", [&](api::RbacObject* o) { rule0(o)->clear_verbs(); },
           "rules[0].verbs: Required value: verbs must contain at least one "
           "value"},
          {"empty verb", [&](api::RbacObject* o) { rule0(o)->add_verbs(""); },
           "rules[0].verbs[1]: Invalid value: \"\": must not be empty"},
          {"no api groups",
           [&](api::RbacObject* o) { rule0(o)->clear_api_groups(); },
           "rules[0].apiGroups: Required value: resource rules must supply at "
           "least one api group"},
          {"no resources",
           [&](api::RbacObject* o) { rule0(o)->clear_resources(); },
           "rules[0].resources: Required value: resource rules must supply at "
           "least one resource"},
          {"empty resource name",
           [&](api::RbacObject* o) { rule0(o)->add_resource_names(""); },
           "rules[0].resourceNames[0]: Invalid value: \"\": must not be empty"},
          {"urls in a Role",
           [&](api::RbacObject* o) {
             rule0(o)->clear_api_groups();
             rule0(o)->clear_resources();
             rule0(o)->add_non_resource_urls("/healthz");
           },
           "rules[0].nonResourceURLs: Invalid value: [\"/healthz\"]: "
           "namespaced rules cannot apply to non-resource URLs"},
          {"too many rules",
           [&](api::RbacObject* o) {
             for (int i = 0; i < 1000; ++i) *role(o)->add_rules() = *rule0(o);
           },
           "rules: Too many: 1001: must have at most 1000 items"},
          {"1000 rules",
           [&](api::RbacObject* o) {
             for (int i = 0; i < 999; ++i) *role(o)->add_rules() = *rule0(o);
           },
           ""},
          {"too many verbs",
           [&](api::RbacObject* o) {
             for (int i = 0; i < 256; ++i) rule0(o)->add_verbs("get");
           },
           "rules[0].verbs: Too many: 257: must have at most 256 items"},
          {"long resource",
           [&](api::RbacObject* o) {
             rule0(o)->add_resources(std::string(254, 'r'));
           },
           "rules[0].resources[1]: Too long: may not be more than 253 bytes"},
          {"second rule",
           [&](api::RbacObject* o) { role(o)->add_rules()->add_verbs("get"); },
           "rules[1].apiGroups: Required value"},
      });
}

TEST(ValidateRbacObjectTest, ClusterRoles) {
  auto role = [](api::RbacObject* o) { return o->mutable_role(); };
  auto rule0 = [](api::RbacObject* o) {
    return o->mutable_role()->mutable_rules(0);
  };
  ExpectValidation(
      ValidClusterRole(),
      {
          {"valid", [](api::RbacObject*) {}, ""},
          {"namespace",
           [&](api::RbacObject* o) {
             role(o)->mutable_metadata()->set_namespace_("team-a");
           },
           "metadata.namespace: Forbidden: not allowed on this type"},
          {"urls",
           [&](api::RbacObject* o) {
             rule0(o)->clear_api_groups();
             rule0(o)->clear_resources();
             rule0(o)->add_non_resource_urls("/healthz");
           },
           ""},
          {"urls and resources",
           [&](api::RbacObject* o) { rule0(o)->add_non_resource_urls("/x"); },
           "rules[0].nonResourceURLs: Invalid value: [\"/x\"]: rules cannot "
           "apply to both regular resources and non-resource URLs"},
          {"names the object",
           [&](api::RbacObject* o) { rule0(o)->clear_verbs(); },
           "ClusterRole.rbac.authorization.k8s.io \"reader\" is invalid: "
           "rules[0].verbs: Required value"},
      });
}

TEST(ValidateRbacObjectTest, RoleBindings) {
  auto b = [](api::RbacObject* o) { return o->mutable_binding(); };
  ExpectValidation(
      ValidRoleBinding(),
      {
          {"valid", [](api::RbacObject*) {}, ""},
          {"to a ClusterRole",
           [&](api::RbacObject* o) {
             b(o)->mutable_role_ref()->set_kind("ClusterRole");
           },
           ""},
          {"no subjects", [&](api::RbacObject* o) { b(o)->clear_subjects(); },
           ""},
          {"role kind on a binding",
           [&](api::RbacObject* o) { b(o)->set_kind("Role"); },
           "kind: Unsupported value: \"Role\": supported values: "
           "\"RoleBinding\", \"ClusterRoleBinding\""},
          {"api version",
           [&](api::RbacObject* o) {
             b(o)->set_api_version("rbac.authorization.k8s.io/v1beta1");
           },
           "apiVersion: Unsupported value"},
          {"no namespace",
           [&](api::RbacObject* o) {
             b(o)->mutable_metadata()->clear_namespace_();
           },
           "metadata.namespace: Required value"},
          {"bad name",
           [&](api::RbacObject* o) {
             b(o)->mutable_metadata()->set_name("a/b");
           },
           "metadata.name: Invalid value: \"a/b\""},
          {"roleRef kind",
           [&](api::RbacObject* o) {
             b(o)->mutable_role_ref()->set_kind("Secret");
           },
           "roleRef.kind: Unsupported value: \"Secret\": supported values: "
           "\"Role\", \"ClusterRole\""},
          {"roleRef group",
           [&](api::RbacObject* o) {
             b(o)->mutable_role_ref()->set_api_group("");
           },
           "roleRef.apiGroup: Unsupported value: \"\": supported values: "
           "\"rbac.authorization.k8s.io\""},
          {"roleRef name",
           [&](api::RbacObject* o) { b(o)->mutable_role_ref()->clear_name(); },
           "roleRef.name: Required value"},
          {"roleRef name slash",
           [&](api::RbacObject* o) {
             b(o)->mutable_role_ref()->set_name("x/y");
           },
           "roleRef.name: Invalid value: \"x/y\": may not contain '/'"},
          {"subject kind",
           [&](api::RbacObject* o) {
             b(o)->mutable_subjects(0)->set_kind("Bot");
           },
           "subjects[0].kind: Unsupported value: \"Bot\": supported values: "
           "\"ServiceAccount\", \"User\", \"Group\""},
          {"subject name",
           [&](api::RbacObject* o) { b(o)->mutable_subjects(0)->clear_name(); },
           "subjects[0].name: Required value"},
          {"long subject name",
           [&](api::RbacObject* o) {
             b(o)->mutable_subjects(0)->set_name(std::string(254, 'u'));
           },
           "subjects[0].name: Too long"},
          {"user api group",
           [&](api::RbacObject* o) {
             b(o)->mutable_subjects(0)->set_api_group("example.com");
           },
           "subjects[0].apiGroup: Unsupported value: \"example.com\""},
          {"user without api group",
           [&](api::RbacObject* o) {
             b(o)->mutable_subjects(0)->clear_api_group();
           },
           ""},
          {"group",
           [&](api::RbacObject* o) { *b(o)->add_subjects() = Group("g"); }, ""},
          {"service account without namespace (the binding's)",
           [&](api::RbacObject* o) {
             *b(o)->add_subjects() = ServiceAccount("", "sa");
           },
           ""},
          {"service account name",
           [&](api::RbacObject* o) {
             *b(o)->add_subjects() = ServiceAccount("ci", "Bad_Name");
           },
           "subjects[1].name: Invalid value: \"Bad_Name\""},
          {"service account namespace",
           [&](api::RbacObject* o) {
             *b(o)->add_subjects() = ServiceAccount("C I", "sa");
           },
           "subjects[1].namespace: Invalid value: \"C I\""},
          {"service account api group",
           [&](api::RbacObject* o) {
             api::Subject s = ServiceAccount("ci", "sa");
             s.set_api_group(std::string(kRbacGroup));
             *b(o)->add_subjects() = s;
           },
           "subjects[1].apiGroup: Unsupported value"},
          {"too many subjects",
           [&](api::RbacObject* o) {
             for (int i = 0; i < 1000; ++i) *b(o)->add_subjects() = User("u");
           },
           "subjects: Too many: 1001: must have at most 1000 items"},
          {"every problem reported",
           [&](api::RbacObject* o) {
             b(o)->mutable_role_ref()->clear_name();
             b(o)->mutable_subjects(0)->clear_name();
           },
           "roleRef.name: Required value; subjects[0].name: Required value"},
      });
}

TEST(ValidateRbacObjectTest, ClusterRoleBindings) {
  auto b = [](api::RbacObject* o) { return o->mutable_binding(); };
  ExpectValidation(
      ValidClusterRoleBinding(),
      {
          {"valid", [](api::RbacObject*) {}, ""},
          {"to a Role",
           [&](api::RbacObject* o) {
             b(o)->mutable_role_ref()->set_kind("Role");
           },
           "roleRef.kind: Unsupported value: \"Role\": supported values: "
           "\"ClusterRole\""},
          {"namespace",
           [&](api::RbacObject* o) {
             b(o)->mutable_metadata()->set_namespace_("a");
           },
           "metadata.namespace: Forbidden: not allowed on this type"},
          {"service account needs a namespace",
           [&](api::RbacObject* o) {
             *b(o)->add_subjects() = ServiceAccount("", "sa");
           },
           "subjects[1].namespace: Required value"},
          {"service account",
           [&](api::RbacObject* o) {
             *b(o)->add_subjects() = ServiceAccount("ci", "sa");
           },
           ""},
      });
}

TEST(ValidateRbacObjectTest, EmptyObject) {
  absl::Status s = ValidateRbacObject(api::RbacObject());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("object: Required value"));
}

}  // namespace
}  // namespace jobset::auth
