#include "api/rbac_manifest.h"

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

TEST(ParseRbacDocumentTest, ReadsAnUpstreamRole) {
  absl::StatusOr<RbacObject> object = ParseRbacDocument(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  namespace: team-a
  name: jobset-editor
rules:
- apiGroups: ["jobset.x-k8s.io"]
  resources: ["jobsets"]
  verbs: ["get", "list", "create"]
- nonResourceURLs: ["/healthz"]
  verbs: ["get"]
)");
  ASSERT_TRUE(object.ok()) << object.status();
  ASSERT_TRUE(object->has_role());
  EXPECT_EQ(object->role().kind(), "Role");
  EXPECT_EQ(object->role().metadata().namespace_(), "team-a");
  ASSERT_EQ(object->role().rules_size(), 2);
  EXPECT_EQ(object->role().rules(0).verbs_size(), 3);
  EXPECT_EQ(object->role().rules(1).non_resource_urls(0), "/healthz");
}

TEST(ParseRbacDocumentTest, ReadsAClusterRoleBindingInJson) {
  absl::StatusOr<RbacObject> object = ParseRbacDocument(R"({
  "apiVersion": "rbac.authorization.k8s.io/v1",
  "kind": "ClusterRoleBinding",
  "metadata": {"name": "alice-admin"},
  "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io",
                "name": "alice"},
               {"kind": "ServiceAccount", "name": "ci", "namespace": "ci"}],
  "roleRef": {"apiGroup": "rbac.authorization.k8s.io",
              "kind": "ClusterRole", "name": "cluster-admin"}
})");
  ASSERT_TRUE(object.ok()) << object.status();
  ASSERT_TRUE(object->has_binding());
  EXPECT_EQ(object->binding().kind(), "ClusterRoleBinding");
  EXPECT_EQ(object->binding().subjects(1).namespace_(), "ci");
  EXPECT_EQ(object->binding().role_ref().name(), "cluster-admin");
}

TEST(ParseRbacDocumentTest, NamesTheBadField) {
  EXPECT_THAT(ParseRbacDocument(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: r}
rules:
- verb: [get]
)"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("verb")));
  EXPECT_THAT(
      ParseRbacDocument(R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: b}
roleRef: [not, a, map]
)"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("roleRef")));
}

TEST(ParseRbacDocumentTest, RefusesOtherKindsAndVersions) {
  EXPECT_THAT(ParseRbacDocument("apiVersion: v1\nkind: Pod\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Pod")));
  EXPECT_THAT(
      ParseRbacDocument("apiVersion: rbac.authorization.k8s.io/v1beta1\n"
                        "kind: Role\nmetadata: {name: r}\n"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("apiVersion")));
  // The echoed kind and apiVersion are quoted as Go's %q.
  EXPECT_THAT(ParseRbacDocument("apiVersion: v1\nkind: \"Pod\\nx\\\"\"\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(R"(Unsupported value: "Pod\nx\"")")));
  EXPECT_THAT(ParseRbacDocument("apiVersion: \"v1\\n\"\nkind: Role\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(R"(apiVersion: Unsupported value: "v1\n")")));
  EXPECT_THAT(ParseRbacDocument("kind: [Role"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseRbacDocument(std::string(kMaxManifestBytes + 1, ' ')),
              StatusIs(absl::StatusCode::kResourceExhausted));
}

}  // namespace
}  // namespace jobset::api
