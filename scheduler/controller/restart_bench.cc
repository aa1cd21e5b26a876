// Restart-all at scale: a JobSet of --jobs x --pods_per_job pods on as many
// fake nodes, running; one pod fails. Measures the time from the failure
// report to the new attempt's assignments being ready: from the failure
// report to the last stop order handed to the fleet, plus from the agents'
// stop confirmations (fed back at once) to the last assignment of the new
// attempt (placed, committed and handed to the fleet). Also the process's
// CPU time for the whole restart (the controller thread, the store write it
// overlaps with building the assignments, RocksDB's own threads), including
// what follows the last order (freeing the old attempt), and the
// controller's memory per pod. --strategy=InPlaceRestart restarts the same
// pods where they are instead (in_place_restart.h): no new pods, no
// placement, the new attempt's orders once every stop is confirmed.
//
//   bazel run -c opt //scheduler/controller:restart_bench -- --jobs=1000
//   --pods_per_job=15 [--strategy=InPlaceRestart]
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "api/defaults.h"
#include "common/clock.h"
#include "common/log.h"
#include "gperftools/malloc_extension_c.h"
#include "scheduler/controller/controller_core.h"
#include "store/etcd_store.h"
#include "store/keys.h"
#include "store/rocksdb_store.h"

ABSL_FLAG(int, jobs, 1000, "Jobs (replicas of one ReplicatedJob)");
ABSL_FLAG(int, pods_per_job, 15, "Pods per Job (parallelism = completions)");
ABSL_FLAG(int, restarts, 3, "Restarts to time");
ABSL_FLAG(bool, fsync, true, "fsync the store's commits");
ABSL_FLAG(std::string, store, "rocksdb",
          "rocksdb (in --data_dir) or etcd (--etcd_endpoints; a key prefix "
          "of this run's own)");
ABSL_FLAG(std::string, etcd_endpoints, "",
          "--store=etcd: comma-separated http(s)://HOST:PORT");
ABSL_FLAG(std::string, etcd_cafile, "", "--store=etcd over https: the CA");
ABSL_FLAG(std::string, etcd_certfile, "", "a client certificate");
ABSL_FLAG(std::string, etcd_keyfile, "", "its key");
ABSL_FLAG(std::string, strategy, "Recreate",
          "failurePolicy.restartStrategy: Recreate or InPlaceRestart");
ABSL_FLAG(std::string, data_dir, "/tmp/jobsetd-restart-bench",
          "Store directory (wiped)");

namespace jobset::scheduler {
namespace {

class BenchFleet : public AgentFleet {
 public:
  void Run(Assignment order) override {
    running.push_back({order.node(), order.uid()});
    last_order = absl::Now();
  }
  void Stop(const std::string& node, const std::string& uid) override {
    stopped.push_back({node, uid});
    last_order = absl::Now();
  }
  void Release(const std::string&, const std::string&) override {}
  std::vector<std::pair<std::string, std::string>> running, stopped;
  absl::Time last_order;  // When the last order was handed over.
};

// The process's CPU time: steadier than wall time on a shared VM, where a
// neighbour can take a core mid-run.
absl::Duration ProcessCpu() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return absl::DurationFromTimespec(ts);
}

int64_t RssBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// Bytes allocated and not freed (tcmalloc's count).
size_t HeapBytes() {
  size_t bytes = 0;
  MallocExtension_GetNumericProperty("generic.current_allocated_bytes", &bytes);
  return bytes;
}

PodReport Report(const std::pair<std::string, std::string>& pod,
                 const std::string& phase, int exit_code, int32_t attempt) {
  PodReport r;
  r.in_place_restart_attempt = attempt;
  r.node = pod.first;
  r.pod_uid = pod.second;
  r.status.set_phase(phase);
  api::ContainerStatus* c = r.status.add_container_statuses();
  c->set_name("main");
  c->set_flat_state(phase == "Running" ? "running" : "terminated");
  c->set_exit_code(exit_code);
  if (phase == "Running") {
    api::Condition* ready = r.status.add_conditions();
    ready->set_type("Ready");
    ready->set_status("True");
  }
  return r;
}

void Settle(ControllerCore& core) {
  for (int i = 0; i < 50; ++i) {
    if (!core.Pass().ok()) std::abort();
    std::optional<absl::Time> next = core.NextWake();
    if (!next || *next > absl::Now()) return;
  }
}

int Main() {
  const int jobs = absl::GetFlag(FLAGS_jobs);
  const int per_job = absl::GetFlag(FLAGS_pods_per_job);
  const int pods = jobs * per_job;
  const std::string dir = absl::GetFlag(FLAGS_data_dir);
  std::filesystem::remove_all(dir);
  absl::StatusOr<std::unique_ptr<store::Store>> store;
  if (absl::GetFlag(FLAGS_store) == "etcd") {
    store = store::EtcdStore::Open(
        {.endpoints = absl::StrSplit(absl::GetFlag(FLAGS_etcd_endpoints), ',',
                                     absl::SkipWhitespace()),
         .ca_file = absl::GetFlag(FLAGS_etcd_cafile),
         .cert_file = absl::GetFlag(FLAGS_etcd_certfile),
         .key_file = absl::GetFlag(FLAGS_etcd_keyfile),
         .prefix = absl::StrCat("/restart_bench/", getpid(), "/")});
  } else {
    store = store::RocksDbStore::Open(
        {.path = dir, .sync = absl::GetFlag(FLAGS_fsync)});
  }
  if (!store.ok()) {
    JOBSET_LOG(ERROR) << store.status().ToString();
    return 1;
  }
  const bool in_place = absl::GetFlag(FLAGS_strategy) == "InPlaceRestart";
  if (!in_place && absl::GetFlag(FLAGS_strategy) != "Recreate") {
    JOBSET_LOG(ERROR) << "--strategy: Recreate or InPlaceRestart";
    return 1;
  }
  const api::Features features{.restart_job = true, .in_place_restart = true};
  BenchFleet fleet;
  ControllerCore core(store->get(), &fleet, RealClock::Get(),
                      {.features = features});
  (void)core.Load();
  for (int n = 0; n < pods; ++n) {
    NodeInfo node;
    node.name = absl::StrCat("node-", n);
    node.address =
        absl::StrCat("10.", n / 65536, ".", (n / 256) % 256, ".", n % 256);
    node.labels["cloud.google.com/gke-nodepool"] =
        absl::StrCat("pool-", n / per_job);
    node.allocatable.cpu_millis = 8000;
    node.allocatable.memory_bytes = int64_t{32} << 30;
    node.allocatable.extended["nvidia.com/gpu"] = 1;
    core.SetNode(std::move(node));
  }

  // One ReplicatedJob: `jobs` Jobs of `per_job` pods, one GPU each, one Job
  // per node pool, restart on any failure.
  api::JobSet js;
  js.mutable_metadata()->set_name("big");
  js.mutable_metadata()->set_uid("big-uid");
  (*js.mutable_metadata()->mutable_annotations())
      ["alpha.jobset.sigs.k8s.io/exclusive-topology"] =
          "cloud.google.com/gke-nodepool";
  js.mutable_spec()->mutable_failure_policy()->set_max_restarts(1'000'000);
  api::ReplicatedJob* rjob = js.mutable_spec()->add_replicated_jobs();
  rjob->set_name("w");
  rjob->set_replicas(jobs);
  api::JobSpec* spec = rjob->mutable_template_()->mutable_spec();
  spec->set_parallelism(per_job);
  spec->set_completions(per_job);
  if (in_place) {
    js.mutable_spec()->mutable_failure_policy()->set_restart_strategy(
        "InPlaceRestart");
    spec->set_backoff_limit(std::numeric_limits<int32_t>::max());
  } else {
    spec->set_backoff_limit(0);
  }
  api::PodSpec* pod = spec->mutable_template_()->mutable_spec();
  pod->set_restart_policy("Never");
  api::Container* c = pod->add_containers();
  c->set_name("main");
  c->set_image("trainer");
  c->add_command("python3");
  c->add_command("train.py");
  (*c->mutable_resources()->mutable_requests())["nvidia.com/gpu"] = "1";
  (*c->mutable_resources()->mutable_requests())["cpu"] = "4";
  api::SetJobSetDefaults(&js);
  const std::string key = store::keys::JobSetKey("default", "big");
  auto revision =
      (*store)->Commit(store::Batch().Put(key, js.SerializeAsString()));
  store::Event event;
  event.kv = {key, js.SerializeAsString(), *revision, *revision};

  const int64_t rss_before = RssBytes();
  absl::Time t0 = absl::Now();
  core.OnJobSetEvent(event);
  Settle(core);
  const absl::Duration first_launch = absl::Now() - t0;
  if (static_cast<int>(fleet.running.size()) != pods) {
    JOBSET_LOG(ERROR) << "placed " << fleet.running.size() << " of " << pods
                      << " pods";
    return 1;
  }
  for (const auto& p : fleet.running)
    core.OnPodReport(Report(p, "Running", 0, 0));
  Settle(core);
  const int64_t rss_after = RssBytes();
  // The controller's own state: the heap a second controller takes to Load
  // the same JobSet (its Jobs, pod records and indexes; nodes excluded).
  int64_t object_bytes = 0;
  {
    BenchFleet unused;
    ControllerCore loaded(store->get(), &unused, RealClock::Get(),
                          {.features = features});
    const size_t heap_before = HeapBytes();
    if (!loaded.Load().ok()) std::abort();
    object_bytes =
        static_cast<int64_t>(HeapBytes()) - static_cast<int64_t>(heap_before);
  }

  std::printf(
      "restart-all (%s): %d Jobs x %d pods = %d pods on %d nodes, %s, fsync "
      "%s\n",
      absl::GetFlag(FLAGS_strategy).c_str(), jobs, per_job, pods, pods,
      absl::GetFlag(FLAGS_store).c_str(),
      absl::GetFlag(FLAGS_fsync) ? "on" : "off");
  std::printf("first launch (create, place, commit, launch orders): %.1f ms\n",
              absl::ToDoubleMilliseconds(first_launch));
  std::printf(
      "process memory: %.0f MiB for %d pods = %.2f KiB per pod (RSS growth; "
      "RocksDB memtables and the watch history included)\n",
      (rss_after - rss_before) / 1048576.0, pods,
      (rss_after - rss_before) / 1024.0 / pods);
  std::printf(
      "controller state: %.2f KiB per pod (heap allocated by Load: Jobs, pod "
      "records, indexes)\n",
      object_bytes / 1024.0 / pods);
  std::printf("%-8s %-16s %-20s %-10s %-10s\n", "restart", "stop orders ms",
              "new launch orders ms", "total ms", "cpu ms");
  for (int r = 1; r <= absl::GetFlag(FLAGS_restarts); ++r) {
    std::vector<std::pair<std::string, std::string>> running =
        std::move(fleet.running);
    fleet.running.clear();
    fleet.stopped.clear();
    // The failure, and the agents' confirmations of every stop, are built
    // outside the timed spans: in jobsetd the agents' streams parse them on
    // their own threads, and the controller's work starts at OnPodReport.
    // Reports are of the attempt they come from: a restart in place's
    // attempt is r - 1 before it and r after (Recreate: always 0).
    const int32_t before = in_place ? r - 1 : 0;
    const int32_t after = in_place ? r : 0;
    const PodReport failure =
        Report(running[running.size() / 2], "Failed", 1, before);
    const absl::Time start = absl::Now();
    const absl::Duration cpu_start = ProcessCpu();
    core.OnPodReport(failure);
    Settle(core);
    const absl::Duration stop_span = fleet.last_order - start;
    const absl::Duration stop_cpu = ProcessCpu() - cpu_start;
    // Every pod but the failed one is told to stop.
    if (static_cast<int>(fleet.stopped.size()) != pods - 1) {
      JOBSET_LOG(ERROR) << "restart " << r << " stopped "
                        << fleet.stopped.size() << " of " << pods - 1
                        << " pods";
      return 1;
    }
    std::vector<PodReport> confirmations;
    confirmations.reserve(fleet.stopped.size());
    for (const auto& p : fleet.stopped)
      confirmations.push_back(Report(p, "Failed", 137, before));
    const absl::Time confirmed = absl::Now();
    const absl::Duration cpu_confirmed = ProcessCpu();
    for (const PodReport& report : confirmations) core.OnPodReport(report);
    Settle(core);
    const absl::Duration launch_span = fleet.last_order - confirmed;
    const absl::Duration cpu = stop_cpu + (ProcessCpu() - cpu_confirmed);
    if (static_cast<int>(fleet.running.size()) != pods) {
      JOBSET_LOG(ERROR) << "restart " << r << " launched "
                        << fleet.running.size() << " of " << pods << " pods";
      return 1;
    }
    std::printf("%-8d %-16.1f %-20.1f %-10.1f %-10.1f\n", r,
                absl::ToDoubleMilliseconds(stop_span),
                absl::ToDoubleMilliseconds(launch_span),
                absl::ToDoubleMilliseconds(stop_span + launch_span),
                absl::ToDoubleMilliseconds(cpu));
    for (const auto& p : fleet.running)
      core.OnPodReport(Report(p, "Running", 0, after));
    Settle(core);
  }
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace jobset::scheduler

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return jobset::scheduler::Main();
}
