// ValidateResourceFlavor, ClusterQueue, Cohort, LocalQueue and
// WorkloadPriorityClass: one case per rule, with the exact message.
// Workloads: kueue_workload_validation_test.cc.
#include "api/kueue_validation.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "api/kueue_defaults.h"
#include "api/kueue_manifest.h"
#include "api/names.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

constexpr char kOk[] = "OK";
constexpr char kCelSkipped[] =
    "<nil>: Invalid value: \"null\": some validation rules were not checked "
    "because the object was invalid; correct the existing errors to complete "
    "validation";
constexpr char kSubdomainPattern[] =
    R"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$)";
constexpr char kQuantityPattern[] =
    R"(^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$)";

KueueObject Load(absl::string_view kind, absl::string_view body) {
  const std::string text = absl::StrCat(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ", kind, "\n", body, "\n");
  absl::StatusOr<KueueObject> object = ParseKueueDocument(text);
  EXPECT_TRUE(object.ok()) << object.status() << "\n" << text;
  if (!object.ok()) return KueueObject();
  SetKueueDefaults(&*object);
  return *object;
}

std::string Message(const absl::Status& status) {
  if (status.ok()) return kOk;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  return std::string(status.message());
}

// Loads, defaults and validates a document of `kind`; "OK" or the message.
std::string Check(absl::string_view kind, absl::string_view body) {
  const KueueObject o = Load(kind, body);
  switch (o.object_case()) {
    case KueueObject::kResourceFlavor:
      return Message(ValidateResourceFlavor(o.resource_flavor()));
    case KueueObject::kClusterQueue:
      return Message(ValidateClusterQueue(o.cluster_queue()));
    case KueueObject::kCohort:
      return Message(ValidateCohort(o.cohort()));
    case KueueObject::kLocalQueue:
      return Message(ValidateLocalQueue(o.local_queue()));
    case KueueObject::kWorkloadPriorityClass:
      return Message(
          ValidateWorkloadPriorityClass(o.workload_priority_class()));
    default:
      return "unexpected kind";
  }
}

std::string CheckUpdate(absl::string_view kind, absl::string_view old_body,
                        absl::string_view new_body) {
  const KueueObject o = Load(kind, old_body);
  const KueueObject n = Load(kind, new_body);
  switch (o.object_case()) {
    case KueueObject::kResourceFlavor:
      return Message(ValidateResourceFlavorUpdate(o.resource_flavor(),
                                                  n.resource_flavor()));
    case KueueObject::kClusterQueue:
      return Message(
          ValidateClusterQueueUpdate(o.cluster_queue(), n.cluster_queue()));
    case KueueObject::kCohort:
      return Message(ValidateCohortUpdate(o.cohort(), n.cohort()));
    case KueueObject::kLocalQueue:
      return Message(
          ValidateLocalQueueUpdate(o.local_queue(), n.local_queue()));
    case KueueObject::kWorkloadPriorityClass:
      return Message(ValidateWorkloadPriorityClassUpdate(
          o.workload_priority_class(), n.workload_priority_class()));
    default:
      return "unexpected kind";
  }
}

struct Case {
  const char* name;
  std::string body;
  std::string expected;  // after `<Kind> "<name>" is invalid: `, or "OK"
};

// One resourceGroup covering cpu in flavor "a" with `quota` (YAML flow).
std::string CpuGroup(absl::string_view quota) {
  return absl::StrCat(
      "  resourceGroups:\n  - coveredResources: [cpu]\n"
      "    flavors: [{name: a, resources: [{name: cpu, ",
      quota, "}]}]\n");
}

void RunCases(absl::string_view kind, absl::string_view object_name,
              const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const std::string expected =
        c.expected == kOk ? std::string(kOk)
                          : absl::StrCat(kind, " \"", object_name,
                                         "\" is invalid: ", c.expected);
    EXPECT_EQ(Check(kind, c.body), expected) << c.name;
  }
}

TEST(ValidateClusterQueueTest, Rules) {
  const std::string r0 = "spec.resourceGroups[0].flavors[0].resources[0]";
  const std::string in_cohort = "metadata: {name: cq}\nspec:\n  cohort: org\n";
  const std::string alone = "metadata: {name: cq}\nspec:\n";
  const std::vector<Case> cases = {
      {"minimal", "metadata: {name: cq}", kOk},
      {"flavor in two groups", R"(metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: h100, resources: [{name: cpu, nominalQuota: 1}]}]
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}])",
       "spec.resourceGroups[1].flavors[0].name: Duplicate value: \"h100\""},
      {"resource in two groups", R"(metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: a, resources: [{name: cpu, nominalQuota: 1}]}]
  - coveredResources: [cpu]
    flavors: [{name: b, resources: [{name: cpu, nominalQuota: 1}]}])",
       "spec.resourceGroups[1].coveredResources[0]: Duplicate value: \"cpu\""},
      {"fewer resources than covered", R"(metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors: [{name: a, resources: [{name: cpu, nominalQuota: 1}]}])",
       "spec.resourceGroups[0]: Invalid value: \"object\": flavors must have "
       "the same number of resources as the coveredResources"},
      {"resources out of order", R"(metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: a
      resources: [{name: memory, nominalQuota: 1}, {name: cpu, nominalQuota: 1}])",
       absl::StrCat(r0,
                    ".name: Invalid value: \"memory\": must match the name in "
                    "coveredResources; spec.resourceGroups[0].flavors[0]."
                    "resources[1].name: Invalid value: \"cpu\": must match "
                    "the name in coveredResources")},
      {"borrowingLimit without cohort",
       (alone + CpuGroup("nominalQuota: 1, borrowingLimit: 2")),
       "spec: Invalid value: \"object\": borrowingLimit must be nil when "
       "cohort is empty"},
      {"borrowingLimit in a cohort",
       (in_cohort + CpuGroup("nominalQuota: 1, borrowingLimit: 2")), kOk},
      {"lendingLimit without cohort",
       (alone + CpuGroup("nominalQuota: 2, lendingLimit: 1000m")),
       absl::StrCat(r0,
                    ".lendingLimit: Invalid value: \"1\": must be nil when "
                    "cohort is empty")},
      {"lendingLimit over nominalQuota",
       (in_cohort + CpuGroup("nominalQuota: 4, lendingLimit: 5")),
       absl::StrCat(r0,
                    ".lendingLimit: Invalid value: \"5\": must be less than "
                    "or equal to the nominalQuota")},
      {"lendingLimit equal to nominalQuota",
       (in_cohort + CpuGroup("nominalQuota: 4000m, lendingLimit: 4")), kOk},
      {"negative nominalQuota", (alone + CpuGroup("nominalQuota: \"-2000\"")),
       absl::StrCat(r0,
                    ".nominalQuota: Invalid value: \"-2k\": must be greater "
                    "than or equal to 0")},
      {"negative borrowingLimit",
       (in_cohort + CpuGroup("nominalQuota: 1, borrowingLimit: \"-1.5Gi\"")),
       absl::StrCat(r0,
                    ".borrowingLimit: Invalid value: \"-1536Mi\": must be "
                    "greater than or equal to 0")},
      {"nominalQuota not a quantity", (alone + CpuGroup("nominalQuota: lots")),
       absl::StrCat(r0, ".nominalQuota: Invalid value: \"lots\": ", r0,
                    ".nominalQuota in body should match '", kQuantityPattern,
                    "'")},
      {"nominalQuota missing", (alone + CpuGroup("")),
       absl::StrCat(r0, ".nominalQuota: Required value; ", kCelSkipped)},
      {"no flavors", R"(metadata: {name: cq}
spec:
  resourceGroups: [{coveredResources: [cpu]}])",
       absl::StrCat("spec.resourceGroups[0].flavors: Required value; ",
                    kCelSkipped)},
      {"flavor name not a DNS subdomain", R"(metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: H100, resources: [{name: cpu, nominalQuota: 1}]}])",
       absl::StrCat("spec.resourceGroups[0].flavors[0].name: Invalid value: "
                    "\"H100\": spec.resourceGroups[0].flavors[0].name in body "
                    "should match '",
                    kSubdomainPattern, "'")},
      {"covered resource not a qualified name", R"(metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [gpu!]
    flavors: [{name: a, resources: [{name: gpu!, nominalQuota: 1}]}])",
       absl::StrCat(
           "spec.resourceGroups[0].coveredResources[0]: Invalid value: "
           "\"gpu!\": ",
           IsQualifiedName("gpu!").at(0))},
      {"cohort not a DNS subdomain",
       "metadata: {name: cq}\nspec: {cohort: ML_Org}",
       absl::StrCat("spec.cohort: Invalid value: \"ML_Org\": spec.cohort in "
                    "body should match '",
                    kSubdomainPattern, "'")},
      {"queueingStrategy",
       "metadata: {name: cq}\nspec: {queueingStrategy: FIFO}",
       absl::StrCat("spec.queueingStrategy: Unsupported value: \"FIFO\": "
                    "supported values: \"StrictFIFO\", \"BestEffortFIFO\"; ",
                    kCelSkipped)},
      {"stopPolicy", "metadata: {name: cq}\nspec: {stopPolicy: Pause}",
       absl::StrCat("spec.stopPolicy: Unsupported value: \"Pause\": supported "
                    "values: \"None\", \"Hold\", \"HoldAndDrain\"; ",
                    kCelSkipped)},
      {"whenCanBorrow", R"(metadata: {name: cq}
spec: {flavorFungibility: {whenCanBorrow: Always}})",
       absl::StrCat("spec.flavorFungibility.whenCanBorrow: Unsupported value: "
                    "\"Always\": supported values: \"MayStopSearch\", "
                    "\"TryNextFlavor\", \"Borrow\"; ",
                    kCelSkipped)},
      {"preference without TryNextFlavor", R"(metadata: {name: cq}
spec: {flavorFungibility: {preference: PreemptionOverBorrowing}})",
       "spec.flavorFungibility: Invalid value: \"object\": preference can only "
       "be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor"},
      {"preference with TryNextFlavor twice", R"(metadata: {name: cq}
spec:
  flavorFungibility:
    whenCanBorrow: TryNextFlavor
    preference: PreemptionOverBorrowing)",
       kOk},
      {"borrowWithinCohort without reclaim", R"(metadata: {name: cq}
spec: {preemption: {borrowWithinCohort: {policy: LowerPriority}}})",
       "spec.preemption: Invalid value: \"object\": reclaimWithinCohort=Never "
       "and borrowWithinCohort.Policy!=Never"},
      {"withinClusterQueue", R"(metadata: {name: cq}
spec: {preemption: {withinClusterQueue: Any}})",
       absl::StrCat("spec.preemption.withinClusterQueue: Unsupported value: "
                    "\"Any\": supported values: \"Never\", \"LowerPriority\", "
                    "\"LowerOrNewerEqualPriority\"; ",
                    kCelSkipped)},
      {"namespaceSelector In without values", R"(metadata: {name: cq}
spec:
  namespaceSelector:
    matchExpressions: [{key: team, operator: In}])",
       "spec.namespaceSelector.matchExpressions[0].values: Required value: "
       "must be specified when `operator` is 'In' or 'NotIn'"},
      {"namespaceSelector operator", R"(metadata: {name: cq}
spec:
  namespaceSelector:
    matchExpressions: [{key: team, operator: Equals, values: [a]}])",
       "spec.namespaceSelector.matchExpressions[0].operator: Invalid value: "
       "\"Equals\": not a valid selector operator"},
      {"fairSharing weight negative",
       "metadata: {name: cq}\nspec: {fairSharing: {weight: \"-1\"}}",
       "spec.fairSharing: Invalid value: \"-1\": must be greater than or equal "
       "to 0"},
      {"fairSharing weight that collapses",
       "metadata: {name: cq}\nspec: {fairSharing: {weight: 1n}}",
       "spec.fairSharing: Invalid value: \"1n\": When not 0, weight must be > "
       "10e-9"},
      {"fairSharing weight 0",
       "metadata: {name: cq}\nspec: {fairSharing: "
       "{weight: 0}}",
       kOk},
  };
  RunCases("ClusterQueue", "cq", cases);
  EXPECT_EQ(Check("ClusterQueue", "metadata: {name: Research}"),
            absl::StrCat("ClusterQueue \"Research\" is invalid: metadata.name: "
                         "Invalid value: \"Research\": ",
                         IsDns1123Subdomain("Research").at(0)));
  EXPECT_EQ(Check("ClusterQueue", "metadata: {}"),
            absl::StrCat("ClusterQueue \"\" is invalid: metadata.name: "
                         "Required value: name or generateName is required; ",
                         kCelSkipped));
}

TEST(ValidateClusterQueueTest, UnsetEnumsReadAsDefaults) {
  auto undefaulted = [](absl::string_view spec) {
    absl::StatusOr<KueueObject> object = ParseKueueDocument(
        absl::StrCat("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
                     "metadata: {name: cq}\nspec: ",
                     spec));
    EXPECT_TRUE(object.ok()) << object.status();
    return object.ok() ? object->cluster_queue() : ClusterQueue();
  };
  EXPECT_EQ(Message(ValidateClusterQueue(undefaulted(
                "{flavorFungibility: {preference: PreemptionOverBorrowing}}"))),
            "ClusterQueue \"cq\" is invalid: spec.flavorFungibility: Invalid "
            "value: \"object\": preference can only be set when both "
            "whenCanBorrow and whenCanPreempt are TryNextFlavor");
  EXPECT_EQ(Message(ValidateClusterQueue(
                undefaulted("{flavorFungibility: {whenCanBorrow: "
                            "TryNextFlavor, preference: "
                            "BorrowingOverPreemption}}"))),
            kOk);
  EXPECT_EQ(
      Message(ValidateClusterQueue(undefaulted(
          "{preemption: {borrowWithinCohort: {policy: LowerPriority}}}"))),
      "ClusterQueue \"cq\" is invalid: spec.preemption: Invalid value: "
      "\"object\": reclaimWithinCohort=Never and "
      "borrowWithinCohort.Policy!=Never");
}

// A ClusterQueue with `groups` resourceGroups of `flavors` flavors, each
// covering `resources` resources; every name distinct.
ClusterQueue Grid(int groups, int flavors, int resources) {
  ClusterQueue cq =
      Load("ClusterQueue", "metadata: {name: cq}").cluster_queue();
  for (int g = 0; g < groups; ++g) {
    ResourceGroup* group = cq.mutable_spec()->add_resource_groups();
    for (int r = 0; r < resources; ++r) {
      group->add_covered_resources(absl::StrCat("example.com/r", g, "-", r));
    }
    for (int f = 0; f < flavors; ++f) {
      FlavorQuotas* flavor = group->add_flavors();
      flavor->set_name(absl::StrCat("f", g, "-", f));
      for (const std::string& name : group->covered_resources()) {
        ResourceQuota* quota = flavor->add_resources();
        quota->set_name(name);
        quota->set_nominal_quota("1");
      }
    }
  }
  return cq;
}

TEST(ValidateClusterQueueTest, Limits) {
  EXPECT_TRUE(ValidateClusterQueue(Grid(16, 16, 16)).ok());
  EXPECT_EQ(Message(ValidateClusterQueue(Grid(17, 1, 1))),
            absl::StrCat("ClusterQueue \"cq\" is invalid: spec.resourceGroups: "
                         "Too many: 17: must have at most 16 items; ",
                         kCelSkipped));
  EXPECT_EQ(Message(ValidateClusterQueue(Grid(1, 65, 1))),
            absl::StrCat("ClusterQueue \"cq\" is invalid: "
                         "spec.resourceGroups[0].flavors: Too many: 65: must "
                         "have at most 64 items; ",
                         kCelSkipped));
  EXPECT_EQ(Message(ValidateClusterQueue(Grid(1, 1, 65))),
            absl::StrCat("ClusterQueue \"cq\" is invalid: "
                         "spec.resourceGroups[0].coveredResources: Too many: "
                         "65: must have at most 64 items; "
                         "spec.resourceGroups[0].flavors[0].resources: Too "
                         "many: 65: must have at most 64 items; ",
                         kCelSkipped));
  EXPECT_EQ(Message(ValidateClusterQueue(Grid(16, 17, 17))),
            "ClusterQueue \"cq\" is invalid: spec.resourceGroups: Invalid "
            "value: 272: total number of flavors across all resourceGroups "
            "must be ≤ 256, got 272; spec.resourceGroups: Invalid value: 272: "
            "total number of covered resources across all resourceGroups must "
            "be ≤ 256, got 272");
  EXPECT_EQ(Message(ValidateClusterQueue(Grid(1, 64, 9))),
            "ClusterQueue \"cq\" is invalid: spec.resourceGroups[0]: Invalid "
            "value: 576: number of flavor-resource combinations in a "
            "resourceGroup must be ≤ 512, got 576");
}

TEST(ValidateClusterQueueTest, UpdateChecksTheNewObject) {
  const char* ok = "metadata: {name: cq}\nspec: {cohort: a}";
  EXPECT_EQ(CheckUpdate("ClusterQueue", ok, "metadata: {name: cq}"), kOk);
  EXPECT_EQ(CheckUpdate("ClusterQueue", ok,
                        "metadata: {name: cq}\nspec: {stopPolicy: Stop}"),
            absl::StrCat("ClusterQueue \"cq\" is invalid: spec.stopPolicy: "
                         "Unsupported value: \"Stop\": supported values: "
                         "\"None\", \"Hold\", \"HoldAndDrain\"; ",
                         kCelSkipped));
  EXPECT_EQ(CheckUpdate("ClusterQueue", ok, "metadata: {name: other}"),
            "ClusterQueue \"other\" is invalid: metadata.name: Invalid value: "
            "\"other\": field is immutable");
}

TEST(ValidateResourceFlavorTest, Rules) {
  const std::vector<Case> cases = {
      {"empty spec", "metadata: {name: rf}\nspec: {}", kOk},
      {"nine nodeLabels", R"(metadata: {name: rf}
spec:
  nodeLabels: {a: "1", b: "2", c: "3", d: "4", e: "5", f: "6", g: "7", h: "8", i: "9"})",
       absl::StrCat("spec.nodeLabels: Too many: 9: must have at most 8 items; ",
                    kCelSkipped)},
      {"nodeLabel key",
       "metadata: {name: rf}\nspec: {nodeLabels: {\"a b\": x}}",
       absl::StrCat("spec.nodeLabels[a b]: Invalid value: \"a b\": ",
                    IsQualifiedName("a b").at(0))},
      {"taint effect", R"(metadata: {name: rf}
spec: {nodeTaints: [{key: k, effect: Never}]})",
       "spec.nodeTaints: Invalid value: \"array\": supported taint effect "
       "values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"},
      {"taint without effect",
       "metadata: {name: rf}\nspec: {nodeTaints: "
       "[{key: k}]}",
       absl::StrCat("spec.nodeTaints[0].effect: Required value; ",
                    kCelSkipped)},
      {"taint twice", R"(metadata: {name: rf}
spec:
  nodeTaints:
  - {key: k, value: a, effect: NoSchedule}
  - {key: k, value: b, effect: NoSchedule}
  - {key: k, value: c, effect: NoExecute})",
       "spec.nodeTaints[1]: Duplicate value: v1.Taint{Key:\"k\", Value:\"b\", "
       "Effect:\"NoSchedule\", TimeAdded:<nil>}: taints must be unique by key "
       "and effect pair"},
      {"taint value", R"(metadata: {name: rf}
spec: {nodeTaints: [{key: k, value: "a b", effect: NoSchedule}]})",
       absl::StrCat("spec.nodeTaints[0].value: Invalid value: \"a b\": ",
                    IsValidLabelValue("a b").at(0))},
      {"toleration without key", R"(metadata: {name: rf}
spec: {tolerations: [{operator: Equal, value: x}]})",
       "spec.tolerations: Invalid value: \"array\": operator must be Exists "
       "when 'key' is empty, which means 'match all values and all keys'"},
      {"tolerationSeconds without NoExecute", R"(metadata: {name: rf}
spec: {tolerations: [{key: k, effect: NoSchedule, tolerationSeconds: 5}]})",
       "spec.tolerations: Invalid value: \"array\": effect must be "
       "'NoExecute' when 'tolerationSeconds' is set"},
      {"toleration operator", R"(metadata: {name: rf}
spec: {tolerations: [{key: k, operator: In}]})",
       "spec.tolerations: Invalid value: \"array\": supported toleration "
       "values: 'Equal'(default), 'Exists'"},
      {"Exists with a value", R"(metadata: {name: rf}
spec: {tolerations: [{key: k, operator: Exists, value: v}]})",
       "spec.tolerations: Invalid value: \"array\": a value must be empty when "
       "'operator' is 'Exists'"},
      {"toleration effect", R"(metadata: {name: rf}
spec: {tolerations: [{key: k, effect: Never}]})",
       "spec.tolerations: Invalid value: \"array\": supported taint effect "
       "values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"},
      {"toleration key", R"(metadata: {name: rf}
spec: {tolerations: [{key: "k k", operator: Exists}]})",
       absl::StrCat("spec.tolerations[0].key: Invalid value: \"k k\": ",
                    IsQualifiedName("k k").at(0))},
      {"topologyName without nodeLabels",
       "metadata: {name: rf}\nspec: {topologyName: default}",
       "spec: Invalid value: \"object\": at least one nodeLabel is required "
       "when topology is set"},
  };
  RunCases("ResourceFlavor", "rf", cases);
}

TEST(ValidateResourceFlavorTest, TopologyNameIsImmutableOnceSet) {
  const char* tas =
      "metadata: {name: rf}\nspec: {topologyName: a, "
      "nodeLabels: {z: \"1\"}}";
  const char* other =
      "metadata: {name: rf}\nspec: {topologyName: b, "
      "nodeLabels: {z: \"1\"}}";
  const std::string immutable =
      "ResourceFlavor \"rf\" is invalid: spec: Invalid value: \"object\": "
      "topologyName is immutable when topologyName is set";
  EXPECT_EQ(CheckUpdate("ResourceFlavor", tas, tas), kOk);
  EXPECT_EQ(CheckUpdate("ResourceFlavor", "metadata: {name: rf}", tas), kOk);
  EXPECT_EQ(CheckUpdate("ResourceFlavor", tas, other), immutable);
  EXPECT_EQ(CheckUpdate("ResourceFlavor", tas, "metadata: {name: rf}"),
            immutable);
}

TEST(ValidateCohortTest, Rules) {
  const std::string r0 = "spec.resourceGroups[0].flavors[0].resources[0]";
  const std::string root = "metadata: {name: co}\nspec:\n";
  const std::string child = "metadata: {name: co}\nspec:\n  parentName: org\n";
  const std::vector<Case> cases = {
      {"minimal", "metadata: {name: co}", kOk},
      {"lendingLimit over nominalQuota with a parent",
       (child + CpuGroup("nominalQuota: 1, lendingLimit: 5")), kOk},
      {"borrowingLimit without a parent",
       (root + CpuGroup("nominalQuota: 1, borrowingLimit: 1")),
       absl::StrCat(r0,
                    ".borrowingLimit: Invalid value: \"1\": must be nil when "
                    "parent is empty")},
      {"lendingLimit without a parent",
       (root + CpuGroup("nominalQuota: 1, lendingLimit: 1")),
       absl::StrCat(r0,
                    ".lendingLimit: Invalid value: \"1\": must be nil when "
                    "parent is empty")},
      {"parentName", "metadata: {name: co}\nspec: {parentName: \"a..b\"}",
       absl::StrCat("spec.parentName: Invalid value: \"a..b\": spec.parentName "
                    "in body should match '",
                    kSubdomainPattern, "'")},
      {"fewer resources than covered", R"(metadata: {name: co}
spec:
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors: [{name: a, resources: [{name: cpu, nominalQuota: 1}]}])",
       "spec.resourceGroups[0]: Invalid value: \"object\": flavors must have "
       "the same number of resources as the coveredResources"},
      {"fairSharing weight",
       "metadata: {name: co}\nspec: {fairSharing: {weight: \"-500m\"}}",
       "spec.fairSharing: Invalid value: \"-500m\": must be greater than or "
       "equal to 0"},
  };
  RunCases("Cohort", "co", cases);
}

TEST(ValidateLocalQueueTest, Rules) {
  const std::vector<Case> cases = {
      {"without a ClusterQueue", "metadata: {name: lq, namespace: team}", kOk},
      {"clusterQueue name",
       "metadata: {name: lq, namespace: team}\nspec: {clusterQueue: CQ}",
       absl::StrCat("spec.clusterQueue: Invalid value: \"CQ\": "
                    "spec.clusterQueue in body should match '",
                    kSubdomainPattern, "'")},
      {"stopPolicy",
       "metadata: {name: lq, namespace: team}\nspec: {stopPolicy: Drain}",
       absl::StrCat("spec.stopPolicy: Unsupported value: \"Drain\": supported "
                    "values: \"None\", \"Hold\", \"HoldAndDrain\"; ",
                    kCelSkipped)},
      {"no namespace", "metadata: {name: lq}\nspec: {clusterQueue: cq}",
       absl::StrCat("metadata.namespace: Required value; ", kCelSkipped)},
  };
  RunCases("LocalQueue", "lq", cases);
}

TEST(ValidateLocalQueueTest, ClusterQueueIsImmutable) {
  const char* none = "metadata: {name: lq, namespace: team}";
  const char* a =
      "metadata: {name: lq, namespace: team}\n"
      "spec: {clusterQueue: a}";
  const char* b =
      "metadata: {name: lq, namespace: team}\n"
      "spec: {clusterQueue: b, stopPolicy: Hold}";
  EXPECT_EQ(CheckUpdate("LocalQueue", a, b),
            "LocalQueue \"lq\" is invalid: spec.clusterQueue: Invalid value: "
            "\"string\": field is immutable");
  // A transition rule binds only where both old and new have the field.
  EXPECT_EQ(CheckUpdate("LocalQueue", none, a), kOk);
  EXPECT_EQ(CheckUpdate("LocalQueue", a, none), kOk);
  EXPECT_EQ(CheckUpdate("LocalQueue", a,
                        "metadata: {name: lq, namespace: team}\n"
                        "spec: {clusterQueue: a, stopPolicy: HoldAndDrain}"),
            kOk);
}

TEST(ValidateWorkloadPriorityClassTest, ValueIsRequired) {
  EXPECT_EQ(Check("WorkloadPriorityClass", "metadata: {name: p}"),
            "WorkloadPriorityClass \"p\" is invalid: value: Required value");
  EXPECT_EQ(Check("WorkloadPriorityClass", "metadata: {name: p}\nvalue: 0"),
            kOk);
  EXPECT_EQ(Check("WorkloadPriorityClass",
                  "metadata: {name: p}\nvalue: -5\ndescription: low"),
            kOk);
  EXPECT_EQ(
      CheckUpdate("WorkloadPriorityClass", "metadata: {name: p}\nvalue: 1",
                  "metadata: {name: p}\nvalue: 2"),
      kOk);
  EXPECT_EQ(CheckUpdate("WorkloadPriorityClass",
                        "metadata: {name: p}\nvalue: 1", "metadata: {name: p}"),
            "WorkloadPriorityClass \"p\" is invalid: value: Required value");
}

}  // namespace
}  // namespace jobset::api

namespace jobset::api {
namespace {

// jobsetd's minimum runtime annotation: a duration, on ClusterQueues and
// WorkloadPriorityClasses.
TEST(MinimumRuntimeTest, ADurationFromZeroToAWeek) {
  auto meta = [](absl::string_view value) {
    ObjectMeta m;
    (*m.mutable_annotations())[std::string(kMinimumRuntimeAnnotation)] =
        std::string(value);
    return m;
  };
  EXPECT_EQ(*MinimumRuntime(ObjectMeta()), absl::ZeroDuration());
  EXPECT_EQ(*MinimumRuntime(meta("1h30m")), absl::Minutes(90));
  EXPECT_EQ(*MinimumRuntime(meta("0s")), absl::ZeroDuration());
  EXPECT_EQ(*MinimumRuntime(meta("168h")), absl::Hours(168));
  for (absl::string_view bad : {"", "ten", "-1m", "169h", "inf", "30"}) {
    EXPECT_EQ(MinimumRuntime(meta(bad)).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(Check("ClusterQueue",
                  "metadata: {name: cq, annotations: "
                  "{jobsetd.io/minimum-runtime: soon}}\nspec: {}"),
            "ClusterQueue \"cq\" is invalid: "
            "metadata.annotations[jobsetd.io/minimum-runtime]: Invalid value: "
            "\"soon\": must be a duration from 0 to 168h, such as \"30m\" "
            "(jobsetd's minimum runtime before preemption)");
  EXPECT_EQ(Check("WorkloadPriorityClass",
                  "metadata: {name: low, annotations: "
                  "{jobsetd.io/minimum-runtime: 10m}}\nvalue: 10"),
            kOk);
  EXPECT_THAT(Check("WorkloadPriorityClass",
                    "metadata: {name: low, annotations: "
                    "{jobsetd.io/minimum-runtime: 10x}}\nvalue: 10"),
              ::testing::HasSubstr("Invalid value: \"10x\""));
}

}  // namespace
}  // namespace jobset::api
