// ValidateWorkload and ValidateWorkloadUpdate: one case per rule, with the
// exact message.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "api/kueue_defaults.h"
#include "api/kueue_manifest.h"
#include "api/kueue_validation.h"
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

// A podSet "workers" of 4 pods asking for 2 cpus each.
constexpr char kWorkers[] = R"(  - name: workers
    count: 4
    template:
      spec:
        containers: [{name: c, image: i, resources: {requests: {cpu: "2"}}}]
)";
// A quota reservation for kWorkers in ClusterQueue "cq".
constexpr char kReserved[] = R"(status:
  conditions:
  - {type: QuotaReserved, status: "True", reason: QuotaReserved, message: m, lastTransitionTime: "2026-01-01T00:00:00Z"}
  admission:
    clusterQueue: cq
    podSetAssignments: [{name: workers, flavors: {cpu: a}, resourceUsage: {cpu: "8"}, count: 4}]
)";
constexpr char kAdmitted[] = R"(
  - {type: Admitted, status: "True", reason: Admitted, message: m, lastTransitionTime: "2026-01-01T00:00:00Z"}
  admission:)";

// A Workload "team/w" in LocalQueue "q" with `spec_extra` (indented spec
// fields), `pod_sets` (list items) and `status`.
std::string Wl(absl::string_view spec_extra, absl::string_view pod_sets,
               absl::string_view status = "") {
  return absl::StrCat(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
      "metadata: {name: w, namespace: team}\nspec:\n  queueName: q\n",
      spec_extra, "  podSets:\n", pod_sets, status);
}

// kWorkers with `from` replaced by `to`.
std::string Workers(absl::string_view from, absl::string_view to) {
  return absl::StrReplaceAll(kWorkers, {{from, to}});
}

// kReserved with Admitted True too.
std::string Admitted() {
  return absl::StrReplaceAll(kReserved, {{"\n  admission:", kAdmitted}});
}

Workload Load(absl::string_view manifest) {
  absl::StatusOr<KueueObject> object = ParseKueueDocument(manifest);
  EXPECT_TRUE(object.ok()) << object.status() << "\n" << manifest;
  if (!object.ok()) return Workload();
  SetKueueDefaults(&*object);
  return object->workload();
}

std::string Message(const absl::Status& status) {
  if (status.ok()) return kOk;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  return std::string(
      absl::StripPrefix(status.message(), "Workload \"w\" is invalid: "));
}

std::string Check(absl::string_view manifest) {
  return Message(ValidateWorkload(Load(manifest)));
}

std::string CheckUpdate(absl::string_view old_manifest,
                        absl::string_view new_manifest) {
  return Message(
      ValidateWorkloadUpdate(Load(old_manifest), Load(new_manifest)));
}

TEST(ValidateWorkloadTest, Rules) {
  const std::string c0 = "spec.podSets[0].template.spec.containers[0]";
  struct Case {
    const char* name;
    std::string manifest;
    std::string expected;
  } cases[] = {
      {"pending", Wl("", kWorkers), kOk},
      {"holding quota", Wl("", kWorkers, kReserved), kOk},
      {"admitted", Wl("", kWorkers, Admitted()), kOk},
      {"no podSets", Wl("", "  []\n"),
       absl::StrCat("spec.podSets: Required value; ", kCelSkipped)},
      {"two podSets named main",
       Wl("",
          "  - template: {spec: {}}\n"
          "  - template: {spec: {}}\n"),
       "spec.podSets[1]: Duplicate value: map[string]interface "
       "{}{\"name\":\"main\"}"},
      {"podSet name", Wl("", Workers("name: workers", "name: Workers")),
       "spec.podSets[0].name: Invalid value: \"Workers\": "
       "spec.podSets[0].name in body should match "
       "'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'"},
      {"no template", Wl("", "  - {name: a, count: 1}\n"),
       absl::StrCat("spec.podSets[0].template: Required value; ", kCelSkipped)},
      {"negative count", Wl("", Workers("count: 4", "count: -1")),
       "spec.podSets[0].count: Invalid value: -1: spec.podSets[0].count in "
       "body should be greater than or equal to 0"},
      {"minCount 0", Wl("", Workers("count: 4", "count: 4\n    minCount: 0")),
       "spec.podSets[0].minCount: Invalid value: 0: spec.podSets[0].minCount "
       "in body should be greater than or equal to 1"},
      {"minCount over count",
       Wl("", Workers("count: 4", "count: 4\n    minCount: 5")),
       "spec.podSets[0]: Invalid value: \"object\": minCount should be "
       "positive and less or equal to count"},
      {"two podSets with minCount",
       Wl("", absl::StrCat(Workers("count: 4", "count: 4\n    minCount: 2"),
                           "  - {name: b, minCount: 1, template: {spec: "
                           "{}}}\n")),
       "spec.podSets: Invalid value: 2: at most one podSet can use minCount"},
      {"priorityClassName without priority",
       Wl("  priorityClassName: high\n", kWorkers),
       "spec: Invalid value: \"object\": priority should not be nil when "
       "priorityClassName is set"},
      {"priorityClassSource", Wl("  priorityClassSource: pods\n", kWorkers),
       absl::StrCat("spec.priorityClassSource: Unsupported value: \"pods\": "
                    "supported values: "
                    "\"kueue.x-k8s.io/workloadpriorityclass\", "
                    "\"scheduling.k8s.io/priorityclass\", \"\"; ",
                    kCelSkipped)},
      {"maximumExecutionTimeSeconds",
       Wl("  maximumExecutionTimeSeconds: 0\n", kWorkers),
       "spec.maximumExecutionTimeSeconds: Invalid value: 0: "
       "spec.maximumExecutionTimeSeconds in body should be greater than or "
       "equal to 1"},
      {"pods requested",
       Wl("", Workers("requests: {cpu: \"2\"}", "requests: {pods: \"1\"}")),
       absl::StrCat(c0,
                    ".resources.requests[pods]: Invalid value: \"pods\": the "
                    "key is reserved for internal kueue use")},
      {"negative limit",
       Wl("", Workers("requests: {cpu: \"2\"}", "limits: {memory: -1Gi}")),
       absl::StrCat(c0,
                    ".resources.limits[memory]: Invalid value: \"-1Gi\": must "
                    "be greater than or equal to 0")},
      {"request not a quantity", Wl("", Workers("cpu: \"2\"", "cpu: two")),
       absl::StrCat(c0,
                    ".resources.requests[cpu]: Invalid value: \"two\": ", c0,
                    ".resources.requests[cpu] in body should match "
                    "'^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)"
                    "|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]"
                    "+))))?$'")},
      {"template label",
       Wl("", Workers("template:\n",
                      "template:\n      metadata: {labels: "
                      "{\"a b\": x}}\n")),
       absl::StrCat("spec.podSets[0].template.metadata.labels[a b]: Invalid "
                    "value: \"a b\": ",
                    IsQualifiedName("a b").at(0))},
      {"quota without admission",
       Wl("", kWorkers,
          absl::StrReplaceAll(
              kReserved,
              {{"  admission:\n    clusterQueue: cq\n"
                "    podSetAssignments: [{name: workers, flavors: {cpu: a}, "
                "resourceUsage: {cpu: \"8\"}, count: 4}]\n",
                ""}})),
       "status.admission: Required value: must be set while the QuotaReserved "
       "condition is true"},
      {"admission without clusterQueue",
       Wl("", kWorkers,
          absl::StrReplaceAll(kReserved, {{"clusterQueue: cq", ""}})),
       absl::StrCat("status.admission.clusterQueue: Required value; ",
                    kCelSkipped)},
      {"admission of another podSet",
       Wl("", kWorkers,
          absl::StrReplaceAll(kReserved, {{"name: workers", "name: driver"}})),
       "status.admission.podSetAssignments[0].name: Not found: \"driver\""},
      {"usage not a multiple of count",
       Wl("", kWorkers,
          absl::StrReplaceAll(
              kReserved, {{"{cpu: \"8\"}", "{cpu: \"8\", memory: \"10\"}"}})),
       "status.admission.podSetAssignments[0].resourceUsage[memory]: Invalid "
       "value: \"10\": is not a multiple of 4"},
      {"admission of fewer podSets",
       Wl("", absl::StrCat(kWorkers, "  - {name: b, template: {spec: {}}}\n"),
          kReserved),
       "<nil>: Invalid value: \"object\": podSetAssignments must have the same "
       "number of podSets as the spec"},
      {"reclaimablePods",
       Wl("", kWorkers,
          "status:\n  reclaimablePods: [{name: driver, count: 1}, "
          "{name: workers, count: 5}]\n"),
       "status.reclaimablePods[driver].name: Unsupported value: \"driver\": "
       "supported values: \"workers\"; status.reclaimablePods[workers].count: "
       "Invalid value: 5: should be less or equal to 4"},
      {"conditions",
       Wl("", kWorkers,
          "status:\n  conditions:\n"
          "  - {type: Finished, status: \"Yes\", reason: \"not a reason\", "
          "lastTransitionTime: \"2026-01-01T00:00:00Z\"}\n"
          "  - {type: Finished, status: \"True\"}\n"),
       "status.conditions[0].status: Unsupported value: \"Yes\": supported "
       "values: \"False\", \"True\", \"Unknown\"; "
       "status.conditions[0].reason: Invalid value: \"not a reason\": a "
       "condition reason must start with alphabetic character, optionally "
       "followed by a string of alphanumeric characters or '_,:', and must end "
       "with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  "
       "or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used "
       "for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?'); "
       "status.conditions[1]: Duplicate value: \"Finished\"; "
       "status.conditions[1].lastTransitionTime: Required value; "
       "status.conditions[1].reason: Required value"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Check(c.manifest), c.expected) << c.name;
  }
}

TEST(ValidateWorkloadTest, AtMost18PodSets) {
  std::string pod_sets;
  for (int i = 0; i < 19; ++i) {
    absl::StrAppend(&pod_sets, "  - {name: p", i, ", template: {spec: {}}}\n");
  }
  EXPECT_EQ(Check(Wl("", pod_sets)),
            absl::StrCat("spec.podSets: Too many: 19: must have at most 18 "
                         "items; ",
                         kCelSkipped));
}

TEST(ValidateWorkloadUpdateTest, Rules) {
  const std::string pending = Wl("", kWorkers);
  const std::string reserved = Wl("", kWorkers, kReserved);
  const std::string reserved_in_r =
      absl::StrReplaceAll(reserved, {{"queueName: q", "queueName: r"}});
  struct Case {
    const char* name;
    std::string old_manifest;
    std::string new_manifest;
    std::string expected;
  } cases[] = {
      {"pending podSets change", pending,
       Wl("", Workers("count: 4", "count: 6")), kOk},
      {"pending queueName changes", pending,
       absl::StrReplaceAll(pending, {{"queueName: q", "queueName: r"}}), kOk},
      {"quota reserved", pending, reserved, kOk},
      {"reserved podSet changes", reserved,
       Wl("", Workers("cpu: \"2\"", "cpu: \"3\""), kReserved),
       "spec.podSets.0: Invalid value: \"object\": field is immutable"},
      {"reserved count goes down", reserved,
       Wl("", Workers("count: 4", "count: 2"), kReserved), kOk},
      {"reserved count goes up", reserved,
       Wl("", Workers("count: 4", "count: 8"), kReserved),
       "spec.podSets.0: Invalid value: \"object\": field is immutable"},
      {"reserved podSet added", reserved,
       Wl("", absl::StrCat(kWorkers, "  - {name: b, template: {spec: {}}}\n")),
       "spec.podSets: Invalid value: \"array\": field is immutable"},
      {"reserved queueName changes", reserved, reserved_in_r,
       "<nil>: Invalid value: \"object\": queueName is immutable while "
       "workload quota reserved"},
      {"queueName changes as quota goes", reserved,
       absl::StrReplaceAll(pending, {{"queueName: q", "queueName: r"}}), kOk},
      {"reserved priorityClassSource changes",
       Wl("  priority: 1\n", kWorkers, kReserved),
       Wl("  priority: 1\n  priorityClassSource: "
          "scheduling.k8s.io/priorityclass\n",
          kWorkers, kReserved),
       "<nil>: Invalid value: \"object\": priorityClassSource is immutable "
       "while workload quota reserved"},
      {"reserved pod priorityClassName changes",
       Wl("  priority: 1\n  priorityClassName: a\n  priorityClassSource: "
          "scheduling.k8s.io/priorityclass\n",
          kWorkers, kReserved),
       Wl("  priority: 1\n  priorityClassName: b\n  priorityClassSource: "
          "scheduling.k8s.io/priorityclass\n",
          kWorkers, kReserved),
       "<nil>: Invalid value: \"object\": priorityClassName is immutable while "
       "workload quota reserved and priorityClassSource is not equal to "
       "kueue.x-k8s.io/workloadpriorityclass"},
      {"reserved WorkloadPriorityClass and priority change",
       Wl("  priority: 1\n  priorityClassName: a\n  priorityClassSource: "
          "kueue.x-k8s.io/workloadpriorityclass\n",
          kWorkers, kReserved),
       Wl("  priority: 9\n  priorityClassName: b\n  priorityClassSource: "
          "kueue.x-k8s.io/workloadpriorityclass\n",
          kWorkers, kReserved),
       kOk},
      {"admission edited", reserved,
       absl::StrReplaceAll(reserved, {{"clusterQueue: cq", "clusterQueue: x"}}),
       "status.admission: Invalid value: \"object\": field is immutable"},
      {"admission unset", reserved, pending, kOk},
      {"admitted maximumExecutionTimeSeconds changes",
       Wl("  maximumExecutionTimeSeconds: 60\n", kWorkers, Admitted()),
       Wl("  maximumExecutionTimeSeconds: 120\n", kWorkers, Admitted()),
       "<nil>: Invalid value: \"object\": maximumExecutionTimeSeconds is "
       "immutable while workload quota reserved"},
      {"reclaimablePods go down",
       Wl("", kWorkers,
          absl::StrCat(kReserved,
                       "  reclaimablePods: [{name: workers, "
                       "count: 2}]\n")),
       Wl("", kWorkers,
          absl::StrCat(kReserved,
                       "  reclaimablePods: [{name: workers, "
                       "count: 1}]\n")),
       "status.reclaimablePods[workers].count: Invalid value: 1: cannot be "
       "less than 2"},
      {"reclaimablePods removed",
       Wl("", kWorkers,
          absl::StrCat(kReserved,
                       "  reclaimablePods: [{name: workers, "
                       "count: 2}]\n")),
       reserved,
       "status.reclaimablePods[workers]: Required value: cannot be removed"},
      {"reclaimablePods go up",
       Wl("", kWorkers,
          absl::StrCat(kReserved,
                       "  reclaimablePods: [{name: workers, "
                       "count: 2}]\n")),
       Wl("", kWorkers,
          absl::StrCat(kReserved,
                       "  reclaimablePods: [{name: workers, "
                       "count: 3}]\n")),
       kOk},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(CheckUpdate(c.old_manifest, c.new_manifest), c.expected)
        << c.name;
  }
}

}  // namespace
}  // namespace jobset::api
