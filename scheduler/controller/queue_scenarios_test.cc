// kueue-semantics.md §6's scenarios that the controller decides (those of
// the pure core are scheduler/queues/scenarios_test.cc): queues missing or
// pointing nowhere, a missing flavor, stopPolicy Hold, a missing priority
// class, a queue change while pending.
#include <string>

#include "absl/strings/str_cat.h"
#include "api/kueue_manifest.h"
#include "scheduler/controller/queue_admission.h"
#include "scheduler/controller/queue_admission_test_fixture.h"

namespace jobset::scheduler {
namespace {

using ::jobset::api::JobSet;
using ::jobset::testing::IsOk;
using queue_admission_test::ClusterQueueYaml;
using queue_admission_test::H100Flavor;
using queue_admission_test::kLocalQueue;
using queue_admission_test::QueueAdmissionTest;
using queue_admission_test::Queued;
using ::testing::HasSubstr;
using ::testing::SizeIs;

class ScenariosTest : public QueueAdmissionTest {
 protected:
  // Deletes Kueue object `plural` `ns`/`name` as the API would.
  void DeleteKueue(const std::string& plural, const std::string& ns,
                   const std::string& name) {
    const std::string key = store::keys::KueueKey(plural, ns, name);
    absl::StatusOr<int64_t> revision =
        store_.Commit(store::Batch().Delete(key));
    ASSERT_THAT(revision.status(), IsOk());
    store::Event e;
    e.type = store::Event::Type::kDelete;
    e.kv.key = key;
    e.kv.mod_revision = *revision;  // as the watch reports a delete
    core_->OnKueueEvent(e);
  }

  std::string PendingMessage(const std::string& jobset) {
    const api::Condition* c = Condition(jobset, "QuotaReserved");
    return c == nullptr ? "none" : absl::StrCat(c->status(), " ", c->message());
  }

  // The Active condition of a stored ClusterQueue or LocalQueue.
  std::string Active(const std::string& plural, const std::string& ns,
                     const std::string& name) {
    api::KueueObject o = Stored(plural, ns, name);
    const auto& conditions = o.has_cluster_queue()
                                 ? o.cluster_queue().status().conditions()
                                 : o.local_queue().status().conditions();
    for (const api::Condition& c : conditions) {
      if (c.type() == "Active")
        return absl::StrCat(c.status(), " ", c.reason(), ": ", c.message());
    }
    return "none";
  }
};

// 22: deleting a LocalQueue leaves its admitted JobSet running; its pending
// one waits, named; recreating the queue admits it.
TEST_F(ScenariosTest, DeletingALocalQueue) {
  SetUpQueues();
  Submit(Queued("running", 4), "uid-running");  // 8 cpus: the whole quota
  Settle();
  Submit(Queued("waiting", 1), "uid-waiting");
  Settle();
  ASSERT_FALSE(Suspended("running"));
  DeleteKueue("localqueues", "default", "lq");
  Settle();
  EXPECT_FALSE(Suspended("running"));
  EXPECT_EQ(PendingMessage("waiting"), "False LocalQueue lq doesn't exist");
  ApplyKueue(kLocalQueue);
  ReportAll("running", "Running");
  Settle();
  ReportAll("running", "Succeeded");
  Settle();
  EXPECT_FALSE(Suspended("waiting"));
}

// 24: a LocalQueue pointing at a ClusterQueue that does not exist.
TEST_F(ScenariosTest, ALocalQueueToAMissingClusterQueue) {
  ApplyKueue(H100Flavor());
  ApplyKueue(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: lq, namespace: default}
spec: {clusterQueue: cq-missing}
)");
  Submit(Queued("lost", 1), "uid-lost");
  Settle();
  EXPECT_TRUE(Suspended("lost"));
  EXPECT_EQ(PendingMessage("lost"),
            "False ClusterQueue cq-missing doesn't exist");
  EXPECT_THAT(Active("localqueues", "default", "lq"),
              HasSubstr("False ClusterQueueDoesNotExist"));
}

// 25: a ClusterQueue naming a flavor that does not exist admits nothing
// until it does.
TEST_F(ScenariosTest, AMissingFlavor) {
  ApplyKueue(ClusterQueueYaml("Never"));
  ApplyKueue(kLocalQueue);
  Submit(Queued("train", 1), "uid-train");
  Settle();
  EXPECT_TRUE(Suspended("train"));
  EXPECT_EQ(Active("clusterqueues", "", "cq"),
            "False FlavorNotFound: Can't admit new workloads: references "
            "missing ResourceFlavor(s): [h100].");
  EXPECT_EQ(PendingMessage("train"), "False ClusterQueue cq is inactive");
  ApplyKueue(H100Flavor());
  Settle();
  EXPECT_FALSE(Suspended("train"));
  EXPECT_THAT(Active("clusterqueues", "", "cq"), HasSubstr("True"));
}

// 26: stopPolicy Hold: the admitted keep running, the pending wait; None
// again resumes admission.
TEST_F(ScenariosTest, HoldStopsAdmissionOnly) {
  SetUpQueues();
  Submit(Queued("running", 1), "uid-running");
  Settle();
  std::string held = ClusterQueueYaml("Never");
  held.replace(held.find("  namespaceSelector"), 0, "  stopPolicy: Hold\n");
  ApplyKueue(held);
  Submit(Queued("waiting", 1), "uid-waiting");
  Settle();
  EXPECT_FALSE(Suspended("running"));
  EXPECT_TRUE(Suspended("waiting"));
  EXPECT_THAT(Active("clusterqueues", "", "cq"), HasSubstr("False Stopped"));
  EXPECT_EQ(PendingMessage("waiting"), "False ClusterQueue cq is inactive");
  ApplyKueue(ClusterQueueYaml("Never"));
  Settle();
  EXPECT_FALSE(Suspended("waiting"));
}

// 29: a priority class that does not exist: no Workload, a Warning, held;
// creating the class lets it through.
TEST_F(ScenariosTest, AMissingPriorityClass) {
  SetUpQueues();
  JobSet gold = Queued("gold", 1);
  (*gold.mutable_metadata()
        ->mutable_labels())["kueue.x-k8s.io/priority-class"] = "gold";
  Submit(gold, "uid-gold");
  Settle();
  EXPECT_EQ(core_->WorkloadOf("default", "gold"), nullptr);
  EXPECT_TRUE(Suspended("gold"));
  bool warned = false;
  for (const JobSetEvent& e : core_->Events("default", "gold"))
    warned |= e.reason == "WorkloadPriorityClassNotFound";
  EXPECT_TRUE(warned);
  ApplyKueue(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: gold}
value: 500
)");
  Settle();
  ASSERT_NE(core_->WorkloadOf("default", "gold"), nullptr);
  EXPECT_EQ(WorkloadOf("gold").spec().priority(), 500);
  EXPECT_FALSE(Suspended("gold"));
}

// 32: a pending JobSet whose queue label changes moves its Workload there.
TEST_F(ScenariosTest, APendingJobSetFollowsItsQueueLabel) {
  ApplyKueue(H100Flavor());
  ApplyKueue(ClusterQueueYaml("Never"));
  Submit(Queued("moving", 1), "uid-moving");  // lq does not exist yet
  Settle();
  EXPECT_EQ(WorkloadOf("moving").spec().queue_name(), "lq");
  ApplyKueue(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: other, namespace: default}
spec: {clusterQueue: cq}
)");
  JobSet moved = Queued("moving", 1);
  (*moved.mutable_metadata()->mutable_labels())["kueue.x-k8s.io/queue-name"] =
      "other";
  Submit(moved, "uid-moving");
  Settle();
  EXPECT_EQ(WorkloadOf("moving").spec().queue_name(), "other");
  EXPECT_FALSE(Suspended("moving"));
}

// 28: a ClusterQueue whose namespaceSelector does not select the
// JobSet's namespace admits nothing from it.
TEST_F(ScenariosTest, ANamespaceTheClusterQueueDoesNotSelect) {
  ApplyKueue(H100Flavor());
  absl::StatusOr<api::KueueObject> cq =
      api::ParseKueueDocument(ClusterQueueYaml("Never"));
  ASSERT_THAT(cq.status(), IsOk());
  // In code: a map read from YAML trips ThreadSanitizer (the fixture's note).
  (*cq->mutable_cluster_queue()
        ->mutable_spec()
        ->mutable_namespace_selector()
        ->mutable_match_labels())["team"] = "a";
  ApplyKueue(*cq);
  ApplyKueue(kLocalQueue);
  Submit(Queued("outsider", 1), "uid-outsider");
  Settle();
  EXPECT_TRUE(Suspended("outsider"));
  EXPECT_EQ(PendingMessage("outsider"),
            "False Workload namespace doesn't match ClusterQueue selector");
}

// 30: with manageJobsWithoutQueueName an unlabelled JobSet (created
// suspended by the API) gets a Workload with no queue and waits until a
// queue label is added.
TEST_F(ScenariosTest, ManageJobsWithoutQueueName) {
  features_.manage_jobs_without_queue_name = true;
  Restart();
  SetUpQueues();
  JobSet plain = Queued("plain", 1);
  plain.mutable_metadata()->mutable_labels()->erase(
      "kueue.x-k8s.io/queue-name");
  Submit(plain, "uid-plain");
  Settle();
  ASSERT_NE(core_->WorkloadOf("default", "plain"), nullptr);
  EXPECT_EQ(WorkloadOf("plain").spec().queue_name(), "");
  EXPECT_TRUE(Suspended("plain"));
  Submit(Queued("plain", 1), "uid-plain");  // labelled lq now
  Settle();
  EXPECT_EQ(WorkloadOf("plain").spec().queue_name(), "lq");
  EXPECT_FALSE(Suspended("plain"));
}

}  // namespace
}  // namespace jobset::scheduler
