#include "tests/fleet_sim_outcomes.h"

#include <set>

#include "absl/strings/str_cat.h"

namespace jobset::testing::fleet {
namespace {

template <typename T>
void Diff(const std::string& key, absl::string_view field, const T& a,
          const T& b, absl::string_view a_name, absl::string_view b_name,
          std::vector<std::string>* out) {
  if (a == b) return;
  out->push_back(absl::StrCat(key, " ", field, ": ", a_name, " ", a, ", ",
                              b_name, " ", b));
}

}  // namespace

JobSetOutcome OutcomeOf(const api::JobSet& jobset) {
  JobSetOutcome o;
  const api::JobSetStatus& s = jobset.status();
  o.terminal_state = s.terminal_state();
  o.restarts = s.restarts();
  o.restarts_count_towards_max = s.restarts_count_towards_max();
  for (const api::ReplicatedJobStatus& r : s.replicated_jobs_status())
    o.replicated[r.name()] = {r.succeeded(), r.failed()};
  return o;
}

std::vector<std::string> CompareOutcomes(const Outcomes& a, const Outcomes& b,
                                         absl::string_view a_name,
                                         absl::string_view b_name) {
  std::vector<std::string> out;
  std::set<std::string> keys;
  for (const auto& [key, o] : a) keys.insert(key);
  for (const auto& [key, o] : b) keys.insert(key);
  for (const std::string& key : keys) {
    auto x = a.find(key);
    auto y = b.find(key);
    if (x == a.end() || y == b.end()) {
      out.push_back(absl::StrCat(key, ": only in the ",
                                 x == a.end() ? b_name : a_name, " run"));
      continue;
    }
    const JobSetOutcome& p = x->second;
    const JobSetOutcome& q = y->second;
    auto state = [](const std::string& s) -> std::string {
      return s.empty() ? "(none)" : s;
    };
    Diff(key, "status.terminalState", state(p.terminal_state),
         state(q.terminal_state), a_name, b_name, &out);
    Diff(key, "status.restarts", p.restarts, q.restarts, a_name, b_name, &out);
    Diff(key, "status.restartsCountTowardsMax", p.restarts_count_towards_max,
         q.restarts_count_towards_max, a_name, b_name, &out);
    std::set<std::string> rjs;
    for (const auto& [name, counts] : p.replicated) rjs.insert(name);
    for (const auto& [name, counts] : q.replicated) rjs.insert(name);
    for (const std::string& rj : rjs) {
      auto c = p.replicated.find(rj);
      auto d = q.replicated.find(rj);
      const std::pair<int, int> none = {-1, -1};  // not in the status
      const auto& pc = c == p.replicated.end() ? none : c->second;
      const auto& qc = d == q.replicated.end() ? none : d->second;
      const std::string field =
          absl::StrCat("status.replicatedJobsStatus[", rj, "].");
      Diff(key, field + "succeeded", pc.first, qc.first, a_name, b_name, &out);
      Diff(key, field + "failed", pc.second, qc.second, a_name, b_name, &out);
    }
  }
  return out;
}

}  // namespace jobset::testing::fleet
