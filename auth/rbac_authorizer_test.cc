#include "auth/rbac_authorizer.h"

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
using ::jobset::auth::testing::Describe;
using ::jobset::auth::testing::Group;
using ::jobset::auth::testing::Req;
using ::jobset::auth::testing::Role;
using ::jobset::auth::testing::RoleBinding;
using ::jobset::auth::testing::Rule;
using ::jobset::auth::testing::ServiceAccount;
using ::jobset::auth::testing::U;
using ::jobset::auth::testing::User;
using ::testing::IsEmpty;

// ---- Resources ----

TEST(ApiGroupOfTest, EveryResourceJobsetdServes) {
  struct Case {
    absl::string_view resource;
    absl::string_view group;
    bool cluster_scoped;
  };
  const Case cases[] = {
      {"jobsets", "jobset.x-k8s.io", false},
      {"jobs", "batch", false},
      {"pods", "", false},
      {"pods/log", "", false},
      {"events", "", false},
      {"secrets", "", false},
      {"configmaps", "", false},
      {"nodes", "", true},
      {"namespaces", "", true},
      {"tokens", "jobset.x-k8s.io", true},
      {"roles", "rbac.authorization.k8s.io", false},
      {"rolebindings", "rbac.authorization.k8s.io", false},
      {"clusterroles", "rbac.authorization.k8s.io", true},
      {"clusterrolebindings", "rbac.authorization.k8s.io", true},
      {"resourceflavors", "kueue.x-k8s.io", true},
      {"clusterqueues", "kueue.x-k8s.io", true},
      {"cohorts", "kueue.x-k8s.io", true},
      {"localqueues", "kueue.x-k8s.io", false},
      {"workloadpriorityclasses", "kueue.x-k8s.io", true},
      {"workloads", "kueue.x-k8s.io", false},
      {"widgets", "", false},
      {"", "", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ApiGroupOf(c.resource), c.group) << c.resource;
    EXPECT_EQ(IsClusterScoped(c.resource), c.cluster_scoped) << c.resource;
  }
}

// ---- Rule matching ----

struct MatchCase {
  api::PolicyRule rule;
  Attributes request;
  bool allowed;
};

TEST(RuleMatchingTest, VerbsGroupsResourcesSubresourcesNames) {
  const MatchCase cases[] = {
      // Verbs.
      {Rule({"get"}, {""}, {"pods"}), Req("get", "pods", "a", "p"), true},
      {Rule({"get"}, {""}, {"pods"}), Req("list", "pods", "a"), false},
      {Rule({"get", "list"}, {""}, {"pods"}), Req("list", "pods", "a"), true},
      {Rule({"*"}, {""}, {"pods"}), Req("deletecollection", "pods", "a"), true},
      // API groups: "" is core only.
      {Rule({"get"}, {""}, {"jobsets"}), Req("get", "jobsets", "a", "t"),
       false},
      {Rule({"get"}, {"jobset.x-k8s.io"}, {"jobsets"}),
       Req("get", "jobsets", "a", "t"), true},
      {Rule({"get"}, {"batch"}, {"pods"}), Req("get", "pods", "a", "p"), false},
      {Rule({"get"}, {"*"}, {"pods"}), Req("get", "pods", "a", "p"), true},
      {Rule({"get"}, {"*"}, {"jobs"}), Req("get", "jobs", "a", "j"), true},
      // Resources and subresources.
      {Rule({"get"}, {""}, {"pods"}), Req("get", "pods/log", "a", "p"), false},
      {Rule({"get"}, {""}, {"pods/log"}), Req("get", "pods/log", "a", "p"),
       true},
      {Rule({"get"}, {""}, {"pods/log"}), Req("get", "pods", "a", "p"), false},
      {Rule({"get"}, {""}, {"*/log"}), Req("get", "pods/log", "a", "p"), true},
      {Rule({"get"}, {""}, {"*/log"}), Req("get", "pods", "a", "p"), false},
      {Rule({"get"}, {""}, {"*/status"}), Req("get", "pods/log", "a", "p"),
       false},
      {Rule({"get"}, {""}, {"pods/*"}), Req("get", "pods/log", "a", "p"),
       false},
      {Rule({"get"}, {""}, {"*"}), Req("get", "pods/log", "a", "p"), true},
      {Rule({"get"}, {""}, {"*"}), Req("get", "events", "a"), true},
      {Rule({"get"}, {""}, {"pod"}), Req("get", "pods", "a", "p"), false},
      {Rule({"get"}, {""}, {"podsx/log"}), Req("get", "pods/log", "a", "p"),
       false},
      // Resource names.
      {Rule({"get"}, {""}, {"pods"}, {"p1"}), Req("get", "pods", "a", "p1"),
       true},
      {Rule({"get"}, {""}, {"pods"}, {"p1"}), Req("get", "pods", "a", "p2"),
       false},
      {Rule({"list"}, {""}, {"pods"}, {"p1"}), Req("list", "pods", "a"), false},
      {Rule({"get"}, {""}, {"pods"}, {"p1", "p2"}),
       Req("get", "pods", "a", "p2"), true},
      // Everything.
      {Rule({"*"}, {"*"}, {"*"}), Req("update", "nodes", "", "n1"), true},
  };
  for (const MatchCase& c : cases) {
    RbacPolicy policy;
    ASSERT_TRUE(policy.Put(ClusterRole("r", {c.rule})).ok());
    ASSERT_TRUE(policy.Put(ClusterRoleBinding("b", "r", {User("u")})).ok());
    EXPECT_EQ(policy.Allows(U("u"), c.request), c.allowed)
        << Describe(c.request) << " under " << c.rule.ShortDebugString();
  }
}

TEST(RuleMatchingTest, NonResourceUrlRulesMatchNoRequest) {
  RbacPolicy policy;
  api::PolicyRule urls;
  urls.add_verbs("*");
  urls.add_non_resource_urls("*");
  ASSERT_TRUE(policy.Put(ClusterRole("urls", {urls})).ok());
  ASSERT_TRUE(policy.Put(ClusterRoleBinding("b", "urls", {User("u")})).ok());
  EXPECT_FALSE(policy.Allows(U("u"), Req("get", "pods", "a", "p")));
  EXPECT_FALSE(policy.Allows(U("u"), Req("get", "nodes", "", "n")));
  ASSERT_EQ(policy.List("ClusterRole", "").size(), 5u);
}

TEST(RuleMatchingTest, DefaultDenyAndNoUser) {
  RbacPolicy policy;
  EXPECT_FALSE(policy.Allows(U("nobody"), Req("get", "jobsets", "a", "t")));
  EXPECT_FALSE(policy.Allows(U(""), Req("list", "pods", "a")));
  // system:authenticated alone grants nothing.
  EXPECT_FALSE(policy.Allows(U("x"), Req("list", "jobsets", "default")));
}

// ---- Bindings ----

TEST(BindingTest, RoleBindingIsConfinedToItsNamespace) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(RoleBinding("team-a", "e", "ClusterRole", "edit", {User("u")}))
          .ok());
  EXPECT_TRUE(policy.Allows(U("u"), Req("create", "jobsets", "team-a")));
  EXPECT_TRUE(policy.Allows(U("u"), Req("list", "jobsets", "team-a")));
  EXPECT_FALSE(policy.Allows(U("u"), Req("create", "jobsets", "team-b")));
  EXPECT_FALSE(policy.Allows(U("u"), Req("list", "jobsets", "team-b")));
  EXPECT_FALSE(policy.Allows(U("u"), Req("watch", "jobsets", "team-b")));
  EXPECT_FALSE(policy.Allows(U("u"), Req("get", "jobsets", "team-b", "t")));
  EXPECT_FALSE(policy.Allows(U("u"), Req("get", "pods/log", "team-b", "p")));
  // All namespaces needs a ClusterRoleBinding.
  EXPECT_FALSE(policy.Allows(U("u"), Req("list", "jobsets", "")));
  EXPECT_FALSE(policy.Allows(U("u"), Req("watch", "pods", "")));
  // Another user is not bound.
  EXPECT_FALSE(policy.Allows(U("v"), Req("list", "jobsets", "team-a")));
  // Nor does a namespace that extends another's name share its bindings.
  EXPECT_FALSE(policy.Allows(U("u"), Req("list", "jobsets", "team-a2")));
  EXPECT_FALSE(policy.Allows(U("u"), Req("list", "jobsets", "team")));
  ASSERT_TRUE(
      policy
          .Put(RoleBinding("team-a2", "e", "ClusterRole", "edit", {User("w")}))
          .ok());
  EXPECT_FALSE(policy.Allows(U("w"), Req("list", "jobsets", "team-a")));
  EXPECT_TRUE(policy.Allows(U("w"), Req("list", "jobsets", "team-a2")));
}

TEST(BindingTest, RoleBindingOfARoleUsesTheRoleInItsNamespace) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(Role("team-a", "reader", {Rule({"get"}, {""}, {"pods"})}))
          .ok());
  ASSERT_TRUE(
      policy.Put(Role("team-b", "reader", {Rule({"*"}, {"*"}, {"*"})})).ok());
  ASSERT_TRUE(
      policy.Put(RoleBinding("team-a", "r", "Role", "reader", {User("u")}))
          .ok());
  std::string reason;
  EXPECT_TRUE(
      policy.Allows(U("u"), Req("get", "pods", "team-a", "p"), &reason));
  EXPECT_EQ(reason,
            "allowed by RoleBinding \"r/team-a\" of Role \"reader\" to User "
            "\"u\"");
  EXPECT_FALSE(policy.Allows(U("u"), Req("delete", "pods", "team-a", "p")));
  EXPECT_FALSE(policy.Allows(U("u"), Req("get", "pods", "team-b", "p")));
}

TEST(BindingTest, MissingRoleGrantsNothing) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(RoleBinding("team-a", "r", "Role", "absent", {User("u")}))
          .ok());
  ASSERT_TRUE(policy.Put(ClusterRoleBinding("c", "absent", {User("u")})).ok());
  EXPECT_FALSE(policy.Allows(U("u"), Req("get", "pods", "team-a", "p")));
  api::RoleRef ref;
  ref.set_kind("Role");
  ref.set_name("absent");
  EXPECT_THAT(policy.RulesOf(ref, "team-a"), IsEmpty());
  // A Role is found only in the namespace asked for.
  ASSERT_TRUE(
      policy.Put(Role("team-a", "x", {Rule({"get"}, {""}, {"pods"})})).ok());
  ref.set_name("x");
  EXPECT_EQ(policy.RulesOf(ref, "team-a").size(), 1u);
  EXPECT_THAT(policy.RulesOf(ref, "team-b"), IsEmpty());
  EXPECT_THAT(policy.RulesOf(ref, ""), IsEmpty());
}

TEST(BindingTest, ClusterRoleBindingGrantsEverywhere) {
  RbacPolicy policy;
  ASSERT_TRUE(policy
                  .Put(ClusterRole("node-reader",
                                   {Rule({"get", "list"}, {""}, {"nodes"})}))
                  .ok());
  ASSERT_TRUE(
      policy.Put(ClusterRoleBinding("nr", "node-reader", {User("ops")})).ok());
  EXPECT_TRUE(policy.Allows(U("ops"), Req("list", "nodes")));
  EXPECT_TRUE(policy.Allows(U("ops"), Req("get", "nodes", "", "n1")));
  EXPECT_FALSE(policy.Allows(U("ops"), Req("update", "nodes", "", "n1")));
  // The same ClusterRole through a RoleBinding does not reach nodes.
  ASSERT_TRUE(policy
                  .Put(RoleBinding("team-a", "nr", "ClusterRole", "node-reader",
                                   {User("dev")}))
                  .ok());
  EXPECT_FALSE(policy.Allows(U("dev"), Req("list", "nodes")));
  EXPECT_FALSE(policy.Allows(U("dev"), Req("list", "nodes", "team-a")));
}

TEST(BindingTest, GroupSubjects) {
  RbacPolicy policy;
  ASSERT_TRUE(policy
                  .Put(RoleBinding("team-a", "g", "ClusterRole", "view",
                                   {Group("team-a-devs")}))
                  .ok());
  std::string reason;
  EXPECT_TRUE(policy.Allows(U("x", {"team-a-devs"}),
                            Req("list", "pods", "team-a"), &reason));
  EXPECT_EQ(reason,
            "allowed by RoleBinding \"g/team-a\" of ClusterRole \"view\" to "
            "Group \"team-a-devs\"");
  EXPECT_FALSE(
      policy.Allows(U("x", {"team-b-devs"}), Req("list", "pods", "team-a")));
  // A user named like the group is not in it.
  EXPECT_FALSE(policy.Allows(U("team-a-devs"), Req("list", "pods", "team-a")));
}

TEST(BindingTest, ServiceAccountSubjects) {
  RbacPolicy policy;
  ASSERT_TRUE(policy
                  .Put(RoleBinding("team-a", "sa", "ClusterRole", "view",
                                   {ServiceAccount("ci", "runner")}))
                  .ok());
  // Without a namespace the subject means the binding's.
  ASSERT_TRUE(policy
                  .Put(RoleBinding("team-a", "local", "ClusterRole", "edit",
                                   {ServiceAccount("", "deployer")}))
                  .ok());
  std::string reason;
  EXPECT_TRUE(policy.Allows(U("system:serviceaccount:ci:runner"),
                            Req("list", "pods", "team-a"), &reason));
  EXPECT_EQ(reason,
            "allowed by RoleBinding \"sa/team-a\" of ClusterRole \"view\" to "
            "ServiceAccount \"runner/ci\"");
  EXPECT_FALSE(policy.Allows(U("system:serviceaccount:team-a:runner"),
                             Req("list", "pods", "team-a")));
  EXPECT_FALSE(policy.Allows(U("runner"), Req("list", "pods", "team-a")));
  EXPECT_FALSE(policy.Allows(U("system:serviceaccount:ci:runner2"),
                             Req("list", "pods", "team-a")));
  EXPECT_FALSE(policy.Allows(U("system:serviceaccount:ci:"),
                             Req("list", "pods", "team-a")));
  EXPECT_TRUE(policy.Allows(U("system:serviceaccount:team-a:deployer"),
                            Req("create", "jobsets", "team-a")));
  EXPECT_FALSE(policy.Allows(U("system:serviceaccount:team-b:deployer"),
                             Req("create", "jobsets", "team-a")));
  // In a ClusterRoleBinding.
  ASSERT_TRUE(policy
                  .Put(ClusterRoleBinding("sa-view", "view",
                                          {ServiceAccount("ci", "auditor")}))
                  .ok());
  EXPECT_TRUE(policy.Allows(U("system:serviceaccount:ci:auditor"),
                            Req("list", "jobsets", "")));
}

TEST(BindingTest, FirstMatchingSubjectIsNamed) {
  RbacPolicy policy;
  ASSERT_TRUE(policy
                  .Put(ClusterRoleBinding(
                      "multi", "view", {User("other"), Group("g"), User("u")}))
                  .ok());
  std::string reason;
  EXPECT_TRUE(
      policy.Allows(U("u", {"g"}), Req("list", "pods", "team-a"), &reason));
  EXPECT_EQ(reason,
            "allowed by ClusterRoleBinding \"multi\" of ClusterRole \"view\" "
            "to Group \"g\"");
}

// ---- Forbidden messages ----

TEST(ForbiddenMessageTest, KubeApiserverWording) {
  EXPECT_EQ(ForbiddenMessage(U("alice"), Req("create", "jobsets", "team-b")),
            "jobsets.jobset.x-k8s.io is forbidden: User \"alice\" cannot "
            "create resource \"jobsets\" in API group \"jobset.x-k8s.io\" in "
            "the namespace \"team-b\"");
  EXPECT_EQ(
      ForbiddenMessage(U("alice"), Req("delete", "jobsets", "team-b", "train")),
      "jobsets.jobset.x-k8s.io \"train\" is forbidden: User \"alice\" cannot "
      "delete resource \"jobsets\" in API group \"jobset.x-k8s.io\" in the "
      "namespace \"team-b\"");
  EXPECT_EQ(ForbiddenMessage(U("v"), Req("get", "pods/log", "team-b", "p")),
            "pods \"p\" is forbidden: User \"v\" cannot get resource "
            "\"pods/log\" in API group \"\" in the namespace \"team-b\"");
  EXPECT_EQ(ForbiddenMessage(U("bob"), Req("update", "nodes", "", "n1")),
            "nodes \"n1\" is forbidden: User \"bob\" cannot update resource "
            "\"nodes\" in API group \"\" at the cluster scope");
  EXPECT_EQ(ForbiddenMessage(U("bob"), Req("list", "jobsets", "")),
            "jobsets.jobset.x-k8s.io is forbidden: User \"bob\" cannot list "
            "resource \"jobsets\" in API group \"jobset.x-k8s.io\" at the "
            "cluster scope");
  EXPECT_EQ(ForbiddenMessage(U("bob"), Req("create", "rolebindings", "a")),
            "rolebindings.rbac.authorization.k8s.io is forbidden: User "
            "\"bob\" cannot create resource \"rolebindings\" in API group "
            "\"rbac.authorization.k8s.io\" in the namespace \"a\"");
}

TEST(ForbiddenMessageTest, QuotesHostileNames) {
  EXPECT_EQ(ForbiddenMessage(U("a\"b\nc\\"), Req("get", "pods", "n", "x\ty")),
            "pods \"x\\ty\" is forbidden: User \"a\\\"b\\nc\\\\\" cannot get "
            "resource \"pods\" in API group \"\" in the namespace \"n\"");
  EXPECT_EQ(ForbiddenMessage(U(std::string("a\0b", 3)), Req("list", "nodes")),
            "nodes is forbidden: User \"a\\x00b\" cannot list resource "
            "\"nodes\" in API group \"\" at the cluster scope");
}

}  // namespace
}  // namespace jobset::auth
