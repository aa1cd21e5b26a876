#include "api/kueue_manifest.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/manifest.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::jobset::testing::IsOk;
using ::jobset::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseKueueDocumentTest, ReadsJson) {
  absl::StatusOr<KueueObject> object = ParseKueueDocument(R"({
    "apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
    "metadata": {"name": "w", "namespace": "team"},
    "spec": {"queueName": "q", "priority": 5, "active": false,
             "podSets": [{"name": "workers", "count": 4,
                          "template": {"spec": {"containers": [
                            {"name": "c", "image": "i",
                             "resources": {"requests": {"cpu": 2}}}]}}}]}})");
  ASSERT_THAT(object, IsOk());
  const Workload& wl = object->workload();
  EXPECT_EQ(wl.spec().queue_name(), "q");
  EXPECT_EQ(wl.spec().priority(), 5);
  EXPECT_FALSE(wl.spec().active());
  EXPECT_EQ(wl.spec().pod_sets(0).count(), 4);
  EXPECT_EQ(wl.spec()
                .pod_sets(0)
                .template_()
                .spec()
                .containers(0)
                .resources()
                .requests()
                .at("cpu"),
            "2");
}

TEST(ParseKueueDocumentTest, NamesUnknownFieldsAndWrongTypes) {
  EXPECT_THAT(ParseKueueDocument(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec: {cohortt: x})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.cohortt: unknown field (did you mean "
                                 "\"cohort\"?)")));
  EXPECT_THAT(ParseKueueDocument(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: cpu)"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec.resourceGroups[0].coveredResources: "
                                 "expected a list, got \"cpu\"")));
  EXPECT_THAT(ParseKueueDocument(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: p}
value: high)"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("value: Invalid value: \"high\": expected "
                                 "an integer")));
  EXPECT_THAT(ParseKueueDocument(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: p}
spec: {value: 5})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("spec: unknown field")));
}

TEST(ParseKueueDocumentTest, RefusesOtherKindsAndVersions) {
  EXPECT_THAT(
      ParseKueueDocument("apiVersion: kueue.x-k8s.io/v1beta1\nkind: Pod\n"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("kind: Unsupported value: \"Pod\": supported values: "
                         "\"ResourceFlavor\", \"ClusterQueue\"")));
  EXPECT_THAT(
      ParseKueueDocument("apiVersion: kueue.x-k8s.io/v1alpha1\n"
                         "kind: ClusterQueue\nmetadata: {name: cq}\n"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("apiVersion: Unsupported value: "
                         "\"kueue.x-k8s.io/v1alpha1\": supported values: "
                         "\"kueue.x-k8s.io/v1beta1\", "
                         "\"kueue.x-k8s.io/v1beta2\"")));
  EXPECT_THAT(ParseKueueDocument("kind: [ClusterQueue"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ParseKueueDocument(std::string(kMaxManifestBytes + 1, ' ')),
              StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_TRUE(IsKueueKind("WorkloadPriorityClass"));
  EXPECT_FALSE(IsKueueKind("JobSet"));
  EXPECT_FALSE(IsKueueKind("clusterqueue"));
}

TEST(ParseKueueDocumentTest, WarnsOfIgnoredFields) {
  std::vector<std::string> warnings;
  absl::StatusOr<KueueObject> object = ParseKueueDocument(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  admissionChecks: [prov]
)",
                                                          &warnings);
  ASSERT_THAT(object, IsOk());
  EXPECT_THAT(warnings,
              ElementsAre("spec.admissionChecks: ignored by jobsetd"));
}

// Parses `text`, which must succeed.
KueueObject Parse(absl::string_view text) {
  absl::StatusOr<KueueObject> object = ParseKueueDocument(text);
  EXPECT_THAT(object, IsOk()) << text;
  return object.ok() ? *object : KueueObject();
}

void ExpectSame(const KueueObject& a, const KueueObject& b) {
  std::string diff;
  MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differencer.Compare(a, b)) << diff;
}

TEST(ParseKueueDocumentTest, V1beta2SpellingsReadAsV1beta1) {
  ExpectSame(Parse(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohortName: ml-org
  flavorFungibility: {whenCanBorrow: MayStopSearch, whenCanPreempt: MayStopSearch}
)"),
             Parse(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  cohort: ml-org
  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}
)"));
  ExpectSame(Parse(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: team}
spec:
  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: high}
  priority: 100
status:
  accumulatedPastExecutionTimeSeconds: 30
)"),
             Parse(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: team}
spec:
  priorityClassName: high
  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass
  priority: 100
status:
  accumulatedPastExexcutionTimeSeconds: 30
)"));
  ExpectSame(Parse(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, namespace: team}
spec:
  priorityClassRef: {group: scheduling.k8s.io, kind: PriorityClass, name: p}
  priority: 7
)"),
             Parse(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: team}
spec:
  priorityClassName: p
  priorityClassSource: scheduling.k8s.io/priorityclass
  priority: 7
)"));
  ExpectSame(Parse(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: cq}
status:
  flavorsUsage: [{name: spot, resources: [{name: cpu, total: 4}]}]
)"),
             Parse(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: cq}
status:
  flavorUsage: [{name: spot, resources: [{name: cpu, total: 4}]}]
)"));
}

TEST(ParseKueueDocumentTest, EachVersionKeepsItsOwnNames) {
  struct Case {
    const char* version;
    const char* kind;
    const char* body;
    const char* error;
  } cases[] = {
      {"v1beta1", "ClusterQueue", "spec: {cohortName: a}",
       "spec.cohortName: unknown field (did you mean \"cohort\"?)"},
      {"v1beta2", "ClusterQueue", "spec: {cohort: a}",
       "spec.cohort: unknown field (did you mean \"cohortName\"?)"},
      {"v1beta2", "ClusterQueue",
       "spec: {flavorFungibility: {whenCanBorrow: "
       "Borrow}}",
       "spec.flavorFungibility.whenCanBorrow: Unsupported value: \"Borrow\": "
       "supported values: \"MayStopSearch\", \"TryNextFlavor\""},
      {"v1beta2", "ClusterQueue",
       "spec: {flavorFungibility: "
       "{whenCanPreempt: Preempt}}",
       "spec.flavorFungibility.whenCanPreempt: Unsupported value: "
       "\"Preempt\": supported values: \"MayStopSearch\", \"TryNextFlavor\""},
      {"v1beta1", "Workload", "spec: {priorityClassRef: {name: a}}",
       "spec.priorityClassRef: unknown field (did you mean "
       "\"priorityClassName\"?)"},
      {"v1beta2", "Workload", "spec: {priorityClassName: a}",
       "spec.priorityClassName: unknown field (did you mean "
       "\"priorityClassRef\"?)"},
      {"v1beta2", "Workload",
       "status: {accumulatedPastExexcutionTimeSeconds: 1}",
       "status.accumulatedPastExexcutionTimeSeconds: unknown field (did you "
       "mean \"accumulatedPastExecutionTimeSeconds\"?)"},
      {"v1beta1", "LocalQueue", "status: {flavorsUsage: [{name: a}]}",
       "status.flavorsUsage: unknown field (did you mean \"flavorUsage\"?)"},
      {"v1beta2", "LocalQueue", "status: {flavorUsage: [{name: a}]}",
       "status.flavorUsage: unknown field (did you mean \"flavorsUsage\"?)"},
      {"v1beta2", "Workload",
       "spec: {priority: 1, priorityClassRef: {group: scheduling.k8s.io, "
       "kind: WorkloadPriorityClass, name: a}}",
       "spec.priorityClassRef: Invalid value: \"object\": only the "
       "PriorityClass kind is allowed for the scheduling.k8s.io group"},
      {"v1beta2", "Workload",
       "spec: {priorityClassRef: {group: example.com, kind: Other}}",
       "document is invalid: spec.priorityClassRef.group: Unsupported value: "
       "\"example.com\": supported values: \"kueue.x-k8s.io\", "
       "\"scheduling.k8s.io\"; spec.priorityClassRef.kind: Unsupported value: "
       "\"Other\": supported values: \"WorkloadPriorityClass\", "
       "\"PriorityClass\"; spec.priorityClassRef.name: Required value"},
  };
  for (const Case& c : cases) {
    const std::string text = absl::StrCat(
        "apiVersion: kueue.x-k8s.io/", c.version, "\nkind: ", c.kind,
        "\nmetadata: {name: x}\n", c.body, "\n");
    EXPECT_THAT(
        ParseKueueDocument(text),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.error)))
        << text;
  }
}

TEST(ParseKueueDocumentTest, ApiVersionComesBackAsV1beta1) {
  const KueueObject rf = Parse(
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
      "metadata: {name: f}\n");
  EXPECT_EQ(rf.resource_flavor().api_version(), kKueueApiVersion);
  EXPECT_EQ(rf.resource_flavor().kind(), "ResourceFlavor");
}

}  // namespace
}  // namespace jobset::api
