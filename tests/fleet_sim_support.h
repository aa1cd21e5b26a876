#ifndef JOBSET_TESTS_FLEET_SIM_SUPPORT_H_
#define JOBSET_TESTS_FLEET_SIM_SUPPORT_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/support/status.h"
#include "proto/agent.pb.h"

// What the fleet simulator (tests/fleet_sim.cc) is made of besides its
// agents: the workload a pod runs, the node a simulated agent registers,
// timers, and what the fleet saw.
namespace jobset::testing::fleet {

// A pod's workload in the simulator, read from its containers' env (the
// first container that sets either variable):
//   SIM_RUN_SECONDS  seconds from Running to the pod's exit, 0 to 86400
//                    (fractions allowed); unset: runs until stopped.
//   SIM_EXIT_CODE    the exit code then, 0 to 255 (default 0): 0 is
//                    Succeeded, any other Failed.
//   SIM_FAIL_ATTEMPTS  with SIM_EXIT_CODE: only the pod's JobSet restart
//                    attempts below this number (0 to 1000) exit so; later
//                    ones exit 0 (unset: every attempt). A pod that fails
//                    once and succeeds after a restart-all sets 1.
inline constexpr char kRunSecondsEnv[] = "SIM_RUN_SECONDS";
inline constexpr char kExitCodeEnv[] = "SIM_EXIT_CODE";
inline constexpr char kFailAttemptsEnv[] = "SIM_FAIL_ATTEMPTS";
inline constexpr double kMaxRunSeconds = 86400;

struct Workload {
  std::optional<absl::Duration> run;  // nullopt: until stopped
  int exit_code = 0;
};

// Reads `pod`'s workload (for its restart attempt, RestartAttemptOf);
// InvalidArgument naming the variable, its value and the limit when one is
// malformed. A pure function.
absl::StatusOr<Workload> WorkloadOf(const api::Pod& pod);

// "namespace/name" of the JobSet `pod` belongs to (its jobset-name label),
// "" when it has none.
std::string JobSetKeyOf(const api::Pod& pod);
// The JobSet restart attempt `pod` is of (its restart-attempt label or
// annotation; 0 when absent or malformed).
int RestartAttemptOf(const api::Pod& pod);
// Its Job's index in its ReplicatedJob (the job-index label); -1 if none.
int JobIndexOf(const api::Pod& pod);
// The task `pod` runs, the same for every pod uid jobsetd may make for it:
// "namespace/jobset/attempt/<Job name>-<completion index>" (its name without
// the uid's suffix, scheduler/records/pods.cc's PodName).
std::string TaskKeyOf(const api::Pod& pod);

// What every simulated node registers: capacity, and the topology label
// cloud.google.com/gke-nodepool = "slice-<index / hosts_per_slice>" that
// exclusive placement (alpha.jobset.sigs.k8s.io/exclusive-topology) reads.
inline constexpr char kSliceLabel[] = "cloud.google.com/gke-nodepool";
struct NodeShape {
  int hosts_per_slice = 64;
  std::string cpu = "64";
  std::string memory = "512Gi";
  int gpus = 8;
};
std::string SimNodeName(int index);
api::NodeRegistration SimNode(int index, const NodeShape& shape);

// Runs callbacks at given times, in time order, on a thread of its own; a
// callback should be short (it enqueues a message, or opens a stream).
// Thread-safe.
class TimerQueue {
 public:
  TimerQueue() = default;
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;
  ~TimerQueue() { Stop(); }

  void Start();
  // Drops pending callbacks and joins the thread.
  void Stop();
  void At(absl::Time when, std::function<void()> fn);
  // The latest a callback ran after its time, since the last call.
  absl::Duration TakeMaxLateness();

 private:
  struct Entry {
    absl::Time when;
    int64_t seq;
    std::function<void()> fn;
  };
  void Loop();

  absl::Mutex mu_;
  absl::CondVar cv_;
  std::vector<Entry> heap_ ABSL_GUARDED_BY(mu_);
  int64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration max_late_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

// What the simulated agents saw: every run and stop order with its arrival
// time per JobSet and restart attempt, heartbeat round trips, how streams
// ended. Thread-safe.
class FleetRecorder {
 public:
  // Orders of one JobSet attempt.
  struct Tally {
    int64_t runs = 0;
    absl::Time first_run = absl::InfiniteFuture();
    absl::Time last_run = absl::InfinitePast();
    int64_t stops = 0;
    absl::Time last_stop = absl::InfinitePast();
    // Host table entries the run orders carried, all together.
    int64_t host_entries = 0;
    // Run orders for pods already running (the attempt's grown host
    // table, sent again), and the entries they carried.
    int64_t host_updates = 0;
    int64_t host_update_entries = 0;
    // Bytes of compressed host table (PodAssignment.hosts_table) the run
    // orders and the resends carried, all together.
    int64_t host_table_bytes = 0;
    // Where its first run order went.
    int first_agent = -1;
    std::string first_uid;
  };
  // Fleet-wide counts since the start.
  struct Counts {
    int64_t runs = 0;           // new pods ordered (Run or a Welcome's)
    int64_t welcome_runs = 0;   // of which by a Welcome
    int64_t welcome_drops = 0;  // pods a Welcome did not want
    int64_t stops = 0;
    int64_t releases = 0;
    int64_t welcomes = 0;
    int64_t refused_pods = 0;  // a workload that did not parse
    int64_t lost = 0;          // streams ended as a lost node
    // Launches past the first of one pod uid, and of one task (TaskKeyOf):
    // a pod or task ordered to run twice.
    int64_t double_launches = 0;
    int64_t double_task_launches = 0;
    // ReportMixer's copies: sent, dropped with their stream, and of those
    // sent, stale (the pod had moved on or was gone) and of a JobSet
    // attempt whose next attempt had been ordered to run.
    int64_t copies_sent = 0;
    int64_t copies_dropped = 0;
    int64_t stale_copies = 0;
    int64_t copies_after_restart = 0;
  };

  void Run(const std::string& jobset, int attempt, int agent,
           const std::string& uid, absl::Time at, bool from_welcome,
           int host_entries = 0, int64_t table_bytes = 0);
  // An agent starts pod `uid` of `jobset`'s attempt `attempt`, task `task`.
  void Launch(const std::string& uid, const std::string& jobset, int attempt,
              const std::string& task);
  // A copy of a report of pod `uid` was sent (or dropped); `stale`: the pod
  // had moved on.
  void ReportCopy(const std::string& uid, bool sent, bool stale);
  // A run order for a pod already here: its attempt's host table grew.
  void HostUpdate(const std::string& jobset, int attempt, int host_entries,
                  int64_t table_bytes = 0);
  void Stop(const std::string& jobset, int attempt, absl::Time at);
  void Release();
  void Welcome(int64_t dropped);
  void RefusedPod();
  // A stream ended with `status` (counted per code and message).
  void StreamEnded(const grpc::Status& status, bool was_welcomed);
  void JoinFailed(const std::string& error);

  Tally Get(const std::string& jobset, int attempt);
  Counts counts();
  // Waits until JobSet `jobset`'s attempt `attempt` has at least `runs` run
  // orders, or `deadline`; its tally then.
  Tally AwaitRuns(const std::string& jobset, int attempt, int64_t runs,
                  absl::Time deadline);

  // Heartbeat round trips are kept only while measuring.
  void SetMeasuring(bool on);
  void Rtt(absl::Duration rtt);
  std::vector<double> TakeRttsMs();

  // The most frequent errors (streams that ended other than cancelled,
  // joins that failed), "count x message", most first.
  std::vector<std::string> TopErrors(int n);
  void ClearErrors();

 private:
  absl::Mutex mu_;
  std::map<std::string, std::map<int, Tally>> tallies_ ABSL_GUARDED_BY(mu_);
  Counts counts_ ABSL_GUARDED_BY(mu_);
  bool measuring_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<double> rtts_ms_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> errors_ ABSL_GUARDED_BY(mu_);
  // Each launched pod's JobSet and attempt; launches per task.
  std::map<std::string, std::pair<std::string, int>> launched_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> task_launches_ ABSL_GUARDED_BY(mu_);
};

// The value at fraction `p` (0..1) of sorted `v`; 0 when empty.
double Percentile(const std::vector<double>& sorted, double p);

// A process's CPU time (user + system) and resident memory.
struct ProcStat {
  double cpu_seconds = 0;
  int64_t rss_bytes = 0;
};
// Reads /proc/<pid>/stat (pid 0: this process); zeros if it cannot.
ProcStat ReadProcStat(pid_t pid);

}  // namespace jobset::testing::fleet

#endif  // JOBSET_TESTS_FLEET_SIM_SUPPORT_H_
