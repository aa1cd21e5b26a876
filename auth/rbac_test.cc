#include "auth/rbac.h"

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
using ::jobset::auth::testing::Req;
using ::jobset::auth::testing::Role;
using ::jobset::auth::testing::RoleBinding;
using ::jobset::auth::testing::Rule;
using ::jobset::auth::testing::U;
using ::jobset::auth::testing::User;
using ::testing::IsEmpty;

// ---- Put, Remove, List ----

TEST(RbacPolicyTest, PutReplacesByKindNamespaceAndName) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(Role("team-a", "r", {Rule({"get"}, {""}, {"pods"})})).ok());
  ASSERT_TRUE(
      policy.Put(RoleBinding("team-a", "b", "Role", "r", {User("u")})).ok());
  EXPECT_TRUE(policy.Allows(U("u"), Req("get", "pods", "team-a", "p")));
  EXPECT_FALSE(policy.Allows(U("u"), Req("list", "pods", "team-a")));
  ASSERT_TRUE(
      policy.Put(Role("team-a", "r", {Rule({"list"}, {""}, {"pods"})})).ok());
  EXPECT_FALSE(policy.Allows(U("u"), Req("get", "pods", "team-a", "p")));
  EXPECT_TRUE(policy.Allows(U("u"), Req("list", "pods", "team-a")));
  EXPECT_EQ(policy.List("Role", "team-a").size(), 1u);
  // Same name, another namespace or kind: another object.
  ASSERT_TRUE(
      policy.Put(Role("team-b", "r", {Rule({"get"}, {""}, {"pods"})})).ok());
  ASSERT_TRUE(
      policy.Put(ClusterRole("r", {Rule({"get"}, {""}, {"pods"})})).ok());
  EXPECT_EQ(policy.List("Role", "").size(), 2u);
  EXPECT_EQ(policy.List("Role", "team-b").size(), 1u);
  EXPECT_EQ(policy.List("ClusterRole", "").size(), 5u);
}

TEST(RbacPolicyTest, List) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(RoleBinding("team-b", "x", "ClusterRole", "view", {User("u")}))
          .ok());
  ASSERT_TRUE(
      policy.Put(RoleBinding("team-a", "y", "ClusterRole", "view", {User("u")}))
          .ok());
  ASSERT_TRUE(
      policy.Put(RoleBinding("team-a", "x", "ClusterRole", "view", {User("u")}))
          .ok());
  // A namespace that is a prefix of another is not confused with it.
  ASSERT_TRUE(
      policy
          .Put(RoleBinding("team-a2", "z", "ClusterRole", "view", {User("u")}))
          .ok());
  std::vector<std::string> names;
  for (const api::RbacObject& o : policy.List("RoleBinding", "team-a")) {
    names.push_back(o.binding().metadata().name());
  }
  EXPECT_THAT(names, ::testing::ElementsAre("x", "y"));
  EXPECT_EQ(policy.List("RoleBinding", "").size(), 4u);
  EXPECT_EQ(policy.List("ClusterRoleBinding", "").size(), 1u);
  // The namespace of a cluster-scoped kind is ignored.
  EXPECT_EQ(policy.List("ClusterRoleBinding", "team-a").size(), 1u);
  EXPECT_THAT(policy.List("Secret", ""), IsEmpty());
  EXPECT_THAT(policy.List("Role", "team-a"), IsEmpty());
  // Every kind: 4 ClusterRoles, 1 ClusterRoleBinding, the bindings asked for.
  EXPECT_EQ(policy.List("", "team-a").size(), 7u);
  EXPECT_EQ(policy.List("", "").size(), 9u);
}

TEST(RbacPolicyTest, Remove) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(RoleBinding("team-a", "e", "ClusterRole", "edit", {User("u")}))
          .ok());
  api::RbacObjectRef ref;
  ref.set_kind("RoleBinding");
  ref.set_namespace_("team-b");
  ref.set_name("e");
  auto removed = policy.Remove(ref);
  EXPECT_EQ(removed.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(removed.status().message(),
            "rolebindings.rbac.authorization.k8s.io \"e\" not found");
  ref.set_namespace_("team-a");
  removed = policy.Remove(ref);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->binding().metadata().name(), "e");
  EXPECT_EQ(removed->binding().role_ref().name(), "edit");
  EXPECT_FALSE(policy.Allows(U("u"), Req("create", "jobsets", "team-a")));
  EXPECT_EQ(policy.Remove(ref).status().code(), absl::StatusCode::kNotFound);

  ref.set_kind("Widget");
  EXPECT_EQ(policy.Remove(ref).status().code(),
            absl::StatusCode::kInvalidArgument);
  ref.set_kind("Role");
  ref.clear_namespace_();
  EXPECT_EQ(policy.Remove(ref).status().code(),
            absl::StatusCode::kInvalidArgument);

  // A cluster-scoped kind ignores the namespace.
  ASSERT_TRUE(
      policy.Put(ClusterRole("c", {Rule({"get"}, {""}, {"pods"})})).ok());
  ref.set_kind("ClusterRole");
  ref.set_namespace_("team-a");
  ref.set_name("c");
  EXPECT_TRUE(policy.Remove(ref).ok());
  EXPECT_EQ(policy.List("ClusterRole", "").size(), 4u);
}

TEST(RbacPolicyTest, RemovingARoleRevokesItsBindings) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(ClusterRole("c", {Rule({"list"}, {""}, {"nodes"})})).ok());
  ASSERT_TRUE(policy.Put(ClusterRoleBinding("c", "c", {User("u")})).ok());
  EXPECT_TRUE(policy.Allows(U("u"), Req("list", "nodes")));
  api::RbacObjectRef ref;
  ref.set_kind("ClusterRole");
  ref.set_name("c");
  ASSERT_TRUE(policy.Remove(ref).ok());
  EXPECT_FALSE(policy.Allows(U("u"), Req("list", "nodes")));
}

}  // namespace
}  // namespace jobset::auth
