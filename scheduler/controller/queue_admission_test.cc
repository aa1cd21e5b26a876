// Kueue's queues through the controller over a MemoryStore, a FakeClock and
// a fake fleet: a labelled JobSet is held suspended until its Workload is
// admitted, starts with its flavor injected, gives its quota back when it
// finishes, is preempted (suspended, not failed) by a higher priority, and
// nothing is admitted twice across a restart. Kueue's metrics follow, and
// a commit the store refuses counts nothing.
#include "scheduler/controller/queue_admission.h"

#include <string>
#include <vector>

#include "scheduler/controller/queue_admission_test_fixture.h"

namespace jobset::scheduler {
namespace {

using ::jobset::api::JobSet;
using ::jobset::testing::IsOk;
using queue_admission_test::ClusterQueueYaml;
using queue_admission_test::H100Flavor;
using queue_admission_test::kHighPriority;
using queue_admission_test::kLocalQueue;
using queue_admission_test::QueueAdmissionTest;
using queue_admission_test::Queued;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST_F(QueueAdmissionTest, AdmittedJobSetStartsOnItsFlavorsNodes) {
  SetUpQueues();
  Submit(Queued("train", 2), "uid-train");
  Settle();

  const api::Workload& wl = WorkloadOf("train");
  EXPECT_EQ(wl.spec().queue_name(), "lq");
  ASSERT_THAT(wl.spec().pod_sets(), SizeIs(1));
  EXPECT_EQ(wl.spec().pod_sets(0).count(), 2);
  EXPECT_TRUE(IsConditionTrue(wl.status().conditions(), "QuotaReserved"));
  EXPECT_TRUE(IsConditionTrue(wl.status().conditions(), "Admitted"));
  EXPECT_EQ(wl.status().admission().cluster_queue(), "cq");
  EXPECT_EQ(wl.status().admission().pod_set_assignments(0).flavors().at("cpu"),
            "h100");
  EXPECT_FALSE(Suspended("train"));

  // The flavor's nodeLabels went into the pods: both run on the h100 node.
  std::vector<api::Pod> pods = RunningPodsOf("train");
  ASSERT_THAT(pods, SizeIs(2));
  for (const api::Pod& pod : pods) {
    EXPECT_EQ(pod.spec().node_name(), "node-0");
    EXPECT_EQ(pod.spec().node_selector().at("pool"), "h100");
    EXPECT_EQ(pod.metadata().labels().at("kueue.x-k8s.io/podset"), "workers");
  }
  std::vector<JobSetEvent> events = core_->Events("default", "train");
  std::vector<std::string> reasons;
  for (const JobSetEvent& e : events) reasons.push_back(e.reason);
  EXPECT_THAT(reasons, Contains("CreatedWorkload"));
  EXPECT_THAT(reasons, Contains("Started"));
}

TEST_F(QueueAdmissionTest, OverQuotaWaitsWithKueuesReasonUntilQuotaIsFreed) {
  SetUpQueues();
  Submit(Queued("first", 3), "uid-first");  // 6 of 8 cpus
  Settle();
  clock_.Advance(absl::Seconds(1));
  Submit(Queued("second", 2), "uid-second");  // 4 more: over the 8
  Settle();

  EXPECT_FALSE(Suspended("first"));
  EXPECT_TRUE(Suspended("second"));
  EXPECT_THAT(RunningPodsOf("second"), IsEmpty());
  const api::Condition* reserved = Condition("second", "QuotaReserved");
  ASSERT_NE(reserved, nullptr);
  EXPECT_EQ(reserved->status(), "False");
  EXPECT_THAT(reserved->message(),
              HasSubstr("insufficient unused quota for cpu in flavor h100, "
                        "2 more needed"));
  // The queues say so in their status, as Kueue's columns show it.
  api::KueueObject cq = Stored("clusterqueues", "", "cq");
  EXPECT_EQ(cq.cluster_queue().status().pending_workloads(), 1);
  EXPECT_EQ(cq.cluster_queue().status().admitted_workloads(), 1);
  ASSERT_THAT(cq.cluster_queue().status().flavors_reservation(), SizeIs(1));
  EXPECT_EQ(
      cq.cluster_queue().status().flavors_reservation(0).resources(0).total(),
      "6");
  EXPECT_TRUE(
      IsConditionTrue(cq.cluster_queue().status().conditions(), "Active"));
  api::KueueObject lq = Stored("localqueues", "default", "lq");
  EXPECT_EQ(lq.local_queue().status().pending_workloads(), 1);
  EXPECT_EQ(lq.local_queue().status().reserving_workloads(), 1);
  // Kueue's gauges say the same: the second waits parked (BestEffortFIFO's
  // inadmissible set, after NoFit), the first holds 6 of 8 cpus.
  std::optional<ClusterQueueGauges> gauges = metrics_.Of("cq");
  ASSERT_TRUE(gauges.has_value());
  EXPECT_EQ(gauges->status, kClusterQueueActive);
  EXPECT_EQ(gauges->pending_active, 0);
  EXPECT_EQ(gauges->pending_inadmissible, 1);
  EXPECT_EQ(gauges->reserving, 1);
  EXPECT_EQ(gauges->admitted, 1);
  ASSERT_THAT(gauges->resources, SizeIs(1));
  EXPECT_EQ(gauges->resources[0].flavor, "h100");
  EXPECT_EQ(gauges->resources[0].resource, "cpu");
  EXPECT_EQ(gauges->resources[0].nominal_quota, 8);  // cores
  EXPECT_EQ(gauges->resources[0].usage, 6);
  EXPECT_EQ(gauges->resources[0].reservation, 6);
  EXPECT_EQ(gauges->resources[0].borrowing_limit, INFINITY);
  EXPECT_THAT(metrics_.events,
              ElementsAre("reserved cq ", "admitted cq ", "attempt success",
                          "attempt inadmissible"));

  clock_.Advance(absl::Seconds(10));
  ReportAll("first", "Running");
  Settle();
  ReportAll("first", "Succeeded");
  Settle();
  EXPECT_TRUE(
      IsConditionTrue(WorkloadOf("first").status().conditions(), "Finished"));
  EXPECT_FALSE(Suspended("second"));
  EXPECT_THAT(RunningPodsOf("second"), SizeIs(2));
  // The first finished, the second admitted 10 s after its creation.
  EXPECT_THAT(metrics_.events,
              ElementsAre("reserved cq ", "admitted cq ", "attempt success",
                          "attempt inadmissible", "finished cq ",
                          "reserved cq ", "admitted cq ", "attempt success"));
  EXPECT_THAT(metrics_.waits,
              ElementsAre(absl::ZeroDuration(), absl::ZeroDuration(),
                          absl::Seconds(10), absl::Seconds(10)));
  gauges = metrics_.Of("cq");
  ASSERT_TRUE(gauges.has_value());
  EXPECT_EQ(gauges->pending_active + gauges->pending_inadmissible, 0);
  EXPECT_EQ(gauges->reserving, 1);
  EXPECT_EQ(gauges->resources[0].usage, 4);
}

TEST_F(QueueAdmissionTest, ACommitTheStoreRefusesCountsNothing) {
  SetUpQueues();
  Submit(Queued("train", 1), "uid-train");
  // The stage's commit (the Workload, its admission, the unsuspend) is the
  // pass's first: ABORTED, as when the API changed the JobSet meanwhile.
  gate_.refuse_next = absl::StatusCode::kAborted;
  ASSERT_THAT(core_->Pass(), IsOk());
  EXPECT_TRUE(Suspended("train"));
  EXPECT_THAT(metrics_.events, IsEmpty());
  EXPECT_THAT(metrics_.gauges, IsEmpty());

  // Decided again at the next pass, and counted once.
  Settle();
  EXPECT_FALSE(Suspended("train"));
  EXPECT_THAT(metrics_.events,
              ElementsAre("reserved cq ", "admitted cq ", "attempt success"));

  // A store error: the pass fails, nothing is counted; the reload (here a
  // restart) decides it again.
  Submit(Queued("next", 1), "uid-next");
  gate_.refuse_next = absl::StatusCode::kUnavailable;
  EXPECT_FALSE(core_->Pass().ok());
  EXPECT_THAT(metrics_.events, SizeIs(3));
  Restart();
  Settle();
  EXPECT_FALSE(Suspended("next"));
  EXPECT_THAT(metrics_.events,
              ElementsAre("reserved cq ", "admitted cq ", "attempt success",
                          "reserved cq ", "admitted cq ", "attempt success"));
  std::optional<ClusterQueueGauges> gauges = metrics_.Of("cq");
  ASSERT_TRUE(gauges.has_value());
  EXPECT_EQ(gauges->reserving, 2);
}

TEST_F(QueueAdmissionTest, MissingLocalQueueIsNamed) {
  ApplyKueue(H100Flavor());
  Submit(Queued("lost", 1), "uid-lost");
  Settle();
  EXPECT_TRUE(Suspended("lost"));
  const api::Condition* reserved = Condition("lost", "QuotaReserved");
  ASSERT_NE(reserved, nullptr);
  EXPECT_EQ(reserved->status(), "False");
  EXPECT_EQ(reserved->reason(), "Inadmissible");
  EXPECT_EQ(reserved->message(), "LocalQueue lq doesn't exist");

  // The queues appear: it is admitted.
  ApplyKueue(ClusterQueueYaml("Never"));
  ApplyKueue(kLocalQueue);
  Settle();
  EXPECT_FALSE(Suspended("lost"));
}

TEST_F(QueueAdmissionTest, UnlabelledJobSetsRunAsBefore) {
  SetUpQueues();
  JobSet plain = Queued("plain", 1);
  plain.mutable_metadata()->mutable_labels()->clear();
  plain.mutable_spec()->set_suspend(false);
  Submit(plain, "uid-plain");
  Settle();
  EXPECT_EQ(core_->WorkloadOf("default", "plain"), nullptr);
  EXPECT_THAT(RunningPodsOf("plain"), SizeIs(1));
}

TEST_F(QueueAdmissionTest, UnadmittedJobSetThatRunsIsSuspended) {
  SetUpQueues();
  JobSet js = Queued("eager", 5);  // 10 cpus: never fits 8
  js.mutable_spec()->set_suspend(false);
  Submit(js, "uid-eager");
  Settle();
  EXPECT_TRUE(Suspended("eager"));
  EXPECT_THAT(RunningPodsOf("eager"), IsEmpty());
}

TEST_F(QueueAdmissionTest, HigherPrioritySuspendsTheLowerWhichRequeues) {
  SetUpQueues("LowerPriority");
  ApplyKueue(kHighPriority);
  Submit(Queued("low", 3), "uid-low");
  Settle();
  ReportAll("low", "Running");
  Settle();
  ASSERT_THAT(RunningPodsOf("low"), SizeIs(3));

  clock_.Advance(absl::Seconds(5));
  JobSet high = Queued("high", 3);
  (*high.mutable_metadata()
        ->mutable_labels())["kueue.x-k8s.io/priority-class"] = "high";
  Submit(high, "uid-high");
  Settle();

  // The victim is evicted and suspended, its pods told to stop; its quota
  // counts until they have.
  EXPECT_TRUE(Suspended("low"));
  EXPECT_TRUE(
      IsConditionTrue(WorkloadOf("low").status().conditions(), "Evicted"));
  const api::Condition* preempted = Condition("low", "Preempted");
  ASSERT_NE(preempted, nullptr);
  EXPECT_EQ(preempted->reason(), "InClusterQueue");
  EXPECT_TRUE(Suspended("high"));
  EXPECT_THAT(fleet_.stopped, SizeIs(3));
  // Counted once: the eviction in the victim's queue, the preemption for
  // the preemptor's; the high one waits, not yet admitted.
  EXPECT_THAT(metrics_.events, Contains("evicted cq Preempted ").Times(1));
  EXPECT_THAT(metrics_.events,
              Contains("preempted cq InClusterQueue").Times(1));
  EXPECT_THAT(metrics_.events, Contains("admitted cq high").Times(0));

  ConfirmStops();
  Settle();
  EXPECT_FALSE(Suspended("high"));
  EXPECT_THAT(RunningPodsOf("high"), SizeIs(3));
  EXPECT_THAT(metrics_.events, Contains("admitted cq high").Times(1));
  EXPECT_THAT(metrics_.events, Contains("evicted cq Preempted ").Times(1));
  // Suspended, not failed: its restarts are untouched, and it waits again.
  const api::JobSet* low = core_->FindJobSet("default", "low");
  EXPECT_EQ(low->status().restarts(), 0);
  EXPECT_FALSE(IsConditionTrue(low->status().conditions(), kConditionFailed));
  EXPECT_FALSE(WorkloadOf("low").status().has_admission());
  EXPECT_TRUE(
      IsConditionTrue(WorkloadOf("low").status().conditions(), "Requeued"));
  EXPECT_TRUE(Suspended("low"));

  // The high one ends: the low one is admitted again and runs.
  ReportAll("high", "Running");
  Settle();
  ReportAll("high", "Succeeded");
  Settle();
  EXPECT_FALSE(Suspended("low"));
  EXPECT_THAT(RunningPodsOf("low"), SizeIs(3));
  EXPECT_THAT(metrics_.events, Contains("finished cq high").Times(1));
  EXPECT_THAT(metrics_.events, Contains("admitted cq ").Times(2));
  // Its eviction is history, as Kueue writes it on a new reservation.
  for (absl::string_view type : {"Evicted", "Preempted"}) {
    const api::Condition* c = Condition("low", type);
    ASSERT_NE(c, nullptr) << type;
    EXPECT_EQ(c->status(), "False") << type;
    EXPECT_EQ(c->reason(), "QuotaReserved") << type;
    EXPECT_THAT(c->message(), ::testing::StartsWith("Previously: Preempted to"))
        << type;
  }
}

TEST_F(QueueAdmissionTest, ARestartAdmitsNothingTwice) {
  SetUpQueues();
  Submit(Queued("first", 3), "uid-first");
  Settle();
  clock_.Advance(absl::Seconds(1));
  Submit(Queued("second", 3), "uid-second");
  Settle();
  ASSERT_FALSE(Suspended("first"));
  ASSERT_TRUE(Suspended("second"));
  const std::string admitted_uid = WorkloadOf("first").metadata().uid();

  Restart();  // as after a kill -9: everything from the store
  Settle();
  EXPECT_EQ(WorkloadOf("first").metadata().uid(), admitted_uid);
  EXPECT_FALSE(Suspended("first"));
  EXPECT_TRUE(Suspended("second"));
  EXPECT_FALSE(WorkloadOf("second").status().has_admission());
}

TEST_F(QueueAdmissionTest, DeletingTheJobSetDeletesItsWorkload) {
  SetUpQueues();
  Submit(Queued("gone", 1), "uid-gone");
  Settle();
  const std::string name = WorkloadOf("gone").metadata().name();
  const std::string key = store::keys::JobSetKey("default", "gone");
  ASSERT_THAT(store_.Commit(store::Batch().Delete(key)).status(), IsOk());
  store::Event e;
  e.type = store::Event::Type::kDelete;
  e.kv.key = key;
  core_->OnJobSetEvent(e);
  Settle();
  Settle();
  absl::StatusOr<std::optional<store::KeyValue>> kv =
      store_.Get(store::keys::KueueKey("workloads", "default", name));
  ASSERT_TRUE(kv.ok());
  EXPECT_FALSE(kv->has_value());
}

// jobsetd's minimum runtime (api::kMinimumRuntimeAnnotation): the victim's
// WorkloadPriorityClass promises it 10 minutes from its admission; a
// higher-priority JobSet waits until they have passed, then preempts.
TEST_F(QueueAdmissionTest, AMinimumRuntimeHoldsPreemptionBackUntilItEnds) {
  SetUpQueues("LowerPriority");
  ApplyKueue(kHighPriority);
  api::KueueObject low_class;  // in code: see ApplyKueue's tsan note
  api::WorkloadPriorityClass* c = low_class.mutable_workload_priority_class();
  c->mutable_metadata()->set_name("low");
  c->set_value(10);
  (*c->mutable_metadata()
        ->mutable_annotations())[std::string(api::kMinimumRuntimeAnnotation)] =
      "10m";
  ApplyKueue(low_class);
  const absl::Time admitted = clock_.Now();
  JobSet low = Queued("low", 3);
  (*low.mutable_metadata()->mutable_labels())["kueue.x-k8s.io/priority-class"] =
      "low";
  Submit(low, "uid-low");
  Settle();
  ReportAll("low", "Running");
  Settle();
  ASSERT_THAT(RunningPodsOf("low"), SizeIs(3));

  clock_.Advance(absl::Minutes(4));
  JobSet high = Queued("high", 3);
  (*high.mutable_metadata()
        ->mutable_labels())["kueue.x-k8s.io/priority-class"] = "high";
  Submit(high, "uid-high");
  Settle();
  EXPECT_FALSE(Suspended("low"));
  EXPECT_TRUE(Suspended("high"));
  EXPECT_THAT(fleet_.stopped, IsEmpty());
  EXPECT_EQ(Condition("low", "Preempted"), nullptr);
  // The controller looks again when the promise ends, and not before.
  EXPECT_EQ(core_->NextWake(), admitted + absl::Minutes(10));

  clock_.Advance(absl::Minutes(6));
  Settle();
  EXPECT_TRUE(Suspended("low"));
  const api::Condition* preempted = Condition("low", "Preempted");
  ASSERT_NE(preempted, nullptr);
  EXPECT_EQ(preempted->reason(), "InClusterQueue");
  EXPECT_THAT(fleet_.stopped, SizeIs(3));
  ConfirmStops();
  Settle();
  EXPECT_FALSE(Suspended("high"));
}

// A preempted JobSet deleted just as its preemptor finishes is not started
// again: its pods never run after the delete.
TEST_F(QueueAdmissionTest, ADeletedVictimIsNotAdmittedAgain) {
  SetUpQueues("LowerPriority");
  ApplyKueue(kHighPriority);
  Submit(Queued("low", 3), "uid-low");
  Settle();
  ReportAll("low", "Running");
  Settle();
  JobSet high = Queued("high", 3);
  (*high.mutable_metadata()
        ->mutable_labels())["kueue.x-k8s.io/priority-class"] = "high";
  Submit(high, "uid-high");
  Settle();
  ConfirmStops();
  Settle();
  ReportAll("high", "Running");
  Settle();
  ASSERT_THAT(RunningPodsOf("low"), ::testing::IsEmpty());
  // The preemptor ends; the victim is admitted again and started, and is
  // deleted as its pods start: they are told to stop.
  ReportAll("high", "Succeeded");
  Settle();
  ASSERT_THAT(RunningPodsOf("low"), SizeIs(3));
  fleet_.stopped.clear();
  const std::string key = store::keys::JobSetKey("default", "low");
  ASSERT_THAT(store_.Commit(store::Batch().Delete(key)).status(), IsOk());
  store::Event e;
  e.type = store::Event::Type::kDelete;
  e.kv.key = key;
  core_->OnJobSetEvent(e);
  Settle();
  Settle();
  EXPECT_THAT(fleet_.stopped, SizeIs(3));
}

// A ClusterQueue of flavor h100 with `cpus` of nominal quota, in `cohort`
// ("" for none).
std::string CohortQueueYaml(const std::string& name, const std::string& cohort,
                            int cpus) {
  return absl::StrCat(
      R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: )",
      name, R"(
spec:
  namespaceSelector: {}
)",
      cohort.empty() ? "" : absl::StrCat("  cohort: ", cohort, "\n"),
      R"(  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: h100
      resources:
      - name: cpu
        nominalQuota: )",
      cpus, "\n");
}

std::string LocalQueueYaml(const std::string& name, const std::string& cq) {
  return absl::StrCat(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: )",
                      name, R"(
  namespace: default
spec:
  clusterQueue: )",
                      cq, "\n");
}

// A held Workload's model is shared between runs while its ClusterQueue
// stays the one it was made for; its LocalQueue pointed elsewhere, it is
// made again for the new one. Two heads alike but for their ClusterQueue's
// name compete for the last 2 cpus of their cohort: the first by name
// wins, which it only does if x's model names a-cq, not the z-cq it waited
// in before.
TEST_F(QueueAdmissionTest, AModelFollowsItsLocalQueueToAnotherClusterQueue) {
  ApplyKueue(H100Flavor());
  ApplyKueue(CohortQueueYaml("z-cq", "", 0));
  ApplyKueue(CohortQueueYaml("a-cq", "team", 0));
  ApplyKueue(CohortQueueYaml("m-cq", "team", 0));
  ApplyKueue(CohortQueueYaml("lender", "team", 0));
  ApplyKueue(LocalQueueYaml("lq-x", "z-cq"));
  ApplyKueue(LocalQueueYaml("lq-m", "m-cq"));
  for (const std::string name : {"x", "m"}) {
    JobSet js = Queued(name, 1);
    (*js.mutable_metadata()->mutable_labels())["kueue.x-k8s.io/queue-name"] =
        "lq-" + name;
    Submit(js, "uid-" + name);
  }
  Settle();
  // A second run makes and keeps x's model, in z-cq (nothing to write).
  ApplyKueue(LocalQueueYaml("lq-m", "m-cq"));
  Settle();
  ASSERT_TRUE(Suspended("x"));
  ASSERT_TRUE(Suspended("m"));

  ApplyKueue(LocalQueueYaml("lq-x", "a-cq"));
  ApplyKueue(CohortQueueYaml("lender", "team", 2));
  Settle();
  EXPECT_FALSE(Suspended("x"));
  EXPECT_TRUE(Suspended("m"));
  EXPECT_EQ(WorkloadOf("x").status().admission().cluster_queue(), "a-cq");
}

// jobsetd's addition to Kueue's preemption order: among equal candidates,
// the one whose JobSet restarted last loses the least work. a was admitted
// before b but restarted after b's admission, so a goes.
TEST_F(QueueAdmissionTest, TheJobSetThatRestartedLastIsPreemptedFirst) {
  SetUpQueues("LowerPriority");
  ApplyKueue(kHighPriority);
  Submit(Queued("a", 2), "uid-a");
  Settle();
  clock_.Advance(absl::Minutes(1));
  Submit(Queued("b", 2), "uid-b");
  Settle();
  ReportAll("a", "Running");
  ReportAll("b", "Running");
  Settle();
  clock_.Advance(absl::Minutes(1));
  ReportAll("a", "Failed");  // its failure policy restarts it
  Settle();
  ASSERT_EQ(core_->FindJobSet("default", "a")->status().restarts(), 1);
  ASSERT_FALSE(Suspended("a"));
  ASSERT_FALSE(Suspended("b"));

  clock_.Advance(absl::Minutes(1));
  JobSet high = Queued("high", 2);
  (*high.mutable_metadata()
        ->mutable_labels())["kueue.x-k8s.io/priority-class"] = "high";
  Submit(high, "uid-high");
  Settle();
  EXPECT_TRUE(Suspended("a"));
  EXPECT_FALSE(Suspended("b"));
  EXPECT_TRUE(
      IsConditionTrue(WorkloadOf("a").status().conditions(), "Evicted"));
}

// A pending Workload that its JobSet's new queue label moves is read, in
// the run that moves it, in its new LocalQueue only, not also where the
// runs before kept it: with room in both ClusterQueues it is admitted once,
// where it now waits.
TEST_F(QueueAdmissionTest, AMovedWorkloadWaitsOnlyInItsNewQueue) {
  ApplyKueue(H100Flavor());
  ApplyKueue(CohortQueueYaml("a-cq", "", 2));
  ApplyKueue(CohortQueueYaml("b-cq", "", 0));
  ApplyKueue(LocalQueueYaml("lq-a", "a-cq"));
  ApplyKueue(LocalQueueYaml("lq-b", "b-cq"));
  JobSet js = Queued("x", 1);
  (*js.mutable_metadata()->mutable_labels())["kueue.x-k8s.io/queue-name"] =
      "lq-b";
  Submit(js, "uid-x");
  Settle();
  // A second run keeps lq-b's part of the input, x in it.
  ApplyKueue(LocalQueueYaml("lq-a", "a-cq"));
  Settle();
  ASSERT_TRUE(Suspended("x"));

  (*js.mutable_metadata()->mutable_labels())["kueue.x-k8s.io/queue-name"] =
      "lq-a";
  Submit(js, "uid-x");
  ApplyKueue(CohortQueueYaml("b-cq", "", 2));
  Settle();
  EXPECT_FALSE(Suspended("x"));
  EXPECT_EQ(WorkloadOf("x").status().admission().cluster_queue(), "a-cq");
  EXPECT_THAT(metrics_.events, Contains("admitted a-cq ").Times(1));
  EXPECT_THAT(metrics_.events, Contains("admitted b-cq ").Times(0));
}

}  // namespace
}  // namespace jobset::scheduler
