#ifndef JOBSET_TESTS_FLEET_SIM_DUPLICATES_H_
#define JOBSET_TESTS_FLEET_SIM_DUPLICATES_H_

#include <vector>

#include "absl/time/time.h"
#include "proto/jobset.pb.h"
#include "tests/fleet_sim_mixer.h"
#include "tests/fleet_sim_scenarios.h"

// The fleet simulator's duplicates scenario: the reliability plan's I1
// (issue 44), "every agent message duplicated and reordered changes
// nothing".
namespace jobset::testing::fleet {

// The label value (kRunLabel) of the scenario's JobSets.
inline constexpr char kDuplicatesRun[] = "duplicates";

// JobSet i of the workload (namespace fleet-duplicates) is of kind i % 4,
// each of two ReplicatedJobs "a" and "b" of one Job of 2 pods
// (restartPolicy Never, backoffLimit 0), 4 tasks a JobSet:
//   0, 1  ok-i:      a runs 0.2-0.4 s, b 0.6 s, both exit 0: Completed, no
//                    restart.
//   2     retry-i:   maxRestarts 3; a exits 3 after 0.2-0.4 s on restart
//                    attempt 0 only (SIM_FAIL_ATTEMPTS=1), b runs 1.5 s:
//                    one restart-all, then Completed.
//   3     exhaust-i: maxRestarts 2; a exits 3 after 0.2-0.4 s on every
//                    attempt, b runs until stopped: two restarts, then
//                    Failed.
std::vector<api::JobSet> DuplicatesWorkload(int jobsets);

struct DuplicatesOptions {
  int jobsets = 100;
  // The second run's mixing (the first delivers every report once).
  ReportMixer::Options mix;
  // Each run's limit, from its first create to every JobSet finished.
  absl::Duration timeout = absl::Seconds(300);
};

// Runs the workload on a fresh jobsetd (a data directory of its own) and
// fleet with every report delivered once, then on another with `o.mix`;
// prints a table of both runs, and every difference in a JobSet's terminal
// state, restarts, restartsCountTowardsMax, or per-ReplicatedJob succeeded
// and failed Jobs; and counts pods and tasks ordered to run twice.
// The result is not completed if the runs differ, either run's outcomes are
// not the workload's, a pod ran twice, or the mixed run mixed nothing.
Result RunDuplicates(const Bench::Options& bench, const DuplicatesOptions& o);

}  // namespace jobset::testing::fleet

#endif  // JOBSET_TESTS_FLEET_SIM_DUPLICATES_H_
