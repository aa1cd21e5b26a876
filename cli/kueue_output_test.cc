#include "cli/kueue_output.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::ElementsAre;

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

}  // namespace
}  // namespace jobset::cli
