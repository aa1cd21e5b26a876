#include "auth/rbac.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/auth.pb.h"

namespace jobset::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr absl::string_view kVersion = "rbac.authorization.k8s.io/v1";

// ---- Builders ----

api::PolicyRule Rule(std::vector<std::string> verbs,
                     std::vector<std::string> groups,
                     std::vector<std::string> resources,
                     std::vector<std::string> names = {}) {
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
                     absl::string_view ns = "") {
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
               absl::string_view ns = "", absl::string_view name = "") {
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

UserInfo U(absl::string_view name, std::vector<std::string> groups = {}) {
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
                                     absl::string_view ns = "") {
  api::RoleRef ref;
  ref.set_api_group(std::string(kRbacGroup));
  ref.set_kind(std::string(kind));
  ref.set_name(std::string(name));
  return policy.RulesOf(ref, ns);
}

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
  EXPECT_EQ(RulesOf(policy, "ClusterRole", "view").size(), 5u);
  // Objects of the same names in other kinds or namespaces are not built in.
  EXPECT_TRUE(policy
                  .Put(RoleBinding("team-a", "cluster-admin", "ClusterRole",
                                   "view", {User("u")}))
                  .ok());
  EXPECT_TRUE(
      policy.Put(Role("team-a", "view", {Rule({"get"}, {""}, {"pods"})})).ok());
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

// ---- Escalation ----

TEST(CheckCanGrantTest, EditUserCannotBindClusterAdmin) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(RoleBinding("team-a", "e", "ClusterRole", "edit", {User("u")}))
          .ok());
  absl::Status s = policy.CheckCanGrant(
      U("u", {"devs"}), "team-a",
      RulesOf(policy, "ClusterRole", "cluster-admin"), "bind");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "user \"u\" (groups=[\"devs\" \"system:authenticated\"]) is "
            "attempting to grant RBAC permissions not currently held:\n"
            "{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}");
  // Nor admin, whose first missing permission is on roles.
  s = policy.CheckCanGrant(U("u"), "team-a",
                           RulesOf(policy, "ClusterRole", "admin"), "bind");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(),
              HasSubstr("{APIGroups:[\"rbac.authorization.k8s.io\"], "
                        "Resources:[\"roles\"], Verbs:[\"get\"]}"));
  // It may bind what it holds: view, and edit itself.
  EXPECT_TRUE(policy
                  .CheckCanGrant(U("u"), "team-a",
                                 RulesOf(policy, "ClusterRole", "view"), "bind")
                  .ok());
  EXPECT_TRUE(policy
                  .CheckCanGrant(U("u"), "team-a",
                                 RulesOf(policy, "ClusterRole", "edit"), "bind")
                  .ok());
  // Not in another namespace, nor cluster-wide.
  EXPECT_EQ(policy
                .CheckCanGrant(U("u"), "team-b",
                               RulesOf(policy, "ClusterRole", "view"), "bind")
                .code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(policy
                .CheckCanGrant(U("u"), "",
                               RulesOf(policy, "ClusterRole", "view"), "bind")
                .code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(CheckCanGrantTest, AdminBindsEditInItsNamespaceOnly) {
  RbacPolicy policy;
  ASSERT_TRUE(policy
                  .Put(RoleBinding("team-a", "a", "ClusterRole", "admin",
                                   {User("lead")}))
                  .ok());
  const std::vector<api::PolicyRule> edit =
      RulesOf(policy, "ClusterRole", "edit");
  EXPECT_TRUE(policy.CheckCanGrant(U("lead"), "team-a", edit, "bind").ok());
  EXPECT_TRUE(policy
                  .CheckCanGrant(U("lead"), "team-a",
                                 RulesOf(policy, "ClusterRole", "admin"),
                                 "bind")
                  .ok());
  EXPECT_EQ(policy.CheckCanGrant(U("lead"), "team-b", edit, "bind").code(),
            absl::StatusCode::kPermissionDenied);
  // A Role granting nodes is beyond it.
  EXPECT_EQ(policy
                .CheckCanGrant(U("lead"), "team-a",
                               {Rule({"get"}, {""}, {"nodes"})}, "escalate")
                .code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(CheckCanGrantTest, ClusterAdminAndMastersGrantAnything) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(ClusterRoleBinding("root", "cluster-admin", {User("root")}))
          .ok());
  const std::vector<api::PolicyRule> everything =
      RulesOf(policy, "ClusterRole", "cluster-admin");
  ASSERT_EQ(everything.size(), 2u);
  for (absl::string_view ns : {"", "team-a"}) {
    for (absl::string_view verb : {"", "bind", "escalate"}) {
      EXPECT_TRUE(policy.CheckCanGrant(U("root"), ns, everything, verb).ok());
      EXPECT_TRUE(
          policy.CheckCanGrant(U("m", {"system:masters"}), ns, everything, verb)
              .ok());
    }
  }
}

TEST(CheckCanGrantTest, EscalateAndBindVerbs) {
  RbacPolicy policy;
  ASSERT_TRUE(policy
                  .Put(ClusterRole(
                      "role-escalator",
                      {Rule({"escalate"}, {kRbacGroup.data()}, {"roles"})}))
                  .ok());
  ASSERT_TRUE(policy
                  .Put(RoleBinding("team-a", "esc", "ClusterRole",
                                   "role-escalator", {User("e")}))
                  .ok());
  const std::vector<api::PolicyRule> big = {Rule({"*"}, {"*"}, {"*"})};
  EXPECT_TRUE(policy.CheckCanGrant(U("e"), "team-a", big, "escalate").ok());
  // escalate is not bind, and holds only in team-a.
  EXPECT_FALSE(policy.CheckCanGrant(U("e"), "team-a", big, "bind").ok());
  EXPECT_FALSE(policy.CheckCanGrant(U("e"), "team-b", big, "escalate").ok());
  EXPECT_FALSE(policy.CheckCanGrant(U("e"), "", big, "escalate").ok());
  // No verb: the permissions themselves are needed.
  EXPECT_FALSE(policy.CheckCanGrant(U("e"), "team-a", big, "").ok());

  // bind in a namespace needs roles and clusterroles (the caller does not say
  // which a RoleBinding refers to).
  ASSERT_TRUE(
      policy
          .Put(ClusterRole("role-binder",
                           {Rule({"bind"}, {kRbacGroup.data()}, {"roles"})}))
          .ok());
  ASSERT_TRUE(policy
                  .Put(RoleBinding("team-a", "b1", "ClusterRole", "role-binder",
                                   {User("b")}))
                  .ok());
  EXPECT_FALSE(policy.CheckCanGrant(U("b"), "team-a", big, "bind").ok());
  ASSERT_TRUE(
      policy
          .Put(ClusterRole("binder", {Rule({"bind"}, {kRbacGroup.data()},
                                           {"roles", "clusterroles"})}))
          .ok());
  ASSERT_TRUE(policy
                  .Put(RoleBinding("team-a", "b2", "ClusterRole", "binder",
                                   {User("b")}))
                  .ok());
  EXPECT_TRUE(policy.CheckCanGrant(U("b"), "team-a", big, "bind").ok());
  EXPECT_FALSE(policy.CheckCanGrant(U("b"), "", big, "bind").ok());
  // Cluster-wide bind on clusterroles.
  ASSERT_TRUE(
      policy.Put(ClusterRoleBinding("cb", "binder", {User("cb")})).ok());
  EXPECT_TRUE(policy.CheckCanGrant(U("cb"), "", big, "bind").ok());
  EXPECT_FALSE(policy.CheckCanGrant(U("cb"), "", big, "escalate").ok());
}

TEST(CheckCanGrantTest, CoverageFollowsKubernetes) {
  RbacPolicy policy;
  ASSERT_TRUE(policy
                  .Put(ClusterRole("mixed",
                                   {Rule({"get"}, {""}, {"pods"}, {"p1", "p2"}),
                                    Rule({"get", "list"}, {""}, {"*/log"}),
                                    Rule({"create"}, {"*"}, {"jobsets"}),
                                    Rule({"*"}, {"batch"}, {"jobs"}),
                                    Rule({"get"}, {""}, {"events"}, {"*"})}))
                  .ok());
  ASSERT_TRUE(policy.Put(ClusterRoleBinding("m", "mixed", {User("u")})).ok());
  struct Case {
    api::PolicyRule rule;
    bool ok;
  };
  const Case cases[] = {
      {Rule({"get"}, {""}, {"pods"}, {"p1"}), true},
      {Rule({"get"}, {""}, {"pods"}, {"p1", "p2"}), true},
      {Rule({"get"}, {""}, {"pods"}, {"p3"}), false},
      // Any pod is more than p1 and p2.
      {Rule({"get"}, {""}, {"pods"}), false},
      {Rule({"get"}, {""}, {"pods/log"}), true},
      {Rule({"list"}, {""}, {"pods/log", "jobs/log"}), true},
      {Rule({"watch"}, {""}, {"pods/log"}), false},
      {Rule({"get"}, {""}, {"*/log"}), true},
      {Rule({"get"}, {""}, {"pods/exec"}), false},
      {Rule({"create"}, {"jobset.x-k8s.io", "batch"}, {"jobsets"}), true},
      {Rule({"create"}, {"*"}, {"jobsets"}), true},
      {Rule({"delete", "create"}, {"batch"}, {"jobs"}), true},
      {Rule({"*"}, {"batch"}, {"jobs"}), true},
      // A literal "*" needs "*" held.
      {Rule({"*"}, {"batch"}, {"*"}), false},
      {Rule({"get"}, {"*"}, {"jobs"}), false},
      // Among resourceNames "*" is only a name.
      {Rule({"get"}, {""}, {"events"}, {"*"}), true},
      {Rule({"get"}, {""}, {"events"}, {"e1"}), false},
      {Rule({"get"}, {""}, {"events"}), false},
  };
  for (const Case& c : cases) {
    absl::Status s = policy.CheckCanGrant(U("u"), "team-a", {c.rule}, "");
    EXPECT_EQ(s.ok(), c.ok) << c.rule.ShortDebugString() << ": " << s;
    if (!c.ok) {
      EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
    }
  }
  absl::Status s = policy.CheckCanGrant(
      U("u"), "team-a", {Rule({"get"}, {""}, {"pods"}, {"p1", "p9"})}, "");
  EXPECT_THAT(s.message(),
              HasSubstr("{APIGroups:[\"\"], Resources:[\"pods\"], "
                        "ResourceNames:[\"p9\"], Verbs:[\"get\"]}"));
  api::PolicyRule urls;
  urls.add_verbs("get");
  urls.add_non_resource_urls("/healthz");
  s = policy.CheckCanGrant(U("u"), "", {urls}, "");
  EXPECT_THAT(s.message(),
              HasSubstr("{NonResourceURLs:[\"/healthz\"], Verbs:[\"get\"]}"));
  // Nothing to grant is always allowed.
  EXPECT_TRUE(policy.CheckCanGrant(U("nobody"), "team-a", {}, "bind").ok());
}

TEST(CheckCanGrantTest, NonResourceUrlCoverage) {
  RbacPolicy policy;
  api::PolicyRule owner;
  owner.add_verbs("get");
  owner.add_non_resource_urls("/api/*");
  ASSERT_TRUE(policy.Put(ClusterRole("u", {owner})).ok());
  ASSERT_TRUE(policy.Put(ClusterRoleBinding("u", "u", {User("u")})).ok());
  auto url_rule = [](absl::string_view verb, absl::string_view url) {
    api::PolicyRule r;
    r.add_verbs(std::string(verb));
    r.add_non_resource_urls(std::string(url));
    return r;
  };
  EXPECT_TRUE(
      policy.CheckCanGrant(U("u"), "", {url_rule("get", "/api/v1")}, "").ok());
  EXPECT_TRUE(
      policy.CheckCanGrant(U("u"), "", {url_rule("get", "/api/*")}, "").ok());
  EXPECT_FALSE(
      policy.CheckCanGrant(U("u"), "", {url_rule("get", "/apis")}, "").ok());
  EXPECT_FALSE(
      policy.CheckCanGrant(U("u"), "", {url_rule("post", "/api/v1")}, "").ok());
}

TEST(CheckCanGrantTest, HugeRulesAreRefusedNotExpanded) {
  RbacPolicy policy;
  api::PolicyRule huge;
  for (int i = 0; i < 256; ++i) {
    huge.add_verbs(absl::StrCat("v", i));
    huge.add_api_groups(absl::StrCat("g", i));
    huge.add_resources(absl::StrCat("r", i));
    huge.add_resource_names(absl::StrCat("n", i));
  }
  absl::Status s = policy.CheckCanGrant(U("u"), "team-a", {huge}, "");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  // system:masters needs no expansion, nor an owner rule that covers the
  // whole rule.
  EXPECT_TRUE(
      policy.CheckCanGrant(U("m", {"system:masters"}), "a", {huge}, "").ok());
  ASSERT_TRUE(
      policy.Put(ClusterRoleBinding("root", "cluster-admin", {User("root")}))
          .ok());
  EXPECT_TRUE(policy.CheckCanGrant(U("root"), "team-a", {huge}, "").ok());
  EXPECT_TRUE(policy.CheckCanGrant(U("root"), "", {huge, huge}, "").ok());
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
