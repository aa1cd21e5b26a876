// describe jobset's Kueue section and describe workload's positions against
// the fakes: the calls they make, and what they print when a call fails.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/cmd/fake_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jobset::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;

constexpr char kQuotaMessage[] =
    "couldn't assign flavors to pod set workers: insufficient unused quota "
    "for cpu in flavor default-flavor, 2 more needed";

api::KueueObject Workload(const std::string& name, const std::string& uid) {
  api::KueueObject object;
  api::Workload* w = object.mutable_workload();
  w->mutable_metadata()->set_name(name);
  w->mutable_metadata()->set_namespace_("default");
  (*w->mutable_metadata()->mutable_labels())["kueue.x-k8s.io/job-uid"] = uid;
  w->mutable_spec()->set_queue_name("team-b-queue");
  api::Condition* c = w->mutable_status()->add_conditions();
  c->set_type("QuotaReserved");
  c->set_status("False");
  c->set_reason("Pending");
  c->set_message(kQuotaMessage);
  return object;
}

api::PendingWorkload Entry(const std::string& name, int position) {
  api::PendingWorkload entry;
  entry.mutable_metadata()->set_name(name);
  entry.mutable_metadata()->set_namespace_("default");
  entry.set_local_queue_name("team-b-queue");
  entry.set_cluster_queue("team-b");
  entry.set_position_in_cluster_queue(position);
  entry.set_position_in_local_queue(position);
  return entry;
}

class KueueLookupTest : public CommandsTest {
 protected:
  void SetUp() override {
    CommandsTest::SetUp();
    api::JobSet sweep = NamedJobSet("sweep", 10);
    sweep.mutable_metadata()->set_uid("uid-sweep");
    (*sweep.mutable_metadata()->mutable_labels())["kueue.x-k8s.io/queue-name"] =
        "team-b-queue";
    service_.Put(sweep);
    api::JobSet plain = NamedJobSet("plain", 10);
    plain.mutable_metadata()->set_uid("uid-plain");
    service_.Put(plain);
    kueue_.Put(Workload("jobset-other-0a0a0", "uid-other"));
    kueue_.Put(Workload("jobset-sweep-1a2b3", "uid-sweep"));
    api::PendingWorkloadsSummary pending;
    *pending.add_items() = Entry("jobset-other-0a0a0", 0);
    *pending.add_items() = Entry("jobset-sweep-1a2b3", 1);
    kueue_.SetPending(pending);
  }
};

TEST_F(KueueLookupTest, PendingJobSetWithItsPositions) {
  ASSERT_EQ(Run({"describe", "jobset", "sweep"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(),
              HasSubstr(absl::StrCat(
                  "Kueue:\n"
                  "  Workload:      jobset-sweep-1a2b3\n"
                  "  Queue:         team-b-queue (ClusterQueue team-b)\n"
                  "  State:         Pending, position 1 in ClusterQueue "
                  "team-b, 1 in LocalQueue team-b-queue\n"
                  "  Reason:        Pending: ",
                  kQuotaMessage, "\nEvents:\n")));
  EXPECT_EQ(kueue_.last_list().kind(), "Workload");
  EXPECT_EQ(kueue_.last_list().namespace_(), "default");
  EXPECT_EQ(kueue_.last_list().label_selector(),
            "kueue.x-k8s.io/job-uid=uid-sweep");
  const std::vector<api::ListPendingWorkloadsRequest> sent =
      kueue_.pending_requests();
  ASSERT_THAT(sent, SizeIs(1));
  EXPECT_EQ(sent[0].local_queue(), "team-b-queue");
  EXPECT_EQ(sent[0].namespace_(), "default");
  EXPECT_EQ(sent[0].cluster_queue(), "");
  EXPECT_EQ(sent[0].offset(), 0);
}

// The LocalQueue's list is read a page (1000) at a time until the Workload
// is found.
TEST_F(KueueLookupTest, PagesThroughALongQueue) {
  api::PendingWorkloadsSummary pending;
  for (int i = 0; i < 1000; ++i) {
    *pending.add_items() = Entry(absl::StrCat("jobset-w-", i), i);
  }
  *pending.add_items() = Entry("jobset-sweep-1a2b3", 1000);
  kueue_.SetPending(pending);
  ASSERT_EQ(Run({"describe", "jobset", "sweep"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("  State:         Pending, position 1000 "
                                    "in ClusterQueue team-b, 1000 in "
                                    "LocalQueue team-b-queue\n"));
  const std::vector<api::ListPendingWorkloadsRequest> sent =
      kueue_.pending_requests();
  ASSERT_THAT(sent, SizeIs(2));
  EXPECT_EQ(sent[0].limit(), 1000);
  EXPECT_EQ(sent[1].offset(), 1000);
}

TEST_F(KueueLookupTest, AdmittedJobSetIsNotLookedForInTheQueue) {
  api::KueueObject admitted = Workload("jobset-sweep-1a2b3", "uid-sweep");
  api::WorkloadStatus* status = admitted.mutable_workload()->mutable_status();
  status->mutable_admission()->set_cluster_queue("team-b");
  status->mutable_conditions(0)->set_status("True");
  status->mutable_conditions(0)->set_reason("QuotaReserved");
  status->mutable_conditions(0)->set_message("Quota reserved");
  api::Condition* c = status->add_conditions();
  c->set_type("Admitted");
  c->set_status("True");
  c->set_reason("Admitted");
  c->set_message("The workload is admitted");
  kueue_.Put(admitted);
  ASSERT_EQ(Run({"describe", "jobset", "sweep"}), kExitOk) << err_.str();
  EXPECT_THAT(
      out_.str(),
      HasSubstr("  Queue:         team-b-queue (ClusterQueue team-b)\n"
                "  State:         Admitted\n"
                "  Reason:        Admitted: The workload is admitted\n"));
  EXPECT_TRUE(kueue_.pending_requests().empty());
}

TEST_F(KueueLookupTest, JobSetKueueDoesNotManageHasNoSection) {
  ASSERT_EQ(Run({"describe", "jobset", "plain"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("Name:           plain\n"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("Kueue:")));
  EXPECT_EQ(kueue_.last_list().label_selector(),
            "kueue.x-k8s.io/job-uid=uid-plain");
  // Nor when Workloads cannot be listed at all (no KueueService there).
  kueue_.Fail("ListKueueObjects",
              grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "no such service"));
  Clear();
  ASSERT_EQ(Run({"describe", "jobset", "plain"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), Not(HasSubstr("Kueue:")));
}

// A JobSet a Workload is found for is Kueue's even without the label.
TEST_F(KueueLookupTest, WorkloadAloneMakesTheSection) {
  kueue_.Put(Workload("jobset-plain-7f7f7", "uid-plain"));
  ASSERT_EQ(Run({"describe", "jobset", "plain"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("Kueue:\n"
                                    "  Workload:      jobset-plain-7f7f7\n"
                                    "  Queue:         team-b-queue\n"
                                    "  State:         Pending\n"));
  EXPECT_THAT(out_.str(),
              HasSubstr("  Position:      <none> (not among LocalQueue "
                        "team-b-queue's pending Workloads)\n"));
}

TEST_F(KueueLookupTest, FailedCallsAreSaidNotFatal) {
  kueue_.Fail("ListKueueObjects",
              grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                           "User \"bob\" cannot list resource \"workloads\""));
  ASSERT_EQ(Run({"describe", "jobset", "sweep"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(),
              HasSubstr("Kueue:\n"
                        "  Workload:      <unknown> (could not list Workloads: "
                        "PERMISSION_DENIED: User \"bob\" cannot list resource "
                        "\"workloads\")\n"
                        "  Queue:         team-b-queue\n"
                        "Events:\n"));
  EXPECT_TRUE(kueue_.pending_requests().empty());

  kueue_.Fail("ListKueueObjects", grpc::Status::OK);
  kueue_.Fail("ListPendingWorkloads",
              grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "unknown method"));
  Clear();
  ASSERT_EQ(Run({"describe", "jobset", "sweep"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(),
              HasSubstr("  Queue:         team-b-queue\n"
                        "  State:         Pending\n"
                        "  Reason:        Pending: couldn't assign flavors"));
  EXPECT_THAT(out_.str(),
              HasSubstr("  Position:      <unknown> (could not list the "
                        "pending Workloads: UNIMPLEMENTED: jobsetd at "));
  EXPECT_THAT(out_.str(), HasSubstr("does not serve "
                                    "KueueService.ListPendingWorkloads (an "
                                    "older jobsetd?): unknown method)\n"));
}

TEST_F(KueueLookupTest, DescribeWorkloadAddsItsPositions) {
  ASSERT_EQ(Run({"describe", "workload", "jobset-sweep-1a2b3"}), kExitOk)
      << err_.str();
  EXPECT_THAT(out_.str(),
              HasSubstr("    Type:                   QuotaReserved\n"
                        "Position In Cluster Queue:  1\n"
                        "Position In Local Queue:    1\n"));
  kueue_.Fail("ListPendingWorkloads",
              grpc::Status(grpc::StatusCode::NOT_FOUND,
                           "localqueues.kueue.x-k8s.io \"team-b-queue\" not "
                           "found"));
  Clear();
  ASSERT_EQ(Run({"describe", "workload", "jobset-sweep-1a2b3"}), kExitOk)
      << err_.str();
  EXPECT_THAT(out_.str(),
              HasSubstr("Position:     <unknown> (could not list the "
                        "pending Workloads: NOT_FOUND: "
                        "localqueues.kueue.x-k8s.io "
                        "\"team-b-queue\" not found)\n"));
}

}  // namespace
}  // namespace jobset::cli
