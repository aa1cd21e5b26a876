#ifndef JOBSET_TESTS_FLEET_SIM_OUTCOMES_H_
#define JOBSET_TESTS_FLEET_SIM_OUTCOMES_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "proto/jobset.pb.h"

// What the fleet simulator's duplicates scenario (reliability plan I1)
// compares between its runs: how each JobSet ended.
namespace jobset::testing::fleet {

struct JobSetOutcome {
  std::string terminal_state;  // status.terminalState
  int restarts = 0;
  int restarts_count_towards_max = 0;
  // Per ReplicatedJob: its Jobs succeeded and failed
  // (status.replicatedJobsStatus).
  std::map<std::string, std::pair<int, int>> replicated;
};
// By "namespace/name".
using Outcomes = std::map<std::string, JobSetOutcome>;

// `jobset`'s outcome as its status says. A pure function.
JobSetOutcome OutcomeOf(const api::JobSet& jobset);

// Every difference between `a` and `b`, one line each naming the JobSet
// and the field: "ns/name status.restarts: single 1, mixed 2" (`a_name`,
// `b_name` say which run is which); a JobSet only one side has is named
// so. Empty when they agree. A pure function.
std::vector<std::string> CompareOutcomes(const Outcomes& a, const Outcomes& b,
                                         absl::string_view a_name,
                                         absl::string_view b_name);

}  // namespace jobset::testing::fleet

#endif  // JOBSET_TESTS_FLEET_SIM_OUTCOMES_H_
