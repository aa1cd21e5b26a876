#include "api/field_errors.h"

#include <string>
#include <vector>

#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;

TEST(FieldErrorsTest, KubernetesWording) {
  FieldErrors e;
  e.Invalid("spec.replicatedJobs[0].replicas", -1,
            "must be greater than or equal to 0");
  e.Invalid("spec.network.subdomain", "Bad", "must be a DNS-1035 label");
  e.Required("spec.replicatedJobs[1].name");
  e.Required("spec.coordinator.replicatedJob", "must name a replicated job");
  e.NotSupported("spec.successPolicy.operator", "Some", {"All", "Any"});
  e.Forbidden("spec.volumeClaimPolicies", "not supported");
  e.Duplicate("spec.replicatedJobs[2].name", "workers");
  e.TooLong("spec.managedBy", 63);
  e.TooMany("spec.replicatedJobs[1].dependsOn", 6, 5);
  e.Add("spec.x", "unknown field");
  std::vector<std::string> got;
  for (const FieldError& error : e.errors()) got.push_back(error.ToString());
  EXPECT_THAT(
      got,
      ::testing::ElementsAre(
          "spec.replicatedJobs[0].replicas: Invalid value: -1: must be "
          "greater than or equal to 0",
          "spec.network.subdomain: Invalid value: \"Bad\": must be a "
          "DNS-1035 label",
          "spec.replicatedJobs[1].name: Required value",
          "spec.coordinator.replicatedJob: Required value: must name a "
          "replicated job",
          "spec.successPolicy.operator: Unsupported value: \"Some\": "
          "supported values: \"All\", \"Any\"",
          "spec.volumeClaimPolicies: Forbidden: not supported",
          "spec.replicatedJobs[2].name: Duplicate value: \"workers\"",
          "spec.managedBy: Too long: may not be more than 63 bytes",
          "spec.replicatedJobs[1].dependsOn: Too many: 6: must have at most "
          "5 items",
          "spec.x: unknown field"));
}

TEST(FieldErrorsTest, EscapesHostileValues) {
  const std::string hostile = "a\"b\nspec.x: Required value\x01";
  FieldErrors e;
  e.Invalid("metadata.name", hostile, "must be a DNS-1123 subdomain");
  e.NotSupported("spec.kind", hostile, {"A\"", "B"});
  e.Duplicate("spec.replicatedJobs[1].name", hostile);
  e.InvalidList("rules[0].nonResourceURLs",
                std::vector<std::string>{"/ok", hostile}, "not here");
  std::vector<std::string> got;
  for (const FieldError& error : e.errors()) got.push_back(error.ToString());
  EXPECT_THAT(
      got,
      ::testing::ElementsAre(
          R"(metadata.name: Invalid value: "a\"b\nspec.x: Required value\x01": )"
          "must be a DNS-1123 subdomain",
          R"(spec.kind: Unsupported value: "a\"b\nspec.x: Required value\x01": )"
          R"(supported values: "A\"", "B")",
          R"(spec.replicatedJobs[1].name: Duplicate value: )"
          R"("a\"b\nspec.x: Required value\x01")",
          R"(rules[0].nonResourceURLs: Invalid value: ["/ok" )"
          R"("a\"b\nspec.x: Required value\x01"]: not here)"));
  // No line of the status comes from the value.
  EXPECT_EQ(e.ToStatus("JobSet \"a\"").message().find('\n'), std::string::npos);
}

TEST(FieldErrorsTest, ToStatusJoinsAllErrors) {
  FieldErrors e;
  EXPECT_TRUE(e.empty());
  EXPECT_THAT(e.ToStatus("JobSet \"a\""), IsOk());
  e.Required("metadata.name");
  e.Required("spec.replicatedJobs[0].name");
  EXPECT_FALSE(e.empty());
  EXPECT_THAT(e.ToStatus("JobSet \"a\""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "JobSet \"a\" is invalid: metadata.name: Required "
                       "value; spec.replicatedJobs[0].name: Required value"));
}

TEST(FieldErrorsTest, PathHelpers) {
  EXPECT_EQ(Child("", "spec"), "spec");
  EXPECT_EQ(Child("spec", "network"), "spec.network");
  EXPECT_EQ(Index("spec.replicatedJobs", 2), "spec.replicatedJobs[2]");
  EXPECT_EQ(Key("metadata.labels", "a/b"), "metadata.labels[a/b]");
}

// A key that needs escaping is quoted as Go's %q, so a hostile label key
// cannot forge a line or a field of the message; a valid key prints bare,
// as Kubernetes prints it.
TEST(FieldErrorsTest, KeyQuotesHostileKeys) {
  EXPECT_EQ(Key("metadata.labels", "a\nb: Required value"),
            R"(metadata.labels["a\nb: Required value"])");
  EXPECT_EQ(Key("data", "x\"]"), R"(data["x\"]"])");
  EXPECT_EQ(Key("data", "\xe2\x80\xa8"), R"(data["\u2028"])");
  EXPECT_EQ(Key("data", "ok.key_1-2"), "data[ok.key_1-2]");
}

}  // namespace
}  // namespace jobset::api
