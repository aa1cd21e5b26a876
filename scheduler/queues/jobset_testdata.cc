#include "scheduler/queues/jobset_testdata.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/manifest.h"
#include "gtest/gtest.h"

namespace jobset::scheduler::queues::testing {
namespace {

// Bazel's runfiles when run by `bazel test`, else the working directory.
std::filesystem::path Runfiles() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return srcdir == nullptr ? std::filesystem::current_path()
                           : std::filesystem::path(srcdir) / "jobsetd";
}

}  // namespace

api::JobSet LoadTestData(const std::string& file) {
  std::ifstream in(Runfiles() / "scheduler" / "queues" / "testdata" / file);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<api::ManifestObject>> objects =
      api::LoadManifest(text.str());
  if (!objects.ok() || objects->size() != 1) {
    ADD_FAILURE() << file << ": want one JobSet, got " << objects.status();
    return api::JobSet();
  }
  return objects->front().jobset;
}

}  // namespace jobset::scheduler::queues::testing
