// apply/create -f with RBAC documents; get roles and bindings.
#include <string>
#include <vector>

#include "cli/cmd/fake_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;

TEST_F(CommandsTest, ApplySendsRbacDocumentsWithTheJobSets) {
  const std::string file = WriteConfig("rbac.yaml", R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: editor}
rules:
- {apiGroups: [jobset.x-k8s.io], resources: [jobsets], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: alice-view}
subjects: [{kind: User, name: alice}]
roleRef: {kind: ClusterRole, name: view}
)");
  ASSERT_EQ(Run({"apply", "-f", file, "-n", "team"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(),
            "role.rbac.authorization.k8s.io/editor created\n"
            "clusterrolebinding.rbac.authorization.k8s.io/alice-view "
            "created\n");
  std::vector<api::RbacObject> applied = access_.applied();
  ASSERT_EQ(applied.size(), 2u);
  EXPECT_EQ(applied[0].role().metadata().namespace_(), "team");
  EXPECT_EQ(applied[1].binding().metadata().namespace_(), "");
  Clear();
  ASSERT_EQ(Run({"apply", "-f", file, "-n", "team"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("editor configured"));
  Clear();
  EXPECT_EQ(Run({"create", "-f", file, "-n", "team"}), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("already exists"));
  Clear();
  ASSERT_EQ(Run({"get", "roles", "-n", "team"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("editor"));
  EXPECT_EQ(access_.last_list().namespace_(), "team");
  Clear();
  ASSERT_EQ(Run({"get", "rolebindings", "-A"}), kExitOk) << err_.str();
  EXPECT_EQ(access_.last_list().namespace_(), "");
  ASSERT_EQ(Run({"get", "clusterrolebindings", "-o", "yaml"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("kind: ClusterRoleBinding"));
  EXPECT_EQ(Run({"get", "pods", "p-0", "-A"}), kExitUsage);

  const std::string bad = WriteConfig("bad-rbac.yaml", R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: r}
rulez: []
)");
  Clear();
  EXPECT_EQ(Run({"apply", "-f", bad}), kExitApiError);
  EXPECT_THAT(err_.str(), HasSubstr("manifest document 1"));
  EXPECT_THAT(err_.str(), HasSubstr("rulez"));
}

}  // namespace
}  // namespace jobset::cli
