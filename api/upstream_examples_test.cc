// Every upstream JobSet example manifest (testdata/upstream, copied unchanged)
// loads, defaults and validates; small edits that upstream rejects are
// rejected with the field path.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "api/defaults.h"
#include "api/manifest.h"
#include "api/pod_security.h"
#include "api/validation.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

// Bazel's runfiles when run by `bazel test`, else the working directory (run
// the binary from the repository root).
std::filesystem::path Runfiles() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return srcdir == nullptr ? std::filesystem::current_path()
                           : std::filesystem::path(srcdir) / "jobsetd";
}

std::filesystem::path TestDataDir() {
  return Runfiles() / "api" / "testdata" / "upstream";
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::string> YamlFiles(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The feature gates jobsetd runs with: upstream's, plus RestartJob, which two
// upstream examples (failure-policy-restartjob*) need, and InPlaceRestart
// (examples/slices-restart-in-place.yaml).
const Features kJobsetdFeatures{.restart_job = true, .in_place_restart = true};

// Loads, defaults and validates every JobSet in `text`, and admits it at
// jobsetd's default Pod Security level (baseline).
absl::Status Admit(const std::string& text) {
  absl::StatusOr<std::vector<ManifestObject>> objects = LoadManifest(text);
  if (!objects.ok()) return objects.status();
  if (objects->empty()) return absl::InvalidArgumentError("no JobSet");
  for (ManifestObject& object : *objects) {
    SetJobSetDefaults(&object.jobset);
    if (absl::Status s = ValidateJobSetCreate(object.jobset, kJobsetdFeatures);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckJobSetPodSecurity(
            object.jobset, PodSecurityLevel::kBaseline, AllowedHostPaths());
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> ExampleNames() { return YamlFiles(TestDataDir()); }

TEST(UpstreamExamplesTest, AllEighteenArePresent) {
  EXPECT_EQ(ExampleNames().size(), 18u);
}

class UpstreamExampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(UpstreamExampleTest, LoadsDefaultsAndValidatesUnchanged) {
  const std::string text = ReadFile(TestDataDir() / GetParam());
  ASSERT_FALSE(text.empty());
  EXPECT_THAT(Admit(text), IsOk());
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, UpstreamExampleTest, ::testing::ValuesIn(ExampleNames()),
    [](const auto& info) {
      return absl::StrReplaceAll(info.param, {{"-", "_"}, {".yaml", ""}});
    });

TEST(UpstreamExamplesTest, DefaultsMatchUpstream) {
  auto objects =
      LoadManifest(ReadFile(TestDataDir() / "simple-paralleljobs.yaml"));
  ASSERT_THAT(objects, IsOk());
  JobSet js = (*objects)[0].jobset;
  SetJobSetDefaults(&js);
  EXPECT_EQ(js.spec().success_policy().operator_(), "All");
  EXPECT_EQ(js.spec().startup_policy().startup_policy_order(), "AnyOrder");
  EXPECT_TRUE(js.spec().network().enable_dns_hostnames());
  EXPECT_TRUE(js.spec().network().publish_not_ready_addresses());
  for (const ReplicatedJob& rj : js.spec().replicated_jobs()) {
    EXPECT_EQ(rj.group_name(), "default");
    EXPECT_EQ(rj.template_().spec().completion_mode(), "Indexed");
    EXPECT_EQ(rj.template_().spec().template_().spec().restart_policy(),
              "OnFailure");
  }
}

class OurExampleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OurExampleTest, LoadsDefaultsAndValidates) {
  auto objects = LoadManifest(ReadFile(Runfiles() / "examples" / GetParam()));
  ASSERT_THAT(objects, IsOk());
  ASSERT_FALSE(objects->empty());
  for (ManifestObject& object : *objects) {
    EXPECT_TRUE(object.warnings.empty()) << object.warnings[0];
    SetJobSetDefaults(&object.jobset);
    EXPECT_THAT(ValidateJobSetCreate(object.jobset, kJobsetdFeatures), IsOk());
    // Our examples checkpoint under one host folder, which a cluster
    // running them allows (tools/demo: --allowed_host_paths).
    absl::StatusOr<AllowedHostPaths> checkpoints = AllowedHostPaths::Parse(
        "--allowed_host_paths", "/tmp/jobsetd-example-checkpoints");
    ASSERT_THAT(checkpoints, IsOk());
    EXPECT_THAT(CheckJobSetPodSecurity(
                    object.jobset, PodSecurityLevel::kBaseline, *checkpoints),
                IsOk());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Examples, OurExampleTest,
    ::testing::ValuesIn(YamlFiles(Runfiles() / "examples")),
    [](const auto& info) {
      return absl::StrReplaceAll(info.param, {{"-", "_"}, {".yaml", ""}});
    });

struct Variant {
  std::string name;
  std::string file;
  std::string from;  // text replaced in the example...
  std::string to;    // ...by this
  std::string path;  // expected in the error
};

class InvalidVariantTest : public ::testing::TestWithParam<Variant> {};

TEST_P(InvalidVariantTest, IsRejectedWithTheFieldPath) {
  const Variant& v = GetParam();
  const std::string original = ReadFile(TestDataDir() / v.file);
  ASSERT_THAT(original, HasSubstr(v.from));
  const std::string edited = absl::StrReplaceAll(original, {{v.from, v.to}});
  EXPECT_THAT(Admit(edited),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(v.path)));
}

INSTANTIATE_TEST_SUITE_P(
    Upstream, InvalidVariantTest,
    ::testing::Values(
        Variant{"NegativeReplicas", "simple-exclusive-placement.yaml",
                "replicas: 3", "replicas: -1",
                "spec.replicatedJobs[0].replicas"},
        Variant{"DependsOnUnknownStatus", "depends-on-depends-on.yaml",
                "status: Ready", "status: Failed",
                "spec.replicatedJobs[2].dependsOn[0].status"},
        Variant{"UnknownFailureReason",
                "failure-policy-onjobfailurereasons-present.yaml",
                "- BackoffLimitExceeded", "- TooManyRetries",
                "spec.failurePolicy.rules[0].onJobFailureReasons[0]"},
        Variant{"SuccessTargetMissing", "simple-success-policy.yaml",
                "    - workers", "    - boss",
                "spec.successPolicy.targetReplicatedJobs[0]"},
        Variant{"CoordinatorOutOfRange", "simple-coordinator.yaml",
                "jobIndex: 0", "jobIndex: 7", "spec.coordinator.jobIndex"},
        Variant{"NameTooLong", "simple-paralleljobs.yaml", "name: paralleljobs",
                "name: paralleljobs-with-a-name-that-is-far-too-long-for-"
                "kubernetes",
                "spec.replicatedJobs[0].name"},
        Variant{"TypoInField", "simple-group.yaml", "groupName:", "groupname:",
                "spec.replicatedJobs[1].groupname"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace jobset::api
