#ifndef JOBSET_TESTS_FLEET_SIM_SCENARIOS_H_
#define JOBSET_TESTS_FLEET_SIM_SCENARIOS_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tests/fleet_sim_agent.h"
#include "tests/fleet_sim_api.h"
#include "tests/fleet_sim_support.h"
#include "tests/jobsetd_process.h"

// The fleet simulator's scenarios (issue 42's targets), each against the
// one real jobsetd the Bench started, with the fleet of simulated agents.
namespace jobset::testing::fleet {

// One scenario's outcome: its figures in order, the targets it was held
// to, and what went wrong (a wait that ran out, an error jobsetd gave).
struct Result {
  struct Figure {
    std::string key;
    double value = 0;
    std::string unit;  // "", "s", "ms", "%", "MiB", "/s"
  };
  explicit Result(std::string name) : scenario(std::move(name)) {}

  std::string scenario;
  std::vector<Figure> figures;
  std::vector<std::string> targets;  // "<what> <= <limit>: met|MISSED"
  std::vector<std::string> notes;
  // Every wait ended in time and nothing failed (the targets aside).
  bool completed = true;

  void Add(std::string key, double value, std::string unit = "") {
    figures.push_back({std::move(key), value, std::move(unit)});
  }
  // Records target `what` (value against limit; at_most: value <= limit).
  void Target(const std::string& what, double value, double limit, bool at_most,
              const std::string& unit);
  void Fail(std::string note) {
    completed = false;
    notes.push_back(std::move(note));
  }
  // One line: "fleet <scenario>: k v unit, ...; targets; notes".
  std::string Line() const;
  // A JSON object.
  std::string Json() const;
};

// jobsetd, the fleet and the administrator's client; runs the scenarios.
// Used from one thread.
class Bench {
 public:
  struct Options {
    int agents = 1000;
    std::string jobsetd;                    // binary
    std::vector<std::string> jobsetd_args;  // extra flags
    absl::Duration heartbeat_interval = absl::Seconds(10);
    absl::Duration node_lost_timeout = absl::Seconds(30);
    // connect: how long heartbeats are measured.
    absl::Duration measure = absl::Seconds(30);
    // How long all agents may take to join and be welcomed.
    absl::Duration connect_timeout = absl::Seconds(300);
    int join_concurrency = 32;
    int create_concurrency = 16;
    int churn_jobsets = 10000;
    int silent_agents = 1000;
    int big_gang_pods = 4096;
    bool keep = false;  // keep the data directory
    // What happens to the agents' pod reports on the way (none: off).
    ReportMixer::Options mix;
  };

  explicit Bench(Options options);
  ~Bench();

  // Starts jobsetd, joins every agent and waits until they are welcomed
  // (or connect_timeout: the shortfall is in the connect scenario).
  absl::Status Start();

  Result Connect();
  Result Reconnect();
  Result BigGang();
  Result Restart();
  Result Churn();
  Result NodeLoss();

  // For scenarios of their own (fleet_sim_duplicates.h): valid after Start.
  AdminClient& admin() { return *admin_; }
  Fleet& fleet() { return *fleet_; }
  int joined() const { return joined_; }
  pid_t jobsetd_pid() const { return jobsetd_pid_.load(); }
  const std::string& data_dir() const { return dir_; }
  // Deletes the JobSets of scenario `run` and waits until the agents hold
  // no pods (bounded).
  void CleanUp(const std::string& run, Result* r);
  // Counter or gauge `name` of the running jobsetd's /metrics (-1 if it
  // cannot be read).
  double Metric(const std::string& name);

 private:
  // CPU and memory over a scenario's window: jobsetd's (whichever process
  // runs now) and this process's.
  class Window {
   public:
    explicit Window(Bench* bench);
    // Adds jobsetd CPU %, RSS (now and peak) and the simulator's CPU %.
    void End(Result* r);

   private:
    Bench* const bench_;
    const absl::Time start_;
    const pid_t pid_;
    const ProcStat jobsetd_;
    const ProcStat self_;
  };

  absl::StatusOr<std::unique_ptr<JobsetdProcess>> StartJobsetd(
      const std::string& listen);
  // Creates `jobsets`; false (and a note) unless all were created.
  bool CreateAll(const std::vector<api::JobSet>& jobsets, Result* r);
  // Waits until each JobSet's attempt has `pods` run orders; the last
  // arrival (InfinitePast if one never completed: noted).
  absl::Time AwaitRuns(const std::vector<api::JobSet>& jobsets, int attempt,
                       int pods, absl::Time deadline, Result* r);
  // Waits until every agent not silenced is welcomed (bounded); short of
  // that, notes it and says whether enough are (64) to run on.
  bool AwaitFleet(absl::Duration timeout, Result* r);
  void SampleLoop();
  int64_t TakePeakRss();

  const Options options_;
  std::string dir_;
  std::string address_;
  std::vector<std::string> base_args_;
  std::unique_ptr<JobsetdProcess> jobsetd_;
  std::atomic<pid_t> jobsetd_pid_ = 0;
  int metrics_port_ = 0;  // the running jobsetd's /metrics
  // jobsetd_node_lost_total now (-1 if it cannot be read).
  double NodesLost() { return Metric("jobsetd_node_lost_total"); }
  std::unique_ptr<AdminClient> admin_;
  std::unique_ptr<Fleet> fleet_;
  int joined_ = 0;
  double join_seconds_ = 0;
  double connect_seconds_ = 0;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int64_t peak_rss_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread sampler_;
};

}  // namespace jobset::testing::fleet

#endif  // JOBSET_TESTS_FLEET_SIM_SCENARIOS_H_
