#include "api/namespace_manifest.h"

#include <string>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;

TEST(NamespaceManifestTest, ParsesAndValidates) {
  absl::StatusOr<Namespace> ns = ParseNamespaceDocument(R"(
apiVersion: v1
kind: Namespace
metadata:
  name: secure
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: latest
spec:
  finalizers: [kubernetes]
)");
  ASSERT_THAT(ns, IsOk());
  EXPECT_EQ(ns->metadata().name(), "secure");
  EXPECT_EQ(ns->metadata().labels().at("pod-security.kubernetes.io/enforce"),
            "restricted");
  EXPECT_THAT(ValidateNamespace(*ns), IsOk());
  EXPECT_TRUE(IsNamespaceKind("v1", "Namespace"));
  EXPECT_FALSE(IsNamespaceKind("v2", "Namespace"));
}

TEST(NamespaceManifestTest, ShapeErrors) {
  EXPECT_THAT(
      ParseNamespaceDocument("apiVersion: v1\nkind: Namespace\n"
                             "metadata: {name: a}\nmetadta: {}\n"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metadta")));
  EXPECT_THAT(ParseNamespaceDocument("apiVersion: v2\nkind: Namespace\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("apiVersion: Unsupported value: \"v2\"")));
  EXPECT_THAT(ParseNamespaceDocument("apiVersion: v1\nkind: Pod\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("kind: Unsupported value: \"Pod\"")));
  EXPECT_THAT(ParseNamespaceDocument(std::string(2 << 20, ' ')),
              StatusIs(absl::StatusCode::kResourceExhausted));
}

TEST(NamespaceManifestTest, ContentErrors) {
  Namespace ns;
  EXPECT_THAT(ValidateNamespace(ns),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.name: Required value")));
  ns.mutable_metadata()->set_name("Bad_Name");
  EXPECT_THAT(
      ValidateNamespace(ns),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("metadata.name: Invalid value: \"Bad_Name\"")));
  ns.mutable_metadata()->set_name("ok");
  ns.mutable_metadata()->set_namespace_("x");
  EXPECT_THAT(ValidateNamespace(ns),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("metadata.namespace: Forbidden")));
  ns.mutable_metadata()->clear_namespace_();
  (*ns.mutable_metadata()
        ->mutable_labels())["pod-security.kubernetes.io/enforce"] = "strict";
  EXPECT_THAT(
      ValidateNamespace(ns),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "Namespace \"ok\" is invalid: "
               "metadata.labels[pod-security.kubernetes.io/enforce]: Invalid "
               "value: \"strict\": must be one of privileged, baseline, "
               "restricted"));
}

}  // namespace
}  // namespace jobset::api
