#include "scheduler/queues/jobset_workload.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "api/jobset_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/jobset.pb.h"
#include "scheduler/queues/flavor_assigner.h"
#include "scheduler/queues/jobset_testdata.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/quota.h"
#include "scheduler/queues/test_builders.h"

namespace jobset::scheduler::queues {
namespace {

using ::jobset::api::testing::JobSetBuilder;
using ::jobset::scheduler::queues::testing::ClusterQueueBuilder;
using ::jobset::scheduler::queues::testing::Cpu;
using ::jobset::scheduler::queues::testing::LoadTestData;
using ::jobset::scheduler::queues::testing::Quota;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Pair;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr char kUid[] = "11111111-2222-3333-4444-555555555555";

api::PodSpec* MutablePod(api::JobSet* js, int rjob) {
  return js->mutable_spec()
      ->mutable_replicated_jobs(rjob)
      ->mutable_template_()
      ->mutable_spec()
      ->mutable_template_()
      ->mutable_spec();
}

// ---------------------------------------------------------------------------
// §2.1

struct ManagedCase {
  std::string name;
  std::optional<std::string> queue_label;
  bool manage_without_queue_name;
  bool want;
};

class IsManagedTest : public ::testing::TestWithParam<ManagedCase> {};

TEST_P(IsManagedTest, QueueLabelOrConfiguration) {
  JobSetBuilder b("train");
  if (GetParam().queue_label.has_value()) {
    b.Label(kQueueNameLabel, *GetParam().queue_label);
  }
  EXPECT_EQ(IsManaged(b.Build(), GetParam().manage_without_queue_name),
            GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, IsManagedTest,
    ::testing::Values(
        ManagedCase{"Labelled", "research-queue", false, true},
        ManagedCase{"LabelledWithFlag", "research-queue", true, true},
        ManagedCase{"UnlabelledRunsUnmanaged", std::nullopt, false, false},
        ManagedCase{"UnlabelledWithFlag", std::nullopt, true, true},
        ManagedCase{"EmptyLabelIsNoLabel", "", false, false},
        ManagedCase{"EmptyLabelWithFlag", "", true, true}),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// §2.2: the name

TEST(WorkloadNameTest, ReferenceVector) {
  api::JobSet js = JobSetBuilder("train").Build();
  js.mutable_metadata()->set_uid(kUid);
  EXPECT_EQ(WorkloadName(js), "jobset-train-33226");
}

TEST(WorkloadNameTest, UidChangesTheHash) {
  api::JobSet a = JobSetBuilder("train").Build();
  a.mutable_metadata()->set_uid(kUid);
  api::JobSet b = a;
  b.mutable_metadata()->set_uid("11111111-2222-3333-4444-555555555556");
  EXPECT_THAT(WorkloadName(b), MatchesRegex("jobset-train-[0-9a-f]{5}"));
  EXPECT_NE(WorkloadName(a), WorkloadName(b));
}

TEST(WorkloadNameTest, LongNameKeeps247CharactersOfPrefix) {
  const std::string name(260, 'a');
  api::JobSet js = JobSetBuilder(name).Build();
  js.mutable_metadata()->set_uid(kUid);
  const std::string wl = WorkloadName(js);
  ASSERT_EQ(wl.size(), 253u);
  EXPECT_EQ(wl.substr(0, 247), ("jobset-" + name).substr(0, 247));
  EXPECT_THAT(wl.substr(247), MatchesRegex("-[0-9a-f]{5}"));
}

// ---------------------------------------------------------------------------
// §2.2: counts

struct CountCase {
  std::string name;
  std::optional<int32_t> replicas, parallelism, completions;
  int32_t want;
};

class CountTest : public ::testing::TestWithParam<CountCase> {};

TEST_P(CountTest, ReplicasTimesMinParallelismCompletions) {
  const CountCase& c = GetParam();
  api::JobSet js = JobSetBuilder("train").Replicated("w", 1).Build();
  api::ReplicatedJob* rjob = js.mutable_spec()->mutable_replicated_jobs(0);
  api::JobSpec* job = rjob->mutable_template_()->mutable_spec();
  rjob->clear_replicas();
  job->clear_parallelism();
  job->clear_completions();
  if (c.replicas) rjob->set_replicas(*c.replicas);
  if (c.parallelism) job->set_parallelism(*c.parallelism);
  if (c.completions) job->set_completions(*c.completions);
  absl::StatusOr<std::vector<PodSet>> pod_sets = PodSetsFor(js);
  ASSERT_TRUE(pod_sets.ok()) << pod_sets.status();
  ASSERT_EQ(pod_sets->size(), 1u);
  EXPECT_EQ(pod_sets->front().count, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, CountTest,
    ::testing::Values(
        CountCase{"AllUnsetIsOne", std::nullopt, std::nullopt, std::nullopt, 1},
        CountCase{"Reference85Workers", 2, 2, 2, 4},
        CountCase{"CompletionsDefaultToParallelism", 3, 4, std::nullopt, 12},
        CountCase{"FewerCompletions", 2, 4, 1, 2},
        CountCase{"MoreCompletions", 2, 2, 5, 4},
        CountCase{"ParallelismDefaultsToOne", 5, std::nullopt, 8, 5},
        CountCase{"ParallelismZero", 3, 0, std::nullopt, 0},
        CountCase{"ReplicasZero", 0, 4, 4, 0}),
    [](const auto& info) { return info.param.name; });

TEST(PodSetsForTest, CountOverInt32IsInvalid) {
  api::JobSet js =
      JobSetBuilder("train").Replicated("a", 1).Replicated("w", 65536).Build();
  api::JobSpec* job = js.mutable_spec()
                          ->mutable_replicated_jobs(1)
                          ->mutable_template_()
                          ->mutable_spec();
  job->set_parallelism(65536);
  job->set_completions(65536);
  absl::StatusOr<std::vector<PodSet>> pod_sets = PodSetsFor(js);
  EXPECT_EQ(pod_sets.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(pod_sets.status().message(),
              HasSubstr("spec.replicatedJobs[1]: replicas x min(parallelism, "
                        "completions) = 4294967296 is outside"));
}

TEST(PodSetsForTest, NamesAreLowerCasedInOrder) {
  api::JobSet js =
      JobSetBuilder("train").Replicated("driver", 1).Replicated("w", 2).Build();
  js.mutable_spec()->mutable_replicated_jobs(1)->set_name("Workers");
  absl::StatusOr<std::vector<PodSet>> pod_sets = PodSetsFor(js);
  ASSERT_TRUE(pod_sets.ok());
  ASSERT_EQ(pod_sets->size(), 2u);
  EXPECT_EQ((*pod_sets)[0].name, "driver");
  EXPECT_EQ((*pod_sets)[1].name, "workers");
}

// ---------------------------------------------------------------------------
// §2.3: requests

using Resources = std::map<std::string, std::string>;

struct Container {
  Resources requests;
  Resources limits;
};

struct RequestsCase {
  std::string name;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  ResourceQuantities want;
};

void Fill(const std::vector<Container>& in,
          google::protobuf::RepeatedPtrField<api::Container>* out) {
  out->Clear();
  for (size_t i = 0; i < in.size(); ++i) {
    api::Container* c = out->Add();
    c->set_name("c" + std::to_string(i));
    c->set_image("busybox");
    c->mutable_resources()->mutable_requests()->insert(in[i].requests.begin(),
                                                       in[i].requests.end());
    c->mutable_resources()->mutable_limits()->insert(in[i].limits.begin(),
                                                     in[i].limits.end());
  }
}

api::JobSet WithContainers(const std::vector<Container>& containers,
                           const std::vector<Container>& init_containers) {
  api::JobSet js = JobSetBuilder("train").Replicated("w", 1).Build();
  Fill(containers, MutablePod(&js, 0)->mutable_containers());
  Fill(init_containers, MutablePod(&js, 0)->mutable_init_containers());
  return js;
}

class RequestsTest : public ::testing::TestWithParam<RequestsCase> {};

TEST_P(RequestsTest, EffectivePerPodRequest) {
  absl::StatusOr<std::vector<PodSet>> pod_sets = PodSetsFor(
      WithContainers(GetParam().containers, GetParam().init_containers));
  ASSERT_TRUE(pod_sets.ok()) << pod_sets.status();
  EXPECT_EQ(pod_sets->front().requests, GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, RequestsTest,
    ::testing::Values(
        RequestsCase{"None", {{}}, {}, {}},
        RequestsCase{"CpuInMilliMemoryInBytes",
                     {{{{"cpu", "250m"}, {"memory", "1.5Gi"}}, {}}},
                     {},
                     {{"cpu", 250}, {"memory", 3 * kGi / 2}}},
        RequestsCase{"SumOverContainers",
                     {{{{"cpu", "1"}, {"nvidia.com/gpu", "2"}}, {}},
                      {{{"cpu", "500m"}, {"nvidia.com/gpu", "2"}}, {}}},
                     {},
                     {{"cpu", 1500}, {"nvidia.com/gpu", 4}}},
        RequestsCase{"LimitsFillMissingRequests",
                     {{{{"cpu", "1"}}, {{"cpu", "4"}, {"memory", "2Gi"}}}},
                     {},
                     {{"cpu", 1000}, {"memory", 2 * kGi}}},
        RequestsCase{
            "InitContainerMaxWins",
            {{{{"cpu", "1"}}, {}}, {{{"cpu", "1"}}, {}}},
            {{{{"cpu", "3"}, {"memory", "1Gi"}}, {}}, {{{"cpu", "500m"}}, {}}},
            {{"cpu", 3000}, {"memory", kGi}}},
        RequestsCase{"InitContainerBelowTheSum",
                     {{{{"cpu", "2"}}, {}}, {{{"cpu", "2"}}, {}}},
                     {{{}, {{"cpu", "3"}}}},
                     {{"cpu", 4000}}},
        // Kubernetes adds quantities exactly and rounds the pod's total.
        RequestsCase{"RoundsUpAfterSumming",
                     {{{{"memory", "0.5"}}, {}}, {{{"memory", "0.5"}}, {}}},
                     {},
                     {{"memory", 1}}},
        RequestsCase{"RoundsUpFractions",
                     {{{{"memory", "100m"}, {"example.com/foo", "1.2"}}, {}}},
                     {},
                     {{"example.com/foo", 2}, {"memory", 1}}},
        RequestsCase{"ZeroIsKept", {{{{"cpu", "0"}}, {}}}, {}, {{"cpu", 0}}}),
    [](const auto& info) { return info.param.name; });

struct ErrorCase {
  std::string name;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  std::string want;
};

class RequestErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(RequestErrorTest, NamesTheField) {
  absl::StatusOr<std::vector<PodSet>> pod_sets = PodSetsFor(
      WithContainers(GetParam().containers, GetParam().init_containers));
  EXPECT_EQ(pod_sets.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(pod_sets.status().message(), HasSubstr(GetParam().want));
}

INSTANTIATE_TEST_SUITE_P(
    Table, RequestErrorTest,
    ::testing::Values(
        ErrorCase{"MalformedRequest",
                  {{}, {{{"cpu", "lots"}}, {}}},
                  {},
                  "spec.replicatedJobs[0].template.spec.template.spec."
                  "containers[1].resources.requests[cpu]: quantity \"lots\" "
                  "is malformed"},
        ErrorCase{"MalformedInitLimit",
                  {{}},
                  {{{}, {{"memory", "1Qi"}}}},
                  "spec.replicatedJobs[0].template.spec.template.spec."
                  "initContainers[0].resources.limits[memory]: quantity "
                  "\"1Qi\" is malformed"},
        ErrorCase{"Negative",
                  {{{{"cpu", "-1"}}, {}}},
                  {},
                  "containers[0].resources.requests[cpu]: must be greater "
                  "than or equal to 0"},
        ErrorCase{"SumOverflows",
                  {{{{"memory", "5P"}}, {}}, {{{"memory", "5P"}}, {}}},
                  {},
                  "spec.replicatedJobs[0].template.spec.template.spec."
                  "containers: the total request of memory does not fit in "
                  "64 bits"}),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// §2.2: what flavor selection reads

TEST(PodSetsForTest, PlacementFromThePodTemplate) {
  api::JobSet js = JobSetBuilder("train").Replicated("w", 1).Build();
  api::PodSpec* pod = MutablePod(&js, 0);
  (*pod->mutable_node_selector())["gpu.example.com/model"] = "h100";
  api::NodeSelectorTerm* term =
      pod->mutable_affinity()
          ->mutable_node_affinity()
          ->mutable_required_during_scheduling_ignored_during_execution()
          ->add_node_selector_terms();
  api::NodeSelectorRequirement* r = term->add_match_expressions();
  r->set_key("gpu.example.com/generation");
  r->set_operator_("Gt");
  r->add_values("4");
  api::Toleration* t = pod->add_tolerations();
  t->set_key("nvidia.com/gpu");
  t->set_operator_("Exists");
  t->set_effect("NoSchedule");
  api::Toleration* t2 = pod->add_tolerations();
  t2->set_key("spot");
  t2->set_value("true");

  absl::StatusOr<std::vector<PodSet>> pod_sets = PodSetsFor(js);
  ASSERT_TRUE(pod_sets.ok()) << pod_sets.status();
  const PodPlacement& p = pod_sets->front().placement;
  EXPECT_THAT(p.node_selector,
              ElementsAre(Pair("gpu.example.com/model", "h100")));
  ASSERT_EQ(p.required_affinity.size(), 1u);
  ASSERT_EQ(p.required_affinity[0].size(), 1u);
  EXPECT_EQ(p.required_affinity[0][0].key, "gpu.example.com/generation");
  EXPECT_EQ(p.required_affinity[0][0].op, SelectorOperator::kGt);
  EXPECT_THAT(p.required_affinity[0][0].values, ElementsAre("4"));
  ASSERT_EQ(p.tolerations.size(), 2u);
  EXPECT_EQ(p.tolerations[0].op, TolerationOperator::kExists);
  EXPECT_EQ(p.tolerations[0].effect, TaintEffect::kNoSchedule);
  EXPECT_EQ(p.tolerations[1].op, TolerationOperator::kEqual);
  EXPECT_EQ(p.tolerations[1].value, "true");
  EXPECT_EQ(p.tolerations[1].effect, std::nullopt);
}

TEST(PodSetsForTest, UnknownOperatorsAreInvalid) {
  api::JobSet js = JobSetBuilder("train").Replicated("w", 1).Build();
  api::Toleration* t = MutablePod(&js, 0)->add_tolerations();
  t->set_key("a");
  t->set_operator_("Equals");
  absl::Status s = PodSetsFor(js).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("template.spec.tolerations[0].operator: "
                                     "Unsupported value: \"Equals\""));

  t->set_operator_("Exists");
  t->set_effect("NoScheduleEver");
  s = PodSetsFor(js).status();
  EXPECT_THAT(s.message(), HasSubstr("tolerations[0].effect: Unsupported "
                                     "value: \"NoScheduleEver\""));

  MutablePod(&js, 0)->clear_tolerations();
  MutablePod(&js, 0)
      ->mutable_affinity()
      ->mutable_node_affinity()
      ->mutable_required_during_scheduling_ignored_during_execution()
      ->add_node_selector_terms()
      ->add_match_expressions()
      ->set_operator_("Near");
  s = PodSetsFor(js).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("requiredDuringSchedulingIgnoredDuringExecution."
                        "nodeSelectorTerms[0].matchExpressions[0].operator: "
                        "Unsupported value: \"Near\""));
}

// ---------------------------------------------------------------------------
// WorkloadFor

std::optional<int32_t> Classes(absl::string_view name) {
  if (name == "experiment") return 50;
  if (name == "flagship") return 10000;
  return std::nullopt;
}

TEST(WorkloadForTest, FieldsFromTheJobSet) {
  api::JobSet js = JobSetBuilder("train")
                       .Namespace("research")
                       .Label(kQueueNameLabel, "research-queue")
                       .Label(kPriorityClassLabel, "flagship")
                       .Label(kMaxExecTimeSecondsLabel, "3600")
                       .Replicated("w", 2)
                       .Request("w", "cpu", "1")
                       .Build();
  js.mutable_metadata()->set_uid(kUid);
  js.mutable_metadata()->mutable_creation_timestamp()->set_seconds(1000);
  js.mutable_metadata()->mutable_creation_timestamp()->set_nanos(5);

  absl::StatusOr<Workload> wl = WorkloadFor(js, "research", Classes);
  ASSERT_TRUE(wl.ok()) << wl.status();
  EXPECT_EQ(wl->namespace_name, "research");
  EXPECT_EQ(wl->name, "jobset-train-33226");
  EXPECT_EQ(wl->uid, kUid);
  EXPECT_EQ(wl->job_uid, kUid);
  EXPECT_EQ(wl->queue_name, "research-queue");
  EXPECT_EQ(wl->cluster_queue, "research");
  EXPECT_EQ(wl->priority, 10000);
  EXPECT_EQ(wl->priority_class, "flagship");
  EXPECT_EQ(wl->maximum_execution_time_seconds, 3600);
  EXPECT_EQ(wl->times.queue_order,
            absl::FromUnixSeconds(1000) + absl::Nanoseconds(5));
  EXPECT_FALSE(wl->admission.has_value());
  ASSERT_EQ(wl->pod_sets.size(), 1u);
  EXPECT_EQ(wl->pod_sets[0].count, 2);
  EXPECT_EQ(wl->pod_sets[0].requests, (ResourceQuantities{{"cpu", 1000}}));
}

TEST(WorkloadForTest, UnlabelledHasNoQueueAndPriorityZero) {
  api::JobSet js = JobSetBuilder("train").Replicated("w", 1).Build();
  // The pods' PriorityClass: jobsetd has none, so 0 (§1.7).
  MutablePod(&js, 0)->set_priority_class_name("high");
  absl::StatusOr<Workload> wl = WorkloadFor(js, "", Classes);
  ASSERT_TRUE(wl.ok()) << wl.status();
  EXPECT_EQ(wl->queue_name, "");
  EXPECT_EQ(wl->cluster_queue, "");
  EXPECT_EQ(wl->priority, 0);
  EXPECT_EQ(wl->priority_class, "");
  EXPECT_EQ(wl->maximum_execution_time_seconds, std::nullopt);
  EXPECT_EQ(wl->times.queue_order, absl::UnixEpoch());
}

TEST(WorkloadForTest, MissingPriorityClassIsNotFoundInKueuesWords) {
  api::JobSet js = JobSetBuilder("train")
                       .Label(kQueueNameLabel, "q")
                       .Label(kPriorityClassLabel, "gold")
                       .Replicated("w", 1)
                       .Build();
  absl::StatusOr<Workload> wl = WorkloadFor(js, "cq", Classes);
  EXPECT_EQ(wl.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(wl.status().message(), "WorkloadPriorityClass \"gold\" not found");
}

struct MaxExecCase {
  std::string name;
  std::string label;
  std::optional<int32_t> want;
};

class MaxExecTest : public ::testing::TestWithParam<MaxExecCase> {};

TEST_P(MaxExecTest, PositiveInt32OrUnset) {
  api::JobSet js = JobSetBuilder("train")
                       .Label(kMaxExecTimeSecondsLabel, GetParam().label)
                       .Replicated("w", 1)
                       .Build();
  absl::StatusOr<Workload> wl = WorkloadFor(js, "cq", Classes);
  ASSERT_TRUE(wl.ok()) << wl.status();
  EXPECT_EQ(wl->maximum_execution_time_seconds, GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, MaxExecTest,
    ::testing::Values(MaxExecCase{"Valid", "60", 60},
                      MaxExecCase{"PlusSign", "+60", 60},
                      MaxExecCase{"Zero", "0", std::nullopt},
                      MaxExecCase{"Negative", "-5", std::nullopt},
                      MaxExecCase{"NotANumber", "1h", std::nullopt},
                      MaxExecCase{"Spaces", " 60", std::nullopt},
                      MaxExecCase{"OverInt32", "2147483648", std::nullopt}),
    [](const auto& info) { return info.param.name; });

TEST(WorkloadForTest, MoreThan18ReplicatedJobsIsInvalid) {
  JobSetBuilder b("train");
  for (int i = 0; i < 19; ++i) b.Replicated("r" + std::to_string(i), 1);
  absl::StatusOr<Workload> wl = WorkloadFor(b.Build(), "cq", Classes);
  EXPECT_EQ(wl.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wl.status().message(),
              HasSubstr("spec.replicatedJobs: Too many: 19: must have at most "
                        "18 items"));

  JobSetBuilder ok("train");
  for (int i = 0; i < 18; ++i) ok.Replicated("r" + std::to_string(i), 1);
  EXPECT_TRUE(WorkloadFor(ok.Build(), "cq", Classes).ok());
}

// ---------------------------------------------------------------------------
// §8.5

TEST(Reference85Test, PodSetsAndCounts) {
  const api::JobSet js = LoadTestData("llm-pretrain.yaml");
  absl::StatusOr<std::vector<PodSet>> pod_sets = PodSetsFor(js);
  ASSERT_TRUE(pod_sets.ok()) << pod_sets.status();
  ASSERT_EQ(pod_sets->size(), 2u);
  const PodSet& driver = (*pod_sets)[0];
  EXPECT_EQ(driver.name, "driver");
  EXPECT_EQ(driver.count, 1);
  EXPECT_EQ(driver.requests,
            (ResourceQuantities{{"cpu", Cpu(2)}, {"memory", 8 * kGi}}));
  EXPECT_TRUE(driver.placement.tolerations.empty());
  const PodSet& workers = (*pod_sets)[1];
  EXPECT_EQ(workers.name, "workers");
  EXPECT_EQ(workers.count, 4);
  // Limits only: requests default to them.
  EXPECT_EQ(workers.requests, (ResourceQuantities{{"cpu", Cpu(16)},
                                                  {"memory", 192 * kGi},
                                                  {"nvidia.com/gpu", 4}}));
  ASSERT_EQ(workers.placement.tolerations.size(), 1u);
  EXPECT_EQ(workers.placement.tolerations[0].key, "nvidia.com/gpu");
}

TEST(Reference85Test, Workload) {
  api::JobSet js = LoadTestData("llm-pretrain.yaml");
  js.mutable_metadata()->set_uid(kUid);
  absl::StatusOr<Workload> wl = WorkloadFor(js, "research", Classes);
  ASSERT_TRUE(wl.ok()) << wl.status();
  EXPECT_EQ(wl->namespace_name, "research");
  EXPECT_THAT(wl->name, MatchesRegex("jobset-llm-pretrain-[0-9a-f]{5}"));
  EXPECT_EQ(wl->queue_name, "research-queue");
  EXPECT_EQ(wl->priority, 50);  // experiment (§8.4)
  EXPECT_EQ(wl->priority_class, "experiment");
  EXPECT_TRUE(IsManaged(js, false));
}

// §8.5's expected admission in an empty `research` (§8.2) with §8.1's
// flavors: the driver skips gpu-h100 (untolerated taint) for on-demand; the
// workers take gpu-h100.
TEST(Reference85Test, AdmissionInResearch) {
  api::JobSet js = LoadTestData("llm-pretrain.yaml");
  absl::StatusOr<Workload> wl = WorkloadFor(js, "research", Classes);
  ASSERT_TRUE(wl.ok()) << wl.status();

  const ClusterQueue research =
      ClusterQueueBuilder("research")
          .Cohort("ml-org")
          .Group({"cpu", "memory", "nvidia.com/gpu"})
          .Flavor("gpu-h100",
                  {Quota("cpu", Cpu(96)), Quota("memory", 1536 * kGi),
                   Quota("nvidia.com/gpu", 16, 8)})
          .Flavor("on-demand",
                  {Quota("cpu", Cpu(64)), Quota("memory", 256 * kGi),
                   Quota("nvidia.com/gpu", 0)})
          .Flavor("spot",
                  {Quota("cpu", Cpu(128), std::nullopt, Cpu(64)),
                   Quota("memory", 512 * kGi), Quota("nvidia.com/gpu", 0)})
          .Build();
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
  absl::StatusOr<QuotaTree> tree = QuotaTree::Build({}, {research});
  ASSERT_TRUE(tree.ok()) << tree.status();
  auto oracle = [](const FlavorResource&, int64_t) {
    return PreemptionSimulation{};
  };
  const Assignment a = AssignFlavors(*wl, research, flavors, *tree, oracle,
                                     /*fair_sharing=*/false);
  ASSERT_EQ(a.Mode(), AssignmentMode::kFit) << a.Message();
  const Admission admission = a.ToAdmission("research");
  ASSERT_EQ(admission.pod_set_assignments.size(), 2u);
  const PodSetAssignment& driver = admission.pod_set_assignments[0];
  EXPECT_EQ(driver.name, "driver");
  EXPECT_EQ(driver.count, 1);
  EXPECT_THAT(driver.flavors, ElementsAre(Pair("cpu", "on-demand"),
                                          Pair("memory", "on-demand")));
  EXPECT_THAT(driver.resource_usage,
              ElementsAre(Pair("cpu", Cpu(2)), Pair("memory", 8 * kGi)));
  const PodSetAssignment& workers = admission.pod_set_assignments[1];
  EXPECT_EQ(workers.name, "workers");
  EXPECT_EQ(workers.count, 4);
  EXPECT_THAT(workers.flavors,
              ElementsAre(Pair("cpu", "gpu-h100"), Pair("memory", "gpu-h100"),
                          Pair("nvidia.com/gpu", "gpu-h100")));
  EXPECT_THAT(workers.resource_usage,
              ElementsAre(Pair("cpu", Cpu(64)), Pair("memory", 768 * kGi),
                          Pair("nvidia.com/gpu", 16)));
}

}  // namespace
}  // namespace jobset::scheduler::queues

namespace jobset::scheduler::queues {
namespace {

// §6 scenario 35: Jobs that succeeded give their pods' quota back while the
// rest of the JobSet runs.
TEST(ReclaimablePodsTest, SucceededJobsTimesTheirPods) {
  api::JobSet js = api::testing::JobSetBuilder("train")
                       .Replicated("Leader", 1)
                       .Replicated("workers", 4)
                       .Build();
  js.mutable_spec()
      ->mutable_replicated_jobs(1)
      ->mutable_template_()
      ->mutable_spec()
      ->set_parallelism(2);
  js.mutable_spec()
      ->mutable_replicated_jobs(1)
      ->mutable_template_()
      ->mutable_spec()
      ->set_completions(2);
  EXPECT_TRUE(ReclaimablePods(js).empty());  // no status yet
  api::ReplicatedJobStatus* leader =
      js.mutable_status()->add_replicated_jobs_status();
  leader->set_name("Leader");
  api::ReplicatedJobStatus* workers =
      js.mutable_status()->add_replicated_jobs_status();
  workers->set_name("workers");
  workers->set_succeeded(3);
  std::vector<api::ReclaimablePod> got = ReclaimablePods(js);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].name(), "workers");
  EXPECT_EQ(got[0].count(), 6);
  leader->set_succeeded(1);
  got = ReclaimablePods(js);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].name(), "leader");  // the podSet's name, lower-cased
  EXPECT_EQ(got[0].count(), 1);
  workers->set_succeeded(5);  // more than replicas: not trusted
  EXPECT_EQ(ReclaimablePods(js).size(), 1u);
}

}  // namespace
}  // namespace jobset::scheduler::queues
