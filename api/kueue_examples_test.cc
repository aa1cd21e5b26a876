// The example manifests of kueue-semantics.md §8 (testdata/kueue, copied
// unchanged): every Kueue document parses, defaults and validates, and the
// JobSet queued through them loads and validates.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/defaults.h"
#include "api/kueue_defaults.h"
#include "api/kueue_manifest.h"
#include "api/kueue_validation.h"
#include "api/manifest.h"
#include "api/validation.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::jobset::testing::IsOk;
using ::testing::ElementsAre;

// Returns the repository's file `path`.
std::string ReadFile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const std::filesystem::path root =
      srcdir == nullptr ? std::filesystem::current_path()
                        : std::filesystem::path(srcdir) / "jobsetd";
  std::ifstream in(root / path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string ReadTestData(absl::string_view name) {
  return ReadFile(absl::StrCat("api/testdata/kueue/", name));
}

// The documents of a multi-document file.
std::vector<std::string> Documents(absl::string_view text) {
  return absl::StrSplit(text, "\n---\n");
}

absl::Status Validate(const KueueObject& object) {
  switch (object.object_case()) {
    case KueueObject::kResourceFlavor:
      return ValidateResourceFlavor(object.resource_flavor());
    case KueueObject::kClusterQueue:
      return ValidateClusterQueue(object.cluster_queue());
    case KueueObject::kCohort:
      return ValidateCohort(object.cohort());
    case KueueObject::kLocalQueue:
      return ValidateLocalQueue(object.local_queue());
    case KueueObject::kWorkloadPriorityClass:
      return ValidateWorkloadPriorityClass(object.workload_priority_class());
    case KueueObject::kWorkload:
      return ValidateWorkload(object.workload());
    case KueueObject::OBJECT_NOT_SET:
      break;
  }
  return absl::InternalError("no object");
}

// Parses, defaults and validates every document of `file` (of
// api/testdata/kueue, or `text` when given).
std::vector<KueueObject> LoadExample(absl::string_view file,
                                     std::string text = "") {
  std::vector<KueueObject> objects;
  if (text.empty()) text = ReadTestData(file);
  EXPECT_FALSE(text.empty()) << file;
  for (const std::string& doc : Documents(text)) {
    std::vector<std::string> warnings;
    absl::StatusOr<KueueObject> object = ParseKueueDocument(doc, &warnings);
    EXPECT_THAT(object, IsOk()) << doc;
    if (!object.ok()) continue;
    EXPECT_THAT(warnings, ::testing::IsEmpty());
    SetKueueDefaults(&*object);
    EXPECT_THAT(Validate(*object), IsOk()) << object->DebugString();
    objects.push_back(*std::move(object));
  }
  return objects;
}

TEST(KueueExamplesTest, FlavorsLoadUnchanged) {
  const std::vector<KueueObject> flavors = LoadExample("flavors.yaml");
  ASSERT_EQ(flavors.size(), 3u);
  const ResourceFlavor& spot = flavors[1].resource_flavor();
  EXPECT_EQ(spot.metadata().name(), "spot");
  EXPECT_EQ(spot.spec().node_labels().at("cloud.example.com/capacity"), "spot");
  ASSERT_EQ(spot.spec().node_taints_size(), 1);
  EXPECT_EQ(spot.spec().node_taints(0).value(), "true");
  EXPECT_EQ(spot.spec().tolerations(0).operator_(), "Equal");
  EXPECT_EQ(flavors[2].resource_flavor().spec().node_taints(0).effect(),
            "NoSchedule");
}

TEST(KueueExamplesTest, ClusterQueueLoadsUnchanged) {
  const std::vector<KueueObject> objects = LoadExample("cluster-queue.yaml");
  ASSERT_EQ(objects.size(), 1u);
  const ClusterQueueSpec& spec = objects[0].cluster_queue().spec();
  EXPECT_EQ(spec.cohort(), "ml-org");
  EXPECT_EQ(spec.namespace_selector().match_labels().at("team"), "research");
  EXPECT_EQ(spec.preemption().within_cluster_queue(), "LowerPriority");
  EXPECT_EQ(spec.preemption().reclaim_within_cohort(), "Any");
  EXPECT_EQ(spec.preemption().borrow_within_cohort().policy(), "LowerPriority");
  EXPECT_EQ(spec.preemption().borrow_within_cohort().max_priority_threshold(),
            100);
  ASSERT_EQ(spec.resource_groups_size(), 1);
  const ResourceGroup& group = spec.resource_groups(0);
  EXPECT_THAT(group.covered_resources(),
              ElementsAre("cpu", "memory", "nvidia.com/gpu"));
  ASSERT_EQ(group.flavors_size(), 3);
  EXPECT_EQ(group.flavors(0).name(), "gpu-h100");
  EXPECT_EQ(group.flavors(0).resources(1).nominal_quota(), "1536Gi");
  EXPECT_EQ(group.flavors(0).resources(2).borrowing_limit(), "8");
  EXPECT_FALSE(group.flavors(0).resources(2).has_lending_limit());
  EXPECT_EQ(group.flavors(2).resources(0).lending_limit(), "64");
  // Defaults the manifest leaves to Kueue.
  EXPECT_EQ(spec.queueing_strategy(), "BestEffortFIFO");
  EXPECT_EQ(spec.stop_policy(), "None");
  EXPECT_EQ(spec.flavor_fungibility().when_can_borrow(), "MayStopSearch");
  EXPECT_EQ(spec.flavor_fungibility().when_can_preempt(), "TryNextFlavor");
}

TEST(KueueExamplesTest, LocalQueueAndPriorityClassesLoadUnchanged) {
  const std::vector<KueueObject> objects =
      LoadExample("local-queue-and-priority-classes.yaml");
  ASSERT_EQ(objects.size(), 3u);
  EXPECT_EQ(objects[0].local_queue().metadata().namespace_(), "research");
  EXPECT_EQ(objects[0].local_queue().spec().cluster_queue(), "research");
  EXPECT_EQ(objects[1].workload_priority_class().value(), 50);
  EXPECT_EQ(objects[1].workload_priority_class().description(),
            "Exploratory runs; first to go.");
  EXPECT_EQ(objects[2].workload_priority_class().metadata().name(), "flagship");
  EXPECT_EQ(objects[2].workload_priority_class().value(), 10000);
}

TEST(KueueExamplesTest, QueuedJobSetLoadsUnchanged) {
  absl::StatusOr<std::vector<ManifestObject>> objects =
      LoadManifest(ReadTestData("jobset.yaml"));
  ASSERT_THAT(objects, IsOk());
  ASSERT_EQ(objects->size(), 1u);
  JobSet& jobset = (*objects)[0].jobset;
  SetJobSetDefaults(&jobset);
  EXPECT_THAT(ValidateJobSetCreate(jobset), IsOk());
  EXPECT_EQ(jobset.metadata().labels().at("kueue.x-k8s.io/queue-name"),
            "research-queue");
}

// tools/demo --queues' manifests (examples/queues) load as they are.
TEST(KueueExamplesTest, QueuesDemoLoadsUnchanged) {
  const std::vector<KueueObject> setup =
      LoadExample("setup.yaml", ReadFile("examples/queues/setup.yaml"));
  ASSERT_EQ(setup.size(), 5u);
  EXPECT_EQ(setup[1].cluster_queue().spec().cohort(), "research");
  EXPECT_EQ(setup[4].local_queue().spec().cluster_queue(), "team-b");
  for (const char* file : {"examples/queues/team-a-deadline.yaml",
                           "examples/queues/team-b-sweep.yaml"}) {
    absl::StatusOr<std::vector<ManifestObject>> objects =
        LoadManifest(ReadFile(file));
    ASSERT_THAT(objects, IsOk()) << file;
    ASSERT_EQ(objects->size(), 1u) << file;
    JobSet& jobset = (*objects)[0].jobset;
    SetJobSetDefaults(&jobset);
    EXPECT_THAT(ValidateJobSetCreate(jobset), IsOk()) << file;
    EXPECT_TRUE(
        jobset.metadata().labels().contains("kueue.x-k8s.io/queue-name"))
        << file;
  }
}

}  // namespace
}  // namespace jobset::api
