#include "cli/manifest_split.h"

#include "absl/strings/str_cat.h"
#include "api/manifest.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;

constexpr char kJobSet[] = R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec: {}
)";

constexpr char kRole[] = R"(apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: r}
rules: []
)";

constexpr char kBinding[] = R"(apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: b}
subjects: [{kind: User, name: alice}]
roleRef: {kind: ClusterRole, name: view}
)";

TEST(SplitByKindTest, TakesOutSecretsAndConfigMaps) {
  const std::string text = absl::StrCat(
      "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n---\n", kJobSet,
      "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
  SplitDocuments split = SplitByKind(text);
  ASSERT_EQ(split.secrets.size(), 1u);
  EXPECT_EQ(split.secrets[0].document, 1);
  ASSERT_EQ(split.config_maps.size(), 1u);
  EXPECT_EQ(split.config_maps[0].document, 3);
  absl::StatusOr<std::vector<api::ManifestObject>> objects =
      api::LoadManifest(split.rest);
  ASSERT_TRUE(objects.ok()) << objects.status();
  ASSERT_EQ(objects->size(), 1u);
  EXPECT_EQ((*objects)[0].document, 2);
}

// Kueue's kinds of group kueue.x-k8s.io (any version: the reader checks
// it) are taken out; a Kueue kind of another group is left for
// LoadManifest to refuse.
TEST(SplitByKindTest, TakesOutKueueDocuments) {
  const std::string text = absl::StrCat(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
      "metadata: {name: f}\n---\n",
      kJobSet,
      "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
      "metadata: {name: cq}\n---\n"
      "apiVersion: example.com/v1\nkind: LocalQueue\nmetadata: {name: q}\n");
  SplitDocuments split = SplitByKind(text);
  ASSERT_EQ(split.kueue.size(), 2u);
  EXPECT_EQ(split.kueue[0].document, 1);
  EXPECT_THAT(split.kueue[0].text, HasSubstr("kind: ResourceFlavor"));
  EXPECT_EQ(split.kueue[1].document, 3);
  EXPECT_THAT(split.kueue[1].text, HasSubstr("kind: ClusterQueue"));
  absl::StatusOr<std::vector<api::ManifestObject>> objects =
      api::LoadManifest(split.rest);
  ASSERT_FALSE(objects.ok());
  EXPECT_THAT(objects.status().message(), HasSubstr("document 4"));
}

TEST(SplitByKindTest, WithoutRbacTheTextIsUnchanged) {
  const std::string text = absl::StrCat("# c\n", kJobSet, "---\n", kJobSet);
  SplitDocuments split = SplitByKind(text);
  EXPECT_EQ(split.rest, text);
  EXPECT_TRUE(split.rbac.empty());
}

TEST(SplitByKindTest, TakesOutRbacAndKeepsNumbering) {
  const std::string text =
      absl::StrCat(kRole, "---\n", kJobSet, "---\n", kBinding, "--- ",
                   "{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet,\n"
                   "metadata: {name: bad}, spec: {typo: 1}}\n");
  SplitDocuments split = SplitByKind(text);
  ASSERT_EQ(split.rbac.size(), 2u);
  EXPECT_EQ(split.rbac[0].document, 1);
  EXPECT_THAT(split.rbac[0].text, HasSubstr("kind: Role"));
  EXPECT_EQ(split.rbac[1].document, 3);
  EXPECT_THAT(split.rbac[1].text, HasSubstr("kind: ClusterRoleBinding"));
  // The JobSet documents keep their numbers (and the bad one is reported as
  // document 4, as without the split).
  absl::StatusOr<std::vector<api::ManifestObject>> objects =
      api::LoadManifest(split.rest);
  ASSERT_FALSE(objects.ok());
  EXPECT_THAT(objects.status().message(), HasSubstr("document 4"));
  objects = api::LoadManifest(
      SplitByKind(absl::StrCat(kRole, "---\n", kJobSet)).rest);
  ASSERT_TRUE(objects.ok()) << objects.status();
  ASSERT_EQ(objects->size(), 1u);
  EXPECT_EQ((*objects)[0].document, 2);
}

TEST(SplitByKindTest, OtherKindsAndBadYamlStayForLoadManifest) {
  const std::string text =
      "apiVersion: v1\nkind: Role\n---\nkind: [Role\n---\n"
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: Pod\n";
  SplitDocuments split = SplitByKind(text);
  EXPECT_TRUE(split.rbac.empty());
  EXPECT_EQ(split.rest, text);
}

TEST(SplitByKindTest, Json) {
  SplitDocuments split = SplitByKind(
      R"({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
          "metadata": {"name": "x"}})");
  ASSERT_EQ(split.rbac.size(), 1u);
  absl::StatusOr<std::vector<api::ManifestObject>> objects =
      api::LoadManifest(split.rest);
  ASSERT_TRUE(objects.ok()) << objects.status();
  EXPECT_TRUE(objects->empty());
}

}  // namespace
}  // namespace jobset::cli
