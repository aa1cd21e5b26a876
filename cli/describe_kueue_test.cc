// describe's Kueue section (describe jobset) and position lines (describe
// workload), from what the lookups read.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cli/describe.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

constexpr char kQuotaMessage[] =
    "couldn't assign flavors to pod set workers: insufficient unused quota "
    "for cpu in flavor default-flavor, 2 more needed";

void AddCondition(api::Workload* workload, const std::string& type,
                  const std::string& status, const std::string& reason,
                  const std::string& message) {
  api::Condition* c = workload->mutable_status()->add_conditions();
  c->set_type(type);
  c->set_status(status);
  c->set_reason(reason);
  c->set_message(message);
}

api::Workload SweepWorkload() {
  api::Workload workload;
  workload.mutable_metadata()->set_name("jobset-sweep-1a2b3");
  workload.mutable_metadata()->set_namespace_("team-b");
  workload.mutable_spec()->set_queue_name("team-b-queue");
  return workload;
}

api::PendingWorkload Entry(int in_cluster_queue, int in_local_queue) {
  api::PendingWorkload entry;
  entry.mutable_metadata()->set_name("jobset-sweep-1a2b3");
  entry.set_local_queue_name("team-b-queue");
  entry.set_cluster_queue("team-b");
  entry.set_position_in_cluster_queue(in_cluster_queue);
  entry.set_position_in_local_queue(in_local_queue);
  return entry;
}

KueueLookup Pending() {
  KueueLookup lookup;
  lookup.queue_name = "team-b-queue";
  lookup.workload = SweepWorkload();
  AddCondition(&*lookup.workload, "QuotaReserved", "False", "Pending",
               kQuotaMessage);
  lookup.position.looked_up = true;
  lookup.position.entry = Entry(0, 0);
  return lookup;
}

TEST(DescribeKueueTest, PendingWithItsPositions) {
  EXPECT_EQ(DescribeKueueSection(Pending()),
            "Kueue:\n"
            "  Workload:      jobset-sweep-1a2b3\n"
            "  Queue:         team-b-queue (ClusterQueue team-b)\n"
            "  State:         Pending, position 0 in ClusterQueue team-b, 0 in "
            "LocalQueue team-b-queue\n"
            "  Reason:        Pending: couldn't assign flavors to pod set "
            "workers: insufficient unused quota for cpu in flavor "
            "default-flavor, 2 more needed\n");
}

TEST(DescribeKueueTest, AdmittedNamesItsClusterQueueFromTheAdmission) {
  KueueLookup lookup;
  lookup.workload = SweepWorkload();
  lookup.workload->mutable_status()->mutable_admission()->set_cluster_queue(
      "team-b");
  AddCondition(&*lookup.workload, "QuotaReserved", "True", "QuotaReserved",
               "Quota reserved in ClusterQueue team-b");
  AddCondition(&*lookup.workload, "Admitted", "True", "Admitted",
               "The workload is admitted");
  // No label: the Workload alone says Kueue manages the JobSet.
  EXPECT_EQ(DescribeKueueSection(lookup),
            "Kueue:\n"
            "  Workload:      jobset-sweep-1a2b3\n"
            "  Queue:         team-b-queue (ClusterQueue team-b)\n"
            "  State:         Admitted\n"
            "  Reason:        Admitted: The workload is admitted\n");
}

TEST(DescribeKueueTest, EvictedSaysWhyAndWhereItWaitsAgain) {
  KueueLookup lookup = Pending();
  AddCondition(&*lookup.workload, "Evicted", "True", "Preempted",
               "Preempted to accommodate a workload (UID: u-9) due to "
               "reclamation within the cohort");
  lookup.position.entry = Entry(2, 1);
  // Its quota given back, it waits again, and why is the news.
  std::string text = DescribeKueueSection(lookup);
  EXPECT_THAT(text, HasSubstr("  State:         Pending after eviction "
                              "(Preempted), position 2 in ClusterQueue "
                              "team-b, 1 in LocalQueue team-b-queue\n"));
  EXPECT_THAT(text, HasSubstr(absl::StrCat(
                        "  Reason:        Pending: ", kQuotaMessage, "\n")));
  // While its pods stop it still holds the quota: the eviction is the news.
  lookup.workload->mutable_status()->mutable_admission()->set_cluster_queue(
      "team-b");
  text = DescribeKueueSection(lookup);
  EXPECT_THAT(text, HasSubstr("  State:         Evicted (Preempted), position "
                              "2 in ClusterQueue team-b, 1 in LocalQueue "
                              "team-b-queue\n"));
  EXPECT_THAT(text, HasSubstr("  Reason:        Preempted: Preempted to "
                              "accommodate a workload (UID: u-9) due to "
                              "reclamation within the cohort\n"));
}

TEST(DescribeKueueTest, FinishedComesFirst) {
  KueueLookup lookup;
  lookup.workload = SweepWorkload();
  AddCondition(&*lookup.workload, "Admitted", "True", "Admitted", "");
  AddCondition(&*lookup.workload, "Finished", "True", "Succeeded",
               "jobset completed");
  const std::string text = DescribeKueueSection(lookup);
  EXPECT_THAT(text,
              HasSubstr("  State:         Finished\n"
                        "  Reason:        Succeeded: jobset completed\n"));
  EXPECT_THAT(text, HasSubstr("  Queue:         team-b-queue\n"));
}

TEST(DescribeKueueTest, NoSectionWithoutLabelOrWorkload) {
  EXPECT_EQ(DescribeKueueSection(KueueLookup()), "");
  // A list that failed does not make a JobSet without the label managed.
  KueueLookup lookup;
  lookup.workload_error = absl::UnimplementedError("no KueueService");
  EXPECT_EQ(DescribeKueueSection(lookup), "");
}

TEST(DescribeKueueTest, SaysWhatCouldNotBeRead) {
  KueueLookup lookup;
  lookup.queue_name = "team-b-queue";
  lookup.workload_error =
      absl::PermissionDeniedError("User \"bob\" cannot list workloads");
  EXPECT_EQ(DescribeKueueSection(lookup),
            "Kueue:\n"
            "  Workload:      <unknown> (could not list Workloads: "
            "PERMISSION_DENIED: User \"bob\" cannot list workloads)\n"
            "  Queue:         team-b-queue\n");

  lookup.workload_error = absl::OkStatus();
  EXPECT_THAT(DescribeKueueSection(lookup),
              HasSubstr("  Workload:      <none> (not created yet)\n"));

  lookup = Pending();
  lookup.position.entry.reset();
  lookup.position.error = absl::UnimplementedError(
      "jobsetd at a:1 does not serve KueueService.ListPendingWorkloads");
  const std::string text = DescribeKueueSection(lookup);
  EXPECT_THAT(text, HasSubstr("  Queue:         team-b-queue\n"
                              "  State:         Pending\n"
                              "  Reason:        Pending: couldn't assign"));
  EXPECT_THAT(text, HasSubstr("  Position:      <unknown> (could not list the "
                              "pending Workloads: UNIMPLEMENTED: jobsetd at "
                              "a:1 does not serve "
                              "KueueService.ListPendingWorkloads)\n"));

  lookup.position.error = absl::OkStatus();
  EXPECT_THAT(DescribeKueueSection(lookup),
              HasSubstr("  Position:      <none> (not among LocalQueue "
                        "team-b-queue's pending Workloads)\n"));
}

// Before its first cycle a Workload has no QuotaReserved condition: the
// pending list's reason stands in.
TEST(DescribeKueueTest, ReasonFromTheListBeforeTheFirstCycle) {
  KueueLookup lookup = Pending();
  lookup.workload->mutable_status()->clear_conditions();
  lookup.position.entry->set_reason("Pending");
  lookup.position.entry->set_message("waiting for the next cycle");
  EXPECT_THAT(DescribeKueueSection(lookup),
              HasSubstr("  Reason:        Pending: waiting for the next "
                        "cycle\n"));
  lookup.position.entry->clear_reason();
  lookup.position.entry->clear_message();
  EXPECT_THAT(DescribeKueueSection(lookup), Not(HasSubstr("Reason:")));
}

TEST(DescribeKueueTest, WaitsForQuotaUnlessReservedOrFinished) {
  api::Workload workload = SweepWorkload();
  EXPECT_TRUE(WaitsForQuota(workload));
  AddCondition(&workload, "QuotaReserved", "False", "Pending", "");
  EXPECT_TRUE(WaitsForQuota(workload));
  workload.mutable_status()->mutable_conditions(0)->set_status("True");
  EXPECT_FALSE(WaitsForQuota(workload));
  workload = SweepWorkload();
  AddCondition(&workload, "Finished", "True", "Failed", "");
  EXPECT_FALSE(WaitsForQuota(workload));
}

TEST(DescribeKueueTest, PositionLinesFollowTheWorkloadsStatus) {
  const KueueLookup lookup = Pending();
  EXPECT_THAT(PendingPositionLines(*lookup.workload, lookup.position),
              ElementsAre("Position In Cluster Queue:\t0",
                          "Position In Local Queue:\t0"));
  EXPECT_THAT(PendingPositionLines(*lookup.workload, PendingPosition()),
              IsEmpty());
  PendingPosition denied{.looked_up = true,
                         .error = absl::PermissionDeniedError("no")};
  EXPECT_THAT(PendingPositionLines(*lookup.workload, denied),
              ElementsAre("Position:\t<unknown> (could not list the pending "
                          "Workloads: PERMISSION_DENIED: no)"));

  const std::vector<api::Event> no_events;
  const std::string text = DescribeResource(
      *lookup.workload, "kueue.x-k8s.io/v1beta1", "Workload", &no_events, kNow,
      PendingPositionLines(*lookup.workload, lookup.position));
  EXPECT_THAT(text, HasSubstr("    Type:                   QuotaReserved\n"
                              "Position In Cluster Queue:  0\n"
                              "Position In Local Queue:    0\n"
                              "Events:                     <none>\n"));
}

}  // namespace
}  // namespace jobset::cli
