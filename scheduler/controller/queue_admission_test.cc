// Kueue's queues through the controller over a MemoryStore, a FakeClock and
// a fake fleet: a labelled JobSet is held suspended until its Workload is
// admitted, starts with its flavor injected, gives its quota back when it
// finishes, is preempted (suspended, not failed) by a higher priority, and
// nothing is admitted twice across a restart. Kueue's metrics follow, and
// a commit the store refuses counts nothing.
#include "scheduler/controller/queue_admission.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/defaults.h"
#include "api/jobset_builder.h"
#include "api/kueue_defaults.h"
#include "api/kueue_manifest.h"
#include "api/kueue_validation.h"
#include "common/clock.h"
#include "common/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/controller/controller_core.h"
#include "scheduler/controller/controller_metrics.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"
#include "store/forwarding_store.h"
#include "store/keys.h"
#include "store/memory_store.h"

namespace jobset::scheduler {
namespace {

using ::jobset::api::JobSet;
using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::IsOk;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

class Fleet : public AgentFleet {
 public:
  void Run(Assignment order) override { running[order.uid()] = order.Pod(); }
  void Stop(const std::string& node, const std::string& uid) override {
    stopped.push_back({node, uid});
  }
  void Release(const std::string& /*node*/, const std::string& uid) override {
    running.erase(uid);
  }
  std::map<std::string, api::Pod> running;  // By uid.
  std::vector<std::pair<std::string, std::string>> stopped;
};

// Kueue's metrics as the queue stage reports them, as lines
// ("admitted <cq> <priority class>", ...), and the last gauges.
class FakeMetrics : public ControllerMetrics {
 public:
  void FencedReport() override {}
  void Placed(absl::Duration) override {}
  void Finished(const std::string&, const std::string&, bool) override {}
  void Restarted(absl::string_view, absl::string_view, int64_t) override {}
  void SubmittedToRunning(absl::Duration) override {}
  void RestartedToRunning(absl::Duration) override {}
  void PodStage(absl::string_view, absl::Duration, int64_t) override {}
  void Rejected(absl::string_view) override {}
  void Gauges(const std::map<std::string, int64_t>&,
              const std::map<std::string, int64_t>&, int64_t) override {}

  void QueueGauges(const std::vector<ClusterQueueGauges>& cqs) override {
    gauges = cqs;
  }
  void WorkloadQuotaReserved(absl::string_view cq, absl::string_view pc,
                             absl::Duration waited) override {
    events.push_back(absl::StrCat("reserved ", cq, " ", pc));
    waits.push_back(waited);
  }
  void WorkloadAdmitted(absl::string_view cq, absl::string_view pc,
                        absl::Duration waited) override {
    events.push_back(absl::StrCat("admitted ", cq, " ", pc));
    waits.push_back(waited);
  }
  void WorkloadEvicted(absl::string_view cq, absl::string_view reason,
                       absl::string_view cause) override {
    events.push_back(absl::StrCat("evicted ", cq, " ", reason, " ", cause));
  }
  void WorkloadPreempted(absl::string_view cq,
                         absl::string_view reason) override {
    events.push_back(absl::StrCat("preempted ", cq, " ", reason));
  }
  void WorkloadFinished(absl::string_view cq, absl::string_view pc) override {
    events.push_back(absl::StrCat("finished ", cq, " ", pc));
  }
  void AdmissionAttempt(bool admitted, absl::Duration) override {
    events.push_back(admitted ? "attempt success" : "attempt inadmissible");
  }

  // The gauges of ClusterQueue `name` last reported, if any.
  std::optional<ClusterQueueGauges> Of(const std::string& name) const {
    for (const ClusterQueueGauges& g : gauges) {
      if (g.name == name) return g;
    }
    return std::nullopt;
  }

  std::vector<std::string> events;
  std::vector<absl::Duration> waits;  // reserved and admitted, in order
  std::vector<ClusterQueueGauges> gauges;
};

// The fixture's store as the controller sees it: it refuses the next
// commit with `refuse_next`, once.
class GatedStore : public store::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;

  absl::StatusOr<int64_t> Commit(const store::Batch& batch) override {
    if (refuse_next.has_value()) {
      absl::Status refused(*refuse_next, "refused by the test");
      refuse_next.reset();
      return refused;
    }
    return ForwardingStore::Commit(batch);
  }

  std::optional<absl::StatusCode> refuse_next;
};

// The flavor, built in code: read from YAML its nodeLabels map goes through
// protobuf's reflection on map fields, which crashes under ThreadSanitizer
// (Debian's libprotobuf is not built with it; the map's layout differs).
api::KueueObject H100Flavor() {
  api::KueueObject o;
  api::ResourceFlavor* flavor = o.mutable_resource_flavor();
  flavor->set_api_version("kueue.x-k8s.io/v1beta1");
  flavor->set_kind("ResourceFlavor");
  flavor->mutable_metadata()->set_name("h100");
  (*flavor->mutable_spec()->mutable_node_labels())["pool"] = "h100";
  return o;
}

std::string ClusterQueueYaml(const std::string& within) {
  return absl::StrCat(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cq
spec:
  namespaceSelector: {}
  preemption:
    withinClusterQueue: )",
                      within, R"(
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: h100
      resources:
      - name: cpu
        nominalQuota: 8
)");
}

constexpr char kLocalQueue[] = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: lq
  namespace: default
spec:
  clusterQueue: cq
)";

constexpr char kHighPriority[] = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: high
value: 1000
)";

NodeInfo Node(const std::string& name, const std::string& pool) {
  NodeInfo n;
  n.name = name;
  n.address = absl::StrCat("10.0.0.", name.back() - '0' + 1);
  n.labels["pool"] = pool;
  n.allocatable.cpu_millis = 16'000;
  n.allocatable.memory_bytes = int64_t{64} << 30;
  return n;
}

// `pods` one-pod Jobs of 2 cpus each, in LocalQueue lq.
JobSet Queued(const std::string& name, int pods) {
  return JobSetBuilder(name)
      .Label("kueue.x-k8s.io/queue-name", "lq")
      .Suspend(true)  // as the API stores a JobSet Kueue manages
      .Replicated("workers", pods)
      .RestartPolicy("workers", "Never")
      .BackoffLimit("workers", 0)
      .FailurePolicy(3)
      .Request("workers", "cpu", "2")
      .Build();
}

class QueueAdmissionTest : public ::testing::Test {
 protected:
  QueueAdmissionTest() { Restart(); }

  void Restart() {
    core_ = std::make_unique<ControllerCore>(
        &gate_, &fleet_, &clock_,
        ControllerCore::Options{.metrics = &metrics_});
    ASSERT_THAT(core_->Load().status(), IsOk());
    core_->SetNode(Node("node-0", "h100"));
    core_->SetNode(Node("node-1", "a100"));
  }

  // Stores a Kueue object as the API would (defaulted) and tells the core.
  void ApplyKueue(const std::string& yaml) {
    absl::StatusOr<api::KueueObject> o = api::ParseKueueDocument(yaml);
    ASSERT_THAT(o.status(), IsOk());
    ApplyKueue(*std::move(o));
  }
  void ApplyKueue(api::KueueObject object) {
    api::KueueObject* o = &object;
    api::SetKueueDefaults(o);
    std::string plural, ns, name;
    if (o->has_resource_flavor()) {
      plural = "resourceflavors";
      name = o->resource_flavor().metadata().name();
    } else if (o->has_cluster_queue()) {
      plural = "clusterqueues";
      name = o->cluster_queue().metadata().name();
    } else if (o->has_local_queue()) {
      plural = "localqueues";
      ns = o->local_queue().metadata().namespace_();
      name = o->local_queue().metadata().name();
    } else if (o->has_workload_priority_class()) {
      plural = "workloadpriorityclasses";
      name = o->workload_priority_class().metadata().name();
    }
    const std::string key = store::keys::KueueKey(plural, ns, name);
    ASSERT_THAT(
        store_.Commit(store::Batch().Put(key, o->SerializeAsString())).status(),
        IsOk());
    absl::StatusOr<std::optional<store::KeyValue>> kv = store_.Get(key);
    ASSERT_TRUE(kv.ok() && kv->has_value());
    store::Event e;
    e.kv = **kv;
    core_->OnKueueEvent(e);
  }

  api::KueueObject Stored(const std::string& plural, const std::string& ns,
                          const std::string& name) {
    absl::StatusOr<std::optional<store::KeyValue>> kv =
        store_.Get(store::keys::KueueKey(plural, ns, name));
    api::KueueObject o;
    EXPECT_TRUE(kv.ok() && kv->has_value());
    if (kv.ok() && kv->has_value()) {
      EXPECT_TRUE(o.ParseFromString((*kv)->value));
    }
    return o;
  }

  void SetUpQueues(const std::string& within = "Never") {
    ApplyKueue(H100Flavor());
    ApplyKueue(ClusterQueueYaml(within));
    ApplyKueue(kLocalQueue);
  }

  void Submit(JobSet js, const std::string& uid) {
    api::SetJobSetDefaults(&js);
    js.mutable_metadata()->set_uid(uid);
    js.mutable_metadata()->mutable_creation_timestamp()->set_seconds(
        absl::ToUnixSeconds(clock_.Now()));
    const std::string key =
        store::keys::JobSetKey("default", js.metadata().name());
    ASSERT_THAT(
        store_.Commit(store::Batch().Put(key, js.SerializeAsString())).status(),
        IsOk());
    absl::StatusOr<std::optional<store::KeyValue>> kv = store_.Get(key);
    ASSERT_TRUE(kv.ok() && kv->has_value());
    store::Event e;
    e.kv = **kv;
    core_->OnJobSetEvent(e);
  }

  void Settle() {
    for (int i = 0; i < 30; ++i) {
      ASSERT_THAT(core_->Pass(), IsOk());
      std::optional<absl::Time> next = core_->NextWake();
      if (!next || *next > clock_.Now()) return;
    }
    FAIL() << "the controller never settled";
  }

  std::vector<api::Pod> RunningPodsOf(const std::string& jobset) const {
    std::vector<api::Pod> pods;
    for (const auto& [uid, pod] : fleet_.running) {
      if (pod.metadata().labels().at(kJobSetNameKey) == jobset)
        pods.push_back(pod);
    }
    return pods;
  }

  void ReportAll(const std::string& jobset, const std::string& phase) {
    for (const api::Pod& pod : RunningPodsOf(jobset)) {
      PodReport r;
      r.node = pod.spec().node_name();
      r.pod_uid = pod.metadata().uid();
      r.status.set_phase(phase);
      api::ContainerStatus* c = r.status.add_container_statuses();
      c->set_name("main");
      c->set_flat_state(phase == "Running" ? "running" : "terminated");
      core_->OnPodReport(r);
      if (phase != "Running") fleet_.running.erase(pod.metadata().uid());
    }
  }

  // The stopped pods report that they were killed.
  void ConfirmStops() {
    for (const auto& [node, uid] : fleet_.stopped) {
      PodReport r;
      r.node = node;
      r.pod_uid = uid;
      r.status.set_phase("Failed");
      r.status.set_reason("Killed");
      core_->OnPodReport(r);
      fleet_.running.erase(uid);
    }
    fleet_.stopped.clear();
  }

  const api::Workload& WorkloadOf(const std::string& jobset) {
    const api::Workload* wl = core_->WorkloadOf("default", jobset);
    EXPECT_NE(wl, nullptr) << "no Workload for " << jobset;
    static const api::Workload kNone;
    return wl == nullptr ? kNone : *wl;
  }

  const api::Condition* Condition(const std::string& jobset,
                                  absl::string_view type) {
    return FindCondition(WorkloadOf(jobset).status().conditions(), type);
  }

  bool Suspended(const std::string& jobset) const {
    return core_->FindJobSet("default", jobset)->spec().suspend();
  }

  store::MemoryStore store_;
  GatedStore gate_{&store_};
  FakeMetrics metrics_;
  Fleet fleet_;
  FakeClock clock_{absl::FromUnixSeconds(1'700'000'000)};
  std::unique_ptr<ControllerCore> core_;
};

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

}  // namespace
}  // namespace jobset::scheduler

namespace jobset::scheduler {
namespace {

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

}  // namespace
}  // namespace jobset::scheduler
