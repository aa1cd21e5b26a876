#include "cli/cmd/kinds.h"

#include <map>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::Contains;

std::string Plural(absl::string_view name) {
  const KindInfo* kind = FindKind(name);
  return kind == nullptr ? "<none>" : kind->plural;
}

// The names kubectl users type, as jobsetctl accepted them before the table.
TEST(KindsTest, KubectlAliases) {
  EXPECT_EQ(Plural("js"), "jobsets");
  EXPECT_EQ(Plural("JobSet"), "jobsets");
  EXPECT_EQ(Plural("jobsets.jobset.x-k8s.io"), "jobsets");
  EXPECT_EQ(Plural("po"), "pods");
  EXPECT_EQ(Plural("job"), "jobs");
  EXPECT_EQ(Plural("no"), "nodes");
  EXPECT_EQ(Plural("ev"), "events");
  EXPECT_EQ(Plural("deployments"), "<none>");
  EXPECT_EQ(Plural("jobs.batch"), "<none>");
  EXPECT_EQ(Plural("token"), "tokens");
  EXPECT_EQ(Plural("Role"), "roles");
  EXPECT_EQ(Plural("clusterrolebindings.rbac.authorization.k8s.io"),
            "clusterrolebindings");
  EXPECT_EQ(Plural("rolebinding"), "rolebindings");
  EXPECT_EQ(Plural("ns"), "namespaces");
  EXPECT_EQ(Plural("Namespace"), "namespaces");
  EXPECT_EQ(Plural("secret"), "secrets");
  EXPECT_EQ(Plural("cm"), "configmaps");
  EXPECT_EQ(Plural("ConfigMap"), "configmaps");
}

// Every name and alias is lower case, unique across the table, and resolves
// to its own row.
TEST(KindsTest, EveryNameResolvesToOneKind) {
  std::map<std::string, std::string> owner;
  for (const KindInfo& kind : Kinds()) {
    std::vector<std::string> names = {kind.plural, kind.singular};
    names.insert(names.end(), kind.aliases.begin(), kind.aliases.end());
    for (const std::string& name : names) {
      EXPECT_EQ(name, absl::AsciiStrToLower(name));
      auto [it, added] = owner.emplace(name, kind.plural);
      EXPECT_TRUE(added) << name << " names both " << it->second << " and "
                         << kind.plural;
      EXPECT_EQ(FindKind(name), &kind) << name;
      EXPECT_EQ(FindKind(absl::AsciiStrToUpper(name)), &kind) << name;
    }
  }
  EXPECT_EQ(owner.size(), 37u);
}

// Each row is whole: a kind get can print has a list call and columns; the
// manifest kinds are unique; the resource names are kubectl's.
TEST(KindsTest, RowsAreComplete) {
  std::set<std::string> manifest_kinds;
  for (const KindInfo& kind : Kinds()) {
    SCOPED_TRACE(kind.plural);
    EXPECT_NE(kind.calls.list, nullptr);
    ASSERT_NE(kind.rows, nullptr);
    const std::vector<Row> header = kind.rows({}, absl::UnixEpoch(), false);
    ASSERT_EQ(header.size(), 1u);
    EXPECT_FALSE(header[0].empty());
    if (!kind.kind.empty()) {
      EXPECT_TRUE(manifest_kinds.insert(kind.kind).second);
      EXPECT_EQ(FindKindOfManifest(kind.kind), &kind);
    }
    // Only namespaced kinds select by --jobset or refuse -A.
    if (kind.get.by_jobset || !kind.get.all_namespaces) {
      EXPECT_TRUE(kind.namespaced);
    }
    // A kind with a watch call is not also polled.
    EXPECT_FALSE(kind.calls.watch != nullptr && kind.get.poll_watch);
    // apply -f needs remove for delete -f.
    if (kind.calls.apply != nullptr) {
      EXPECT_NE(kind.calls.remove, nullptr);
    }
  }
  EXPECT_EQ(KindNamed("jobsets").Resource(), "jobset.jobset.x-k8s.io");
  EXPECT_EQ(KindNamed("jobs").Resource(), "job.batch");
  EXPECT_EQ(KindNamed("jobs").GroupResource(), "jobs.batch");
  EXPECT_EQ(KindNamed("pods").Resource(), "pod");
  EXPECT_EQ(KindNamed("events").Resource(), "event");
  EXPECT_EQ(KindNamed("roles").Resource(), "role.rbac.authorization.k8s.io");
  EXPECT_EQ(KindNamed("tokens").GroupResource(), "tokens");
  EXPECT_EQ(FindKindOfManifest(""), nullptr);
  EXPECT_EQ(FindKindOfManifest("Deployment"), nullptr);
}

TEST(KindsTest, FieldSelectorsAsKubernetes) {
  EXPECT_THAT(KindNamed("pods").get.fields, Contains("spec.nodeName"));
  EXPECT_THAT(KindNamed("pods").get.fields, Contains("status.phase"));
  EXPECT_THAT(KindNamed("nodes").get.fields, Contains("spec.unschedulable"));
  EXPECT_THAT(KindNamed("secrets").get.fields, Contains("type"));
  EXPECT_TRUE(KindNamed("namespaces").get.fields.empty());
  for (const KindInfo& kind : Kinds()) {
    if (kind.get.fields.empty()) continue;
    EXPECT_THAT(kind.get.fields, Contains("metadata.name")) << kind.plural;
    if (kind.namespaced) {
      EXPECT_THAT(kind.get.fields, Contains("metadata.namespace"))
          << kind.plural;
    }
  }
}

TEST(KindsTest, KindListJoinsInTableOrder) {
  EXPECT_EQ(
      KindList([](const KindInfo& k) { return k.calls.describe != nullptr; }),
      "jobsets, nodes, secrets and configmaps");
  EXPECT_EQ(KindList([](const KindInfo& k) { return k.plural == "pods"; }),
            "pods");
  EXPECT_EQ(KindList([](const KindInfo& k) { return !k.namespaced; }, "or"),
            "nodes, namespaces, tokens, clusterroles or clusterrolebindings");
}

}  // namespace
}  // namespace jobset::cli
