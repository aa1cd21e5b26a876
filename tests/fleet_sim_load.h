#ifndef JOBSET_TESTS_FLEET_SIM_LOAD_H_
#define JOBSET_TESTS_FLEET_SIM_LOAD_H_

#include <cstdint>

#include "absl/time/time.h"
#include "tests/fleet_sim_scenarios.h"

// The reliability plan's L1 and L2 (issue 44) on the fleet simulator:
// sustained load for a while, then whether anything was lost.
//
// JobSets are created at `rate` per second for `duration`, each of two
// ReplicatedJobs of 2 Jobs of 2 pods (8 tasks, 1 GPU each), running
// `min_run` to `max_run` (seeded), then deleted `ttl` after they finish
// (ttlSecondsAfterFinished); a JobSet restarts all its pods once with the
// chance that one of its 8 tasks fails at `fail_percent` (its ReplicatedJob
// a exits 1 halfway through attempt 0). Meanwhile `watchers` watches of
// every JobSet, a List a second, ten Gets a second, and one agent's stream
// cut every `agent_restart_every` (it reconnects and keeps its pods, as an
// agent restarted on its node does).
//
// Figures: latencies of Create, Get, List and heartbeats (p50/p99/max),
// create -> first run order (the placement decision reached an agent) and
// -> every run order (every task running: the simulated runtime reports
// Running at once), jobsetd's RSS and fds sampled every 5 s and their
// growth over the run's second half (L2), its data directory's size,
// nodes declared lost and reports fenced (A6: both 0 with healthy agents).
// The run fails (INCOMPLETE) on anything lost: an acknowledged create
// never seen to finish, a JobSet that Failed, a task ordered to run twice,
// a create refused with a definite error.
namespace jobset::testing::fleet {

struct LoadOptions {
  double rate = 20;
  absl::Duration duration = absl::Minutes(10);
  int watchers = 20;
  double fail_percent = 1;
  absl::Duration agent_restart_every = absl::Minutes(1);
  absl::Duration min_run = absl::Seconds(20);
  absl::Duration max_run = absl::Seconds(60);
  absl::Duration ttl = absl::Seconds(60);
  uint64_t seed = 1;
};

Result RunLoad(Bench& bench, const LoadOptions& options);

}  // namespace jobset::testing::fleet

#endif  // JOBSET_TESTS_FLEET_SIM_LOAD_H_
