#include "scheduler/queues/podset_injection.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "api/jobset_builder.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "proto/jobset.pb.h"
#include "scheduler/queues/jobset_testdata.h"
#include "scheduler/queues/model.h"

namespace jobset::scheduler::queues {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::jobset::api::testing::JobSetBuilder;
using ::jobset::scheduler::queues::testing::LlmPretrain;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// §8.1's flavors.
FlavorIndex Flavors() {
  FlavorIndex flavors;
  flavors["on-demand"] = ResourceFlavor{
      "on-demand", {{"cloud.example.com/capacity", "on-demand"}}, {}, {}};
  flavors["spot"] = ResourceFlavor{
      "spot",
      {{"cloud.example.com/capacity", "spot"}},
      {{"cloud.example.com/spot", "true", TaintEffect::kNoSchedule}},
      {{"cloud.example.com/spot", TolerationOperator::kEqual, "true",
        TaintEffect::kNoSchedule}}};
  flavors["gpu-h100"] =
      ResourceFlavor{"gpu-h100",
                     {{"gpu.example.com/model", "h100"}},
                     {{"nvidia.com/gpu", "present", TaintEffect::kNoSchedule}},
                     {}};
  return flavors;
}

PodSetAssignment On(std::string name, std::map<std::string, std::string> rf) {
  return PodSetAssignment{std::move(name), std::move(rf), {}, 1};
}

Admission InResearch(std::vector<PodSetAssignment> assignments) {
  return Admission{"research", std::move(assignments)};
}

const api::PodTemplateSpec& Pod(const api::JobSet& js, int rjob) {
  return js.spec().replicated_jobs(rjob).template_().spec().template_();
}

api::PodSpec* MutablePod(api::JobSet* js, int rjob) {
  return js->mutable_spec()
      ->mutable_replicated_jobs(rjob)
      ->mutable_template_()
      ->mutable_spec()
      ->mutable_template_()
      ->mutable_spec();
}

// §8.5's admission: driver on on-demand, workers on gpu-h100.
Admission Reference85() {
  return InResearch(
      {On("driver", {{"cpu", "on-demand"}, {"memory", "on-demand"}}),
       On("workers", {{"cpu", "gpu-h100"},
                      {"memory", "gpu-h100"},
                      {"nvidia.com/gpu", "gpu-h100"}})});
}

TEST(InjectTest, Reference85StartsWithEachPodSetsOwnFlavor) {
  const api::JobSet original = LlmPretrain();
  api::JobSet js = original;
  absl::StatusOr<SavedPodTemplates> saved =
      Inject(Reference85(), "research-queue", Flavors(), &js);
  ASSERT_TRUE(saved.ok()) << saved.status();

  EXPECT_FALSE(js.spec().suspend());
  EXPECT_THAT(
      Pod(js, 0).spec().node_selector(),
      UnorderedElementsAre(Pair("cloud.example.com/capacity", "on-demand")));
  EXPECT_THAT(Pod(js, 0).spec().tolerations(), IsEmpty());
  EXPECT_THAT(Pod(js, 0).metadata().labels(),
              UnorderedElementsAre(
                  Pair("kueue.x-k8s.io/podset", "driver"),
                  Pair("kueue.x-k8s.io/local-queue-name", "research-queue"),
                  Pair("kueue.x-k8s.io/cluster-queue-name", "research")));
  EXPECT_THAT(Pod(js, 1).spec().node_selector(),
              UnorderedElementsAre(Pair("gpu.example.com/model", "h100")));
  // Kueue never adds the tolerations of a flavor's taints: the workers keep
  // their own one.
  ASSERT_EQ(Pod(js, 1).spec().tolerations_size(), 1);
  EXPECT_EQ(Pod(js, 1).spec().tolerations(0).key(), "nvidia.com/gpu");
  EXPECT_EQ(Pod(js, 1).metadata().labels().at("kueue.x-k8s.io/podset"),
            "workers");

  // Stopping puts back exactly what was there: the manifest as loaded.
  EXPECT_TRUE(Restore(*saved, &js));
  EXPECT_TRUE(MessageDifferencer::Equals(js, original))
      << js.DebugString() << "\nvs\n"
      << original.DebugString();
  EXPECT_FALSE(Restore(*saved, &js));
}

TEST(InjectTest, FlavorTolerationsAreAddedOnce) {
  api::JobSet js = JobSetBuilder("train").Replicated("a", 1).Build();
  js.mutable_spec()->set_suspend(true);
  api::JobSet twice = JobSetBuilder("train").Replicated("a", 1).Build();
  // The same toleration, operator left empty (Equal).
  api::Toleration* t = MutablePod(&twice, 0)->add_tolerations();
  t->set_key("cloud.example.com/spot");
  t->set_value("true");
  t->set_effect("NoSchedule");

  for (api::JobSet* j : {&js, &twice}) {
    ASSERT_TRUE(
        Inject(InResearch({On("a", {{"cpu", "spot"}})}), "q", Flavors(), j)
            .ok());
    ASSERT_EQ(Pod(*j, 0).spec().tolerations_size(), 1);
    EXPECT_EQ(Pod(*j, 0).spec().tolerations(0).key(), "cloud.example.com/spot");
  }
  const api::Toleration& added = Pod(js, 0).spec().tolerations(0);
  EXPECT_EQ(added.operator_(), "Equal");
  EXPECT_EQ(added.value(), "true");
  EXPECT_EQ(added.effect(), "NoSchedule");
}

TEST(InjectTest, SeveralFlavorsOfOnePodSetAllApply) {
  api::JobSet js = JobSetBuilder("train").Replicated("a", 1).Build();
  ASSERT_TRUE(Inject(InResearch({On("a", {{"cpu", "on-demand"},
                                          {"memory", "on-demand"},
                                          {"nvidia.com/gpu", "gpu-h100"}})}),
                     "q", Flavors(), &js)
                  .ok());
  EXPECT_THAT(
      Pod(js, 0).spec().node_selector(),
      UnorderedElementsAre(Pair("cloud.example.com/capacity", "on-demand"),
                           Pair("gpu.example.com/model", "h100")));
}

TEST(InjectTest, SameValueAlreadySelectedIsNoConflict) {
  api::JobSet js = JobSetBuilder("train").Replicated("a", 1).Build();
  (*MutablePod(&js, 0)->mutable_node_selector())["cloud.example.com/capacity"] =
      "spot";
  const api::JobSet before = js;
  absl::StatusOr<SavedPodTemplates> saved =
      Inject(InResearch({On("a", {{"cpu", "spot"}})}), "q", Flavors(), &js);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_THAT(Pod(js, 0).spec().node_selector(),
              ElementsAre(Pair("cloud.example.com/capacity", "spot")));
  Restore(*saved, &js);
  js.mutable_spec()->clear_suspend();
  EXPECT_TRUE(MessageDifferencer::Equals(js, before));
}

struct ConflictCase {
  std::string name;
  std::map<std::string, std::string> node_selector;
  std::map<std::string, std::string> labels;
  Admission admission;
  absl::StatusCode code;
  std::string message;
};

class InjectErrorTest : public ::testing::TestWithParam<ConflictCase> {};

TEST_P(InjectErrorTest, ChangesNothing) {
  const ConflictCase& c = GetParam();
  api::JobSet js = JobSetBuilder("train")
                       .Suspend()
                       .Replicated("a", 1)
                       .Replicated("b", 1)
                       .Build();
  MutablePod(&js, 1)->mutable_node_selector()->insert(c.node_selector.begin(),
                                                      c.node_selector.end());
  js.mutable_spec()
      ->mutable_replicated_jobs(1)
      ->mutable_template_()
      ->mutable_spec()
      ->mutable_template_()
      ->mutable_metadata()
      ->mutable_labels()
      ->insert(c.labels.begin(), c.labels.end());
  const api::JobSet before = js;
  absl::StatusOr<SavedPodTemplates> saved =
      Inject(c.admission, "q", Flavors(), &js);
  EXPECT_EQ(saved.status().code(), c.code);
  EXPECT_EQ(saved.status().message(), c.message);
  EXPECT_TRUE(MessageDifferencer::Equals(js, before));
}

INSTANTIATE_TEST_SUITE_P(
    Table, InjectErrorTest,
    ::testing::Values(
        ConflictCase{"NodeSelectorConflict",
                     {{"cloud.example.com/capacity", "spot"}, {"zone", "a"}},
                     {},
                     InResearch({On("a", {{"cpu", "spot"}}),
                                 On("b", {{"cpu", "on-demand"}})}),
                     absl::StatusCode::kFailedPrecondition,
                     "invalid admission check PodSetUpdate: conflict for "
                     "nodeSelector: conflict for key=cloud.example.com/"
                     "capacity, value1=spot, value2=on-demand"},
        ConflictCase{"LabelConflict",
                     {},
                     {{"kueue.x-k8s.io/podset", "other"}},
                     InResearch({On("a", {{"cpu", "spot"}}),
                                 On("b", {{"cpu", "spot"}})}),
                     absl::StatusCode::kFailedPrecondition,
                     "invalid admission check PodSetUpdate: conflict for "
                     "labels: conflict for key=kueue.x-k8s.io/podset, "
                     "value1=other, value2=b"},
        ConflictCase{"TooFewAssignments",
                     {},
                     {},
                     InResearch({On("a", {{"cpu", "spot"}})}),
                     absl::StatusCode::kFailedPrecondition,
                     "invalid podset infos: expecting 2 podset, got 1"},
        ConflictCase{"MissingFlavor",
                     {},
                     {},
                     InResearch({On("a", {{"cpu", "spot"}}),
                                 On("b", {{"cpu", "ghost"}})}),
                     absl::StatusCode::kNotFound,
                     "resourceflavors.kueue.x-k8s.io \"ghost\" not found"}),
    [](const auto& info) { return info.param.name; });

TEST(InjectTest, ClusterQueueLabelOnlyForALabelName) {
  api::JobSet js = JobSetBuilder("train").Replicated("a", 1).Build();
  Admission admission = InResearch({On("a", {{"cpu", "spot"}})});
  admission.cluster_queue = "research.gpu";  // a subdomain, not a label
  ASSERT_TRUE(Inject(admission, "", Flavors(), &js).ok());
  EXPECT_THAT(
      Pod(js, 0).metadata().labels(),
      UnorderedElementsAre(Pair("kueue.x-k8s.io/podset", "a"),
                           Pair("kueue.x-k8s.io/local-queue-name", "")));
}

// §6 scenario 21: evicted from on-demand, re-admitted on spot: spot's
// selector only, nothing stacked from the first admission.
TEST(RestoreTest, ReadmissionOnAnotherFlavorDoesNotStack) {
  api::JobSet js = JobSetBuilder("train").Suspend().Replicated("a", 2).Build();
  absl::StatusOr<SavedPodTemplates> saved = Inject(
      InResearch({On("a", {{"cpu", "on-demand"}})}), "q", Flavors(), &js);
  ASSERT_TRUE(saved.ok());
  ASSERT_TRUE(Restore(*saved, &js));
  EXPECT_TRUE(js.spec().suspend());
  EXPECT_THAT(Pod(js, 0).spec().node_selector(), IsEmpty());
  EXPECT_FALSE(Pod(js, 0).has_metadata());

  ASSERT_TRUE(
      Inject(InResearch({On("a", {{"cpu", "spot"}})}), "q", Flavors(), &js)
          .ok());
  EXPECT_THAT(Pod(js, 0).spec().node_selector(),
              ElementsAre(Pair("cloud.example.com/capacity", "spot")));
  EXPECT_EQ(Pod(js, 0).spec().tolerations_size(), 1);
}

TEST(RestoreTest, WrongCountOnlySuspends) {
  api::JobSet js = JobSetBuilder("train").Replicated("a", 1).Build();
  ASSERT_TRUE(
      Inject(InResearch({On("a", {{"cpu", "spot"}})}), "q", Flavors(), &js)
          .ok());
  const api::PodTemplateSpec injected = Pod(js, 0);
  EXPECT_TRUE(Restore(SavedPodTemplates(2), &js));
  EXPECT_TRUE(js.spec().suspend());
  EXPECT_TRUE(MessageDifferencer::Equals(Pod(js, 0), injected));
}

TEST(SaveTemplatesTest, HoldsOnlyWhatIsRestoredAndSerialises) {
  api::JobSet js = JobSetBuilder("train").Replicated("a", 1).Build();
  api::PodTemplateSpec* pod = js.mutable_spec()
                                  ->mutable_replicated_jobs(0)
                                  ->mutable_template_()
                                  ->mutable_spec()
                                  ->mutable_template_();
  (*pod->mutable_metadata()->mutable_annotations())["note"] = "kept";
  (*pod->mutable_metadata()->mutable_labels())["app"] = "train";
  const SavedPodTemplates saved = SaveTemplates(js);
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_THAT(saved[0].spec().containers(), IsEmpty());
  EXPECT_THAT(saved[0].metadata().labels(), ElementsAre(Pair("app", "train")));

  // Kept as bytes (e.g. beside the Workload), read back, restored.
  const std::string stored = saved[0].SerializeAsString();
  SavedPodTemplates read(1);
  ASSERT_TRUE(read[0].ParseFromString(stored));
  const api::JobSet before = js;
  ASSERT_TRUE(
      Inject(InResearch({On("a", {{"cpu", "spot"}})}), "q", Flavors(), &js)
          .ok());
  Restore(read, &js);
  js.mutable_spec()->clear_suspend();
  EXPECT_TRUE(MessageDifferencer::Equals(js, before));
}

}  // namespace
}  // namespace jobset::scheduler::queues
