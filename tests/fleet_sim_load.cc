#include "tests/fleet_sim_load.h"

#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "proto/jobset_service.grpc.pb.h"
#include "tests/fleet_sim_api.h"
#include "tests/fleet_sim_support.h"

namespace jobset::testing::fleet {
namespace {

constexpr char kRun[] = "load";
constexpr int kNamespaces = 4;  // each stays under its JobSet limit
constexpr int kTasks = 8;       // 2 ReplicatedJobs x 2 Jobs x 2 pods
constexpr int kCreateThreads = 8;
constexpr int kCreateTries = 5;
constexpr absl::Duration kSampleEvery = absl::Seconds(5);
constexpr double kMiB = 1024.0 * 1024.0;

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

// Latencies of one kind of call, in ms. Thread-safe.
class Latencies {
 public:
  void Add(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    ms_.push_back(Ms(d));
  }
  // Adds "<key>_p50", "_p99", "_max" and "<key>_count" to `r`; returns p99.
  double Report(const std::string& key, Result* r) {
    absl::MutexLock lock(&mu_);
    std::sort(ms_.begin(), ms_.end());
    r->Add(absl::StrCat(key, "_count"), static_cast<double>(ms_.size()));
    r->Add(absl::StrCat(key, "_p50"), Percentile(ms_, 0.5), "ms");
    r->Add(absl::StrCat(key, "_p99"), Percentile(ms_, 0.99), "ms");
    r->Add(absl::StrCat(key, "_max"), ms_.empty() ? 0 : ms_.back(), "ms");
    return Percentile(ms_, 0.99);
  }
  double P50() {
    absl::MutexLock lock(&mu_);
    std::sort(ms_.begin(), ms_.end());
    return Percentile(ms_, 0.5);
  }

 private:
  absl::Mutex mu_;
  std::vector<double> ms_ ABSL_GUARDED_BY(mu_);
};

// The n-th JobSet of the run and whether it is to fail once.
api::JobSet LoadJobSet(const LoadOptions& o, int64_t n, bool* fails) {
  std::mt19937_64 rng(o.seed * 1000003 + static_cast<uint64_t>(n));
  std::uniform_real_distribution<double> unit(0, 1);
  const double lo = absl::ToDoubleSeconds(o.min_run);
  const double run = lo + unit(rng) * (absl::ToDoubleSeconds(o.max_run) - lo);
  *fails = unit(rng) < 1 - std::pow(1 - o.fail_percent / 100, kTasks);
  JobSetShape shape;
  shape.ns = absl::StrCat("fleet-load-", n % kNamespaces);
  shape.name = absl::StrCat("l-", n);
  shape.run = kRun;
  shape.jobs = 2;
  shape.pods_per_job = 2;
  shape.gpus = 1;
  shape.run_seconds = std::round(run * 1000) / 1000;
  shape.max_restarts = 3;
  api::JobSet js = BuildJobSet(shape);
  api::JobSetSpec* spec = js.mutable_spec();
  spec->set_ttl_seconds_after_finished(
      static_cast<int32_t>(absl::ToInt64Seconds(o.ttl)));
  api::ReplicatedJob* b = spec->add_replicated_jobs();
  *b = spec->replicated_jobs(0);
  b->set_name("b");
  api::ReplicatedJob* a = spec->mutable_replicated_jobs(0);
  a->set_name("a");
  if (*fails) {
    api::Container* c = a->mutable_template_()
                            ->mutable_spec()
                            ->mutable_template_()
                            ->mutable_spec()
                            ->mutable_containers(0);
    for (api::EnvVar& e : *c->mutable_env()) {
      if (e.name() == kRunSecondsEnv)
        e.set_value(absl::StrCat(*shape.run_seconds / 2));
    }
    for (auto [name, value] :
         {std::pair<const char*, const char*>{kExitCodeEnv, "1"},
          {kFailAttemptsEnv, "1"}}) {
      api::EnvVar* e = c->add_env();
      e->set_name(name);
      e->set_value(value);
    }
  }
  return js;
}

// One create as the client saw it.
struct Created {
  std::string key;  // namespace/name
  absl::Time submitted;
  bool acknowledged = false;
  bool fails = false;
};

int CountFds(pid_t pid) {
  DIR* d = opendir(absl::StrCat("/proc/", pid, "/fd").c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

int64_t DirBytes(const std::string& dir) {
  std::error_code ec;
  int64_t total = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec))
      total += static_cast<int64_t>(it->file_size(ec));
  }
  return total;
}

struct Sample {
  absl::Duration at;  // since the start
  int64_t rss = 0;
  int fds = 0;
};

// The soak checker's rule (docs/reliability.md) over the run's second half:
// the last quarter's peak against the first quarter's (RSS: as a fraction;
// fds: their difference); NaN when either quarter has no sample.
double SecondHalfGrowth(const std::vector<Sample>& s, absl::Duration run,
                        bool fds) {
  const absl::Duration half = run / 2;
  double first = -1, last = -1;
  for (const Sample& x : s) {
    const double v = fds ? x.fds : static_cast<double>(x.rss);
    if (x.at >= half && x.at < half + run / 8) first = std::max(first, v);
    if (x.at >= run - run / 8) last = std::max(last, v);
  }
  if (first <= 0 || last < 0) return std::nan("");
  return fds ? last - first : last / first - 1;
}

}  // namespace

Result RunLoad(Bench& bench, const LoadOptions& o) {
  Result r("load");
  Fleet& fleet = bench.fleet();
  AdminClient& admin = bench.admin();
  const double lost_before = bench.Metric("jobsetd_node_lost_total");
  const double fenced_before = bench.Metric("jobsetd_fenced_reports_total");
  std::vector<std::unique_ptr<TerminalWatch>> watchers;
  for (int i = 0; i < o.watchers; ++i) {
    watchers.push_back(std::make_unique<TerminalWatch>(admin, kRun));
    watchers.back()->Start();
  }
  fleet.recorder().SetMeasuring(true);
  fleet.recorder().TakeRttsMs();
  Latencies creates, gets, lists;
  const int64_t total = static_cast<int64_t>(
      std::floor(o.rate * absl::ToDoubleSeconds(o.duration)));
  std::vector<Created> created(static_cast<size_t>(total));
  std::atomic<int64_t> next = 0, acknowledged = 0;
  std::atomic<int> refused = 0, create_errors = 0;
  absl::Mutex mu;  // guards `errors` and `stop`
  std::vector<std::string> errors;
  bool stop = false;
  auto note = [&](std::string e) {
    absl::MutexLock lock(&mu);
    if (errors.size() < 5) errors.push_back(std::move(e));
  };
  // Sleeps until `until` or the run's end; false once it ends.
  auto sleep_until = [&](absl::Time until) {
    absl::MutexLock lock(&mu);
    auto stopping = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return stop; };
    return !mu.AwaitWithDeadline(absl::Condition(&stopping), until);
  };
  const absl::Time start = absl::Now();
  const absl::Time end = start + o.duration;
  std::vector<std::thread> threads;
  for (int t = 0; t < kCreateThreads; ++t) {
    threads.emplace_back([&] {
      auto stub = api::JobSetService::NewStub(admin.NewChannel());
      for (int64_t n = next++; n < total; n = next++) {
        if (!sleep_until(start + absl::Seconds(n / o.rate))) return;
        Created& c = created[static_cast<size_t>(n)];
        api::CreateJobSetRequest request;
        *request.mutable_jobset() = LoadJobSet(o, n, &c.fails);
        c.key = absl::StrCat(request.jobset().metadata().namespace_(), "/",
                             request.jobset().metadata().name());
        c.submitted = absl::Now();
        // An answer that says nothing definite is retried with the same
        // name and spec: ALREADY_EXISTS then means the first one landed.
        for (int i = 0; i < kCreateTries && !c.acknowledged; ++i) {
          grpc::ClientContext ctx;
          ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
          api::CreateJobSetResponse response;
          const absl::Time call = absl::Now();
          grpc::Status s = stub->CreateJobSet(&ctx, request, &response);
          if (s.ok() ||
              (i > 0 && s.error_code() == grpc::StatusCode::ALREADY_EXISTS)) {
            if (i == 0) creates.Add(absl::Now() - call);
            c.acknowledged = true;
            ++acknowledged;
            break;
          }
          ++create_errors;
          note(absl::StrCat("create ", c.key, ": code ", s.error_code(), ": ",
                            s.error_message()));
          if (s.error_code() != grpc::StatusCode::UNAVAILABLE &&
              s.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
            ++refused;
            break;
          }
        }
      }
    });
  }
  // Ten Gets a second of JobSets created lately.
  threads.emplace_back([&] {
    auto stub = api::JobSetService::NewStub(admin.NewChannel());
    std::mt19937_64 rng(o.seed);
    for (absl::Time t = start; sleep_until(t += absl::Milliseconds(100));) {
      const int64_t made = std::min<int64_t>(next.load(), total);
      if (made == 0) continue;
      const int64_t n =
          made - 1 - static_cast<int64_t>(rng() % std::min<int64_t>(made, 200));
      api::GetJobSetRequest request;
      request.set_namespace_(absl::StrCat("fleet-load-", n % kNamespaces));
      request.set_name(absl::StrCat("l-", n));
      grpc::ClientContext ctx;
      ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
      api::JobSet response;
      const absl::Time call = absl::Now();
      grpc::Status s = stub->GetJobSet(&ctx, request, &response);
      if (s.ok() || s.error_code() == grpc::StatusCode::NOT_FOUND) {
        gets.Add(absl::Now() - call);
      } else {
        note(absl::StrCat("get: code ", s.error_code(), ": ",
                          s.error_message()));
      }
    }
  });
  // A List of every JobSet of the run a second.
  int64_t listed_max = 0;
  threads.emplace_back([&] {
    for (absl::Time t = start; sleep_until(t += absl::Seconds(1));) {
      const absl::Time call = absl::Now();
      absl::StatusOr<std::vector<api::JobSet>> l = admin.List(kRun);
      if (!l.ok()) {
        note(std::string(l.status().message()));
        continue;
      }
      lists.Add(absl::Now() - call);
      listed_max = std::max<int64_t>(listed_max, l->size());
    }
  });
  // One agent's stream cut every agent_restart_every.
  int agent_restarts = 0;
  threads.emplace_back([&] {
    for (absl::Time t = start; sleep_until(t += o.agent_restart_every);) {
      fleet.agent(agent_restarts % fleet.size()).Reconnect();
      ++agent_restarts;
    }
  });
  // jobsetd's RSS and fds every 5 s, its data directory's size each minute.
  std::vector<Sample> samples;
  std::vector<int64_t> store_bytes;
  threads.emplace_back([&] {
    for (absl::Time t = start; sleep_until(t += kSampleEvery);) {
      const pid_t pid = bench.jobsetd_pid();
      samples.push_back(
          {absl::Now() - start, ReadProcStat(pid).rss_bytes, CountFds(pid)});
      if (samples.size() % 12 == 1)
        store_bytes.push_back(DirBytes(bench.data_dir()));
    }
  });
  sleep_until(end);
  {
    absl::MutexLock lock(&mu);
    stop = true;
  }
  for (std::thread& t : threads) t.join();
  const absl::Duration ran = absl::Now() - start;
  samples.push_back({ran, ReadProcStat(bench.jobsetd_pid()).rss_bytes,
                     CountFds(bench.jobsetd_pid())});

  // Every acknowledged JobSet should finish; at most two runs and the
  // failing half-run later, with slack for a loaded machine.
  auto terminal = [&](const std::string& key) -> std::optional<bool> {
    for (auto& w : watchers) {
      if (std::optional<bool> failed = w->Terminal(key)) return failed;
    }
    return std::nullopt;
  };
  const absl::Time settle = absl::Now() + 2 * o.max_run + absl::Seconds(60);
  int unfinished = 0;
  for (const Created& c : created) {
    if (!c.acknowledged) continue;
    while (!terminal(c.key).has_value() && absl::Now() < settle)
      absl::SleepFor(absl::Milliseconds(100));
    unfinished += !terminal(c.key).has_value();
  }
  std::vector<double> to_first, to_all;
  // A restart the workload did not ask for (no task of it fails), and one it
  // asked for that never came (finished at attempt 0 though a task failed).
  // A JobSet whose failing task had not failed yet when the run ended is
  // neither.
  int failed = 0, restarted = 0, short_of_runs = 0, unasked = 0, missed = 0;
  for (const Created& c : created) {
    if (!c.acknowledged) continue;
    failed += terminal(c.key).value_or(false);
    const FleetRecorder::Tally t = fleet.recorder().Get(c.key, 0);
    if (t.runs < kTasks) {
      ++short_of_runs;
      continue;
    }
    to_first.push_back(Ms(t.first_run - c.submitted));
    to_all.push_back(Ms(t.last_run - c.submitted));
    const bool again = fleet.recorder().Get(c.key, 1).runs > 0;
    restarted += again;
    unasked += again && !c.fails;
    missed += !again && c.fails && terminal(c.key).has_value();
  }
  std::sort(to_first.begin(), to_first.end());
  std::sort(to_all.begin(), to_all.end());
  const std::vector<double> rtts = [&] {
    std::vector<double> v = fleet.recorder().TakeRttsMs();
    std::sort(v.begin(), v.end());
    return v;
  }();
  fleet.recorder().SetMeasuring(false);
  const FleetRecorder::Counts counts = fleet.recorder().counts();
  const double lost_nodes =
      bench.Metric("jobsetd_node_lost_total") - lost_before;
  const double fenced =
      bench.Metric("jobsetd_fenced_reports_total") - fenced_before;
  for (auto& w : watchers) w->Stop();

  r.Add("duration", absl::ToDoubleSeconds(ran), "s");
  r.Add("creates", static_cast<double>(acknowledged.load()));
  r.Add("creates_per_s", acknowledged.load() / absl::ToDoubleSeconds(ran),
        "/s");
  r.Add("create_errors", create_errors.load());
  r.Add("restarted_once", restarted);
  r.Add("restarts_not_by_the_workload", unasked);
  r.Add("restarts_missed", missed);
  r.Add("agent_restarts", agent_restarts);
  r.Add("list_items_max", static_cast<double>(listed_max));
  const double create_p99 = creates.Report("create", &r);
  const double get_p99 = gets.Report("get", &r);
  const double list_p99 = lists.Report("list", &r);
  r.Add("heartbeat_p50", Percentile(rtts, 0.5), "ms");
  r.Add("heartbeat_p99", Percentile(rtts, 0.99), "ms");
  r.Add("heartbeats", static_cast<double>(rtts.size()));
  r.Add("to_placed_p50", Percentile(to_first, 0.5), "ms");
  r.Add("to_placed_p99", Percentile(to_first, 0.99), "ms");
  r.Add("to_running_p50", Percentile(to_all, 0.5), "ms");
  r.Add("to_running_p99", Percentile(to_all, 0.99), "ms");
  r.Add("to_running_max", to_all.empty() ? 0 : to_all.back(), "ms");
  r.Add("nodes_lost", lost_nodes);
  r.Add("fenced_reports", fenced);
  r.Add("double_task_launches",
        static_cast<double>(counts.double_task_launches));
  r.Add("unfinished", unfinished);
  r.Add("failed", failed);
  if (!samples.empty()) {
    int64_t peak = 0;
    for (const Sample& s : samples) peak = std::max(peak, s.rss);
    r.Add("jobsetd_rss_mid", samples[samples.size() / 2].rss / kMiB, "MiB");
    r.Add("jobsetd_rss_end", samples.back().rss / kMiB, "MiB");
    r.Add("jobsetd_rss_peak", peak / kMiB, "MiB");
    r.Add("jobsetd_fds_mid", samples[samples.size() / 2].fds);
    r.Add("jobsetd_fds_end", samples.back().fds);
    r.Add("rss_growth_second_half",
          100 * SecondHalfGrowth(samples, o.duration, false), "%");
    r.Add("fd_growth_second_half", SecondHalfGrowth(samples, o.duration, true));
  }
  if (!store_bytes.empty()) {
    r.Add("store_mid", store_bytes[store_bytes.size() / 2] / kMiB, "MiB");
    r.Add("store_end", store_bytes.back() / kMiB, "MiB");
  }
  r.Target("Create p50", creates.P50(), 20, true, "ms");
  r.Target("Create p99", create_p99, 200, true, "ms");
  r.Target("Get p99", get_p99, 50, true, "ms");
  r.Target("List p99", list_p99, 1000, true, "ms");
  r.Target("heartbeat p99", Percentile(rtts, 0.99), 50, true, "ms");
  r.Target("create -> placed p99", Percentile(to_first, 0.99), 1000, true,
           "ms");
  r.Target("create -> all running p99", Percentile(to_all, 0.99), 5000, true,
           "ms");
  r.Target("nodes lost (A6)", lost_nodes, 0, true, "");
  r.Target("reports fenced (A6)", fenced, 0, true, "");
  r.Target("restarts the workload did not ask for", unasked, 0, true, "");
  r.Target("restarts the workload asked for, missed", missed, 0, true, "");
  if (o.duration >= absl::Minutes(20) && !samples.empty()) {
    r.Target("RSS growth, second half (L2)",
             100 * SecondHalfGrowth(samples, o.duration, false), 5, true, "%");
  }
  if (refused > 0) r.Fail(absl::StrCat(refused.load(), " creates refused"));
  if (unfinished > 0)
    r.Fail(
        absl::StrCat(unfinished, " acknowledged JobSets never seen to finish"));
  if (failed > 0) r.Fail(absl::StrCat(failed, " JobSets Failed"));
  if (short_of_runs > 0)
    r.Fail(absl::StrCat(short_of_runs, " JobSets short of 8 run orders"));
  if (counts.double_task_launches > 0)
    r.Fail(absl::StrCat(counts.double_task_launches, " tasks ran twice"));
  if (!errors.empty())
    r.notes.push_back(absl::StrCat("errors: ", absl::StrJoin(errors, "; ")));
  bench.CleanUp(kRun, &r);
  return r;
}

}  // namespace jobset::testing::fleet
