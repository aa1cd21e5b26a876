// The queue stage keeps what it reads between runs (queue_admission.h):
// QueueAdmission's index of the held objects and each queue's part of the
// cycle's input, changed by the events of what changed. Here one kept that
// way through a long run of changes decides as one that reads everything
// afresh.
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "scheduler/controller/queue_admission.h"
#include "scheduler/controller/queue_admission_test_fixture.h"

namespace jobset::scheduler {
namespace {

using ::jobset::testing::IsOk;
using queue_admission_test::H100Flavor;

// The queue stage keeps what it reads between runs: QueueAdmission's index
// of the held Workloads (which are admitted, which wait in which
// LocalQueue, what each queue holds) and each queue's part of the cycle's
// input, changed as the events of what changed arrive. A stage that kept
// them through a long run of changes (Workloads created, finished,
// deleted, moved, deactivated, backing off; LocalQueues pointed elsewhere
// and stopped; quotas changed; an admission taken away; a commit ABORTED;
// a Load) decides as one that reads everything afresh: after every change
// both stores hold the same Kueue objects.
class KeptInputTest : public ::testing::Test {
 protected:
  static constexpr int kWorkloads = 40;

  KeptInputTest() : gate_(&kept_store_) {}

  static std::string Key(absl::string_view plural, absl::string_view ns,
                         absl::string_view name) {
    return store::keys::KueueKey(plural, ns, name);
  }

  // Writes `o` at `key` in both stores; the kept stage sees its event.
  void Put(const std::string& key, const api::KueueObject& o) {
    store::Batch batch;
    batch.Put(key, o.SerializeAsString());
    ASSERT_THAT(fresh_store_.Commit(batch).status(), IsOk());
    absl::StatusOr<int64_t> rev = kept_store_.Commit(batch);
    ASSERT_THAT(rev.status(), IsOk());
    store::Event e;
    e.kv = {key, o.SerializeAsString(), *rev, *rev};
    kept_.OnEvent(e);
  }
  void Delete(const std::string& key) {
    store::Batch batch;
    batch.Delete(key);
    ASSERT_THAT(fresh_store_.Commit(batch).status(), IsOk());
    absl::StatusOr<int64_t> rev = kept_store_.Commit(batch);
    ASSERT_THAT(rev.status(), IsOk());
    store::Event e;
    e.type = store::Event::Type::kDelete;
    e.kv = {key, "", *rev, *rev};
    kept_.OnEvent(e);
  }
  // The object at `key` as the kept stage's store holds it, if any.
  std::optional<api::KueueObject> Read(const std::string& key) {
    absl::StatusOr<std::optional<store::KeyValue>> kv = kept_store_.Get(key);
    if (!kv.ok() || !kv->has_value()) return std::nullopt;
    api::KueueObject o;
    if (!o.ParseFromString((*kv)->value)) return std::nullopt;
    return o;
  }

  static api::KueueObject ClusterQueue(const std::string& name,
                                       const std::string& ns, int cpus) {
    api::KueueObject o;
    api::ClusterQueue* cq = o.mutable_cluster_queue();
    cq->mutable_metadata()->set_name(name);
    cq->mutable_spec()->set_cohort("team");
    // Only `ns` when set, else every namespace.
    api::LabelSelectorSpec* selector =
        cq->mutable_spec()->mutable_namespace_selector();
    if (!ns.empty())
      (*selector->mutable_match_labels())["kubernetes.io/metadata.name"] = ns;
    api::FlavorQuotas* f =
        cq->mutable_spec()->add_resource_groups()->add_flavors();
    cq->mutable_spec()->mutable_resource_groups(0)->add_covered_resources(
        "cpu");
    f->set_name("h100");
    api::ResourceQuota* q = f->add_resources();
    q->set_name("cpu");
    q->set_nominal_quota(absl::StrCat(cpus));
    return o;
  }
  static api::KueueObject LocalQueue(const std::string& ns,
                                     const std::string& name,
                                     const std::string& cq,
                                     const std::string& stop = "") {
    api::KueueObject o;
    api::LocalQueue* lq = o.mutable_local_queue();
    lq->mutable_metadata()->set_name(name);
    lq->mutable_metadata()->set_namespace_(ns);
    lq->mutable_spec()->set_cluster_queue(cq);
    lq->mutable_spec()->set_stop_policy(stop);
    return o;
  }
  static api::KueueObject Workload(int i, const std::string& lq, int cpus,
                                   int priority) {
    api::KueueObject o;
    api::Workload* wl = o.mutable_workload();
    wl->mutable_metadata()->set_name(absl::StrCat("wl-", i));
    wl->mutable_metadata()->set_namespace_(i % 4 == 0 ? "team-b" : "team-a");
    wl->mutable_metadata()->set_uid(absl::StrCat("uid-", i));
    wl->mutable_metadata()->mutable_creation_timestamp()->set_seconds(
        1'700'000'000 + i);
    wl->mutable_spec()->set_queue_name(lq);
    wl->mutable_spec()->set_priority(priority);
    api::PodSet* ps = wl->mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ps->set_count(1);
    api::Container* c =
        ps->mutable_template_()->mutable_spec()->add_containers();
    c->set_name("main");
    c->set_image("busybox");
    (*c->mutable_resources()->mutable_requests())["cpu"] = absl::StrCat(cpus);
    return o;
  }
  static std::string WorkloadKey(int i) {
    return Key("workloads", i % 4 == 0 ? "team-b" : "team-a",
               absl::StrCat("wl-", i));
  }

  // Runs both stages (the fresh one loaded anew) and compares the stores.
  void RunBoth() {
    now_ += absl::Seconds(1);
    ASSERT_THAT(kept_.Run(kept_state_, kept_events_, now_), IsOk());
    QueueAdmission fresh(&fresh_store_, {});
    ASSERT_THAT(fresh.Load(), IsOk());
    ControllerState state;
    EventLog events;
    ASSERT_THAT(fresh.Run(state, events, now_), IsOk());
    const std::map<std::string, std::string> kept = Dump(kept_store_);
    const std::map<std::string, std::string> afresh = Dump(fresh_store_);
    for (const auto& [key, value] : afresh) {
      auto it = kept.find(key);
      EXPECT_TRUE(it != kept.end() && it->second == value)
          << "step " << step_ << ": " << key
          << "\nkept:  " << (it == kept.end() ? "none" : it->second)
          << "\nfresh: " << value;
    }
    EXPECT_EQ(kept.size(), afresh.size()) << "step " << step_;
  }

  static std::map<std::string, std::string> Dump(store::Store& store) {
    std::map<std::string, std::string> out;
    absl::StatusOr<int64_t> read = store.ReadAll(
        store::keys::kKueue, [](int64_t) { return absl::OkStatus(); },
        [&](const store::KeyValue& kv) {
          api::KueueObject o;
          o.ParseFromString(kv.value);
          out[kv.key] = o.ShortDebugString();
          return absl::OkStatus();
        });
    EXPECT_THAT(read.status(), IsOk());
    return out;
  }

  store::MemoryStore kept_store_;
  store::MemoryStore fresh_store_;
  queue_admission_test::GatedStore gate_;
  QueueAdmission kept_{&gate_, {}};
  ControllerState kept_state_;
  EventLog kept_events_;
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  int step_ = 0;
};

TEST_F(KeptInputTest, AKeptStageDecidesAsAFreshOne) {
  Put(Key("resourceflavors", "", "h100"), H100Flavor());
  Put(Key("clusterqueues", "", "cq-a"), ClusterQueue("cq-a", "", 6));
  Put(Key("clusterqueues", "", "cq-b"), ClusterQueue("cq-b", "team-a", 4));
  // lq-x points at a ClusterQueue that does not exist yet.
  const std::vector<std::string> lqs = {"lq-a", "lq-b", "lq-x"};
  for (const std::string ns : {"team-a", "team-b"}) {
    Put(Key("localqueues", ns, "lq-a"), LocalQueue(ns, "lq-a", "cq-a"));
    Put(Key("localqueues", ns, "lq-b"), LocalQueue(ns, "lq-b", "cq-b"));
    Put(Key("localqueues", ns, "lq-x"), LocalQueue(ns, "lq-x", "cq-x"));
  }
  ASSERT_THAT(kept_.Load(), IsOk());
  std::mt19937 rng(41);
  auto pick = [&](int n) {
    return static_cast<int>(std::uniform_int_distribution<>(0, n - 1)(rng));
  };
  for (int i = 0; i < kWorkloads / 2; ++i) {
    Put(WorkloadKey(i), Workload(i, lqs[pick(3)], 1 + pick(2), pick(3)));
  }
  RunBoth();
  int created = kWorkloads / 2;
  for (step_ = 0; step_ < 300; ++step_) {
    const int i = pick(created);
    std::optional<api::KueueObject> wl = Read(WorkloadKey(i));
    switch (pick(13)) {
      case 0:  // a new Workload
        if (created < kWorkloads) {
          Put(WorkloadKey(created),
              Workload(created, lqs[pick(3)], 1 + pick(2), pick(3)));
          ++created;
        }
        break;
      case 1:  // one ends (admitted or not)
        if (wl) {
          UpdateCondition(
              wl->mutable_workload()->mutable_status()->mutable_conditions(),
              "Finished", true, "Succeeded", "Job finished successfully", now_);
          Put(WorkloadKey(i), *wl);
        }
        break;
      case 2:  // one is deleted, and made again later
        if (wl) {
          Delete(WorkloadKey(i));
        } else {
          Put(WorkloadKey(i), Workload(i, lqs[pick(3)], 1, pick(3)));
        }
        break;
      case 3:  // a pending one moves to another LocalQueue
        if (wl && !wl->workload().status().has_admission()) {
          wl->mutable_workload()->mutable_spec()->set_queue_name(lqs[pick(3)]);
          Put(WorkloadKey(i), *wl);
        }
        break;
      case 4:  // deactivated, or active again
        if (wl) {
          api::WorkloadSpec* spec = wl->mutable_workload()->mutable_spec();
          spec->set_active(spec->has_active() && !spec->active());
          Put(WorkloadKey(i), *wl);
        }
        break;
      case 5:  // its admission taken away: pending again
        if (wl && wl->workload().status().has_admission()) {
          api::WorkloadStatus* status =
              wl->mutable_workload()->mutable_status();
          status->clear_admission();
          SetCondition(status->mutable_conditions(), "QuotaReserved", false,
                       "Pending", "released", now_);
          Put(WorkloadKey(i), *wl);
        }
        break;
      case 6:  // backing off after an eviction, until two steps from now
        if (wl && !wl->workload().status().has_admission()) {
          api::WorkloadStatus* status =
              wl->mutable_workload()->mutable_status();
          status->mutable_requeue_state()->mutable_requeue_at()->set_seconds(
              absl::ToUnixSeconds(now_ + absl::Seconds(2)));
          SetCondition(status->mutable_conditions(), "Requeued", false,
                       "PodsReadyTimeout", "backing off", now_);
          Put(WorkloadKey(i), *wl);
        }
        break;
      case 7: {  // a LocalQueue pointed elsewhere (cq-x appears at times)
        const std::string ns = pick(2) == 0 ? "team-a" : "team-b";
        const std::string lq = lqs[pick(3)];
        const std::string cqs[] = {"cq-a", "cq-b", "cq-x"};
        Put(Key("localqueues", ns, lq), LocalQueue(ns, lq, cqs[pick(3)]));
        break;
      }
      case 8: {  // a LocalQueue stopped, or running again
        const std::string lq = lqs[pick(2)];
        Put(Key("localqueues", "team-a", lq),
            LocalQueue("team-a", lq, lq == "lq-a" ? "cq-a" : "cq-b",
                       pick(2) == 0 ? "Hold" : ""));
        break;
      }
      case 9:  // quota changes; cq-x comes and goes
        Put(Key("clusterqueues", "", "cq-a"),
            ClusterQueue("cq-a", "", 2 + pick(6)));
        if (pick(2) == 0) {
          Put(Key("clusterqueues", "", "cq-x"), ClusterQueue("cq-x", "", 3));
        } else {
          Delete(Key("clusterqueues", "", "cq-x"));
        }
        break;
      case 10:  // the kept stage's commit is refused (ABORTED) first
        Put(Key("clusterqueues", "", "cq-a"),
            ClusterQueue("cq-a", "", 2 + pick(6)));
        gate_.refuse_next = absl::StatusCode::kAborted;
        ASSERT_THAT(kept_.Run(kept_state_, kept_events_, now_), IsOk());
        ASSERT_FALSE(gate_.refuse_next.has_value()) << "nothing to commit";
        // The change that made it conflict arrives.
        Put(Key("clusterqueues", "", "cq-b"),
            ClusterQueue("cq-b", "team-a", 3 + pick(3)));
        break;
      case 11:  // the controller reloads
        ASSERT_THAT(kept_.Load(), IsOk());
        break;
      case 12:  // an admission rewritten to hold more (its queue's count
                // stays, what it holds does not)
        if (wl && wl->workload().status().has_admission()) {
          (*wl->mutable_workload()
                ->mutable_status()
                ->mutable_admission()
                ->mutable_pod_set_assignments(0)
                ->mutable_resource_usage())["cpu"] = "3";
          Put(WorkloadKey(i), *wl);
        }
        break;
    }
    RunBoth();
    if (HasFailure()) return;
  }
  // Something was admitted, and something waits.
  int admitted = 0;
  for (int i = 0; i < created; ++i) {
    std::optional<api::KueueObject> wl = Read(WorkloadKey(i));
    if (wl && wl->workload().status().has_admission()) ++admitted;
  }
  EXPECT_GT(admitted, 0);
  EXPECT_LT(admitted, created);
}

}  // namespace
}  // namespace jobset::scheduler
