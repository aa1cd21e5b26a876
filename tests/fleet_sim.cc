// The fleet simulator (issue 42): one process that joins N simulated
// agents (a P-256 key, a CSR and JoinNode each, with the join token, as
// jobset-agent does) and keeps N real mTLS agent streams open on gRPC's
// callback API (no thread per stream), answering run and stop orders at
// once as a runtime that runs nothing would (tests/fleet_sim_agent.h), and
// drives scenarios against one real jobsetd it starts (RocksDB, fsync on),
// printing each scenario's figures with jobsetd's CPU and RSS:
//
//   connect     N agents connected, heartbeating: round trip p50/p99/max
//   reconnect   kill -9 and restart of jobsetd with N agents and N pods:
//               time until every agent is Ready again; pods restarted,
//               nodes declared lost (both should be 0)
//   big_gang    one JobSet of up to 4,096 pods, exclusive topology (slices
//               of 64 hosts): submit -> every run order received
//   restart     N*10 pods running (N/10 JobSets of 100) and a 4,096-pod
//               JobSet; one of its pods fails: failure -> every run order
//               of the new attempt received
//   churn       10,000 single-pod JobSets of instant pods submitted at
//               once: JobSets finished per second
//   node_loss   up to 1,000 busy agents silent at once: silence -> every
//               affected JobSet's new attempt received elsewhere
//   load        reliability plan L1/L2 (issue 44), not part of "all":
//               JobSets of 8 tasks created at --load_rate for
//               --load_duration with watchers, Lists, Gets, 1 % task
//               failures and an agent reconnect a minute: call latencies,
//               create -> running, jobsetd RSS growth, nothing lost
//               (tests/fleet_sim_load.h)
//   duplicates  reliability plan I1 (issue 44), not part of "all": the
//               same workload (--duplicates_jobsets JobSets of 4 tasks that
//               succeed, fail once then succeed after a restart-all, or
//               exhaust maxRestarts) on two fresh jobsetds, every pod
//               report delivered once, then duplicated and reordered: any
//               difference in how a JobSet ended, or a pod ordered to run
//               twice, fails it (tests/fleet_sim_duplicates.h)
//
// --duplicate_reports=N and --reorder_reports make every agent send each
// pod report N more times, at random times up to --duplicate_delay later,
// and shuffle reports in windows of --reorder_window (seeded by --seed;
// tests/fleet_sim_mixer.h), in any scenario; duplicates' second run uses
// them (5 and reordering when neither is given).
//
// A pod's workload is read from its containers' env: SIM_RUN_SECONDS (unset:
// until stopped) and SIM_EXIT_CODE (tests/fleet_sim_support.h). The
// simulator shares the machine's cores with jobsetd; it prints its own CPU.
// Every wait is bounded: a scenario that cannot reach its end says what it
// saw (INCOMPLETE) and the next one runs. Exit status: 0 when every
// scenario completed (targets met or not), 1 otherwise, 2 for bad flags.
//
//   tools/bench fleet --agents 1000 --scenario all
//   bazel run -c opt //tests:fleet_sim -- --agents=300 --scenario=connect
//   tools/bench fleet --agents 64 --scenario duplicates
//   --duplicates_jobsets=250
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "tests/fleet_sim_duplicates.h"
#include "tests/fleet_sim_load.h"
#include "tests/fleet_sim_scenarios.h"

ABSL_FLAG(int, agents, 1000, "Simulated agents (1 to 100000)");
ABSL_FLAG(std::string, scenario, "all",
          "Comma-separated scenarios: connect, reconnect, big_gang, restart, "
          "churn, node_loss, or all (in that order); duplicates (run last, "
          "on jobsetds of its own)");
ABSL_FLAG(std::string, jobsetd, "",
          "jobsetd binary (default: //scheduler:jobsetd in the runfiles)");
ABSL_FLAG(std::vector<std::string>, jobsetd_flags, {},
          "Comma-separated extra flags for jobsetd, e.g. "
          "--jobsetd_flags=--fsync=false");
ABSL_FLAG(absl::Duration, heartbeat_interval, absl::Seconds(10),
          "jobsetd --heartbeat_interval: how often agents heartbeat");
ABSL_FLAG(absl::Duration, node_lost_timeout, absl::Seconds(30),
          "jobsetd --node_lost_timeout (node_loss waits it out)");
ABSL_FLAG(absl::Duration, measure, absl::Seconds(30),
          "connect: how long heartbeats are measured");
ABSL_FLAG(absl::Duration, connect_timeout, absl::Seconds(300),
          "How long all agents may take to join and be welcomed");
ABSL_FLAG(int, join_concurrency, 32, "Joins in flight at once (1 to 1024)");
ABSL_FLAG(int, create_concurrency, 16,
          "JobSet creates (and deletes) in flight at once (1 to 1024)");
ABSL_FLAG(int, churn_jobsets, 10000, "churn: single-pod JobSets submitted");
ABSL_FLAG(int, silent_agents, 1000,
          "node_loss: agents silenced at once (at most half the busy ones)");
ABSL_FLAG(int, big_gang_pods, 4096,
          "big_gang and restart: pods of the big JobSet (64 Jobs; big_gang "
          "takes at most one slice of 64 hosts per 64 agents)");
ABSL_FLAG(int, duplicate_reports, 0,
          "Every agent sends each pod report this many more times (0 to 20)");
ABSL_FLAG(bool, reorder_reports, false,
          "Every agent sends its pod reports shuffled in windows");
ABSL_FLAG(absl::Duration, duplicate_delay, absl::Seconds(2),
          "A report's copies are sent at random up to this long after it");
ABSL_FLAG(absl::Duration, reorder_window, absl::Milliseconds(50),
          "A window of reports is shuffled and sent this long after its "
          "first report (or at 16 reports)");
ABSL_FLAG(int64_t, seed, 1, "Seeds the agents' duplicating and reordering");
ABSL_FLAG(int, duplicates_jobsets, 100,
          "duplicates: JobSets of 4 tasks (250: 1,000 tasks; 2,500: 10,000)");
ABSL_FLAG(absl::Duration, duplicates_timeout, absl::Seconds(300),
          "duplicates: how long each run's JobSets may take to finish");
ABSL_FLAG(double, load_rate, 20, "load: JobSets created per second");
ABSL_FLAG(absl::Duration, load_duration, absl::Minutes(10),
          "load: how long JobSets are created");
ABSL_FLAG(int, load_watchers, 20, "load: watches open all along");
ABSL_FLAG(double, load_fail_percent, 1,
          "load: the chance (%) that a task fails (its JobSet restarts once)");
ABSL_FLAG(absl::Duration, load_agent_restart_every, absl::Minutes(1),
          "load: one agent's stream is cut this often");
ABSL_FLAG(absl::Duration, load_min_run, absl::Seconds(20),
          "load: shortest pod run");
ABSL_FLAG(absl::Duration, load_max_run, absl::Seconds(60),
          "load: longest pod run");
ABSL_FLAG(absl::Duration, load_ttl, absl::Seconds(60),
          "load: ttlSecondsAfterFinished of every JobSet");
ABSL_FLAG(std::string, json, "", "Also write the figures to this file");
ABSL_FLAG(bool, keep, false, "Keep jobsetd's data directory");

namespace jobset::testing::fleet {
namespace {

// Every scenario, in the order --scenario=all runs them.
constexpr const char* kAll[] = {"connect", "reconnect", "big_gang",
                                "restart", "churn",     "node_loss"};

// Checks `value` of `flag` against [lo, hi]; the message names all three.
bool InRange(const char* flag, int64_t value, int64_t lo, int64_t hi,
             std::string* error) {
  if (value >= lo && value <= hi) return true;
  *error = absl::StrCat("--", flag, ": ", value, " is out of range [", lo, ", ",
                        hi, "]");
  return false;
}

bool PositiveDuration(const char* flag, absl::Duration d, absl::Duration max,
                      std::string* error) {
  if (d > absl::ZeroDuration() && d <= max) return true;
  *error =
      absl::StrCat("--", flag, ": ", absl::FormatDuration(d),
                   " must be above 0 and at most ", absl::FormatDuration(max));
  return false;
}

std::vector<std::string> Names(std::vector<std::string> scenarios, bool load,
                               bool duplicates) {
  if (load) scenarios.push_back("load");
  if (duplicates) scenarios.push_back("duplicates");
  return scenarios;
}

std::string DefaultJobsetd(const char* argv0) {
  if (const char* dir = std::getenv("RUNFILES_DIR"); dir != nullptr)
    return absl::StrCat(dir, "/jobsetd/scheduler/jobsetd");
  return absl::StrCat(argv0, ".runfiles/jobsetd/scheduler/jobsetd");
}

// 10,000 agents need 10,000 sockets here and in jobsetd (which inherits
// the limit).
void RaiseFileLimit() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
}

int Main(const char* argv0) {
  std::string error;
  const int agents = absl::GetFlag(FLAGS_agents);
  std::vector<std::string> scenarios;
  bool duplicates = false;
  bool load = false;
  for (absl::string_view s :
       absl::StrSplit(absl::GetFlag(FLAGS_scenario), ',', absl::SkipEmpty())) {
    if (s == "all") {
      scenarios.assign(std::begin(kAll), std::end(kAll));
      continue;
    }
    if (s == "duplicates") {
      duplicates = true;
      continue;
    }
    if (s == "load") {
      load = true;
      continue;
    }
    bool known = false;
    for (const char* k : kAll) known = known || s == k;
    if (!known) {
      error = absl::StrCat("--scenario: unknown scenario \"", s,
                           "\" (connect, reconnect, big_gang, restart, churn, "
                           "node_loss, all, load or duplicates)");
      break;
    }
    scenarios.emplace_back(s);
  }
  if (error.empty() && scenarios.empty() && !duplicates && !load)
    error = "--scenario: none given";
  const bool ok =
      error.empty() && InRange("agents", agents, 1, 100000, &error) &&
      InRange("join_concurrency", absl::GetFlag(FLAGS_join_concurrency), 1,
              1024, &error) &&
      InRange("create_concurrency", absl::GetFlag(FLAGS_create_concurrency), 1,
              1024, &error) &&
      InRange("churn_jobsets", absl::GetFlag(FLAGS_churn_jobsets), 1, 40000,
              &error) &&
      InRange("silent_agents", absl::GetFlag(FLAGS_silent_agents), 1, 100000,
              &error) &&
      InRange("big_gang_pods", absl::GetFlag(FLAGS_big_gang_pods), 64, 100000,
              &error) &&
      PositiveDuration("heartbeat_interval",
                       absl::GetFlag(FLAGS_heartbeat_interval),
                       absl::Minutes(5), &error) &&
      PositiveDuration("node_lost_timeout",
                       absl::GetFlag(FLAGS_node_lost_timeout),
                       absl::Minutes(10), &error) &&
      PositiveDuration("measure", absl::GetFlag(FLAGS_measure), absl::Hours(1),
                       &error) &&
      PositiveDuration("connect_timeout", absl::GetFlag(FLAGS_connect_timeout),
                       absl::Hours(1), &error) &&
      InRange("duplicate_reports", absl::GetFlag(FLAGS_duplicate_reports), 0,
              20, &error) &&
      PositiveDuration("duplicate_delay", absl::GetFlag(FLAGS_duplicate_delay),
                       absl::Minutes(1), &error) &&
      PositiveDuration("reorder_window", absl::GetFlag(FLAGS_reorder_window),
                       absl::Minutes(1), &error) &&
      InRange("duplicates_jobsets", absl::GetFlag(FLAGS_duplicates_jobsets), 1,
              25000, &error) &&
      PositiveDuration("duplicates_timeout",
                       absl::GetFlag(FLAGS_duplicates_timeout), absl::Hours(2),
                       &error) &&
      PositiveDuration("load_duration", absl::GetFlag(FLAGS_load_duration),
                       absl::Hours(24), &error) &&
      InRange("load_watchers", absl::GetFlag(FLAGS_load_watchers), 0, 1000,
              &error) &&
      PositiveDuration("load_agent_restart_every",
                       absl::GetFlag(FLAGS_load_agent_restart_every),
                       absl::Hours(24), &error) &&
      PositiveDuration("load_min_run", absl::GetFlag(FLAGS_load_min_run),
                       absl::Hours(1), &error) &&
      PositiveDuration("load_max_run", absl::GetFlag(FLAGS_load_max_run),
                       absl::Hours(1), &error) &&
      PositiveDuration("load_ttl", absl::GetFlag(FLAGS_load_ttl),
                       absl::Hours(24), &error);
  if (const double rate = absl::GetFlag(FLAGS_load_rate);
      ok && !(rate > 0 && rate <= 10000)) {
    error = absl::StrCat("--load_rate: ", rate, " is out of range (0, 10000]");
  } else if (const double fail = absl::GetFlag(FLAGS_load_fail_percent);
             ok && !(fail >= 0 && fail <= 100)) {
    error = absl::StrCat("--load_fail_percent: ", fail,
                         " is out of range [0, 100]");
  } else if (ok && absl::GetFlag(FLAGS_load_min_run) >
                       absl::GetFlag(FLAGS_load_max_run)) {
    error = "--load_min_run: above --load_max_run";
  }
  if (!ok || !error.empty()) {
    std::fprintf(stderr, "fleet_sim: %s\n", error.c_str());
    return 2;
  }
  RaiseFileLimit();
  Bench::Options o;
  o.agents = agents;
  o.jobsetd = absl::GetFlag(FLAGS_jobsetd);
  if (o.jobsetd.empty()) o.jobsetd = DefaultJobsetd(argv0);
  o.jobsetd_args = absl::GetFlag(FLAGS_jobsetd_flags);
  o.heartbeat_interval = absl::GetFlag(FLAGS_heartbeat_interval);
  o.node_lost_timeout = absl::GetFlag(FLAGS_node_lost_timeout);
  o.measure = absl::GetFlag(FLAGS_measure);
  o.connect_timeout = absl::GetFlag(FLAGS_connect_timeout);
  o.join_concurrency = absl::GetFlag(FLAGS_join_concurrency);
  o.create_concurrency = absl::GetFlag(FLAGS_create_concurrency);
  o.churn_jobsets = absl::GetFlag(FLAGS_churn_jobsets);
  o.silent_agents = absl::GetFlag(FLAGS_silent_agents);
  o.big_gang_pods = absl::GetFlag(FLAGS_big_gang_pods);
  o.keep = absl::GetFlag(FLAGS_keep);
  o.mix.duplicates = absl::GetFlag(FLAGS_duplicate_reports);
  o.mix.reorder = absl::GetFlag(FLAGS_reorder_reports);
  o.mix.seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed));
  o.mix.max_delay = absl::GetFlag(FLAGS_duplicate_delay);
  o.mix.window = absl::GetFlag(FLAGS_reorder_window);
  std::printf(
      "fleet_sim: %d agents, scenarios %s; jobsetd %s (RocksDB, "
      "--heartbeat_interval=%s --node_lost_timeout=%s%s%s); %u cores, shared "
      "by jobsetd and this simulator\n",
      agents, absl::StrJoin(Names(scenarios, load, duplicates), ",").c_str(),
      o.jobsetd.c_str(), absl::FormatDuration(o.heartbeat_interval).c_str(),
      absl::FormatDuration(o.node_lost_timeout).c_str(),
      o.jobsetd_args.empty() ? "" : " ",
      absl::StrJoin(o.jobsetd_args, " ").c_str(),
      std::thread::hardware_concurrency());
  std::fflush(stdout);
  std::vector<Result> results;
  bool completed = true;
  auto print = [&](Result r) {
    std::printf("%s\n", r.Line().c_str());
    std::fflush(stdout);
    completed = completed && r.completed;
    results.push_back(std::move(r));
  };
  if (!scenarios.empty() || load) {
    Bench bench(o);
    if (absl::Status s = bench.Start(); !s.ok()) {
      std::fprintf(stderr, "fleet_sim: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    for (const std::string& s : scenarios) {
      print(s == "connect"     ? bench.Connect()
            : s == "reconnect" ? bench.Reconnect()
            : s == "big_gang"  ? bench.BigGang()
            : s == "restart"   ? bench.Restart()
            : s == "churn"     ? bench.Churn()
                               : bench.NodeLoss());
    }
    if (load) {
      LoadOptions l;
      l.rate = absl::GetFlag(FLAGS_load_rate);
      l.duration = absl::GetFlag(FLAGS_load_duration);
      l.watchers = absl::GetFlag(FLAGS_load_watchers);
      l.fail_percent = absl::GetFlag(FLAGS_load_fail_percent);
      l.agent_restart_every = absl::GetFlag(FLAGS_load_agent_restart_every);
      l.min_run = absl::GetFlag(FLAGS_load_min_run);
      l.max_run = absl::GetFlag(FLAGS_load_max_run);
      l.ttl = absl::GetFlag(FLAGS_load_ttl);
      l.seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed));
      print(RunLoad(bench, l));
    }
  }
  if (duplicates) {
    DuplicatesOptions d;
    d.jobsets = absl::GetFlag(FLAGS_duplicates_jobsets);
    d.timeout = absl::GetFlag(FLAGS_duplicates_timeout);
    d.mix = o.mix;
    if (d.mix.duplicates == 0 && !d.mix.reorder) {
      d.mix.duplicates = 5;
      d.mix.reorder = true;
    }
    print(RunDuplicates(o, d));
  }
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    std::vector<std::string> items;
    for (const Result& r : results) items.push_back(r.Json());
    std::ofstream out(path);
    out << "{\"agents\": " << agents << ", \"scenarios\": [\n  "
        << absl::StrJoin(items, ",\n  ") << "\n]}\n";
    if (!out) {
      std::fprintf(stderr, "fleet_sim: cannot write --json=%s\n", path.c_str());
      completed = false;
    }
  }
  return completed ? 0 : 1;
}

}  // namespace
}  // namespace jobset::testing::fleet

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  // As jobsetd and jobset-agent: the system Abseil's deadlock detection
  // keeps a graph of every mutex (two per agent here) and costs more than
  // the simulation at 10,000 agents.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return jobset::testing::fleet::Main(argv[0]);
}
