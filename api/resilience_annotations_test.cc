#include "api/resilience_annotations.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/defaults.h"
#include "api/jobset_builder.h"
#include "api/validation.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

using AnnotationMap = google::protobuf::Map<std::string, std::string>;

AnnotationMap Annotations(
    std::vector<std::pair<std::string, std::string>> entries) {
  AnnotationMap map;
  for (auto& [k, v] : entries) map[k] = v;
  return map;
}

std::vector<std::string> Errors(const AnnotationMap& annotations) {
  FieldErrors errors;
  ValidateResilienceAnnotations(annotations, "metadata.annotations", &errors);
  std::vector<std::string> out;
  for (const FieldError& e : errors.errors()) out.push_back(e.ToString());
  return out;
}

TEST(ParseResilienceSpecTest, NoneMeansOffWithDefaults) {
  absl::StatusOr<ResilienceSpec> spec =
      ParseResilienceSpec(Annotations({{"other.io/x", "y"}}));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->progress_timeout, std::nullopt);
  EXPECT_EQ(spec->straggler_threshold, std::nullopt);
  EXPECT_EQ(spec->straggler_window, absl::Minutes(2));
  EXPECT_EQ(spec->straggler_action, StragglerAction::kFlag);
}

TEST(ParseResilienceSpecTest, AllSet) {
  absl::StatusOr<ResilienceSpec> spec = ParseResilienceSpec(Annotations({
      {"jobsetd.io/progress-timeout", "1h30m"},
      {"jobsetd.io/straggler-threshold", "0.7"},
      {"jobsetd.io/straggler-window", "90s"},
      {"jobsetd.io/straggler-action", "Replace"},
  }));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->progress_timeout, absl::Minutes(90));
  EXPECT_EQ(spec->straggler_threshold, 0.7);
  EXPECT_EQ(spec->straggler_window, absl::Seconds(90));
  EXPECT_EQ(spec->straggler_action, StragglerAction::kReplace);
  EXPECT_EQ(StragglerActionName(spec->straggler_action), "Replace");
}

TEST(ParseResilienceSpecTest, ThresholdAloneTakesDefaultWindowAndFlag) {
  absl::StatusOr<ResilienceSpec> spec = ParseResilienceSpec(
      Annotations({{"jobsetd.io/straggler-threshold", ".5"}}));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->straggler_threshold, 0.5);
  EXPECT_EQ(spec->straggler_window, kDefaultStragglerWindow);
  EXPECT_EQ(spec->straggler_action, StragglerAction::kFlag);
  EXPECT_EQ(StragglerActionName(spec->straggler_action), "Flag");
}

TEST(ParseResilienceSpecTest, ErrorNamesEveryBadAnnotation) {
  EXPECT_THAT(
      ParseResilienceSpec(Annotations({{"jobsetd.io/progress-timeout", "x"},
                                       {"jobsetd.io/straggler-window", "2m"}})),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "metadata.annotations[jobsetd.io/progress-timeout]: Invalid "
               "value: \"x\": must be a duration greater than 0 and at most "
               "168h, such as \"10m\" (jobsetd's progress timeout); "
               "metadata.annotations[jobsetd.io/straggler-window]: Forbidden: "
               "only with jobsetd.io/straggler-threshold"));
}

struct ValueCase {
  std::string key;
  std::string value;
  bool ok;
};

class AnnotationValueTest : public ::testing::TestWithParam<ValueCase> {};

TEST_P(AnnotationValueTest, AcceptsOrNamesIt) {
  const ValueCase& c = GetParam();
  AnnotationMap annotations = Annotations({{c.key, c.value}});
  // Window and action need a threshold to be judged on their own value.
  if (c.key != kStragglerThresholdAnnotation &&
      c.key != kProgressTimeoutAnnotation) {
    annotations[std::string(kStragglerThresholdAnnotation)] = "0.7";
  }
  std::vector<std::string> errors = Errors(annotations);
  if (c.ok) {
    EXPECT_THAT(errors, IsEmpty());
  } else {
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_THAT(errors[0], ::testing::StartsWith(absl::StrCat(
                               "metadata.annotations[", c.key, "]: ")));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Values, AnnotationValueTest,
    ::testing::Values(
        ValueCase{"jobsetd.io/progress-timeout", "10m", true},
        ValueCase{"jobsetd.io/progress-timeout", "1ns", true},
        ValueCase{"jobsetd.io/progress-timeout", "168h", true},
        ValueCase{"jobsetd.io/progress-timeout", "168h0m1s", false},
        ValueCase{"jobsetd.io/progress-timeout", "0", false},
        ValueCase{"jobsetd.io/progress-timeout", "0s", false},
        ValueCase{"jobsetd.io/progress-timeout", "-5m", false},
        ValueCase{"jobsetd.io/progress-timeout", "inf", false},
        ValueCase{"jobsetd.io/progress-timeout", "10", false},
        ValueCase{"jobsetd.io/progress-timeout", "", false},
        ValueCase{"jobsetd.io/straggler-threshold", "0.7", true},
        ValueCase{"jobsetd.io/straggler-threshold", "0.0001", true},
        ValueCase{"jobsetd.io/straggler-threshold", "0.99", true},
        ValueCase{"jobsetd.io/straggler-threshold", "0", false},
        ValueCase{"jobsetd.io/straggler-threshold", "1", false},
        ValueCase{"jobsetd.io/straggler-threshold", "1.0", false},
        ValueCase{"jobsetd.io/straggler-threshold", "-0.5", false},
        ValueCase{"jobsetd.io/straggler-threshold", "7e-1", false},
        ValueCase{"jobsetd.io/straggler-threshold", "nan", false},
        ValueCase{"jobsetd.io/straggler-threshold", " 0.7", false},
        ValueCase{"jobsetd.io/straggler-threshold", "0..7", false},
        ValueCase{"jobsetd.io/straggler-threshold", ".", false},
        ValueCase{"jobsetd.io/straggler-threshold",
                  "0.1000000000000000000000000000000001", false},
        ValueCase{"jobsetd.io/straggler-window", "10s", true},
        ValueCase{"jobsetd.io/straggler-window", "24h", true},
        ValueCase{"jobsetd.io/straggler-window", "9.999s", false},
        ValueCase{"jobsetd.io/straggler-window", "24h0m1s", false},
        ValueCase{"jobsetd.io/straggler-window", "2", false},
        ValueCase{"jobsetd.io/straggler-action", "Flag", true},
        ValueCase{"jobsetd.io/straggler-action", "Replace", true},
        ValueCase{"jobsetd.io/straggler-action", "replace", false},
        ValueCase{"jobsetd.io/straggler-action", "", false}));

TEST(ValidateResilienceAnnotationsTest, ExactMessages) {
  EXPECT_THAT(
      Errors(Annotations({{"jobsetd.io/straggler-threshold", "1.5"},
                          {"jobsetd.io/straggler-window", "1s"},
                          {"jobsetd.io/straggler-action", "Kill"}})),
      ElementsAre(
          "metadata.annotations[jobsetd.io/straggler-threshold]: Invalid "
          "value: \"1.5\": must be a decimal greater than 0 and less than 1, "
          "such as \"0.7\" (a fraction of the gang's median step rate)",
          "metadata.annotations[jobsetd.io/straggler-window]: Invalid value: "
          "\"1s\": must be a duration from 10s to 24h, such as \"2m\"",
          "metadata.annotations[jobsetd.io/straggler-action]: Unsupported "
          "value: \"Kill\": supported values: \"Flag\", \"Replace\""));
}

TEST(ValidateResilienceAnnotationsTest, ActionWithoutThresholdForbidden) {
  EXPECT_THAT(Errors(Annotations({{"jobsetd.io/straggler-action", "Flag"}})),
              ElementsAre("metadata.annotations[jobsetd.io/straggler-action]: "
                          "Forbidden: only with "
                          "jobsetd.io/straggler-threshold"));
}

TEST(ValidateResilienceAnnotationsTest, HostileValueIsQuoted) {
  EXPECT_THAT(Errors(Annotations({{"jobsetd.io/progress-timeout", "1m\nx"}})),
              ElementsAre(::testing::HasSubstr("\"1m\\nx\"")));
}

// The hook in api/validation.cc: JobSet create and update check them.
JobSet Defaulted(JobSetBuilder builder) {
  JobSet jobset = builder.Build();
  SetJobSetDefaults(&jobset);
  return jobset;
}

TEST(JobSetValidationTest, CreateReportsBadResilienceAnnotation) {
  JobSet good =
      Defaulted(JobSetBuilder("train")
                    .Replicated("workers", 2)
                    .Annotation("jobsetd.io/progress-timeout", "10m"));
  EXPECT_THAT(ValidateJobSetCreate(good), IsOk());
  JobSet bad = Defaulted(JobSetBuilder("train")
                             .Replicated("workers", 2)
                             .Annotation("jobsetd.io/progress-timeout", "x"));
  EXPECT_THAT(ValidateJobSetCreate(bad),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr(
                           "JobSet \"train\" is invalid: "
                           "metadata.annotations[jobsetd.io/progress-timeout]: "
                           "Invalid value: \"x\": ")));
}

TEST(JobSetValidationTest, UpdateReportsBadResilienceAnnotation) {
  JobSet old_jobset =
      Defaulted(JobSetBuilder("train").Replicated("workers", 2));
  JobSet new_jobset = old_jobset;
  (*new_jobset.mutable_metadata()
        ->mutable_annotations())["jobsetd.io/straggler-threshold"] = "0.8";
  EXPECT_THAT(ValidateJobSetUpdate(old_jobset, new_jobset), IsOk());
  (*new_jobset.mutable_metadata()
        ->mutable_annotations())["jobsetd.io/straggler-threshold"] = "2";
  EXPECT_THAT(ValidateJobSetUpdate(old_jobset, new_jobset),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr(
                           "metadata.annotations[jobsetd.io/"
                           "straggler-threshold]: Invalid value: \"2\"")));
}

}  // namespace
}  // namespace jobset::api
