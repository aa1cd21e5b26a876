#include "tests/fleet_sim_duplicates.h"

#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/jobset_builder.h"
#include "tests/fleet_sim_api.h"
#include "tests/fleet_sim_outcomes.h"

namespace jobset::testing::fleet {
namespace {

constexpr char kNamespace[] = "fleet-duplicates";
constexpr int kTasksPerJobSet = 4;
// Differences printed in full; the rest are counted.
constexpr int kMaxPrinted = 40;

enum Kind { kOk = 0, kRetry = 1, kExhaust = 2 };
constexpr const char* kKindNames[] = {"ok", "retry", "exhaust"};

Kind KindOf(int i) { return i % 4 < 2 ? kOk : i % 4 == 2 ? kRetry : kExhaust; }

std::string KeyOf(int i) {
  return absl::StrCat(kNamespace, "/", kKindNames[KindOf(i)], "-", i);
}

// What the workload's JobSet of kind `k` ends with. Not its run orders: an
// exhaust JobSet's attempt may fail before its Job b is created again (the
// previous attempt's b, stopped, is still being deleted), with single
// delivery too, so its attempts take 10 to 12; that no task ran twice is
// checked on its own.
struct Expected {
  std::string state;
  int restarts = 0;
};
Expected ExpectedOf(Kind k) {
  switch (k) {
    case kOk:
      return {"Completed", 0};
    case kRetry:
      return {"Completed", 1};
    case kExhaust:
      return {"Failed", 2};
  }
  return {};
}

void SetEnv(api::JobSet& js, int rjob,
            const std::vector<std::pair<std::string, std::string>>& env) {
  api::Container* c = js.mutable_spec()
                          ->mutable_replicated_jobs(rjob)
                          ->mutable_template_()
                          ->mutable_spec()
                          ->mutable_template_()
                          ->mutable_spec()
                          ->mutable_containers(0);
  for (const auto& [name, value] : env) {
    api::EnvVar* e = c->add_env();
    e->set_name(name);
    e->set_value(value);
  }
}

// One run's outcome and figures.
struct Run {
  std::string name;
  bool ok = true;  // started, created, finished and settled in time
  Outcomes outcomes;
  FleetRecorder::Counts counts;
  ReportMixer::Counts mixed;
  double fenced = -1;  // jobsetd_fenced_reports_total
  double wall = 0;     // first create to the last JobSet finished, s
  std::vector<std::string> notes;

  void Fail(std::string note) {
    ok = false;
    notes.push_back(absl::StrCat(name, ": ", note));
  }
};

int RunningPods(Fleet& fleet) {
  int running = 0;
  for (int i = 0; i < fleet.size(); ++i) {
    for (const SimAgent::PodView& p : fleet.agent(i).Pods())
      running += p.running;
  }
  return running;
}

Run RunOnce(const std::string& name, const Bench::Options& options,
            const std::vector<api::JobSet>& jobsets, absl::Duration timeout,
            absl::Duration settle) {
  Run run;
  run.name = name;
  Bench bench(options);
  if (absl::Status s = bench.Start(); !s.ok()) {
    run.Fail(absl::StrCat("jobsetd did not start: ", s.message()));
    return run;
  }
  Fleet& fleet = bench.fleet();
  if (fleet.welcomed() < options.agents) {
    run.Fail(absl::StrCat("only ", fleet.welcomed(), " of ", options.agents,
                          " agents welcomed; ",
                          absl::StrJoin(fleet.recorder().TopErrors(3), "; ")));
    if (fleet.welcomed() == 0) return run;
  }
  const int n = static_cast<int>(jobsets.size());
  TerminalWatch watch(bench.admin(), kDuplicatesRun);
  watch.Start();
  const absl::Time start = absl::Now();
  const BatchResult created = bench.admin().CreateAll(
      jobsets, options.create_concurrency, start + timeout);
  if (created.failed > 0) {
    run.Fail(absl::StrCat("created ", created.ok, " of ", n,
                          " JobSets: ", absl::StrJoin(created.errors, "; ")));
  }
  const int finished = watch.AwaitTerminal(n, start + timeout);
  run.wall = absl::ToDoubleSeconds(watch.last_terminal() - start);
  watch.Stop();
  if (finished < n) {
    run.Fail(absl::StrCat("only ", finished, " of ", n, " JobSets finished in ",
                          absl::FormatDuration(timeout)));
  }
  // Every pod stopped at its agent, then every copy and window sent and
  // taken in by jobsetd.
  const absl::Time stopped_by = absl::Now() + absl::Seconds(30);
  while (RunningPods(fleet) > 0 && absl::Now() < stopped_by)
    absl::SleepFor(absl::Milliseconds(100));
  if (const int running = RunningPods(fleet); running > 0)
    run.Fail(absl::StrCat(running, " pods still running 30 s after the end"));
  absl::SleepFor(settle);
  // The final status: read until two reads a second apart agree.
  bool settled = false;
  for (int read = 0; read < 10 && !settled; ++read) {
    if (read > 0) absl::SleepFor(absl::Seconds(1));
    absl::StatusOr<std::vector<api::JobSet>> listed =
        bench.admin().List(kDuplicatesRun);
    if (!listed.ok()) {
      run.notes.push_back(absl::StrCat(name, ": ", listed.status().message()));
      continue;
    }
    Outcomes now;
    for (const api::JobSet& js : *listed) {
      const std::string key =
          absl::StrCat(js.metadata().namespace_(), "/", js.metadata().name());
      now.emplace(key, OutcomeOf(js));
    }
    settled = read > 0 && CompareOutcomes(run.outcomes, now, "", "").empty();
    run.outcomes = std::move(now);
  }
  if (!settled) run.Fail("JobSets' status still changing after 10 reads");
  run.counts = fleet.recorder().counts();
  run.mixed = fleet.mixed();
  run.fenced = bench.Metric("jobsetd_fenced_reports_total");
  return run;
}

// Each outcome of `run` that is not the workload's, by JobSet.
std::map<std::string, std::string> Unexpected(const Run& run, int jobsets) {
  std::map<std::string, std::string> out;
  for (int i = 0; i < jobsets; ++i) {
    const std::string key = KeyOf(i);
    const Expected want = ExpectedOf(KindOf(i));
    auto it = run.outcomes.find(key);
    if (it == run.outcomes.end()) {
      out[key] = absl::StrCat(run.name, ": ", key, " not listed");
      continue;
    }
    const JobSetOutcome& got = it->second;
    if (got.terminal_state != want.state || got.restarts != want.restarts) {
      out[key] = absl::StrCat(
          run.name, ": ", key, " ended ",
          got.terminal_state.empty() ? "(none)" : got.terminal_state, " after ",
          got.restarts, " restarts; the workload's: ", want.state, " after ",
          want.restarts);
    }
  }
  return out;
}

// The JobSet a line of CompareOutcomes names.
std::string KeyOfLine(const std::string& line) {
  return line.substr(0, line.find_first_of(" :"));
}

void PrintLines(const char* title, const std::vector<std::string>& lines) {
  if (lines.empty()) return;
  std::printf("%s (%zu):\n", title, lines.size());
  for (size_t i = 0; i < lines.size() && i < kMaxPrinted; ++i)
    std::printf("  %s\n", lines[i].c_str());
  if (lines.size() > kMaxPrinted)
    std::printf("  ... and %zu more\n", lines.size() - kMaxPrinted);
}

}  // namespace

std::vector<api::JobSet> DuplicatesWorkload(int jobsets) {
  std::vector<api::JobSet> out;
  out.reserve(jobsets);
  for (int i = 0; i < jobsets; ++i) {
    const Kind kind = KindOf(i);
    const std::string name = KeyOf(i).substr(sizeof(kNamespace));
    api::testing::JobSetBuilder b(name);
    b.Namespace(kNamespace).Label(kRunLabel, kDuplicatesRun);
    for (const char* rj : {"a", "b"}) {
      b.Replicated(rj, 1, 2, 2)
          .RestartPolicy(rj, "Never")
          .BackoffLimit(rj, 0)
          .Request(rj, "cpu", "1");
    }
    if (kind == kRetry) b.FailurePolicy(3);
    if (kind == kExhaust) b.FailurePolicy(2);
    api::JobSet js = b.Build();
    // Reports spread over time, not all at once.
    const std::string a_run = absl::StrCat(0.2 + 0.1 * (i % 3));
    if (kind == kOk) {
      SetEnv(js, 0, {{kRunSecondsEnv, a_run}});
      SetEnv(js, 1, {{kRunSecondsEnv, "0.6"}});
    } else if (kind == kRetry) {
      SetEnv(js, 0,
             {{kRunSecondsEnv, a_run},
              {kExitCodeEnv, "3"},
              {kFailAttemptsEnv, "1"}});
      SetEnv(js, 1, {{kRunSecondsEnv, "1.5"}});
    } else {
      SetEnv(js, 0, {{kRunSecondsEnv, a_run}, {kExitCodeEnv, "3"}});
    }
    out.push_back(std::move(js));
  }
  return out;
}

Result RunDuplicates(const Bench::Options& bench, const DuplicatesOptions& o) {
  Result r("duplicates");
  const std::vector<api::JobSet> jobsets = DuplicatesWorkload(o.jobsets);
  const absl::Duration settle =
      o.mix.max_delay + o.mix.window + absl::Seconds(1);
  Bench::Options once = bench;
  once.mix = ReportMixer::Options();
  once.mix.seed = o.mix.seed;
  Bench::Options mixing = bench;
  mixing.mix = o.mix;
  const Run runs[] = {RunOnce("single", once, jobsets, o.timeout, settle),
                      RunOnce("mixed", mixing, jobsets, o.timeout, settle)};
  const Run& a = runs[0];
  const Run& b = runs[1];

  const std::vector<std::string> differences =
      CompareOutcomes(a.outcomes, b.outcomes, "single", "mixed");
  std::map<std::string, int> differing;
  for (const std::string& d : differences) ++differing[KeyOfLine(d)];
  const std::map<std::string, std::string> unexpected_of[2] = {
      Unexpected(a, o.jobsets), Unexpected(b, o.jobsets)};
  std::vector<std::string> unexpected;
  for (const auto& of : unexpected_of) {
    for (const auto& [key, line] : of) unexpected.push_back(line);
  }

  std::printf(
      "duplicates (I1): %d JobSets, %d tasks, %d agents; mixed run: every pod "
      "report %d more times (each copy up to %s later), %s, seed %llu\n",
      o.jobsets, o.jobsets * kTasksPerJobSet, bench.agents, o.mix.duplicates,
      absl::FormatDuration(o.mix.max_delay).c_str(),
      o.mix.reorder ? absl::StrCat("shuffled in windows of ",
                                   absl::FormatDuration(o.mix.window), " or ",
                                   o.mix.window_messages, " reports")
                          .c_str()
                    : "in order",
      static_cast<unsigned long long>(o.mix.seed));
  std::printf("%-8s %7s  %-22s %9s %9s %11s\n", "kind", "JobSets",
              "workload's outcome", "single ok", "mixed ok", "differences");
  for (int k = kOk; k <= kExhaust; ++k) {
    int count = 0, diffs = 0;
    int as_expected[2] = {0, 0};
    for (int i = 0; i < o.jobsets; ++i) {
      if (KindOf(i) != k) continue;
      ++count;
      const std::string key = KeyOf(i);
      if (auto it = differing.find(key); it != differing.end())
        diffs += it->second;
      for (int run = 0; run < 2; ++run)
        as_expected[run] += !unexpected_of[run].contains(key);
    }
    const Expected e = ExpectedOf(static_cast<Kind>(k));
    std::printf("%-8s %7d  %-22s %9d %9d %11d\n", kKindNames[k], count,
                absl::StrCat(e.state, ", ", e.restarts, " restarts").c_str(),
                as_expected[0], as_expected[1], diffs);
  }
  std::printf("%-7s %7s %8s %7s %6s %8s %10s %7s %8s %8s\n", "run", "wall s",
              "reports", "copies", "stale", "restart+", "displaced", "fenced",
              "launches", "doubles");
  for (const Run& run : runs) {
    std::printf("%-7s %7.2f %8lld %7lld %6lld %8lld %10lld %7.0f %8lld %8lld\n",
                run.name.c_str(), run.wall,
                static_cast<long long>(run.mixed.reports),
                static_cast<long long>(run.counts.copies_sent),
                static_cast<long long>(run.counts.stale_copies),
                static_cast<long long>(run.counts.copies_after_restart),
                static_cast<long long>(run.mixed.displaced), run.fenced,
                static_cast<long long>(run.counts.runs),
                static_cast<long long>(run.counts.double_launches +
                                       run.counts.double_task_launches));
  }
  PrintLines("DIFFERENCES between the runs", differences);
  PrintLines("NOT THE WORKLOAD'S OUTCOME", unexpected);
  std::fflush(stdout);

  r.Add("jobsets", o.jobsets);
  r.Add("tasks", o.jobsets * kTasksPerJobSet);
  int64_t doubles = 0;
  for (const Run& run : runs) {
    r.Add(run.name + "_wall", run.wall, "s");
    r.Add(run.name + "_reports", static_cast<double>(run.mixed.reports));
    r.Add(run.name + "_run_orders", static_cast<double>(run.counts.runs));
    r.Add(run.name + "_fenced", run.fenced);
    doubles += run.counts.double_launches + run.counts.double_task_launches;
    for (const std::string& note : run.notes) r.notes.push_back(note);
    if (!run.ok) r.completed = false;
  }
  r.Add("copies_sent", static_cast<double>(b.counts.copies_sent));
  r.Add("copies_dropped", static_cast<double>(b.counts.copies_dropped));
  r.Add("stale_copies", static_cast<double>(b.counts.stale_copies));
  r.Add("copies_after_restart",
        static_cast<double>(b.counts.copies_after_restart));
  r.Add("displaced", static_cast<double>(b.mixed.displaced));
  r.Add("double_launches", static_cast<double>(doubles));
  r.Add("differences", static_cast<double>(differences.size()));
  r.Add("unexpected", static_cast<double>(unexpected.size()));
  if (!differences.empty()) {
    r.Fail(absl::StrCat(
        differences.size(),
        " differences between the runs; the first: ", differences.front()));
  }
  if (!unexpected.empty()) {
    r.Fail(absl::StrCat(
        unexpected.size(),
        " outcomes not the workload's; the first: ", unexpected.front()));
  }
  if (doubles > 0)
    r.Fail(absl::StrCat(doubles, " pods or tasks ordered to run twice"));
  // A mixed run that mixed nothing proves nothing.
  if (o.mix.duplicates > 0 &&
      (b.counts.copies_sent == 0 || b.counts.stale_copies == 0)) {
    r.Fail("the mixed run sent no copies, or none after its pod moved on");
  }
  if (o.mix.duplicates > 0 && o.jobsets >= 4 &&
      b.counts.copies_after_restart == 0) {
    r.Fail("the mixed run sent no copy after its JobSet restarted");
  }
  if (o.mix.reorder && b.mixed.displaced == 0)
    r.Fail("the mixed run reordered nothing");
  return r;
}

}  // namespace jobset::testing::fleet
