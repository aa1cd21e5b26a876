#include "cli/kueue_output.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

void SetMeta(api::ObjectMeta* meta, const std::string& name,
             absl::Duration age) {
  meta->set_name(name);
  meta->mutable_creation_timestamp()->set_seconds(
      absl::ToUnixSeconds(kNow - age));
}

TEST(KueueOutputTest, ClusterQueueColumnsAsTheCrdsPrinterColumns) {
  api::ClusterQueue research;
  SetMeta(research.mutable_metadata(), "research", absl::Minutes(5));
  research.mutable_spec()->set_cohort("ml-org");
  research.mutable_spec()->set_queueing_strategy("BestEffortFIFO");
  research.mutable_status()->set_pending_workloads(3);
  research.mutable_status()->set_admitted_workloads(1);
  api::ClusterQueue fresh;  // No status yet, no cohort.
  SetMeta(fresh.mutable_metadata(), "fresh", absl::Seconds(2));
  fresh.mutable_spec()->set_queueing_strategy("StrictFIFO");

  EXPECT_EQ(FormatTable(ClusterQueueRows({research, fresh}, false)),
            "NAME       COHORT   PENDING WORKLOADS\n"
            "research   ml-org   3\n"
            "fresh\n");
  EXPECT_EQ(FormatTable(ClusterQueueRows({research, fresh}, true)),
            "NAME       COHORT   STRATEGY         PENDING WORKLOADS   "
            "ADMITTED WORKLOADS\n"
            "research   ml-org   BestEffortFIFO   3                   1\n"
            "fresh               StrictFIFO\n");
  // A status of zeros prints its zeros (Kueue's counters are not omitted).
  fresh.mutable_status();
  EXPECT_THAT(ClusterQueueRows({fresh}, true)[1],
              ElementsAre("fresh", "", "StrictFIFO", "0", "0"));
}

TEST(KueueOutputTest, LocalQueueAndPriorityClassColumns) {
  api::LocalQueue lq;
  SetMeta(lq.mutable_metadata(), "research-queue", absl::Hours(1));
  lq.mutable_spec()->set_cluster_queue("research");
  lq.mutable_status()->set_pending_workloads(2);
  EXPECT_EQ(FormatTable(LocalQueueRows({lq})),
            "NAME             CLUSTERQUEUE   PENDING WORKLOADS   "
            "ADMITTED WORKLOADS\n"
            "research-queue   research       2                   0\n");

  api::WorkloadPriorityClass flagship;
  SetMeta(flagship.mutable_metadata(), "flagship", absl::Hours(1));
  flagship.set_value(10000);
  api::WorkloadPriorityClass unset;
  SetMeta(unset.mutable_metadata(), "unset", absl::Hours(1));
  EXPECT_EQ(FormatTable(WorkloadPriorityClassRows({flagship, unset})),
            "NAME       VALUE\n"
            "flagship   10000\n"
            "unset\n");
}

TEST(KueueOutputTest, WorkloadColumnsReadConditionsAndAdmission) {
  api::Workload admitted;
  SetMeta(admitted.mutable_metadata(), "jobset-train-1a2b3", absl::Seconds(10));
  admitted.mutable_spec()->set_queue_name("user-queue");
  admitted.mutable_status()->mutable_admission()->set_cluster_queue(
      "cluster-queue");
  api::Condition* c = admitted.mutable_status()->add_conditions();
  c->set_type("QuotaReserved");
  c->set_status("True");
  c = admitted.mutable_status()->add_conditions();
  c->set_type("Admitted");
  c->set_status("True");
  api::Workload pending;
  SetMeta(pending.mutable_metadata(), "pending", absl::Minutes(3));
  pending.mutable_spec()->set_queue_name("user-queue");
  c = pending.mutable_status()->add_conditions();
  c->set_type("Finished");
  c->set_status("False");
  EXPECT_EQ(FormatTable(WorkloadRows({admitted, pending}, kNow)),
            "NAME                 QUEUE        RESERVED IN     ADMITTED   "
            "FINISHED   AGE\n"
            "jobset-train-1a2b3   user-queue   cluster-queue   True"
            "                  10s\n"
            "pending              user-queue                              "
            "False      3m\n");
}

TEST(KueueOutputTest, FlavorsAndCohortsHaveNameAndAge) {
  api::ResourceFlavor spot;
  SetMeta(spot.mutable_metadata(), "spot", absl::Hours(49));
  EXPECT_EQ(FormatTable(ResourceFlavorRows({spot}, kNow)),
            "NAME   AGE\nspot   2d1h\n");
  api::Cohort org;
  SetMeta(org.mutable_metadata(), "ml-org", absl::Seconds(45));
  EXPECT_EQ(FormatTable(CohortRows({org}, kNow)),
            "NAME     AGE\nml-org   45s\n");
}

TEST(KueueOutputTest, KueueObjectAccess) {
  api::KueueObject object;
  EXPECT_EQ(KueueMessage(object), nullptr);
  EXPECT_EQ(MutableKueueMetadata(&object), nullptr);
  EXPECT_EQ(KueueKind(object), "");
  object.mutable_local_queue()->mutable_metadata()->set_name("q");
  EXPECT_EQ(KueueMessage(object), &object.local_queue());
  EXPECT_EQ(MutableKueueMetadata(&object)->name(), "q");
  EXPECT_EQ(KueueKind(object), "LocalQueue");
  object.mutable_workload_priority_class();
  EXPECT_EQ(KueueKind(object), "WorkloadPriorityClass");
  object.mutable_resource_flavor();
  EXPECT_EQ(KueueKind(object), "ResourceFlavor");
  object.mutable_cohort();
  EXPECT_EQ(KueueKind(object), "Cohort");
  object.mutable_cluster_queue();
  EXPECT_EQ(KueueKind(object), "ClusterQueue");
  object.mutable_workload();
  EXPECT_EQ(KueueKind(object), "Workload");
  EXPECT_EQ(MutableKueueMetadata(&object),
            object.mutable_workload()->mutable_metadata());
}

api::PendingWorkloadsSummary TwoPending() {
  api::PendingWorkloadsSummary summary;
  api::PendingWorkload* first = summary.add_items();
  SetMeta(first->mutable_metadata(), "jobset-sweep-1a2b3", absl::Minutes(3));
  first->mutable_metadata()->set_namespace_("team-b");
  first->set_local_queue_name("team-b-queue");
  first->set_cluster_queue("team-b");
  first->set_reason("Pending");
  first->set_message("insufficient unused quota for cpu");
  api::PendingWorkload* second = summary.add_items();
  SetMeta(second->mutable_metadata(), "jobset-eval-9z8y7", absl::Seconds(40));
  second->mutable_metadata()->set_namespace_("team-b");
  second->set_priority(-5);
  second->set_local_queue_name("team-b-queue");
  second->set_position_in_cluster_queue(1);
  second->set_position_in_local_queue(1);
  second->set_cluster_queue("team-b");
  return summary;
}

TEST(KueueOutputTest, PendingWorkloadColumnsWithKueuesNames) {
  EXPECT_EQ(FormatTable(PendingWorkloadRows(TwoPending(), kNow, false)),
            "NAMESPACE   NAME                 LOCALQUEUE     PRIORITY   "
            "POSITION IN CLUSTERQUEUE   POSITION IN LOCALQUEUE   AGE\n"
            "team-b      jobset-sweep-1a2b3   team-b-queue   0          0"
            "                          0                        3m\n"
            "team-b      jobset-eval-9z8y7    team-b-queue   -5         1"
            "                          1                        40s\n");
  const std::vector<Row> wide = PendingWorkloadRows(TwoPending(), kNow, true);
  ASSERT_EQ(wide.size(), 3u);
  EXPECT_THAT(std::vector<std::string>(wide[0].begin() + 7, wide[0].end()),
              ElementsAre("CLUSTERQUEUE", "REASON", "MESSAGE"));
  EXPECT_THAT(
      std::vector<std::string>(wide[1].begin() + 7, wide[1].end()),
      ElementsAre("team-b", "Pending", "insufficient unused quota for cpu"));
  EXPECT_THAT(std::vector<std::string>(wide[2].begin() + 7, wide[2].end()),
              ElementsAre("team-b", "", ""));
}

// Kueue's PendingWorkloadsSummary: its positions and priority written when
// 0, jobsetd's additions only when set.
TEST(KueueOutputTest, PendingWorkloadsDocumentInKueuesShape) {
  api::PendingWorkloadsSummary summary = TwoPending();
  summary.mutable_items()->RemoveLast();
  EXPECT_EQ(PendingWorkloadsDocument(summary, /*yaml=*/false),
            R"({
    "apiVersion": "visibility.kueue.x-k8s.io/v1beta1",
    "kind": "PendingWorkloadsSummary",
    "metadata": {},
    "items": [
        {
            "metadata": {
                "name": "jobset-sweep-1a2b3",
                "namespace": "team-b",
                "creationTimestamp": "2023-11-14T22:10:20Z"
            },
            "priority": 0,
            "localQueueName": "team-b-queue",
            "positionInClusterQueue": 0,
            "positionInLocalQueue": 0,
            "clusterQueue": "team-b",
            "reason": "Pending",
            "message": "insufficient unused quota for cpu"
        }
    ]
}
)");
  const std::string yaml =
      PendingWorkloadsDocument(TwoPending(), /*yaml=*/true);
  EXPECT_THAT(yaml, StartsWith("apiVersion: visibility.kueue.x-k8s.io/v1beta1\n"
                               "kind: PendingWorkloadsSummary\n"
                               "metadata: {}\n"
                               "items:\n"
                               "  - metadata:\n"
                               "      name: jobset-sweep-1a2b3\n"));
  EXPECT_THAT(yaml, HasSubstr("    priority: -5\n"
                              "    localQueueName: team-b-queue\n"
                              "    positionInClusterQueue: 1\n"
                              "    positionInLocalQueue: 1\n"
                              "    clusterQueue: team-b\n"));
  EXPECT_EQ(PendingWorkloadsDocument({}, false),
            "{\n"
            "    \"apiVersion\": \"visibility.kueue.x-k8s.io/v1beta1\",\n"
            "    \"kind\": \"PendingWorkloadsSummary\",\n"
            "    \"metadata\": {},\n"
            "    \"items\": []\n"
            "}\n");
}

}  // namespace
}  // namespace jobset::cli
