// Kueue's admission at scale, in process (issue 41): --cluster_queues
// ClusterQueues in --cohorts cohorts, one LocalQueue each, and --workloads
// pending single-pod Workloads spread over them, stored as Kueue's objects
// in a store (RocksDB with fsync by default); the controller's queue stage
// (QueueAdmission::Run: cycles, status, one commit per run) admits them.
//
// Phase 1, throughput: every ClusterQueue's quota holds --fill of its
// pending Workloads; runs until none more fits. Prints admissions per second
// of wall time (decisions, status writes and commits included).
// Phase 2, latency: --rounds times, --finish admitted Workloads finish in one
// commit (as their JobSets' ends would be: the Finished condition, then the
// watch events), and the next stage run admits their successors; the time
// from that commit (quota free) to the successors' admissions committed,
// p50/p99/max over the rounds.
//
//   bazel run -c opt //scheduler/controller:admission_bench --
//     --cluster_queues=1000 --cohorts=10 --workloads=50000
// or bazel-out/k8-opt/bin/scheduler/controller/admission_bench after
// `bazel build -c opt`: bazel-bin points at the last build's configuration,
// the unoptimized binary once anyone builds fastbuild in the same tree.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "proto/kueue.pb.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/event_log.h"
#include "scheduler/controller/queue_admission.h"
#include "scheduler/records/conditions.h"
#include "store/keys.h"
#include "store/memory_store.h"
#include "store/rocksdb_store.h"

ABSL_FLAG(int, cluster_queues, 1000, "ClusterQueues (one LocalQueue each)");
ABSL_FLAG(int, cohorts, 10, "Cohorts the ClusterQueues are spread over");
ABSL_FLAG(int, workloads, 50000, "Pending single-pod Workloads");
ABSL_FLAG(double, fill, 0.5,
          "The fraction of each ClusterQueue's Workloads its quota holds");
ABSL_FLAG(int, finish, 100, "Phase 2: Workloads finished per round");
ABSL_FLAG(int, rounds, 50, "Phase 2: rounds");
ABSL_FLAG(std::string, store, "rocksdb", "rocksdb (in --data_dir) or memory");
ABSL_FLAG(bool, fsync, true, "fsync the store's commits");
ABSL_FLAG(bool, fair_sharing, false,
          "Admit with Kueue's fair sharing (jobsetd --fair_sharing)");
ABSL_FLAG(std::string, data_dir, "/tmp/jobsetd-admission-bench",
          "Store directory (wiped)");

namespace jobset::scheduler {
namespace {

std::string Put(store::Store& store, const std::string& key,
                const api::KueueObject& o) {
  absl::StatusOr<int64_t> rev =
      store.Commit(store::Batch().Put(key, o.SerializeAsString()));
  if (!rev.ok()) JOBSET_LOG(FATAL) << rev.status();
  return key;
}

void Setup(store::Store& store, int cqs, int cohorts, int workloads,
           int per_cq_quota) {
  api::KueueObject flavor;
  flavor.mutable_resource_flavor()->mutable_metadata()->set_name("default");
  Put(store, store::keys::KueueKey("resourceflavors", "", "default"), flavor);
  for (int i = 0; i < cqs; ++i) {
    api::KueueObject o;
    api::ClusterQueue* cq = o.mutable_cluster_queue();
    cq->mutable_metadata()->set_name(absl::StrCat("cq-", i));
    cq->mutable_spec()->set_cohort(absl::StrCat("cohort-", i % cohorts));
    cq->mutable_spec()->set_queueing_strategy("BestEffortFIFO");
    cq->mutable_spec()->mutable_namespace_selector();
    api::ResourceGroup* g = cq->mutable_spec()->add_resource_groups();
    g->add_covered_resources("cpu");
    api::FlavorQuotas* f = g->add_flavors();
    f->set_name("default");
    api::ResourceQuota* q = f->add_resources();
    q->set_name("cpu");
    q->set_nominal_quota(absl::StrCat(per_cq_quota));
    // No borrowing: each queue's admissions are its own, so the figures
    // are the cycle's, not the cohort's luck.
    q->set_borrowing_limit("0");
    Put(store,
        store::keys::KueueKey("clusterqueues", "", cq->metadata().name()), o);
    api::KueueObject l;
    api::LocalQueue* lq = l.mutable_local_queue();
    lq->mutable_metadata()->set_name(absl::StrCat("lq-", i));
    lq->mutable_metadata()->set_namespace_("default");
    lq->mutable_spec()->set_cluster_queue(cq->metadata().name());
    Put(store,
        store::keys::KueueKey("localqueues", "default", lq->metadata().name()),
        l);
  }
  // Written in batches, as many clients would.
  store::Batch batch;
  for (int i = 0; i < workloads; ++i) {
    api::KueueObject o;
    api::Workload* wl = o.mutable_workload();
    wl->mutable_metadata()->set_name(absl::StrCat("wl-", i));
    wl->mutable_metadata()->set_namespace_("default");
    wl->mutable_metadata()->set_uid(absl::StrCat("uid-", i));
    wl->mutable_metadata()->mutable_creation_timestamp()->set_seconds(
        1'700'000'000 + i);
    wl->mutable_spec()->set_queue_name(absl::StrCat("lq-", i % cqs));
    api::PodSet* ps = wl->mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ps->set_count(1);
    api::Container* c =
        ps->mutable_template_()->mutable_spec()->add_containers();
    c->set_name("main");
    c->set_image("busybox");
    (*c->mutable_resources()->mutable_requests())["cpu"] = "1";
    batch.Put(
        store::keys::KueueKey("workloads", "default", wl->metadata().name()),
        o.SerializeAsString());
    if (batch.ops().size() == 1000 || i + 1 == workloads) {
      absl::StatusOr<int64_t> rev = store.Commit(batch);
      if (!rev.ok()) JOBSET_LOG(FATAL) << rev.status();
      batch = store::Batch();
    }
  }
}

int Admitted(store::Store& store, std::vector<std::string>* keys) {
  int n = 0;
  absl::StatusOr<int64_t> s = store.ReadAll(
      store::keys::KueuePrefix("workloads", "default"),
      [](int64_t) { return absl::OkStatus(); },
      [&](const store::KeyValue& kv) {
        api::KueueObject o;
        if (!o.ParseFromString(kv.value)) return absl::OkStatus();
        if (o.workload().status().has_admission() &&
            !IsConditionTrue(o.workload().status().conditions(), "Finished")) {
          ++n;
          if (keys != nullptr) keys->push_back(kv.key);
        }
        return absl::OkStatus();
      });
  if (!s.ok()) JOBSET_LOG(FATAL) << s.status();
  return n;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

int Run() {
  const int cqs = absl::GetFlag(FLAGS_cluster_queues);
  const int workloads = absl::GetFlag(FLAGS_workloads);
  const int per_cq = std::max(1, workloads / cqs);
  const int quota =
      std::max(1, static_cast<int>(per_cq * absl::GetFlag(FLAGS_fill)));
  std::unique_ptr<store::Store> store;
  if (absl::GetFlag(FLAGS_store) == "memory") {
    store = std::make_unique<store::MemoryStore>();
  } else {
    const std::string dir = absl::GetFlag(FLAGS_data_dir);
    std::filesystem::remove_all(dir);
    absl::StatusOr<std::unique_ptr<store::RocksDbStore>> opened =
        store::RocksDbStore::Open(
            {.path = dir, .sync = absl::GetFlag(FLAGS_fsync)});
    if (!opened.ok()) JOBSET_LOG(FATAL) << opened.status();
    store = *std::move(opened);
  }
  Setup(*store, cqs, absl::GetFlag(FLAGS_cohorts), workloads, quota);
  std::printf(
      "%d ClusterQueues in %d cohorts, %d pending Workloads, quota "
      "for %d of each queue's %d; store %s fsync %s fair sharing %s\n",
      cqs, absl::GetFlag(FLAGS_cohorts), workloads, quota, per_cq,
      absl::GetFlag(FLAGS_store).c_str(),
      absl::GetFlag(FLAGS_fsync) ? "on" : "off",
      absl::GetFlag(FLAGS_fair_sharing) ? "on" : "off");

  std::optional<queues::FairSharing> fair_sharing;
  if (absl::GetFlag(FLAGS_fair_sharing)) fair_sharing = queues::FairSharing{};
  QueueAdmission queues(store.get(),
                        {.fair_sharing = fair_sharing, .max_cycles = 64});
  ControllerState state;
  EventLog events;
  if (absl::Status s = queues.Load(); !s.ok()) JOBSET_LOG(FATAL) << s;

  // Phase 1.
  const int expected = std::min(workloads, quota * cqs);
  const absl::Time start = absl::Now();
  int runs = 0;
  while (queues.dirty()) {
    if (absl::Status s = queues.Run(state, events, absl::Now()); !s.ok())
      JOBSET_LOG(FATAL) << s;
    ++runs;
    queues.Touch();
    if (runs > 10 * (expected / cqs + 2)) break;
    if (runs % 4 == 0 && Admitted(*store, nullptr) >= expected) break;
  }
  const absl::Duration took = absl::Now() - start;
  const int admitted = Admitted(*store, nullptr);
  std::printf(
      "phase 1: %d admitted in %.3f s over %d stage runs: %.0f "
      "admissions/s\n",
      admitted, absl::ToDoubleSeconds(took), runs,
      admitted / absl::ToDoubleSeconds(took));

  // Phase 2.
  std::mt19937 rng(1);
  std::vector<double> latencies_ms;
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    std::vector<std::string> keys;
    Admitted(*store, &keys);
    std::shuffle(keys.begin(), keys.end(), rng);
    keys.resize(std::min<size_t>(keys.size(), absl::GetFlag(FLAGS_finish)));
    if (keys.empty()) break;
    // They finish together, in one commit (as one controller pass stores
    // the ends of the JobSets it reconciled); quota is free from then.
    store::Batch batch;
    std::vector<api::KueueObject> finished;
    for (const std::string& key : keys) {
      absl::StatusOr<std::optional<store::KeyValue>> kv = store->Get(key);
      if (!kv.ok() || !kv->has_value()) JOBSET_LOG(FATAL) << "lost " << key;
      api::KueueObject& o = finished.emplace_back();
      if (!o.ParseFromString((*kv)->value)) JOBSET_LOG(FATAL) << key;
      UpdateCondition(
          o.mutable_workload()->mutable_status()->mutable_conditions(),
          "Finished", true, "Succeeded", "Job finished successfully",
          absl::Now());
      batch.Put(key, o.SerializeAsString());
    }
    absl::StatusOr<int64_t> rev = store->Commit(batch);
    if (!rev.ok()) JOBSET_LOG(FATAL) << rev.status();
    const absl::Time freed = absl::Now();
    for (size_t i = 0; i < keys.size(); ++i) {
      store::Event e;
      e.kv = {keys[i], finished[i].SerializeAsString(), *rev, *rev};
      queues.OnEvent(e);
    }
    if (absl::Status s = queues.Run(state, events, absl::Now()); !s.ok())
      JOBSET_LOG(FATAL) << s;
    const absl::Time committed = absl::Now();
    // One run's commit admits every successor, or the figures lie.
    const int now_admitted = Admitted(*store, nullptr);
    if (now_admitted != admitted) {
      std::printf("phase 2: round %d left %d admitted, not %d\n", round,
                  now_admitted, admitted);
      return 1;
    }
    latencies_ms.push_back(absl::ToDoubleMilliseconds(committed - freed));
  }
  std::printf(
      "phase 2: %zu rounds, each %d Workloads finishing in one commit and "
      "their successors' admissions committed by the next stage run, "
      "quota freed to admitted: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
      latencies_ms.size(), absl::GetFlag(FLAGS_finish),
      Percentile(latencies_ms, 0.5), Percentile(latencies_ms, 0.99),
      Percentile(latencies_ms, 1.0));
  return 0;
}

}  // namespace
}  // namespace jobset::scheduler

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return jobset::scheduler::Run();
}
