#ifndef JOBSET_SCHEDULER_CONTROLLER_QUEUE_ADMISSION_TEST_FIXTURE_H_
#define JOBSET_SCHEDULER_CONTROLLER_QUEUE_ADMISSION_TEST_FIXTURE_H_

// The controller with Kueue's queues over a MemoryStore, a FakeClock and a
// fake fleet, for queue_admission_test.cc and queue_pods_ready_test.cc:
// two nodes (h100, a100), a flavor, a ClusterQueue and a LocalQueue.
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

namespace jobset::scheduler::queue_admission_test {

using ::jobset::api::JobSet;
using ::jobset::api::testing::JobSetBuilder;
using ::jobset::testing::IsOk;
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

  void QueueGauges(const std::vector<ClusterQueueGauges>& cqs,
                   const std::vector<CohortGauges>& cohort_gauges) override {
    gauges = cqs;
    cohorts = cohort_gauges;
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
  std::vector<CohortGauges> cohorts;
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
inline api::KueueObject H100Flavor() {
  api::KueueObject o;
  api::ResourceFlavor* flavor = o.mutable_resource_flavor();
  flavor->set_api_version("kueue.x-k8s.io/v1beta1");
  flavor->set_kind("ResourceFlavor");
  flavor->mutable_metadata()->set_name("h100");
  (*flavor->mutable_spec()->mutable_node_labels())["pool"] = "h100";
  return o;
}

inline std::string ClusterQueueYaml(const std::string& within) {
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

inline constexpr char kLocalQueue[] = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: lq
  namespace: default
spec:
  clusterQueue: cq
)";

inline constexpr char kHighPriority[] = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: high
value: 1000
)";

inline NodeInfo Node(const std::string& name, const std::string& pool) {
  NodeInfo n;
  n.name = name;
  n.address = absl::StrCat("10.0.0.", name.back() - '0' + 1);
  n.labels["pool"] = pool;
  n.allocatable.cpu_millis = 16'000;
  n.allocatable.memory_bytes = int64_t{64} << 30;
  return n;
}

// `pods` one-pod Jobs of 2 cpus each, in LocalQueue lq.
inline JobSet Queued(const std::string& name, int pods) {
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
        ControllerCore::Options{.features = features_, .metrics = &metrics_});
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
    } else if (o->has_cohort()) {
      plural = "cohorts";
      name = o->cohort().metadata().name();
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
      const bool ended = phase == "Succeeded" || phase == "Failed";
      c->set_flat_state(phase == "Running" ? "running"
                        : ended            ? "terminated"
                                           : "waiting");
      if (phase == "Running") {
        api::Condition* ready = r.status.add_conditions();
        ready->set_type("Ready");
        ready->set_status("True");
      }
      core_->OnPodReport(r);
      if (ended) fleet_.running.erase(pod.metadata().uid());
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

  // What Restart() gives the controller (Kueue's switches among them).
  api::Features features_;
  store::MemoryStore store_;
  GatedStore gate_{&store_};
  FakeMetrics metrics_;
  Fleet fleet_;
  FakeClock clock_{absl::FromUnixSeconds(1'700'000'000)};
  std::unique_ptr<ControllerCore> core_;
};

}  // namespace jobset::scheduler::queue_admission_test

#endif  // JOBSET_SCHEDULER_CONTROLLER_QUEUE_ADMISSION_TEST_FIXTURE_H_
