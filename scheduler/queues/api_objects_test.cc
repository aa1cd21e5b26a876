#include "scheduler/queues/api_objects.h"

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
#include "scheduler/queues/flavor_assigner.h"
#include "scheduler/queues/jobset_testdata.h"
#include "scheduler/queues/jobset_workload.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/podset_injection.h"

namespace jobset::scheduler::queues {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::kGpuH100;
using testing::kOnDemand;
using testing::kSpot;
using ::testing::Pair;

constexpr int64_t kGi = int64_t{1} << 30;

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

// §8.2, defaulted.
constexpr char kResearch[] = R"pb(
  api_version: "kueue.x-k8s.io/v1beta1"
  kind: "ClusterQueue"
  metadata { name: "research" }
  spec {
    cohort: "ml-org"
    namespace_selector { match_labels { key: "team" value: "research" } }
    queueing_strategy: "BestEffortFIFO"
    stop_policy: "None"
    flavor_fungibility {
      when_can_borrow: "MayStopSearch"
      when_can_preempt: "TryNextFlavor"
    }
    preemption {
      within_cluster_queue: "LowerPriority"
      reclaim_within_cohort: "Any"
      borrow_within_cohort {
        policy: "LowerPriority"
        max_priority_threshold: 100
      }
    }
    resource_groups {
      covered_resources: [ "cpu", "memory", "nvidia.com/gpu" ]
      flavors {
        name: "gpu-h100"
        resources { name: "cpu" nominal_quota: "96" }
        resources { name: "memory" nominal_quota: "1536Gi" }
        resources {
          name: "nvidia.com/gpu"
          nominal_quota: "16"
          borrowing_limit: "8"
        }
      }
      flavors {
        name: "on-demand"
        resources { name: "cpu" nominal_quota: "64" }
        resources { name: "memory" nominal_quota: "256Gi" }
        resources { name: "nvidia.com/gpu" nominal_quota: "0" }
      }
      flavors {
        name: "spot"
        resources { name: "cpu" nominal_quota: "128" lending_limit: "64" }
        resources { name: "memory" nominal_quota: "512Gi" }
        resources { name: "nvidia.com/gpu" nominal_quota: "0" }
      }
    }
  }
)pb";

void ExpectInvalid(const absl::Status& status, const std::string& want) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr(want));
}

// ---------------------------------------------------------------------------
// ResourceFlavor

TEST(FlavorFromApiTest, Section8Flavors) {
  absl::StatusOr<ResourceFlavor> on_demand =
      FlavorFromApi(Parse<api::ResourceFlavor>(kOnDemand));
  ASSERT_TRUE(on_demand.ok()) << on_demand.status();
  EXPECT_EQ(on_demand->name, "on-demand");
  EXPECT_THAT(on_demand->node_labels,
              ElementsAre(Pair("cloud.example.com/capacity", "on-demand")));
  EXPECT_TRUE(on_demand->node_taints.empty());
  EXPECT_TRUE(on_demand->tolerations.empty());

  absl::StatusOr<ResourceFlavor> spot =
      FlavorFromApi(Parse<api::ResourceFlavor>(kSpot));
  ASSERT_TRUE(spot.ok()) << spot.status();
  EXPECT_EQ(spot->name, "spot");
  ASSERT_EQ(spot->node_taints.size(), 1u);
  EXPECT_EQ(TaintString(spot->node_taints[0]),
            "{cloud.example.com/spot true NoSchedule <nil>}");
  ASSERT_EQ(spot->tolerations.size(), 1u);
  EXPECT_EQ(spot->tolerations[0].key, "cloud.example.com/spot");
  EXPECT_EQ(spot->tolerations[0].op, TolerationOperator::kEqual);
  EXPECT_EQ(spot->tolerations[0].value, "true");
  EXPECT_EQ(spot->tolerations[0].effect, TaintEffect::kNoSchedule);
  EXPECT_TRUE(Tolerates(spot->tolerations[0], spot->node_taints[0]));

  absl::StatusOr<ResourceFlavor> gpu =
      FlavorFromApi(Parse<api::ResourceFlavor>(kGpuH100));
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  ASSERT_EQ(gpu->node_taints.size(), 1u);
  EXPECT_EQ(TaintString(gpu->node_taints[0]),
            "{nvidia.com/gpu present NoSchedule <nil>}");
}

TEST(FlavorFromApiTest, EffectsAndOperators) {
  api::ResourceFlavor in = Parse<api::ResourceFlavor>(R"pb(
    metadata { name: "f" }
    spec {
      node_taints { key: "a" effect: "PreferNoSchedule" }
      node_taints { key: "b" effect: "NoExecute" }
      tolerations { operator: "Exists" }
      tolerations { key: "b" value: "v" effect: "NoExecute" }
    }
  )pb");
  absl::StatusOr<ResourceFlavor> out = FlavorFromApi(in);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->node_taints.size(), 2u);
  EXPECT_EQ(out->node_taints[0].effect, TaintEffect::kPreferNoSchedule);
  EXPECT_EQ(out->node_taints[1].effect, TaintEffect::kNoExecute);
  ASSERT_EQ(out->tolerations.size(), 2u);
  EXPECT_EQ(out->tolerations[0].op, TolerationOperator::kExists);
  EXPECT_EQ(out->tolerations[0].effect, std::nullopt);
  EXPECT_EQ(out->tolerations[1].op, TolerationOperator::kEqual);  // ""
  EXPECT_EQ(out->tolerations[1].effect, TaintEffect::kNoExecute);
}

struct FlavorErrorCase {
  std::string name;
  std::string spec;
  std::string want;
};

class FlavorErrorTest : public ::testing::TestWithParam<FlavorErrorCase> {};

TEST_P(FlavorErrorTest, NamesTheField) {
  api::ResourceFlavor in;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(GetParam().spec,
                                                            in.mutable_spec()));
  ExpectInvalid(FlavorFromApi(in).status(), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, FlavorErrorTest,
    ::testing::Values(
        FlavorErrorCase{"TaintWithoutEffect", R"pb(node_taints { key: "a" })pb",
                        "spec.nodeTaints[0].effect: Unsupported value: \"\": "
                        "supported values: \"NoExecute\", \"NoSchedule\", "
                        "\"PreferNoSchedule\""},
        FlavorErrorCase{"TaintEffect",
                        R"pb(node_taints { key: "a" effect: "NoSchedule" }
                             node_taints { key: "b" effect: "Never" })pb",
                        "spec.nodeTaints[1].effect: Unsupported value: "
                        "\"Never\""},
        FlavorErrorCase{"TolerationOperator",
                        R"pb(tolerations { key: "a" operator: "Maybe" })pb",
                        "spec.tolerations[0].operator: Unsupported value: "
                        "\"Maybe\": supported values: \"Equal\", \"Exists\""},
        FlavorErrorCase{"TolerationEffect",
                        R"pb(tolerations { key: "a" }
                             tolerations { key: "b" effect: "Later" })pb",
                        "spec.tolerations[1].effect: Unsupported value: "
                        "\"Later\""},
        // A hostile value cannot forge a line of the message.
        FlavorErrorCase{"QuotesWhatItEchoes",
                        R"pb(node_taints { key: "a" effect: "x\ny" })pb",
                        "Unsupported value: \"x\\ny\""}),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// ClusterQueue

TEST(ClusterQueueFromApiTest, Section8Research) {
  absl::StatusOr<ClusterQueue> cq =
      ClusterQueueFromApi(Parse<api::ClusterQueue>(kResearch));
  ASSERT_TRUE(cq.ok()) << cq.status();
  EXPECT_EQ(cq->name, "research");
  EXPECT_EQ(cq->cohort, "ml-org");
  EXPECT_EQ(cq->queueing_strategy, QueueingStrategy::kBestEffortFIFO);
  EXPECT_EQ(cq->stop_policy, StopPolicy::kNone);
  EXPECT_EQ(cq->preemption.within_cluster_queue,
            PreemptionPolicy::kLowerPriority);
  EXPECT_EQ(cq->preemption.reclaim_within_cohort, PreemptionPolicy::kAny);
  EXPECT_EQ(cq->preemption.borrow_within_cohort.policy,
            BorrowWithinCohortPolicy::kLowerPriority);
  EXPECT_EQ(cq->preemption.borrow_within_cohort.max_priority_threshold, 100);
  EXPECT_EQ(cq->flavor_fungibility.when_can_borrow,
            FungibilityPolicy::kMayStopSearch);
  EXPECT_EQ(cq->flavor_fungibility.when_can_preempt,
            FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(cq->flavor_fungibility.preference,
            FungibilityPreference::kBorrowingOverPreemption);

  ASSERT_EQ(cq->resource_groups.size(), 1u);
  const ResourceGroup& group = cq->resource_groups[0];
  EXPECT_THAT(group.covered_resources,
              ElementsAre("cpu", "memory", "nvidia.com/gpu"));
  ASSERT_EQ(group.flavors.size(), 3u);
  EXPECT_EQ(group.flavors[0].name, "gpu-h100");
  EXPECT_EQ(group.flavors[1].name, "on-demand");
  EXPECT_EQ(group.flavors[2].name, "spot");

  // name, nominal, borrowingLimit, lendingLimit of every quota.
  using Row = std::tuple<std::string, int64_t, std::optional<int64_t>,
                         std::optional<int64_t>>;
  std::vector<std::vector<Row>> got;
  for (const FlavorQuotas& f : group.flavors) {
    std::vector<Row> rows;
    for (const ResourceQuota& q : f.resources) {
      rows.emplace_back(q.name, q.nominal_quota, q.borrowing_limit,
                        q.lending_limit);
    }
    got.push_back(rows);
  }
  const std::optional<int64_t> none;
  EXPECT_EQ(got, (std::vector<std::vector<Row>>{
                     {Row{"cpu", 96'000, none, none},
                      Row{"memory", 1536 * kGi, none, none},
                      Row{"nvidia.com/gpu", 16, 8, none}},
                     {Row{"cpu", 64'000, none, none},
                      Row{"memory", 256 * kGi, none, none},
                      Row{"nvidia.com/gpu", 0, none, none}},
                     {Row{"cpu", 128'000, none, 64'000},
                      Row{"memory", 512 * kGi, none, none},
                      Row{"nvidia.com/gpu", 0, none, none}}}));
}

TEST(ClusterQueueFromApiTest, QuantitiesInModelUnits) {
  api::ClusterQueue in = Parse<api::ClusterQueue>(R"pb(
    metadata { name: "q" }
    spec {
      cohort: "c"
      resource_groups {
        covered_resources: [ "cpu", "memory", "example.com/foo" ]
        flavors {
          name: "f"
          resources { name: "cpu" nominal_quota: "500m" borrowing_limit: "1.5" }
          resources {
            name: "memory"
            nominal_quota: "1.5Gi"
            lending_limit: "100m"
          }
          resources { name: "example.com/foo" nominal_quota: "2k" }
        }
      }
    }
  )pb");
  absl::StatusOr<ClusterQueue> cq = ClusterQueueFromApi(in);
  ASSERT_TRUE(cq.ok()) << cq.status();
  const std::vector<ResourceQuota>& r =
      cq->resource_groups.at(0).flavors.at(0).resources;
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].nominal_quota, 500);
  EXPECT_EQ(r[0].borrowing_limit, 1500);
  EXPECT_EQ(r[1].nominal_quota, 3 * kGi / 2);
  EXPECT_EQ(r[1].lending_limit, 1);  // rounded up to a whole byte
  EXPECT_EQ(r[2].nominal_quota, 2000);
}

TEST(ClusterQueueFromApiTest, EmptyEnumerationsReadAsTheDefaults) {
  absl::StatusOr<ClusterQueue> cq =
      ClusterQueueFromApi(Parse<api::ClusterQueue>("metadata { name: \"q\" }"));
  ASSERT_TRUE(cq.ok()) << cq.status();
  EXPECT_EQ(cq->cohort, "");
  EXPECT_EQ(cq->queueing_strategy, QueueingStrategy::kBestEffortFIFO);
  EXPECT_EQ(cq->preemption.within_cluster_queue, PreemptionPolicy::kNever);
  EXPECT_EQ(cq->preemption.reclaim_within_cohort, PreemptionPolicy::kNever);
  EXPECT_EQ(cq->preemption.borrow_within_cohort.policy,
            BorrowWithinCohortPolicy::kNever);
  EXPECT_EQ(cq->preemption.borrow_within_cohort.max_priority_threshold,
            std::nullopt);
  EXPECT_EQ(cq->flavor_fungibility.when_can_borrow,
            FungibilityPolicy::kMayStopSearch);
  EXPECT_EQ(cq->flavor_fungibility.when_can_preempt,
            FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(cq->stop_policy, StopPolicy::kNone);
  EXPECT_EQ(cq->fair_weight, 1.0);
}

TEST(ClusterQueueFromApiTest, FairSharingWeight) {
  absl::StatusOr<ClusterQueue> cq =
      ClusterQueueFromApi(Parse<api::ClusterQueue>(
          R"pb(metadata { name: "q" }
               spec { fair_sharing { weight: "1500m" } })pb"));
  ASSERT_TRUE(cq.ok()) << cq.status();
  EXPECT_EQ(cq->fair_weight, 1.5);
  cq = ClusterQueueFromApi(Parse<api::ClusterQueue>(
      R"pb(metadata { name: "q" }
           spec { fair_sharing { weight: "0" } })pb"));
  ASSERT_TRUE(cq.ok()) << cq.status();
  EXPECT_EQ(cq->fair_weight, 0.0);
  ExpectInvalid(
      ClusterQueueFromApi(Parse<api::ClusterQueue>(
                              R"pb(metadata { name: "q" }
                                   spec { fair_sharing { weight: "x" } })pb"))
          .status(),
      "spec.fairSharing.weight: quantity \"x\" is malformed");
}

struct SpellingCase {
  std::string name;
  std::string spec;
  std::function<bool(const ClusterQueue&)> check;
};

class SpellingTest : public ::testing::TestWithParam<SpellingCase> {};

TEST_P(SpellingTest, ReadsAs) {
  api::ClusterQueue in;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(GetParam().spec,
                                                            in.mutable_spec()));
  absl::StatusOr<ClusterQueue> cq = ClusterQueueFromApi(in);
  ASSERT_TRUE(cq.ok()) << cq.status();
  EXPECT_TRUE(GetParam().check(*cq));
}

INSTANTIATE_TEST_SUITE_P(
    Table, SpellingTest,
    ::testing::Values(
        SpellingCase{"StrictFIFO", R"pb(queueing_strategy: "StrictFIFO")pb",
                     [](const ClusterQueue& cq) {
                       return cq.queueing_strategy ==
                              QueueingStrategy::kStrictFIFO;
                     }},
        SpellingCase{
            "CohortName", R"pb(cohort_name: "v1beta2")pb",
            [](const ClusterQueue& cq) { return cq.cohort == "v1beta2"; }},
        SpellingCase{"WithinLowerOrNewerEqualPriority",
                     R"pb(preemption {
                            within_cluster_queue: "LowerOrNewerEqualPriority"
                          })pb",
                     [](const ClusterQueue& cq) {
                       return cq.preemption.within_cluster_queue ==
                              PreemptionPolicy::kLowerOrNewerEqualPriority;
                     }},
        SpellingCase{
            "ReclaimLowerPriority",
            R"pb(preemption { reclaim_within_cohort: "LowerPriority" })pb",
            [](const ClusterQueue& cq) {
              return cq.preemption.reclaim_within_cohort ==
                     PreemptionPolicy::kLowerPriority;
            }},
        SpellingCase{
            "WhenCanBorrowTryNextFlavor",
            R"pb(flavor_fungibility { when_can_borrow: "TryNextFlavor" })pb",
            [](const ClusterQueue& cq) {
              return cq.flavor_fungibility.when_can_borrow ==
                     FungibilityPolicy::kTryNextFlavor;
            }},
        SpellingCase{"V1beta1Borrow",
                     R"pb(flavor_fungibility { when_can_borrow: "Borrow" })pb",
                     [](const ClusterQueue& cq) {
                       return cq.flavor_fungibility.when_can_borrow ==
                              FungibilityPolicy::kMayStopSearch;
                     }},
        SpellingCase{
            "WhenCanPreemptMayStopSearch",
            R"pb(flavor_fungibility { when_can_preempt: "MayStopSearch" })pb",
            [](const ClusterQueue& cq) {
              return cq.flavor_fungibility.when_can_preempt ==
                     FungibilityPolicy::kMayStopSearch;
            }},
        SpellingCase{"V1beta1Preempt", R"pb(flavor_fungibility {
                                              when_can_preempt: "Preempt"
                                            })pb",
                     [](const ClusterQueue& cq) {
                       return cq.flavor_fungibility.when_can_preempt ==
                              FungibilityPolicy::kMayStopSearch;
                     }},
        SpellingCase{"PreemptionOverBorrowing",
                     R"pb(flavor_fungibility {
                            when_can_borrow: "TryNextFlavor"
                            when_can_preempt: "TryNextFlavor"
                            preference: "PreemptionOverBorrowing"
                          })pb",
                     [](const ClusterQueue& cq) {
                       return cq.flavor_fungibility.preference ==
                              FungibilityPreference::kPreemptionOverBorrowing;
                     }},
        SpellingCase{"Hold", R"pb(stop_policy: "Hold")pb",
                     [](const ClusterQueue& cq) {
                       return cq.stop_policy == StopPolicy::kHold;
                     }},
        SpellingCase{"HoldAndDrain", R"pb(stop_policy: "HoldAndDrain")pb",
                     [](const ClusterQueue& cq) {
                       return cq.stop_policy == StopPolicy::kHoldAndDrain;
                     }}),
    [](const auto& info) { return info.param.name; });

struct ClusterQueueErrorCase {
  std::string name;
  std::string spec;
  std::string want;
};

class ClusterQueueErrorTest
    : public ::testing::TestWithParam<ClusterQueueErrorCase> {};

// Two flavors, so that a path names the right index.
constexpr char kTwoFlavors[] = R"pb(
  cohort: "c"
  resource_groups {
    covered_resources: [ "cpu" ]
    flavors {
      name: "a"
      resources { name: "cpu" nominal_quota: "1" }
    }
    flavors {
      name: "b"
      resources { name: "cpu" nominal_quota: "1" }
    }
  }
)pb";

TEST_P(ClusterQueueErrorTest, NamesTheField) {
  api::ClusterQueue in;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      std::string(kTwoFlavors) + GetParam().spec, in.mutable_spec()));
  ExpectInvalid(ClusterQueueFromApi(in).status(), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, ClusterQueueErrorTest,
    ::testing::Values(
        ClusterQueueErrorCase{
            "NominalQuota",
            R"pb(resource_groups {
                   flavors { resources { name: "memory" nominal_quota: "1Gi" } }
                   flavors { resources { name: "cpu" nominal_quota: "x" } }
                 })pb",
            "spec.resourceGroups[1].flavors[1].resources[0].nominalQuota: "
            "quantity \"x\" is malformed"},
        ClusterQueueErrorCase{
            "BorrowingLimitNegative",
            R"pb(resource_groups {
                   flavors {
                     resources {
                       name: "cpu"
                       nominal_quota: "1"
                       borrowing_limit: "-1"
                     }
                   }
                 })pb",
            "spec.resourceGroups[1].flavors[0].resources[0].borrowingLimit: "
            "must be greater than or equal to 0"},
        ClusterQueueErrorCase{
            "LendingLimitTooLarge",
            R"pb(resource_groups {
                   flavors {
                     resources {
                       name: "cpu"
                       nominal_quota: "1"
                       lending_limit: "99E"
                     }
                   }
                 })pb",
            "spec.resourceGroups[1].flavors[0].resources[0].lendingLimit: "
            "quantity \"99E\" is too large"},
        ClusterQueueErrorCase{
            "HostileQuantity",
            R"pb(resource_groups {
                   flavors {
                     resources { name: "cpu" nominal_quota: "1\nforged: 2" }
                   }
                 })pb",
            "nominalQuota: quantity \"1\\nforged: 2\" is malformed"},
        ClusterQueueErrorCase{"QueueingStrategy",
                              R"pb(queueing_strategy: "LIFO")pb",
                              "spec.queueingStrategy: Unsupported value: "
                              "\"LIFO\": supported values: \"BestEffortFIFO\", "
                              "\"StrictFIFO\""},
        // Any is reclaimWithinCohort's, not withinClusterQueue's.
        ClusterQueueErrorCase{
            "WithinClusterQueueAny",
            R"pb(preemption { within_cluster_queue: "Any" })pb",
            "spec.preemption.withinClusterQueue: Unsupported value: \"Any\": "
            "supported values: \"LowerOrNewerEqualPriority\", "
            "\"LowerPriority\", \"Never\""},
        ClusterQueueErrorCase{
            "ReclaimWithinCohort",
            R"pb(preemption {
                   reclaim_within_cohort: "LowerOrNewerEqualPriority"
                 })pb",
            "spec.preemption.reclaimWithinCohort: Unsupported value: "
            "\"LowerOrNewerEqualPriority\": supported values: \"Any\", "
            "\"LowerPriority\", \"Never\""},
        ClusterQueueErrorCase{
            "BorrowWithinCohortPolicy",
            R"pb(preemption { borrow_within_cohort { policy: "Any" } })pb",
            "spec.preemption.borrowWithinCohort.policy: Unsupported value: "
            "\"Any\""},
        // Each of v1beta1's spellings belongs to one field.
        ClusterQueueErrorCase{
            "WhenCanBorrowPreempt",
            R"pb(flavor_fungibility { when_can_borrow: "Preempt" })pb",
            "spec.flavorFungibility.whenCanBorrow: Unsupported value: "
            "\"Preempt\": supported values: \"Borrow\", \"MayStopSearch\", "
            "\"TryNextFlavor\""},
        ClusterQueueErrorCase{
            "WhenCanPreemptBorrow",
            R"pb(flavor_fungibility { when_can_preempt: "Borrow" })pb",
            "spec.flavorFungibility.whenCanPreempt: Unsupported value: "
            "\"Borrow\""},
        ClusterQueueErrorCase{
            "Preference",
            R"pb(flavor_fungibility { preference: "Cheapest" })pb",
            "spec.flavorFungibility.preference: Unsupported value: "
            "\"Cheapest\""},
        ClusterQueueErrorCase{"StopPolicy", R"pb(stop_policy: "Pause")pb",
                              "spec.stopPolicy: Unsupported value: "
                              "\"Pause\": supported values: \"Hold\", "
                              "\"HoldAndDrain\", \"None\""}),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// Cohort

TEST(CohortFromApiTest, NameParentAndPool) {
  absl::StatusOr<Cohort> cohort = CohortFromApi(Parse<api::Cohort>(R"pb(
    metadata { name: "ml-org" }
    spec {
      parent_name: "company"
      resource_groups {
        covered_resources: [ "nvidia.com/gpu" ]
        flavors {
          name: "gpu-h100"
          resources {
            name: "nvidia.com/gpu"
            nominal_quota: "8"
            lending_limit: "12"
          }
        }
      }
    }
  )pb"));
  ASSERT_TRUE(cohort.ok()) << cohort.status();
  EXPECT_EQ(cohort->name, "ml-org");
  EXPECT_EQ(cohort->parent, "company");
  ASSERT_EQ(cohort->resource_groups.size(), 1u);
  ASSERT_EQ(cohort->resource_groups[0].flavors.size(), 1u);
  const FlavorQuotas& f = cohort->resource_groups[0].flavors[0];
  EXPECT_EQ(f.name, "gpu-h100");
  ASSERT_EQ(f.resources.size(), 1u);
  EXPECT_EQ(f.resources[0].nominal_quota, 8);
  // A Cohort may lend more than its own nominal quota (§1.5).
  EXPECT_EQ(f.resources[0].lending_limit, 12);
  EXPECT_EQ(f.resources[0].borrowing_limit, std::nullopt);
}

TEST(CohortFromApiTest, RootWithoutQuota) {
  absl::StatusOr<Cohort> cohort =
      CohortFromApi(Parse<api::Cohort>("metadata { name: \"company\" }"));
  ASSERT_TRUE(cohort.ok()) << cohort.status();
  EXPECT_EQ(cohort->name, "company");
  EXPECT_EQ(cohort->parent, "");
  EXPECT_TRUE(cohort->resource_groups.empty());
  EXPECT_EQ(cohort->fair_weight, 1.0);
  cohort = CohortFromApi(
      Parse<api::Cohort>(R"pb(metadata { name: "c" }
                              spec { fair_sharing { weight: "2" } })pb"));
  ASSERT_TRUE(cohort.ok()) << cohort.status();
  EXPECT_EQ(cohort->fair_weight, 2.0);
}

TEST(CohortFromApiTest, BadQuotaNamesTheField) {
  ExpectInvalid(CohortFromApi(Parse<api::Cohort>(R"pb(
                  metadata { name: "c" }
                  spec {
                    resource_groups {
                      flavors {
                        name: "f"
                        resources { name: "cpu" nominal_quota: "1" }
                        resources { name: "memory" nominal_quota: "" }
                      }
                    }
                  }
                )pb"))
                    .status(),
                "spec.resourceGroups[0].flavors[0].resources[1].nominalQuota: "
                "quantity \"\" is malformed");
}
}  // namespace
}  // namespace jobset::scheduler::queues
