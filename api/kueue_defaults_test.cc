#include "api/kueue_defaults.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "api/kueue_manifest.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace jobset::api {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::jobset::testing::IsOk;

KueueObject Defaulted(absl::string_view manifest) {
  absl::StatusOr<KueueObject> object = ParseKueueDocument(manifest);
  EXPECT_THAT(object, IsOk()) << manifest;
  if (!object.ok()) return KueueObject();
  SetKueueDefaults(&*object);
  return *object;
}

KueueObject FromText(absl::string_view text) {
  KueueObject object;
  EXPECT_TRUE(
      google::protobuf::TextFormat::ParseFromString(std::string(text), &object))
      << text;
  return object;
}

void ExpectSame(const KueueObject& actual, const KueueObject& expected) {
  std::string diff;
  MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differencer.Compare(actual, expected)) << diff;
}

TEST(KueueDefaultsTest, ClusterQueue) {
  ExpectSame(
      Defaulted(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq, namespace: ignored}
spec:
  preemption: {borrowWithinCohort: {maxPriorityThreshold: 5}}
  fairSharing: {}
)"),
      FromText(R"pb(
        cluster_queue {
          api_version: "kueue.x-k8s.io/v1beta1"
          kind: "ClusterQueue"
          metadata { name: "cq" }
          spec {
            queueing_strategy: "BestEffortFIFO"
            flavor_fungibility {
              when_can_borrow: "MayStopSearch"
              when_can_preempt: "TryNextFlavor"
            }
            preemption {
              reclaim_within_cohort: "Never"
              within_cluster_queue: "Never"
              borrow_within_cohort { policy: "Never" max_priority_threshold: 5 }
            }
            stop_policy: "None"
            fair_sharing { weight: "1" }
          }
        }
      )pb"));
}

TEST(KueueDefaultsTest, ClusterQueueKeepsWhatIsSetAndNamespaceSelectorUnset) {
  const KueueObject cq = Defaulted(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  queueingStrategy: StrictFIFO
  stopPolicy: Hold
  flavorFungibility: {whenCanBorrow: TryNextFlavor}
  preemption: {withinClusterQueue: LowerPriority}
  fairSharing: {weight: 500m}
)");
  const ClusterQueueSpec& spec = cq.cluster_queue().spec();
  EXPECT_EQ(spec.queueing_strategy(), "StrictFIFO");
  EXPECT_EQ(spec.stop_policy(), "Hold");
  EXPECT_EQ(spec.flavor_fungibility().when_can_borrow(), "TryNextFlavor");
  EXPECT_EQ(spec.flavor_fungibility().when_can_preempt(), "TryNextFlavor");
  EXPECT_FALSE(spec.flavor_fungibility().has_preference());
  EXPECT_EQ(spec.preemption().within_cluster_queue(), "LowerPriority");
  EXPECT_EQ(spec.fair_sharing().weight(), "500m");
  // Unset selects no namespace: not defaulted to {} (all).
  EXPECT_FALSE(spec.has_namespace_selector());
}

TEST(KueueDefaultsTest, LocalQueueAndCohort) {
  ExpectSame(Defaulted(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: team}
spec: {clusterQueue: cq, fairSharing: {}}
)"),
             FromText(R"pb(
               local_queue {
                 api_version: "kueue.x-k8s.io/v1beta1"
                 kind: "LocalQueue"
                 metadata { name: "lq" namespace: "team" }
                 spec {
                   cluster_queue: "cq"
                   stop_policy: "None"
                   fair_sharing { weight: "1" }
                 }
               }
             )pb"));
  const KueueObject cohort = Defaulted(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: root}
spec: {fairSharing: {}}
)");
  EXPECT_EQ(cohort.cohort().spec().fair_sharing().weight(), "1");
}

TEST(KueueDefaultsTest, Workload) {
  ExpectSame(Defaulted(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: team}
spec:
  podSets:
  - template: {spec: {}}
  - {name: workers, count: 0, template: {spec: {}}}
status:
  admission:
    clusterQueue: cq
    podSetAssignments: [{count: 1}]
)"),
             FromText(R"pb(
               workload {
                 api_version: "kueue.x-k8s.io/v1beta1"
                 kind: "Workload"
                 metadata { name: "w" namespace: "team" }
                 spec {
                   pod_sets {
                     name: "main"
                     template { spec {} }
                     count: 1
                   }
                   pod_sets {
                     name: "workers"
                     template { spec {} }
                     count: 0
                   }
                   active: true
                 }
                 status {
                   admission {
                     cluster_queue: "cq"
                     pod_set_assignments { name: "main" count: 1 }
                   }
                 }
               }
             )pb"));
}

TEST(KueueDefaultsTest, TypeMetaAndIdempotence) {
  KueueObject wpc;
  wpc.mutable_workload_priority_class()->mutable_metadata()->set_name("p");
  wpc.mutable_workload_priority_class()->mutable_metadata()->set_namespace_(
      "x");
  SetKueueDefaults(&wpc);
  EXPECT_EQ(wpc.workload_priority_class().api_version(),
            "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(wpc.workload_priority_class().kind(), "WorkloadPriorityClass");
  EXPECT_EQ(wpc.workload_priority_class().metadata().namespace_(), "");
  EXPECT_FALSE(wpc.workload_priority_class().has_value());

  for (absl::string_view kind :
       {"ResourceFlavor", "ClusterQueue", "Cohort", "LocalQueue", "Workload"}) {
    KueueObject once = Defaulted(
        absl::StrCat("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ", kind,
                     "\nmetadata: {name: x, namespace: n}\n"));
    KueueObject twice = once;
    SetKueueDefaults(&twice);
    ExpectSame(twice, once);
  }
}

}  // namespace
}  // namespace jobset::api
