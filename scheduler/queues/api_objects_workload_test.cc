#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "api/jobset_builder.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "proto/jobset.pb.h"
#include "proto/kueue.pb.h"
#include "scheduler/queues/api_objects.h"
#include "scheduler/queues/flavor_assigner.h"
#include "scheduler/queues/jobset_testdata.h"
#include "scheduler/queues/jobset_workload.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/podset_injection.h"

namespace jobset::scheduler::queues {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::jobset::api::testing::JobSetBuilder;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::kGpuH100;
using testing::kOnDemand;
using testing::kSpot;
using ::testing::Pair;

constexpr int64_t kGi = int64_t{1} << 30;
constexpr char kUid[] = "11111111-2222-3333-4444-555555555555";
const absl::Time kCreated = absl::FromUnixSeconds(1'700'000'000);

// ---------------------------------------------------------------------------
// Inputs: kueue-semantics §8 as stored, i.e. after Kueue's defaults
// (api/kueue_defaults.h). Written as text protos: api/kueue_manifest and
// api/kueue_defaults are not visible to this package.

template <typename Message>
Message Parse(const std::string& text) {
  Message message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message))
      << text;
  return message;
}

// §8.5 as stored: with a uid and a creation time.
api::JobSet LlmPretrain() {
  api::JobSet js = testing::LlmPretrain();
  js.mutable_metadata()->set_uid(kUid);
  js.mutable_metadata()->mutable_creation_timestamp()->set_seconds(
      absl::ToUnixSeconds(kCreated));
  return js;
}

api::JobSet WithUid(api::JobSet js) {
  js.mutable_metadata()->set_uid(kUid);
  return js;
}

// §8.4's WorkloadPriorityClasses.
std::optional<int32_t> PriorityClasses(absl::string_view name) {
  if (name == "experiment") return 50;
  if (name == "flagship") return 10000;
  return std::nullopt;
}

Workload WorkloadOf(const api::JobSet& js) {
  absl::StatusOr<Workload> wl = WorkloadFor(js, "research", PriorityClasses);
  EXPECT_TRUE(wl.ok()) << wl.status();
  return wl.ok() ? *wl : Workload();
}

// The Workload object of §8.5 as the store keeps it: a uid and a creation
// time of its own, a second after the JobSet's.
api::Workload StoredWorkload() {
  const api::JobSet js = LlmPretrain();
  absl::StatusOr<api::Workload> object = WorkloadObjectFor(js, WorkloadOf(js));
  EXPECT_TRUE(object.ok()) << object.status();
  if (!object.ok()) return api::Workload();
  object->mutable_metadata()->set_uid("wl-uid");
  object->mutable_metadata()->mutable_creation_timestamp()->set_seconds(
      absl::ToUnixSeconds(kCreated) + 1);
  return *object;
}

void ExpectInvalid(const absl::Status& status, const std::string& want) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr(want));
}

// ---------------------------------------------------------------------------
// JobSet -> Workload object (§2.2)

TEST(WorkloadObjectForTest, Section85) {
  const api::JobSet js = LlmPretrain();
  absl::StatusOr<api::Workload> wl = WorkloadObjectFor(js, WorkloadOf(js));
  ASSERT_TRUE(wl.ok()) << wl.status();
  EXPECT_EQ(wl->api_version(), "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(wl->kind(), "Workload");
  EXPECT_EQ(wl->metadata().name(), WorkloadName(js));
  EXPECT_EQ(wl->metadata().namespace_(), "research");
  EXPECT_THAT(wl->metadata().labels(),
              ElementsAre(Pair("kueue.x-k8s.io/job-uid", kUid)));
  EXPECT_FALSE(wl->has_status());

  const api::WorkloadSpec& spec = wl->spec();
  EXPECT_EQ(spec.queue_name(), "research-queue");
  EXPECT_EQ(spec.priority_class_name(), "experiment");
  EXPECT_TRUE(spec.has_priority());
  EXPECT_EQ(spec.priority(), 50);
  EXPECT_EQ(spec.priority_class_source(),
            "kueue.x-k8s.io/workloadpriorityclass");
  EXPECT_TRUE(spec.has_active());
  EXPECT_TRUE(spec.active());
  EXPECT_FALSE(spec.has_maximum_execution_time_seconds());

  ASSERT_EQ(spec.pod_sets_size(), 2);
  EXPECT_EQ(spec.pod_sets(0).name(), "driver");
  EXPECT_EQ(spec.pod_sets(0).count(), 1);
  EXPECT_EQ(spec.pod_sets(1).name(), "workers");
  EXPECT_EQ(spec.pod_sets(1).count(), 4);
  EXPECT_FALSE(spec.pod_sets(1).has_min_count());
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(
        spec.pod_sets(i).template_(),
        js.spec().replicated_jobs(i).template_().spec().template_()))
        << i;
  }
}

TEST(WorkloadObjectForTest, MaxExecTimeAndNoPriorityClass) {
  const api::JobSet js =
      WithUid(JobSetBuilder("Train")
                  .Namespace("ns")
                  .Label("kueue.x-k8s.io/queue-name", "lq")
                  .Label("kueue.x-k8s.io/max-exec-time-seconds", "3600")
                  .Replicated("Workers", 3)
                  .Build());
  absl::StatusOr<api::Workload> wl = WorkloadObjectFor(js, WorkloadOf(js));
  ASSERT_TRUE(wl.ok()) << wl.status();
  EXPECT_EQ(wl->spec().priority_class_name(), "");
  EXPECT_EQ(wl->spec().priority_class_source(), "");
  EXPECT_TRUE(wl->spec().has_priority());  // Kueue always sets it
  EXPECT_EQ(wl->spec().priority(), 0);
  EXPECT_EQ(wl->spec().maximum_execution_time_seconds(), 3600);
  ASSERT_EQ(wl->spec().pod_sets_size(), 1);
  EXPECT_EQ(wl->spec().pod_sets(0).name(), "workers");  // lower-cased
  EXPECT_EQ(wl->spec().pod_sets(0).count(), 3);
}

TEST(WorkloadObjectForTest, NoUidNoLabel) {
  const api::JobSet js = JobSetBuilder("train").Replicated("w", 1).Build();
  Workload workload = WorkloadOf(js);
  workload.job_uid.clear();
  absl::StatusOr<api::Workload> wl = WorkloadObjectFor(js, workload);
  ASSERT_TRUE(wl.ok()) << wl.status();
  EXPECT_TRUE(wl->metadata().labels().empty());
}

TEST(WorkloadObjectForTest, RefusesAWorkloadOfAnotherJobSet) {
  const api::JobSet js = LlmPretrain();
  Workload fewer = WorkloadOf(js);
  fewer.pod_sets.pop_back();
  ExpectInvalid(WorkloadObjectFor(js, fewer).status(),
                "has 1 podSets; the JobSet has 2 replicatedJobs");

  Workload renamed = WorkloadOf(js);
  renamed.pod_sets[1].name = "ps";
  ExpectInvalid(WorkloadObjectFor(js, renamed).status(),
                "podSet 1 is \"ps\"; the JobSet's replicatedJob 1 is "
                "\"workers\"");
}

// ---------------------------------------------------------------------------
// Workload object -> model.h

void ExpectSamePodSet(const PodSet& got, const PodSet& want) {
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.requests, want.requests);
  EXPECT_EQ(got.reclaimable, want.reclaimable);
  EXPECT_EQ(got.placement.node_selector, want.placement.node_selector);
  ASSERT_EQ(got.placement.tolerations.size(),
            want.placement.tolerations.size());
  for (size_t i = 0; i < got.placement.tolerations.size(); ++i) {
    const Toleration& a = got.placement.tolerations[i];
    const Toleration& b = want.placement.tolerations[i];
    EXPECT_EQ(a.key, b.key);
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.value, b.value);
    EXPECT_EQ(a.effect, b.effect);
  }
  ASSERT_EQ(got.placement.required_affinity.size(),
            want.placement.required_affinity.size());
  for (size_t i = 0; i < got.placement.required_affinity.size(); ++i) {
    const NodeSelectorTerm& a = got.placement.required_affinity[i];
    const NodeSelectorTerm& b = want.placement.required_affinity[i];
    ASSERT_EQ(a.size(), b.size());
    for (size_t j = 0; j < a.size(); ++j) {
      EXPECT_EQ(a[j].key, b[j].key);
      EXPECT_EQ(a[j].op, b[j].op);
      EXPECT_EQ(a[j].values, b[j].values);
    }
  }
}

TEST(WorkloadRoundTripTest, WorkloadForThroughTheObjectAndBack) {
  const api::JobSet js = LlmPretrain();
  const Workload want = WorkloadOf(js);
  absl::StatusOr<Workload> got = WorkloadFromApi(StoredWorkload(), "research");
  ASSERT_TRUE(got.ok()) << got.status();

  EXPECT_EQ(got->namespace_name, "research");
  EXPECT_EQ(got->name, want.name);
  EXPECT_EQ(got->uid, "wl-uid");  // the Workload's own
  EXPECT_EQ(got->job_uid, kUid);
  EXPECT_EQ(got->cluster_queue, "research");
  EXPECT_EQ(got->queue_name, want.queue_name);
  EXPECT_EQ(got->priority, 50);
  EXPECT_EQ(got->priority_class, "experiment");
  EXPECT_EQ(got->maximum_execution_time_seconds, std::nullopt);
  EXPECT_EQ(got->times.queue_order, kCreated + absl::Seconds(1));
  EXPECT_EQ(got->times.quota_reserved, std::nullopt);
  EXPECT_EQ(got->times.last_restart, absl::InfinitePast());
  EXPECT_EQ(got->times.not_preemptible_before, absl::InfinitePast());
  EXPECT_FALSE(got->admission.has_value());
  EXPECT_FALSE(got->evicted);

  ASSERT_EQ(got->pod_sets.size(), 2u);
  for (size_t i = 0; i < 2; ++i)
    ExpectSamePodSet(got->pod_sets[i], want.pod_sets[i]);
  // And what those are (§8.5): limits fill the workers' requests.
  EXPECT_THAT(got->pod_sets[1].requests,
              ElementsAre(Pair("cpu", 16'000), Pair("memory", 192 * kGi),
                          Pair("nvidia.com/gpu", 4)));
  ASSERT_EQ(got->pod_sets[1].placement.tolerations.size(), 1u);
  EXPECT_EQ(got->pod_sets[1].placement.tolerations[0].op,
            TolerationOperator::kExists);
}

TEST(WorkloadRoundTripTest, PlacementAndMaxExecTime) {
  api::JobSet js =
      WithUid(JobSetBuilder("train")
                  .Namespace("ns")
                  .Label("kueue.x-k8s.io/queue-name", "lq")
                  .Label("kueue.x-k8s.io/priority-class", "flagship")
                  .Label("kueue.x-k8s.io/max-exec-time-seconds", "60")
                  .Replicated("w", 2)
                  .Build());
  api::PodSpec* pod = js.mutable_spec()
                          ->mutable_replicated_jobs(0)
                          ->mutable_template_()
                          ->mutable_spec()
                          ->mutable_template_()
                          ->mutable_spec();
  ASSERT_TRUE(google::protobuf::TextFormat::MergeFromString(
      R"pb(
        node_selector { key: "zone" value: "a" }
        affinity {
          node_affinity {
            required_during_scheduling_ignored_during_execution {
              node_selector_terms {
                match_expressions { key: "gen" operator: "Gt" values: "3" }
              }
            }
          }
        }
        containers {
          name: "c"
          resources { requests { key: "cpu" value: "250m" } }
        }
        init_containers {
          name: "i"
          resources { limits { key: "cpu" value: "1" } }
        }
      )pb",
      pod));
  const Workload want = WorkloadOf(js);
  absl::StatusOr<api::Workload> object = WorkloadObjectFor(js, want);
  ASSERT_TRUE(object.ok()) << object.status();
  absl::StatusOr<Workload> got = WorkloadFromApi(*object, "cq");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->pod_sets.size(), 1u);
  ExpectSamePodSet(got->pod_sets[0], want.pod_sets[0]);
  EXPECT_THAT(got->pod_sets[0].requests, ElementsAre(Pair("cpu", 1000)));
  ASSERT_EQ(got->pod_sets[0].placement.required_affinity.size(), 1u);
  EXPECT_EQ(got->pod_sets[0].placement.required_affinity[0].at(0).op,
            SelectorOperator::kGt);
  EXPECT_EQ(got->priority, 10000);
  EXPECT_EQ(got->priority_class, "flagship");
  EXPECT_EQ(got->maximum_execution_time_seconds, 60);
}

TEST(WorkloadFromApiTest, PriorityFromAPodPriorityClassNamesNoWorkloadClass) {
  api::Workload wl = StoredWorkload();
  wl.mutable_spec()->set_priority_class_name("high");
  wl.mutable_spec()->set_priority_class_source(
      "scheduling.k8s.io/priorityclass");
  wl.mutable_spec()->set_priority(1000);
  absl::StatusOr<Workload> got = WorkloadFromApi(wl, "research");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->priority, 1000);
  EXPECT_EQ(got->priority_class, "");

  wl.mutable_spec()->clear_priority();
  wl.mutable_spec()->clear_priority_class_name();
  wl.mutable_spec()->clear_priority_class_source();
  got = WorkloadFromApi(wl, "research");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->priority, 0);
}

TEST(WorkloadFromApiTest, CountDefaultsToOne) {
  api::Workload wl = StoredWorkload();
  wl.mutable_spec()->mutable_pod_sets(0)->clear_count();
  wl.mutable_spec()->mutable_pod_sets(1)->set_count(0);
  absl::StatusOr<Workload> got = WorkloadFromApi(wl, "research");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->pod_sets[0].count, 1);
  EXPECT_EQ(got->pod_sets[1].count, 0);
}

// An admitted §8.5 Workload: the driver on on-demand, the workers on
// gpu-h100; two workers' pods finished.
constexpr char kAdmittedStatus[] = R"pb(
  conditions {
    type: "QuotaReserved"
    status: "True"
    reason: "QuotaReserved"
    last_transition_time { seconds: 1700000100 nanos: 5 }
  }
  conditions { type: "Admitted" status: "True" reason: "Admitted" }
  admission {
    cluster_queue: "research"
    pod_set_assignments {
      name: "driver"
      flavors { key: "cpu" value: "on-demand" }
      flavors { key: "memory" value: "on-demand" }
      resource_usage { key: "cpu" value: "2" }
      resource_usage { key: "memory" value: "8Gi" }
      count: 1
    }
    pod_set_assignments {
      name: "workers"
      flavors { key: "cpu" value: "gpu-h100" }
      flavors { key: "memory" value: "gpu-h100" }
      flavors { key: "nvidia.com/gpu" value: "gpu-h100" }
      resource_usage { key: "cpu" value: "64" }
      resource_usage { key: "memory" value: "768Gi" }
      resource_usage { key: "nvidia.com/gpu" value: "16" }
      count: 4
    }
  }
  reclaimable_pods { name: "workers" count: 2 }
)pb";

api::Workload AdmittedWorkload() {
  api::Workload wl = StoredWorkload();
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      kAdmittedStatus, wl.mutable_status()));
  return wl;
}

TEST(WorkloadFromApiTest, ReadsTheAdmission) {
  absl::StatusOr<Workload> got =
      WorkloadFromApi(AdmittedWorkload(), "research");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->admission.has_value());
  EXPECT_EQ(got->admission->cluster_queue, "research");
  ASSERT_EQ(got->admission->pod_set_assignments.size(), 2u);
  const PodSetAssignment& driver = got->admission->pod_set_assignments[0];
  EXPECT_EQ(driver.name, "driver");
  EXPECT_THAT(driver.flavors, ElementsAre(Pair("cpu", "on-demand"),
                                          Pair("memory", "on-demand")));
  EXPECT_THAT(driver.resource_usage,
              ElementsAre(Pair("cpu", 2000), Pair("memory", 8 * kGi)));
  EXPECT_EQ(driver.count, 1);
  const PodSetAssignment& workers = got->admission->pod_set_assignments[1];
  EXPECT_THAT(workers.resource_usage,
              ElementsAre(Pair("cpu", 64'000), Pair("memory", 768 * kGi),
                          Pair("nvidia.com/gpu", 16)));
  EXPECT_EQ(workers.count, 4);

  EXPECT_EQ(got->pod_sets[0].reclaimable, 0);
  EXPECT_EQ(got->pod_sets[1].reclaimable, 2);
  EXPECT_EQ(got->times.quota_reserved,
            absl::FromUnixSeconds(1'700'000'100) + absl::Nanoseconds(5));
  EXPECT_FALSE(got->evicted);
  // Two of the four workers' pods no longer count.
  EXPECT_EQ(
      AdmittedUsage(*got).at(FlavorResource{"gpu-h100", "nvidia.com/gpu"}), 8);
}

TEST(WorkloadFromApiTest, MissingAssignmentCountIsThePodSets) {
  api::Workload wl = AdmittedWorkload();
  wl.mutable_status()
      ->mutable_admission()
      ->mutable_pod_set_assignments(1)
      ->clear_count();
  absl::StatusOr<Workload> got = WorkloadFromApi(wl, "research");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->admission->pod_set_assignments[1].count, 4);
}

api::Condition Condition(std::string type, std::string status,
                         std::string reason, int64_t seconds) {
  api::Condition c;
  c.set_type(std::move(type));
  c.set_status(std::move(status));
  c.set_reason(std::move(reason));
  c.mutable_last_transition_time()->set_seconds(seconds);
  return c;
}

constexpr int64_t kEvictedAt = 1'700'000'500;

struct TimesCase {
  std::string name;
  std::vector<api::Condition> conditions;
  bool admitted;
  absl::Time want_queue_order;
  bool want_evicted;
};

class TimesTest : public ::testing::TestWithParam<TimesCase> {};

TEST_P(TimesTest, QueueOrderAndEvicted) {
  api::Workload wl =
      GetParam().admitted ? AdmittedWorkload() : StoredWorkload();
  wl.mutable_status()->clear_conditions();
  for (const api::Condition& c : GetParam().conditions) {
    *wl.mutable_status()->add_conditions() = c;
  }
  absl::StatusOr<Workload> got = WorkloadFromApi(wl, "research");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->times.queue_order, GetParam().want_queue_order);
  EXPECT_EQ(got->evicted, GetParam().want_evicted);
}

const absl::Time kWorkloadCreated = kCreated + absl::Seconds(1);
const absl::Time kEvictionTime = absl::FromUnixSeconds(kEvictedAt);

INSTANTIATE_TEST_SUITE_P(
    Table, TimesTest,
    ::testing::Values(
        TimesCase{"Pending", {}, false, kWorkloadCreated, false},
        TimesCase{"Admitted",
                  {Condition("QuotaReserved", "True", "QuotaReserved", 1)},
                  true,
                  kWorkloadCreated,
                  false},
        // §3.6: requeued at the eviction time after a PodsReady timeout...
        TimesCase{
            "PodsReadyTimeoutPending",
            {Condition("Evicted", "True", "PodsReadyTimeout", kEvictedAt)},
            false,
            kEvictionTime,
            false},
        TimesCase{
            "PodsReadyTimeoutStillHoldingQuota",
            {Condition("Evicted", "True", "PodsReadyTimeout", kEvictedAt)},
            true,
            kEvictionTime,
            true},
        TimesCase{"AdmissionCheck",
                  {Condition("Evicted", "True", "AdmissionCheck", kEvictedAt)},
                  false,
                  kEvictionTime,
                  false},
        // ... §3.1/§4.4: a preempted workload keeps its place.
        TimesCase{
            "Preempted",
            {Condition("Evicted", "True", "Preempted", kEvictedAt),
             Condition("Preempted", "True", "InClusterQueue", kEvictedAt)},
            true,
            kWorkloadCreated,
            true},
        TimesCase{"PreemptedWhileBorrowing",
                  {Condition("Evicted", "True", "Preempted", kEvictedAt),
                   Condition("Preempted", "True",
                             "InCohortReclaimWhileBorrowing", kEvictedAt)},
                  false,
                  kWorkloadCreated,
                  false},
        TimesCase{
            "ClusterQueueStopped",
            {Condition("Evicted", "True", "ClusterQueueStopped", kEvictedAt)},
            true,
            kWorkloadCreated,
            true},
        // Re-admitted: Evicted went False (reason QuotaReserved).
        TimesCase{
            "EvictionOver",
            {Condition("Evicted", "False", "PodsReadyTimeout", kEvictedAt)},
            true,
            kWorkloadCreated,
            false}),
    [](const auto& info) { return info.param.name; });

TEST(WorkloadFromApiTest, WithoutCreationTimeQueuesAtTheEpoch) {
  api::Workload wl = StoredWorkload();
  wl.mutable_metadata()->clear_creation_timestamp();
  absl::StatusOr<Workload> got = WorkloadFromApi(wl, "research");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->times.queue_order, absl::UnixEpoch());
}

TEST(WorkloadFromApiTest, QuotaReservedFalseIsUnset) {
  api::Workload wl = AdmittedWorkload();
  wl.mutable_status()->mutable_conditions(0)->set_status("False");
  absl::StatusOr<Workload> got = WorkloadFromApi(wl, "research");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->times.quota_reserved, std::nullopt);
}

struct WorkloadErrorCase {
  std::string name;
  std::function<void(api::Workload*)> edit;
  std::string want;
};

class WorkloadErrorTest : public ::testing::TestWithParam<WorkloadErrorCase> {};

TEST_P(WorkloadErrorTest, NamesTheField) {
  api::Workload wl = AdmittedWorkload();
  GetParam().edit(&wl);
  ExpectInvalid(WorkloadFromApi(wl, "research").status(), GetParam().want);
}

api::PodSetAssignment* Assignment(api::Workload* wl, int i) {
  return wl->mutable_status()->mutable_admission()->mutable_pod_set_assignments(
      i);
}

api::Container* Container(api::Workload* wl, int pod_set) {
  return wl->mutable_spec()
      ->mutable_pod_sets(pod_set)
      ->mutable_template_()
      ->mutable_spec()
      ->mutable_containers(0);
}

INSTANTIATE_TEST_SUITE_P(
    Table, WorkloadErrorTest,
    ::testing::Values(
        WorkloadErrorCase{
            "PodSetCount",
            [](api::Workload* wl) {
              wl->mutable_spec()->mutable_pod_sets(1)->set_count(-1);
            },
            "spec.podSets[1].count: Invalid value: -1: must be greater than "
            "or equal to 0"},
        WorkloadErrorCase{
            "MaximumExecutionTime",
            [](api::Workload* wl) {
              wl->mutable_spec()->set_maximum_execution_time_seconds(0);
            },
            "spec.maximumExecutionTimeSeconds: Invalid value: 0: must be "
            "greater than or equal to 1"},
        WorkloadErrorCase{
            "TemplateRequest",
            [](api::Workload* wl) {
              (*Container(wl, 1)
                    ->mutable_resources()
                    ->mutable_requests())["cpu"] = "lots";
            },
            "spec.podSets[1].template.spec.containers[0].resources."
            "requests[cpu]: quantity \"lots\" is malformed"},
        WorkloadErrorCase{
            "TemplateLimitNegative",
            [](api::Workload* wl) {
              (*Container(wl, 0)
                    ->mutable_resources()
                    ->mutable_limits())["memory"] = "-1Gi";
            },
            "spec.podSets[0].template.spec.containers[0].resources."
            "limits[memory]: must be greater than or equal to 0"},
        WorkloadErrorCase{
            "TemplateToleration",
            [](api::Workload* wl) {
              wl->mutable_spec()
                  ->mutable_pod_sets(1)
                  ->mutable_template_()
                  ->mutable_spec()
                  ->mutable_tolerations(0)
                  ->set_operator_("Sometimes");
            },
            "spec.podSets[1].template.spec.tolerations[0].operator: "
            "Unsupported value: \"Sometimes\""},
        WorkloadErrorCase{
            "ResourceUsage",
            [](api::Workload* wl) {
              (*Assignment(wl, 1)->mutable_resource_usage())["memory"] = "x";
            },
            "status.admission.podSetAssignments[1].resourceUsage[memory]: "
            "quantity \"x\" is malformed"},
        WorkloadErrorCase{
            "ResourceUsageNegative",
            [](api::Workload* wl) {
              (*Assignment(wl, 0)->mutable_resource_usage())["cpu"] = "-2";
            },
            "status.admission.podSetAssignments[0].resourceUsage[cpu]: must "
            "be greater than or equal to 0"},
        WorkloadErrorCase{
            "AssignmentCount",
            [](api::Workload* wl) { Assignment(wl, 1)->set_count(-4); },
            "status.admission.podSetAssignments[1].count: Invalid value: -4"},
        WorkloadErrorCase{
            "ReclaimableUnknownPodSet",
            [](api::Workload* wl) {
              wl->mutable_status()->mutable_reclaimable_pods(0)->set_name(
                  "ghosts");
            },
            "status.reclaimablePods[0].name: Not found: \"ghosts\""},
        WorkloadErrorCase{
            "ReclaimableTwice",
            [](api::Workload* wl) {
              *wl->mutable_status()->add_reclaimable_pods() =
                  wl->status().reclaimable_pods(0);
            },
            "status.reclaimablePods[1].name: Duplicate value: \"workers\""},
        WorkloadErrorCase{
            "ReclaimableNegative",
            [](api::Workload* wl) {
              wl->mutable_status()->mutable_reclaimable_pods(0)->set_count(-1);
            },
            "status.reclaimablePods[0].count: Invalid value: -1"}),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// model.h -> status.admission

Admission SomeAdmission() {
  return Admission{
      "research",
      {PodSetAssignment{"driver",
                        {{"cpu", "on-demand"}, {"memory", "on-demand"}},
                        {{"cpu", 1500}, {"memory", 3 * kGi / 2}},
                        1},
       PodSetAssignment{"workers",
                        {{"cpu", "gpu-h100"},
                         {"memory", "gpu-h100"},
                         {"nvidia.com/gpu", "gpu-h100"}},
                        {{"cpu", 64'000},
                         {"memory", 768 * kGi},
                         {"nvidia.com/gpu", 16},
                         {"example.com/bytes", 2000}},
                        4}}};
}

TEST(AdmissionToApiTest, FormatsQuantitiesAsKubernetes) {
  const api::Admission got = AdmissionToApi(SomeAdmission());
  EXPECT_EQ(got.cluster_queue(), "research");
  ASSERT_EQ(got.pod_set_assignments_size(), 2);
  const api::PodSetAssignment& driver = got.pod_set_assignments(0);
  EXPECT_EQ(driver.name(), "driver");
  EXPECT_TRUE(driver.has_count());
  EXPECT_EQ(driver.count(), 1);
  const std::map<std::string, std::string> driver_usage(
      driver.resource_usage().begin(), driver.resource_usage().end());
  EXPECT_THAT(driver_usage,
              ElementsAre(Pair("cpu", "1500m"), Pair("memory", "1536Mi")));
  const std::map<std::string, std::string> driver_flavors(
      driver.flavors().begin(), driver.flavors().end());
  EXPECT_THAT(driver_flavors, ElementsAre(Pair("cpu", "on-demand"),
                                          Pair("memory", "on-demand")));
  const api::PodSetAssignment& workers = got.pod_set_assignments(1);
  EXPECT_EQ(workers.count(), 4);
  const std::map<std::string, std::string> workers_usage(
      workers.resource_usage().begin(), workers.resource_usage().end());
  EXPECT_THAT(
      workers_usage,
      ElementsAre(Pair("cpu", "64"), Pair("example.com/bytes", "2k"),
                  Pair("memory", "768Gi"), Pair("nvidia.com/gpu", "16")));
}

TEST(AdmissionToApiTest, ReadsBackEqual) {
  const Admission want = SomeAdmission();
  api::Workload wl = StoredWorkload();
  *wl.mutable_status()->mutable_admission() = AdmissionToApi(want);
  absl::StatusOr<Workload> got = WorkloadFromApi(wl, "research");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->admission.has_value());
  EXPECT_EQ(got->admission->cluster_queue, want.cluster_queue);
  ASSERT_EQ(got->admission->pod_set_assignments.size(),
            want.pod_set_assignments.size());
  for (size_t i = 0; i < want.pod_set_assignments.size(); ++i) {
    const PodSetAssignment& a = got->admission->pod_set_assignments[i];
    const PodSetAssignment& b = want.pod_set_assignments[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.flavors, b.flavors);
    EXPECT_EQ(a.resource_usage, b.resource_usage);
    EXPECT_EQ(a.count, b.count);
  }
}

// ---------------------------------------------------------------------------
// What Restore takes back

TEST(SavedTemplatesOfTest, WhatSaveTemplatesSavesOfTheJobSet) {
  const api::JobSet js = LlmPretrain();
  const SavedPodTemplates from_workload = SavedTemplatesOf(StoredWorkload());
  const SavedPodTemplates from_jobset = SaveTemplates(js);
  ASSERT_EQ(from_workload.size(), 2u);
  ASSERT_EQ(from_jobset.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(MessageDifferencer::Equals(from_workload[i], from_jobset[i]))
        << i;
  }
  // Only the four fields Restore puts back: no containers.
  EXPECT_EQ(from_workload[1].spec().containers_size(), 0);
  EXPECT_EQ(from_workload[1].spec().tolerations_size(), 1);
}

TEST(SavedTemplatesOfTest, RestoreUndoesAnAdmission) {
  const api::JobSet original = LlmPretrain();
  const api::Workload stored = StoredWorkload();

  FlavorIndex flavors;
  for (const char* text : {kOnDemand, kSpot, kGpuH100}) {
    absl::StatusOr<ResourceFlavor> f =
        FlavorFromApi(Parse<api::ResourceFlavor>(text));
    ASSERT_TRUE(f.ok()) << f.status();
    flavors[f->name] = *f;
  }
  absl::StatusOr<Workload> admitted =
      WorkloadFromApi(AdmittedWorkload(), "research");
  ASSERT_TRUE(admitted.ok()) << admitted.status();

  api::JobSet js = original;
  absl::StatusOr<SavedPodTemplates> injected =
      Inject(*admitted->admission, "research-queue", flavors, &js);
  ASSERT_TRUE(injected.ok()) << injected.status();
  ASSERT_FALSE(MessageDifferencer::Equals(js, original));

  EXPECT_TRUE(Restore(SavedTemplatesOf(stored), &js));
  EXPECT_TRUE(js.spec().suspend());
  EXPECT_TRUE(MessageDifferencer::Equals(js, original));  // suspended there too
}

}  // namespace
}  // namespace jobset::scheduler::queues
