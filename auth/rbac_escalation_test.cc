#include "auth/rbac_escalation.h"

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
using ::jobset::auth::testing::Role;
using ::jobset::auth::testing::RoleBinding;
using ::jobset::auth::testing::Rule;
using ::jobset::auth::testing::RulesOf;
using ::jobset::auth::testing::U;
using ::jobset::auth::testing::User;
using ::testing::HasSubstr;

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
            "{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}\n"
            "{NonResourceURLs:[\"*\"], Verbs:[\"*\"]}");
  // Nor admin, which adds roles, rolebindings and writes of localqueues:
  // every missing permission is named, the verbs of each resource on one
  // line, as Kubernetes does.
  s = policy.CheckCanGrant(U("u"), "team-a",
                           RulesOf(policy, "ClusterRole", "admin"), "bind");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(
      s.message(),
      "user \"u\" (groups=[\"system:authenticated\"]) is attempting to "
      "grant RBAC permissions not currently held:\n"
      "{APIGroups:[\"kueue.x-k8s.io\"], Resources:[\"localqueues\"], "
      "Verbs:[\"create\" \"update\" \"patch\" \"delete\" "
      "\"deletecollection\"]}\n"
      "{APIGroups:[\"rbac.authorization.k8s.io\"], "
      "Resources:[\"rolebindings\"], Verbs:[\"get\" \"list\" \"watch\" "
      "\"create\" \"update\" \"patch\" \"delete\" \"deletecollection\"]}\n"
      "{APIGroups:[\"rbac.authorization.k8s.io\"], "
      "Resources:[\"roles\"], Verbs:[\"get\" \"list\" \"watch\" "
      "\"create\" \"update\" \"patch\" \"delete\" \"deletecollection\"]}");
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

// ---- Issue 39 item 7: every missing permission, in Kubernetes' words ----

TEST(ConfirmNoEscalationTest, NamesEveryMissingPermissionCompactedAndSorted) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(RoleBinding("team-a", "v", "ClusterRole", "view", {User("v")}))
          .ok());
  // view holds get on pods; everything else here is missing.
  api::PolicyRule urls;
  urls.add_verbs("get");
  urls.add_verbs("post");
  urls.add_non_resource_urls("/metrics");
  const std::vector<api::PolicyRule> rules = {
      Rule({"get", "create", "delete"}, {""}, {"pods", "secrets"}),
      Rule({"update"}, {"batch"}, {"jobs"}, {"j1", "j2"}),
      urls,
  };
  absl::Status s = policy.CheckCanGrant(U("v"), "team-a", rules, "escalate");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "user \"v\" (groups=[\"system:authenticated\"]) is attempting to "
            "grant RBAC permissions not currently held:\n"
            "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"create\" "
            "\"delete\"]}\n"
            "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" "
            "\"create\" \"delete\"]}\n"
            "{APIGroups:[\"batch\"], Resources:[\"jobs\"], "
            "ResourceNames:[\"j1\"], Verbs:[\"update\"]}\n"
            "{APIGroups:[\"batch\"], Resources:[\"jobs\"], "
            "ResourceNames:[\"j2\"], Verbs:[\"update\"]}\n"
            "{NonResourceURLs:[\"/metrics\"], Verbs:[\"get\"]}\n"
            "{NonResourceURLs:[\"/metrics\"], Verbs:[\"post\"]}");
  // The same through ConfirmNoEscalation, which knows no verb.
  EXPECT_EQ(policy.CheckCanGrant(U("v"), "team-a", rules, "").message(),
            s.message());
}

TEST(ConfirmNoEscalationTest, ALongListIsCountedBeyondItsBound) {
  RbacPolicy policy;
  std::vector<std::string> resources;
  for (int i = 0; i < 300; ++i) resources.push_back(absl::StrCat("r", i));
  absl::Status s = policy.CheckCanGrant(U("u"), "team-a",
                                        {Rule({"get"}, {"g"}, resources)}, "");
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_LT(s.message().size(), 5000u);
  EXPECT_THAT(s.message(), HasSubstr("{APIGroups:[\"g\"], Resources:[\"r0\"], "
                                     "Verbs:[\"get\"]}\n{APIGroups:[\"g\"], "
                                     "Resources:[\"r1\"], Verbs:[\"get\"]}\n"));
  EXPECT_THAT(std::string(s.message()), ::testing::EndsWith(" more not shown"));
  EXPECT_THAT(std::string(s.message()),
              ::testing::ContainsRegex("\n\\.\\.\\. and [0-9]+ more"));
}

TEST(CheckCanApplyTest, RefusalsAreWordedAsKubeApiserver) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(RoleBinding("team-a", "e", "ClusterRole", "edit", {User("e")}))
          .ok());
  ASSERT_TRUE(
      policy.Put(RoleBinding("team-a", "v", "ClusterRole", "view", {User("v")}))
          .ok());
  // A RoleBinding of cluster-admin by an editor: both of its rules missing.
  absl::Status s = policy.CheckCanApply(
      U("e", {"devs"}), RoleBinding("team-a", "mine", "ClusterRole",
                                    "cluster-admin", {User("e")}));
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "rolebindings.rbac.authorization.k8s.io \"mine\" is forbidden: "
            "user \"e\" (groups=[\"devs\" \"system:authenticated\"]) is "
            "attempting to grant RBAC permissions not currently held:\n"
            "{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}\n"
            "{NonResourceURLs:[\"*\"], Verbs:[\"*\"]}");
  // A Role with several rules a viewer does not hold.
  s = policy.CheckCanApply(
      U("v"), Role("team-a", "r",
                   {Rule({"get", "list"}, {""}, {"pods"}),
                    Rule({"create", "delete"}, {""}, {"pods"}),
                    Rule({"get"}, {""}, {"secrets"}),
                    Rule({"update"}, {"jobset.x-k8s.io"}, {"jobsets"})}));
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "roles.rbac.authorization.k8s.io \"r\" is forbidden: user \"v\" "
            "(groups=[\"system:authenticated\"]) is attempting to grant RBAC "
            "permissions not currently held:\n"
            "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"create\" "
            "\"delete\"]}\n"
            "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}\n"
            "{APIGroups:[\"jobset.x-k8s.io\"], Resources:[\"jobsets\"], "
            "Verbs:[\"update\"]}");
  // The cluster kinds, checked cluster-wide.
  s = policy.CheckCanApply(U("e"),
                           ClusterRole("c", {Rule({"get"}, {""}, {"pods"})}));
  EXPECT_EQ(s.message(),
            "clusterroles.rbac.authorization.k8s.io \"c\" is forbidden: user "
            "\"e\" (groups=[\"system:authenticated\"]) is attempting to "
            "grant RBAC permissions not currently held:\n"
            "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\"]}");
  s = policy.CheckCanApply(U("e"),
                           ClusterRoleBinding("cb", "view", {User("e")}));
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(s.message()),
              ::testing::StartsWith(
                  "clusterrolebindings.rbac.authorization.k8s.io \"cb\" is "
                  "forbidden: user \"e\" (groups=[\"system:authenticated\"]) "
                  "is attempting to grant RBAC permissions not currently "
                  "held:\n{APIGroups:[\"\"], Resources:[\"configmaps\"], "
                  "Verbs:[\"get\" \"list\" \"watch\"]}\n"));
  // A hostile name is quoted.
  s = policy.CheckCanApply(
      U("v"), RoleBinding("team-a", "x\"\ny", "ClusterRole", "edit", {}));
  EXPECT_THAT(std::string(s.message()),
              ::testing::StartsWith("rolebindings.rbac.authorization.k8s.io "
                                    "\"x\\\"\\ny\" is forbidden: user \"v\""));
}

TEST(CheckCanApplyTest, AllowsWhatIsHeldOrMayBeGranted) {
  RbacPolicy policy;
  ASSERT_TRUE(
      policy.Put(RoleBinding("team-a", "e", "ClusterRole", "edit", {User("e")}))
          .ok());
  EXPECT_TRUE(
      policy
          .CheckCanApply(U("e"), RoleBinding("team-a", "b", "ClusterRole",
                                             "view", {User("x")}))
          .ok());
  EXPECT_TRUE(
      policy
          .CheckCanApply(
              U("e"), Role("team-a", "r", {Rule({"get"}, {""}, {"secrets"})}))
          .ok());
  // A binding of a role that does not exist is refused (stricter than
  // upstream, which accepts it): roleRef.name is named.
  absl::Status absent = policy.CheckCanApply(
      U("e"), RoleBinding("team-a", "b", "Role", "absent", {User("x")}));
  EXPECT_EQ(absent.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(absent.message()),
              ::testing::HasSubstr("roleRef.name: Not found: \"absent\""));
  // Not in another namespace.
  EXPECT_EQ(policy
                .CheckCanApply(U("e"), RoleBinding("team-b", "b", "ClusterRole",
                                                   "view", {User("x")}))
                .code(),
            absl::StatusCode::kPermissionDenied);
  // system:masters grants anything; so does "bind" for a binding.
  EXPECT_TRUE(policy
                  .CheckCanApply(
                      U("m", {"system:masters"}),
                      ClusterRoleBinding("root", "cluster-admin", {User("x")}))
                  .ok());
  ASSERT_TRUE(policy
                  .Put(ClusterRole(
                      "binder",
                      {Rule({"bind"}, {kRbacGroup.data()}, {"clusterroles"})}))
                  .ok());
  ASSERT_TRUE(
      policy.Put(ClusterRoleBinding("binder", "binder", {User("b")})).ok());
  EXPECT_TRUE(
      policy
          .CheckCanApply(
              U("b"), ClusterRoleBinding("root", "cluster-admin", {User("x")}))
          .ok());
  // "bind" is not "escalate".
  EXPECT_EQ(
      policy
          .CheckCanApply(U("b"), ClusterRole("c", {Rule({"*"}, {"*"}, {"*"})}))
          .code(),
      absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace jobset::auth
