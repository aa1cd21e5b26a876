#include "api/kueue_validation_internal.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "api/field_errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api::kueue_internal {
namespace {

using ::testing::ElementsAre;

std::string Canonical(absl::string_view text) {
  const std::optional<KubeQuantity> q = ReadQuantity(text);
  return q.has_value() ? CanonicalQuantity(*q) : "<not a quantity>";
}

TEST(QuantityTest, CanonicalFormIsKubernetes) {
  // Values of resource.MustParse(text).String() in Kubernetes.
  struct Case {
    const char* text;
    const char* canonical;
  } cases[] = {
      {"0", "0"},           {"96", "96"},
      {"2000", "2k"},       {"1500", "1500"},
      {"0.5", "500m"},      {"1.5", "1500m"},
      {"500m", "500m"},     {"1000m", "1"},
      {"-1", "-1"},         {"-2000", "-2k"},
      {"1536Gi", "1536Gi"}, {"1.5Gi", "1536Mi"},
      {"1024Mi", "1Gi"},    {"512", "512"},
      {"0.5Ki", "512"},     {"1Ki", "1Ki"},
      {"2e3", "2e3"},       {"1n", "1n"},
      {"100u", "100u"},     {"0.1n", "1n"},
      {".5", "500m"},       {"-1.5Gi", "-1536Mi"},
      {"1E", "1E"},         {"1e-3", "1e-3"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Canonical(c.text), c.canonical) << c.text;
  }
}

TEST(QuantityTest, RefusesWhatThePatternRefuses) {
  for (const char* text : {"", "abc", "1.2.3", "1Gb", "1 Gi", "--1", "1e",
                           "1e+", "Gi", ".", "1ki", "1m2"}) {
    EXPECT_EQ(ReadQuantity(text), std::nullopt) << text;
    FieldErrors errors;
    SchemaQuantity("q", text, &errors);
    ASSERT_EQ(errors.errors().size(), 1u) << text;
    EXPECT_EQ(
        errors.errors()[0].message,
        absl::StrCat("Invalid value: \"", text, "\": q in body should match '",
                     kQuantityPattern, "'"));
  }
}

TEST(QuantityTest, SchemaSaysWhatKubernetesCannotRead) {
  FieldErrors errors;
  SchemaQuantity("q", "1e2.5", &errors);
  SchemaQuantity("q", "1234567890123456789012345678901", &errors);
  EXPECT_THAT(errors.errors(),
              ElementsAre(FieldError{"q",
                                     "Invalid value: \"1e2.5\": unable "
                                     "to parse quantity's suffix"},
                          FieldError{"q",
                                     "Invalid value: "
                                     "\"1234567890123456789012345678901\""
                                     ": jobsetd holds quantities of at "
                                     "most 30 digits and exponents of at "
                                     "most 40"}));
}

TEST(QuantityTest, ComparesExactly) {
  auto compare = [](absl::string_view a, absl::string_view b) {
    return CompareQuantities(*ReadQuantity(a), *ReadQuantity(b));
  };
  EXPECT_EQ(compare("1Gi", "1073741824"), 0);
  EXPECT_EQ(compare("0.1", "100m"), 0);
  EXPECT_EQ(compare("64", "128"), -1);
  EXPECT_EQ(compare("1k", "999"), 1);
  EXPECT_EQ(compare("1n", "0"), 1);
  EXPECT_EQ(compare("-1", "0"), -1);
  EXPECT_EQ(compare("1e40", "1n"), 1);
}

TEST(QuantityTest, NonNegativeNamesTheCanonicalValue) {
  FieldErrors errors;
  NonNegativeQuantity("q", "-1.5Gi", &errors);
  NonNegativeQuantity("q", "0", &errors);
  NonNegativeQuantity("q", "not a quantity", &errors);
  EXPECT_THAT(errors.errors(),
              ElementsAre(FieldError{"q",
                                     "Invalid value: \"-1536Mi\": must "
                                     "be greater than or equal to 0"}));
}

TEST(SchemaTest, ReferencesAndPodSetNames) {
  FieldErrors errors;
  SchemaReference("a", "", &errors);  // unset
  SchemaReference("b", "gpu-h100.example", &errors);
  SchemaReference("c", "GPU", &errors);
  SchemaReference("d", std::string(254, 'a'), &errors);
  SchemaPodSetName("e", "main", &errors);
  SchemaPodSetName("f", "a.b", &errors);
  SchemaPodSetName("g", std::string(64, 'a'), &errors);
  EXPECT_THAT(
      errors.errors(),
      ElementsAre(
          FieldError{"c", absl::StrCat("Invalid value: \"GPU\": c in body "
                                       "should match '",
                                       kSubdomainPattern, "'")},
          FieldError{"d", "Too long: may not be more than 253 bytes"},
          FieldError{"f", absl::StrCat("Invalid value: \"a.b\": f in body "
                                       "should match '",
                                       kLabelPattern, "'")},
          FieldError{"g", "Too long: may not be more than 63 bytes"}));
}

TEST(SchemaTest, CelRulesStopAtBlockingErrors) {
  FieldErrors invalid;
  invalid.Invalid("a", "x", "pattern");
  EXPECT_TRUE(CelRulesApply(&invalid));
  EXPECT_EQ(invalid.errors().size(), 1u);

  FieldErrors required;
  required.Required("a");
  EXPECT_FALSE(CelRulesApply(&required));
  EXPECT_THAT(required.errors(),
              ElementsAre(FieldError{"a", "Required value"},
                          FieldError{"<nil>",
                                     "Invalid value: \"null\": some "
                                     "validation rules were not checked "
                                     "because the object was invalid; "
                                     "correct the existing errors to "
                                     "complete validation"}));
}

TEST(MetaTest, NamespacedAndClusterScoped) {
  ObjectMeta meta;
  meta.set_name("Bad_Name");
  meta.set_namespace_("team");
  FieldErrors cluster;
  ValidateMeta(meta, /*namespaced=*/false, &cluster);
  ASSERT_EQ(cluster.errors().size(), 2u);
  EXPECT_EQ(cluster.errors()[0].path, "metadata.name");
  EXPECT_EQ(cluster.errors()[1].ToString(),
            "metadata.namespace: Forbidden: not allowed on this type");

  ObjectMeta unnamed;
  FieldErrors namespaced;
  ValidateMeta(unnamed, /*namespaced=*/true, &namespaced);
  EXPECT_THAT(namespaced.errors(),
              ElementsAre(FieldError{"metadata.name",
                                     "Required value: name or generateName "
                                     "is required"},
                          FieldError{"metadata.namespace", "Required value"}));

  ObjectMeta renamed = meta;
  renamed.set_name("other");
  FieldErrors update;
  ValidateMetaUpdate(meta, renamed, &update);
  EXPECT_THAT(update.errors(),
              ElementsAre(FieldError{"metadata.name",
                                     "Invalid value: \"other\": field is "
                                     "immutable"}));
}

}  // namespace
}  // namespace jobset::api::kueue_internal
