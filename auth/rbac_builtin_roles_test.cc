#include "auth/rbac_builtin_roles.h"

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
using ::jobset::auth::testing::RulesOf;
using ::jobset::auth::testing::U;
using ::jobset::auth::testing::User;
using ::testing::HasSubstr;

// ---- Built-in roles ----

struct BuiltInCase {
  Attributes request;
  bool view, edit, admin;
};

TEST(BuiltInRolesTest, EachRoleOverEachResourceAndVerb) {
  // Each role bound by a RoleBinding in team-a; requests in team-a.
  const BuiltInCase cases[] = {
      {Req("get", "jobsets", "team-a", "t"), true, true, true},
      {Req("list", "jobsets", "team-a"), true, true, true},
      {Req("watch", "jobsets", "team-a"), true, true, true},
      {Req("create", "jobsets", "team-a"), false, true, true},
      {Req("update", "jobsets", "team-a", "t"), false, true, true},
      {Req("patch", "jobsets", "team-a", "t"), false, true, true},
      {Req("delete", "jobsets", "team-a", "t"), false, true, true},
      {Req("deletecollection", "jobsets", "team-a"), false, true, true},
      {Req("list", "jobs", "team-a"), true, true, true},
      {Req("delete", "jobs", "team-a", "j"), false, false, false},
      {Req("list", "pods", "team-a"), true, true, true},
      {Req("get", "pods", "team-a", "p"), true, true, true},
      {Req("get", "pods/log", "team-a", "p"), true, true, true},
      {Req("delete", "pods", "team-a", "p"), false, false, false},
      {Req("list", "events", "team-a"), true, true, true},
      {Req("get", "secrets", "team-a", "s"), false, true, true},
      {Req("list", "secrets", "team-a"), false, true, true},
      {Req("create", "secrets", "team-a"), false, true, true},
      {Req("delete", "secrets", "team-a", "s"), false, true, true},
      {Req("update", "secrets", "team-a", "s"), false, true, true},
      {Req("watch", "secrets", "team-a"), false, true, true},
      // view reads ConfigMaps (not Secrets); edit and admin write both.
      {Req("get", "configmaps", "team-a", "c"), true, true, true},
      {Req("list", "configmaps", "team-a"), true, true, true},
      {Req("watch", "configmaps", "team-a"), true, true, true},
      {Req("create", "configmaps", "team-a", "c"), false, true, true},
      {Req("update", "configmaps", "team-a", "c"), false, true, true},
      {Req("delete", "configmaps", "team-a", "c"), false, true, true},
      {Req("get", "configmaps", "team-b", "c"), false, false, false},
      {Req("list", "secrets", "team-b"), false, false, false},
      {Req("get", "roles", "team-a", "r"), false, false, true},
      {Req("create", "roles", "team-a"), false, false, true},
      {Req("list", "rolebindings", "team-a"), false, false, true},
      {Req("create", "rolebindings", "team-a"), false, false, true},
      {Req("delete", "rolebindings", "team-a", "b"), false, false, true},
      {Req("escalate", "roles", "team-a", "r"), false, false, false},
      {Req("bind", "clusterroles", "team-a", "edit"), false, false, false},
      // Cluster-scoped: no RoleBinding reaches them.
      {Req("list", "nodes"), false, false, false},
      {Req("get", "nodes", "", "n1"), false, false, false},
      {Req("update", "nodes", "", "n1"), false, false, false},
      {Req("create", "tokens"), false, false, false},
      {Req("list", "tokens"), false, false, false},
      {Req("create", "clusterroles"), false, false, false},
      {Req("create", "clusterrolebindings"), false, false, false},
      // Even a caller that passes a namespace for a cluster-scoped resource.
      {Req("list", "nodes", "team-a"), false, false, false},
      // Other namespaces, and all namespaces.
      {Req("get", "jobsets", "team-b", "t"), false, false, false},
      {Req("list", "jobsets", ""), false, false, false},
      {Req("create", "rolebindings", "team-b"), false, false, false},
  };
  for (absl::string_view role : {"view", "edit", "admin"}) {
    RbacPolicy policy;
    ASSERT_TRUE(
        policy.Put(RoleBinding("team-a", "b", "ClusterRole", role, {User("u")}))
            .ok());
    for (const BuiltInCase& c : cases) {
      const bool want =
          role == "view" ? c.view : (role == "edit" ? c.edit : c.admin);
      EXPECT_EQ(policy.Allows(U("u"), c.request), want)
          << role << ": " << Describe(c.request);
    }
  }
}

TEST(BuiltInRolesTest, ClusterAdminGetsEverythingAndOthersNoClusterScope) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(ClusterRoleBinding("root", "cluster-admin", {User("root")}))
          .ok());
  for (absl::string_view role : {"view", "edit", "admin"}) {
    ASSERT_TRUE(policy
                    .Put(ClusterRoleBinding(absl::StrCat("all-", role), role,
                                            {User(role)}))
                    .ok());
  }
  const Attributes cluster[] = {
      Req("list", "nodes"),
      Req("update", "nodes", "", "n1"),
      Req("delete", "nodes", "", "n1"),
      Req("create", "tokens"),
      Req("delete", "tokens", "", "t"),
      Req("create", "clusterroles"),
      Req("create", "clusterrolebindings"),
      Req("create", "namespaces", "", "ns"),
      Req("update", "namespaces", "", "ns"),
      Req("delete", "namespaces", "", "ns"),
  };
  for (const Attributes& a : cluster) {
    EXPECT_TRUE(policy.Allows(U("root"), a)) << Describe(a);
    for (absl::string_view role : {"view", "edit", "admin"}) {
      EXPECT_FALSE(policy.Allows(U(role), a)) << role << ": " << Describe(a);
    }
  }
  EXPECT_TRUE(policy.Allows(U("root"), Req("create", "jobsets", "any")));
  EXPECT_TRUE(policy.Allows(U("root"), Req("get", "secrets", "any", "s")));
  EXPECT_TRUE(policy.Allows(U("root"), Req("delete", "configmaps", "x", "c")));
  // Bound cluster-wide, view still reads no Secret; edit reads and writes
  // them in every namespace.
  EXPECT_FALSE(policy.Allows(U("view"), Req("get", "secrets", "team-z", "s")));
  EXPECT_FALSE(policy.Allows(U("view"), Req("list", "secrets", "")));
  EXPECT_TRUE(policy.Allows(U("view"), Req("list", "configmaps", "")));
  EXPECT_TRUE(policy.Allows(U("edit"), Req("get", "secrets", "team-z", "s")));
  EXPECT_TRUE(
      policy.Allows(U("edit"), Req("create", "configmaps", "team-z", "c")));
  EXPECT_TRUE(policy.Allows(U("root"), Req("get", "pods/log", "x", "p")));
  EXPECT_TRUE(policy.Allows(U("root"), Req("escalate", "roles", "x", "r")));
  // A ClusterRoleBinding of view reads every namespace and all of them.
  EXPECT_TRUE(policy.Allows(U("view"), Req("list", "jobsets", "")));
  EXPECT_TRUE(policy.Allows(U("view"), Req("get", "pods/log", "team-z", "p")));
  EXPECT_FALSE(policy.Allows(U("view"), Req("create", "jobsets", "team-z")));
  // As in Kubernetes, view, edit and admin read Namespaces (cluster-wide
  // when bound so) and none writes them.
  for (absl::string_view role : {"view", "edit", "admin"}) {
    EXPECT_TRUE(policy.Allows(U(role), Req("list", "namespaces")));
    EXPECT_TRUE(policy.Allows(U(role), Req("get", "namespaces", "", "ns")));
  }
}

// A snapshot (every Secret, every token hash, the sealed CA) has its own
// verb: only cluster-admin among the built-ins holds it, and no read grant,
// however wide, reaches it.
TEST(BuiltInRolesTest, OnlyClusterAdminSavesSnapshots) {
  RbacPolicy policy;
  const Attributes save = SaveSnapshotAttributes();
  EXPECT_EQ(save.verb, "save");
  EXPECT_EQ(save.resource, "snapshots");
  EXPECT_EQ(save.api_group, kJobSetGroup);
  EXPECT_EQ(ApiGroupOf("snapshots"), kJobSetGroup);
  EXPECT_TRUE(IsClusterScoped("snapshots"));
  for (absl::string_view role : {"cluster-admin", "admin", "edit", "view"}) {
    ASSERT_TRUE(policy
                    .Put(ClusterRoleBinding(absl::StrCat("all-", role), role,
                                            {User(role)}))
                    .ok());
  }
  EXPECT_TRUE(policy.Allows(U("cluster-admin"), save));
  EXPECT_TRUE(policy.Allows(U("m", {"system:masters"}), save));
  for (absl::string_view role : {"admin", "edit", "view"}) {
    EXPECT_FALSE(policy.Allows(U(role), save)) << role;
  }
  // Reading everything, or every verb but "save" named, is not saving.
  ASSERT_TRUE(policy
                  .Put(ClusterRole("read-all", {Rule({"get", "list", "watch"},
                                                     {"*"}, {"*"})}))
                  .ok());
  ASSERT_TRUE(
      policy.Put(ClusterRoleBinding("read-all", "read-all", {User("r")})).ok());
  EXPECT_TRUE(policy.Allows(U("r"), Req("get", "secrets", "x", "s")));
  EXPECT_FALSE(policy.Allows(U("r"), save));
  // Granted by name, it is.
  ASSERT_TRUE(
      policy
          .Put(ClusterRole(
              "backup", {Rule({"save"}, {"jobset.x-k8s.io"}, {"snapshots"})}))
          .ok());
  ASSERT_TRUE(
      policy.Put(ClusterRoleBinding("backup", "backup", {User("b")})).ok());
  EXPECT_TRUE(policy.Allows(U("b"), save));
}

// Kueue's objects (kueue.x-k8s.io): every built-in role reads all six;
// admin writes the LocalQueues of its namespace; quota, priorities and
// Workloads are written by cluster-admin (and jobsetd) only.
TEST(BuiltInRolesTest, KueueObjects) {
  RbacPolicy policy;
  for (absl::string_view role : {"view", "edit", "admin"}) {
    ASSERT_TRUE(policy
                    .Put(RoleBinding("team-a", absl::StrCat("ns-", role),
                                     "ClusterRole", role, {User(role)}))
                    .ok());
    ASSERT_TRUE(policy
                    .Put(ClusterRoleBinding(absl::StrCat("all-", role), role,
                                            {User(absl::StrCat("all-", role))}))
                    .ok());
  }
  ASSERT_TRUE(
      policy.Put(ClusterRoleBinding("root", "cluster-admin", {User("root")}))
          .ok());
  const absl::string_view cluster_scoped[] = {
      "resourceflavors", "clusterqueues", "cohorts", "workloadpriorityclasses"};
  for (absl::string_view resource : cluster_scoped) {
    EXPECT_EQ(ApiGroupOf(resource), kKueueGroup) << resource;
    EXPECT_TRUE(IsClusterScoped(resource)) << resource;
  }
  for (absl::string_view resource : {"localqueues", "workloads"}) {
    EXPECT_EQ(ApiGroupOf(resource), kKueueGroup) << resource;
    EXPECT_FALSE(IsClusterScoped(resource)) << resource;
  }
  auto kueue = [](absl::string_view verb, absl::string_view resource,
                  absl::string_view ns = "", absl::string_view name = "") {
    Attributes a = Req(verb, resource, ns, name);
    EXPECT_EQ(a.api_group, kKueueGroup) << resource;
    return a;
  };
  for (absl::string_view role : {"view", "edit", "admin"}) {
    const std::string everywhere = absl::StrCat("all-", role);
    for (absl::string_view verb : {"get", "list", "watch"}) {
      // The cluster-scoped kinds: bound cluster-wide only.
      for (absl::string_view resource : cluster_scoped) {
        EXPECT_TRUE(policy.Allows(U(everywhere), kueue(verb, resource)))
            << everywhere << " " << verb << " " << resource;
        EXPECT_FALSE(policy.Allows(U(role), kueue(verb, resource)))
            << role << " " << verb << " " << resource;
      }
      for (absl::string_view resource : {"localqueues", "workloads"}) {
        EXPECT_TRUE(policy.Allows(U(role), kueue(verb, resource, "team-a")))
            << role << " " << verb << " " << resource;
        EXPECT_FALSE(policy.Allows(U(role), kueue(verb, resource, "team-b")))
            << role << " " << verb << " " << resource;
        EXPECT_TRUE(policy.Allows(U(everywhere), kueue(verb, resource, "")))
            << everywhere << " " << verb << " " << resource;
      }
    }
    for (absl::string_view verb :
         {"create", "update", "patch", "delete", "deletecollection"}) {
      for (absl::string_view resource : cluster_scoped) {
        EXPECT_FALSE(
            policy.Allows(U(everywhere), kueue(verb, resource, "", "x")))
            << everywhere << " " << verb << " " << resource;
        EXPECT_TRUE(policy.Allows(U("root"), kueue(verb, resource, "", "x")))
            << verb << " " << resource;
      }
      EXPECT_FALSE(
          policy.Allows(U(everywhere), kueue(verb, "workloads", "team-a", "w")))
          << everywhere << " " << verb;
      EXPECT_FALSE(
          policy.Allows(U(role), kueue(verb, "workloads", "team-a", "w")))
          << role << " " << verb;
      EXPECT_TRUE(
          policy.Allows(U("root"), kueue(verb, "workloads", "team-a", "w")))
          << verb;
      // LocalQueues: admin's, in the namespace it is bound in.
      EXPECT_EQ(
          policy.Allows(U(role), kueue(verb, "localqueues", "team-a", "q")),
          role == "admin")
          << role << " " << verb;
      EXPECT_FALSE(
          policy.Allows(U(role), kueue(verb, "localqueues", "team-b", "q")))
          << role << " " << verb;
    }
    // Kueue's visibility API: a LocalQueue's pending Workloads in the
    // namespace bound, a ClusterQueue's bound cluster-wide.
    auto visibility = [](absl::string_view resource, absl::string_view ns,
                         absl::string_view name) {
      return Attributes{.verb = "get",
                        .api_group = std::string(kVisibilityGroup),
                        .resource = std::string(resource),
                        .subresource = "pendingworkloads",
                        .namespace_ = std::string(ns),
                        .name = std::string(name)};
    };
    EXPECT_TRUE(
        policy.Allows(U(role), visibility("localqueues", "team-a", "q")));
    EXPECT_FALSE(
        policy.Allows(U(role), visibility("localqueues", "team-b", "q")));
    EXPECT_FALSE(policy.Allows(U(role), visibility("clusterqueues", "", "cq")));
    EXPECT_TRUE(
        policy.Allows(U(everywhere), visibility("clusterqueues", "", "cq")));
    EXPECT_FALSE(policy.Allows(
        U(everywhere), Attributes{.verb = "list",
                                  .api_group = std::string(kVisibilityGroup),
                                  .resource = "clusterqueues",
                                  .subresource = "pendingworkloads"}));
  }
}

TEST(BuiltInRolesTest, SystemMastersIsClusterAdmin) {
  RbacPolicy policy;
  std::string reason;
  EXPECT_TRUE(policy.Allows(U("admin", {std::string(kMastersGroup)}),
                            Req("update", "nodes", "", "n1"), &reason));
  EXPECT_EQ(reason,
            "allowed by ClusterRoleBinding \"cluster-admin\" of ClusterRole "
            "\"cluster-admin\" to Group \"system:masters\"");
  EXPECT_FALSE(policy.Allows(U("system:masters"), Req("list", "nodes")));
}

TEST(BuiltInRolesTest, AreValidLabelledAndAsDocumented) {
  std::vector<api::RbacObject> objects = BuiltInObjects();
  ASSERT_EQ(objects.size(), 5u);
  std::vector<std::string> names;
  for (const api::RbacObject& o : objects) {
    EXPECT_TRUE(ValidateRbacObject(o).ok())
        << ValidateRbacObject(o) << " " << o.ShortDebugString();
    const api::ObjectMeta& meta =
        o.has_role() ? o.role().metadata() : o.binding().metadata();
    EXPECT_EQ(meta.labels().at("kubernetes.io/bootstrapping"), "rbac-defaults");
    names.push_back(absl::StrCat(
        o.has_role() ? o.role().kind() : o.binding().kind(), "/", meta.name()));
  }
  EXPECT_THAT(names, ::testing::ElementsAre(
                         "ClusterRole/cluster-admin", "ClusterRole/admin",
                         "ClusterRole/edit", "ClusterRole/view",
                         "ClusterRoleBinding/cluster-admin"));
  const api::RoleBinding& masters = objects[4].binding();
  ASSERT_EQ(masters.subjects_size(), 1);
  EXPECT_EQ(masters.subjects(0).kind(), "Group");
  EXPECT_EQ(masters.subjects(0).name(), "system:masters");
  EXPECT_EQ(masters.role_ref().name(), "cluster-admin");
}

TEST(BuiltInRolesTest, CannotBeReplacedOrRemoved) {
  RbacPolicy policy;
  absl::Status s = policy.Put(ClusterRole("view", {Rule({"*"}, {"*"}, {"*"})}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "ClusterRole \"view\" is built in and cannot be changed");
  s = policy.Put(ClusterRoleBinding("cluster-admin", "cluster-admin",
                                    {Group("everyone")}));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "ClusterRoleBinding \"cluster-admin\" is built in and cannot be "
            "changed");
  for (absl::string_view name : {"cluster-admin", "admin", "edit", "view"}) {
    api::RbacObjectRef ref;
    ref.set_kind("ClusterRole");
    ref.set_name(std::string(name));
    auto removed = policy.Remove(ref);
    EXPECT_EQ(removed.status().code(), absl::StatusCode::kInvalidArgument)
        << name;
    EXPECT_THAT(removed.status().message(), HasSubstr("is built in")) << name;
  }
  api::RbacObjectRef ref;
  ref.set_kind("ClusterRoleBinding");
  ref.set_name("cluster-admin");
  EXPECT_EQ(policy.Remove(ref).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Still in force.
  EXPECT_TRUE(policy.Allows(U("a", {"system:masters"}), Req("list", "nodes")));
  EXPECT_EQ(RulesOf(policy, "ClusterRole", "view").size(), 7u);
  // Objects of the same names in other kinds or namespaces are not built in.
  EXPECT_TRUE(policy
                  .Put(RoleBinding("team-a", "cluster-admin", "ClusterRole",
                                   "view", {User("u")}))
                  .ok());
  EXPECT_TRUE(
      policy.Put(Role("team-a", "view", {Rule({"get"}, {""}, {"pods"})})).ok());
}

}  // namespace
}  // namespace jobset::auth
