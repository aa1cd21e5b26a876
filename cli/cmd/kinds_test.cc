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

// Kueue's CRD names: plural, singular, short names and the group-qualified
// plural.
TEST(KindsTest, KueueNamesAsItsCrds) {
  EXPECT_EQ(Plural("flavor"), "resourceflavors");
  EXPECT_EQ(Plural("rf"), "resourceflavors");
  EXPECT_EQ(Plural("ResourceFlavor"), "resourceflavors");
  EXPECT_EQ(Plural("cq"), "clusterqueues");
  EXPECT_EQ(Plural("clusterqueues.kueue.x-k8s.io"), "clusterqueues");
  EXPECT_EQ(Plural("co"), "cohorts");
  EXPECT_EQ(Plural("queue"), "localqueues");
  EXPECT_EQ(Plural("lq"), "localqueues");
  EXPECT_EQ(Plural("wpc"), "workloadpriorityclasses");
  EXPECT_EQ(Plural("kwl"), "workloads");
  EXPECT_EQ(Plural("kueueworkloads"), "workloads");
  EXPECT_EQ(Plural("Workload"), "workloads");
  const KindInfo& cq = KindNamed("clusterqueues");
  EXPECT_FALSE(cq.namespaced);
  EXPECT_EQ(cq.Resource(), "clusterqueue.kueue.x-k8s.io");
  EXPECT_EQ(cq.api_version, "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(cq.kind, "ClusterQueue");
  EXPECT_TRUE(KindNamed("localqueues").namespaced);
  EXPECT_TRUE(KindNamed("workloads").namespaced);
  EXPECT_FALSE(KindNamed("workloadpriorityclasses").namespaced);
  for (const char* plural :
       {"resourceflavors", "clusterqueues", "cohorts", "localqueues",
        "workloadpriorityclasses", "workloads"}) {
    const KindInfo& kind = KindNamed(plural);
    EXPECT_EQ(kind.group, "kueue.x-k8s.io") << plural;
    EXPECT_EQ(FindKindOfManifest(kind.kind), &kind) << plural;
    EXPECT_NE(kind.calls.get, nullptr) << plural;
    EXPECT_NE(kind.calls.watch, nullptr) << plural;
    EXPECT_NE(kind.calls.apply, nullptr) << plural;
    EXPECT_NE(kind.calls.describe, nullptr) << plural;
  }
  EXPECT_EQ(KindNamed("clusterqueues").rows({}, absl::UnixEpoch(), true)[0],
            (Row{"NAME", "COHORT", "STRATEGY", "PENDING WORKLOADS",
                 "ADMITTED WORKLOADS"}));
  EXPECT_EQ(
      KindNamed("workloads").rows({}, absl::UnixEpoch(), false)[0],
      (Row{"NAME", "QUEUE", "RESERVED IN", "ADMITTED", "FINISHED", "AGE"}));
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
  EXPECT_EQ(owner.size(), 67u);
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
      "jobsets, nodes, secrets, configmaps, resourceflavors, clusterqueues, "
      "cohorts, localqueues, workloadpriorityclasses and workloads");
  EXPECT_EQ(KindList([](const KindInfo& k) { return k.plural == "pods"; }),
            "pods");
  EXPECT_EQ(KindList([](const KindInfo& k) { return !k.namespaced; }, "or"),
            "nodes, namespaces, resourceflavors, clusterqueues, cohorts, "
            "workloadpriorityclasses, tokens, clusterroles or "
            "clusterrolebindings");
}

}  // namespace
}  // namespace jobset::cli
