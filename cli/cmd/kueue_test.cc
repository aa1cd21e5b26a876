// Kueue's objects through every verb against the fakes: apply/create/delete
// -f with other kinds in one file, get in each shape, -w, describe, delete.
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cli/cmd/fake_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// §8's shapes: a flavor, a ClusterQueue (with a field jobsetd ignores and a
// namespace a cluster-scoped object drops), a LocalQueue without a
// namespace, after a Role.
constexpr char kSetup[] = R"(apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: queue-user}
rules: []
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: research, namespace: ignored}
spec:
  cohort: ml-org
  namespaceSelector: {}
  admissionChecks: [prov]
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 9}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue}
spec: {clusterQueue: research}
)";

class KueueTest : public CommandsTest {
 protected:
  void SetUp() override {
    CommandsTest::SetUp();
    file_ = WriteConfig("kueue.yaml", kSetup);
  }
  std::string file_;
};

TEST_F(KueueTest, ApplyMixedFileInOrder) {
  ASSERT_EQ(Run({"apply", "-f", file_, "-n", "team"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "role.rbac.authorization.k8s.io/queue-user created\n"
            "resourceflavor.kueue.x-k8s.io/default-flavor created\n"
            "clusterqueue.kueue.x-k8s.io/research created\n"
            "localqueue.kueue.x-k8s.io/user-queue created\n");
  EXPECT_EQ(err_.str(),
            "Warning: clusterqueue.kueue.x-k8s.io/research: "
            "spec.admissionChecks: ignored by jobsetd\n");
  std::vector<api::KueueObject> applied = kueue_.applied();
  ASSERT_EQ(applied.size(), 3u);
  EXPECT_EQ(applied[0].resource_flavor().metadata().name(), "default-flavor");
  // A cluster-scoped object's namespace is dropped; a namespaced one gets -n.
  EXPECT_EQ(applied[1].cluster_queue().metadata().namespace_(), "");
  EXPECT_EQ(applied[1].cluster_queue().spec().cohort(), "ml-org");
  EXPECT_TRUE(applied[1].cluster_queue().spec().has_namespace_selector());
  EXPECT_EQ(applied[2].local_queue().metadata().namespace_(), "team");
  EXPECT_EQ(applied[2].local_queue().spec().cluster_queue(), "research");

  Clear();
  ASSERT_EQ(Run({"apply", "-f", file_, "-n", "team"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(),
              HasSubstr("clusterqueue.kueue.x-k8s.io/research unchanged\n"
                        "localqueue.kueue.x-k8s.io/user-queue unchanged\n"));
  Clear();
  const std::string changed =
      WriteConfig("changed.yaml",
                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
                  "metadata: {name: research, labels: {team: ml}}\nspec: {}\n");
  ASSERT_EQ(Run({"apply", "-f", changed, "--dry-run"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "clusterqueue.kueue.x-k8s.io/research configured (dry run)\n");
  Clear();
  ASSERT_EQ(Run({"apply", "-f", changed}), kExitOk);
  EXPECT_EQ(out_.str(), "clusterqueue.kueue.x-k8s.io/research configured\n");
  Clear();
  EXPECT_EQ(Run({"create", "-f", changed}), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("error: clusterqueue.kueue.x-k8s.io/"
                                    "research: ClusterQueue//research already "
                                    "exists"));
}

// jobsetd's refusal is printed for the object, as for other kinds; a
// document that does not read fails the file before anything is sent.
TEST_F(KueueTest, ErrorsNameTheObjectOrTheDocument) {
  const std::string bad =
      WriteConfig("bad.yaml",
                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
                  "metadata: {name: bad-cq}\nspec: {}\n");
  EXPECT_EQ(Run({"apply", "-f", bad}), kExitApiError);
  EXPECT_EQ(err_.str(),
            "error: clusterqueue.kueue.x-k8s.io/bad-cq: "
            "spec.resourceGroups[0].coveredResources: Required value\n");
  Clear();
  const std::string typo =
      WriteConfig("typo.yaml",
                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
                  "metadata: {name: a}\n---\n"
                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
                  "metadata: {name: q}\nspec: {clusterQueues: x}\n");
  EXPECT_EQ(Run({"apply", "-f", typo}), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("manifest document 2: "));
  EXPECT_THAT(err_.str(), HasSubstr("spec.clusterQueues"));
  EXPECT_TRUE(kueue_.applied().empty());  // bad-cq was refused first.
}

TEST_F(KueueTest, GetInEveryShape) {
  ASSERT_EQ(Run({"apply", "-f", file_, "-n", "team"}), kExitOk) << err_.str();
  Clear();
  ASSERT_EQ(Run({"get", "clusterqueues"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "NAME       COHORT   PENDING WORKLOADS\n"
            "research   ml-org\n");
  EXPECT_EQ(kueue_.last_list().kind(), "ClusterQueue");
  Clear();
  ASSERT_EQ(Run({"get", "cq", "-o", "wide"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("NAME       COHORT   STRATEGY   PENDING "
                                    "WORKLOADS   ADMITTED WORKLOADS\n"));
  Clear();
  ASSERT_EQ(Run({"get", "clusterqueue", "research", "-o", "yaml"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("apiVersion: kueue.x-k8s.io/v1beta1\n"
                                    "kind: ClusterQueue\n"
                                    "metadata:\n  name: research\n"));
  EXPECT_THAT(out_.str(), HasSubstr("nominalQuota: \"9\""));
  Clear();
  ASSERT_EQ(Run({"get", "cq", "research", "-o", "json"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("\"kind\": \"ClusterQueue\""));
  Clear();
  ASSERT_EQ(Run({"get", "flavors", "-o", "name"}), kExitOk);
  EXPECT_EQ(out_.str(), "resourceflavor.kueue.x-k8s.io/default-flavor\n");
  Clear();
  ASSERT_EQ(Run({"get", "lq", "-n", "team", "-o",
                 "jsonpath={.items[0].spec.clusterQueue}"}),
            kExitOk);
  EXPECT_EQ(out_.str(), "research");
  EXPECT_EQ(kueue_.last_list().namespace_(), "team");
  Clear();
  ASSERT_EQ(Run({"get", "queues", "-A"}), kExitOk);
  EXPECT_EQ(out_.str(),
            "NAMESPACE   NAME         CLUSTERQUEUE   PENDING WORKLOADS   "
            "ADMITTED WORKLOADS\n"
            "team        user-queue   research\n");
  EXPECT_TRUE(kueue_.last_list().all_namespaces());
  Clear();
  ASSERT_EQ(Run({"get", "workloads"}), kExitOk);
  EXPECT_EQ(err_.str(), "No resources found in default namespace.\n");
  Clear();
  ASSERT_EQ(Run({"get", "wpc"}), kExitOk);
  EXPECT_EQ(err_.str(), "No resources found\n");
  Clear();
  ASSERT_EQ(Run({"get", "cq", "--field-selector", "metadata.name=research",
                 "-o", "name"}),
            kExitOk);
  EXPECT_EQ(out_.str(), "clusterqueue.kueue.x-k8s.io/research\n");
  Clear();
  EXPECT_EQ(Run({"get", "cq", "missing"}), kExitApiError);
  EXPECT_EQ(err_.str(),
            "error: clusterqueues.kueue.x-k8s.io \"missing\" not found\n");
}

// -w lists, then follows the watch; after OUT_OF_RANGE it lists again and
// shows only what it has not shown.
TEST_F(KueueTest, GetWatchFollowsChanges) {
  ASSERT_EQ(Run({"apply", "-f", file_}), kExitOk) << err_.str();
  Clear();
  ASSERT_EQ(Run({"get", "cq", "-w", "--timeout=10s"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "NAME       COHORT   PENDING WORKLOADS\n"
            "research   ml-org\n"
            "research   ml-org   1\n");
}

TEST_F(KueueTest, DescribeAndDelete) {
  ASSERT_EQ(Run({"apply", "-f", file_, "-n", "team"}), kExitOk) << err_.str();
  Clear();
  ASSERT_EQ(Run({"describe", "clusterqueue", "research"}), kExitOk)
      << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("Name:         research\n"
                                    "Namespace:    \n"
                                    "Labels:       <none>\n"
                                    "Annotations:  <none>\n"
                                    "API Version:  kueue.x-k8s.io/v1beta1\n"
                                    "Kind:         ClusterQueue\n"));
  EXPECT_THAT(out_.str(), HasSubstr("  Cohort:  ml-org\n"));
  EXPECT_THAT(out_.str(), HasSubstr("        Nominal Quota:  9\n"));
  // The fake lists no events (UNIMPLEMENTED): no section, as kubectl.
  EXPECT_THAT(out_.str(), Not(HasSubstr("Events")));
  Clear();
  ASSERT_EQ(Run({"describe", "lq", "user-queue", "-n", "team"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("Namespace:    team\n"));
  Clear();
  EXPECT_EQ(Run({"describe", "cq", "missing"}), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("not found"));

  Clear();
  ASSERT_EQ(Run({"delete", "clusterqueue", "research"}), kExitOk);
  EXPECT_EQ(out_.str(), "clusterqueue.kueue.x-k8s.io \"research\" deleted\n");
  Clear();
  EXPECT_EQ(Run({"delete", "cq", "research"}), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("not found"));
  Clear();
  const std::string rest =
      WriteConfig("rest.yaml",
                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
                  "metadata: {name: default-flavor}\n---\n"
                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
                  "metadata: {name: user-queue, namespace: team}\n"
                  "spec: {clusterQueue: research}\n");
  ASSERT_EQ(Run({"delete", "-f", rest}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "resourceflavor.kueue.x-k8s.io \"default-flavor\" deleted\n"
            "localqueue.kueue.x-k8s.io \"user-queue\" deleted\n");
  EXPECT_EQ(kueue_.stored(), 0u);
}

}  // namespace
}  // namespace jobset::cli
