#include "tests/fleet_sim_scenarios.h"

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "tests/cluster_credentials.h"

namespace jobset::testing::fleet {
namespace {

constexpr double kMiB = 1048576.0;

std::string Number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
    return absl::StrCat(static_cast<int64_t>(v));
  char buf[64];
  std::snprintf(buf, sizeof(buf), std::fabs(v) < 10 ? "%.3f" : "%.1f", v);
  return buf;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string KeyOf(const api::JobSet& js) {
  return absl::StrCat(js.metadata().namespace_(), "/", js.metadata().name());
}

// NaN for an infinite duration (a time that never came): every target
// compared with it is missed, and JSON says null.
double Seconds(absl::Duration d) {
  if (d == absl::InfiniteDuration() || d == -absl::InfiniteDuration())
    return std::nan("");
  return absl::ToDoubleSeconds(d);
}

JobSetShape Shape(std::string ns, std::string name, std::string run, int jobs,
                  int pods_per_job) {
  JobSetShape s;
  s.ns = std::move(ns);
  s.name = std::move(name);
  s.run = std::move(run);
  s.jobs = jobs;
  s.pods_per_job = pods_per_job;
  return s;
}

}  // namespace

void Result::Target(const std::string& what, double value, double limit,
                    bool at_most, const std::string& unit) {
  const bool met = at_most ? value <= limit : value >= limit;
  targets.push_back(absl::StrCat(what, " ", Number(value), unit,
                                 at_most ? " <= " : " >= ", Number(limit), unit,
                                 ": ", met ? "met" : "MISSED"));
}

std::string Result::Line() const {
  std::vector<std::string> parts;
  for (const Figure& f : figures)
    parts.push_back(absl::StrCat(f.key, " ", Number(f.value),
                                 f.unit.empty() || f.unit == "%" ? "" : " ",
                                 f.unit));
  std::string line =
      absl::StrCat("fleet ", scenario, ": ", absl::StrJoin(parts, ", "));
  if (!targets.empty())
    absl::StrAppend(&line, "\n  targets: ", absl::StrJoin(targets, "; "));
  if (!notes.empty())
    absl::StrAppend(&line, "\n  ", completed ? "notes" : "INCOMPLETE", ": ",
                    absl::StrJoin(notes, "; "));
  return line;
}

std::string Result::Json() const {
  std::vector<std::string> f, t, n;
  for (const Figure& x : figures)
    f.push_back(
        absl::StrCat(JsonString(x.key), ": ",
                     std::isfinite(x.value) ? Number(x.value) : "null"));
  for (const std::string& x : targets) t.push_back(JsonString(x));
  for (const std::string& x : notes) n.push_back(JsonString(x));
  return absl::StrCat("{\"scenario\": ", JsonString(scenario),
                      ", \"completed\": ", completed ? "true" : "false",
                      ", \"figures\": {", absl::StrJoin(f, ", "),
                      "}, \"targets\": [", absl::StrJoin(t, ", "),
                      "], \"notes\": [", absl::StrJoin(n, ", "), "]}");
}

Bench::Window::Window(Bench* bench)
    : bench_(bench),
      start_(absl::Now()),
      pid_(bench->jobsetd_pid_.load()),
      jobsetd_(ReadProcStat(pid_)),
      self_(ReadProcStat(0)) {
  bench_->TakePeakRss();
}

void Bench::Window::End(Result* r) {
  const double wall = Seconds(absl::Now() - start_);
  const pid_t pid = bench_->jobsetd_pid_.load();
  const ProcStat j = ReadProcStat(pid);
  const ProcStat s = ReadProcStat(0);
  // A jobsetd restarted within the window: its whole CPU time counts.
  const double j_cpu = j.cpu_seconds - (pid == pid_ ? jobsetd_.cpu_seconds : 0);
  r->Add("jobsetd_cpu", 100 * j_cpu / wall, "%");
  r->Add("jobsetd_rss", j.rss_bytes / kMiB, "MiB");
  r->Add("jobsetd_peak_rss",
         std::max(j.rss_bytes, bench_->TakePeakRss()) / kMiB, "MiB");
  r->Add("sim_cpu", 100 * (s.cpu_seconds - self_.cpu_seconds) / wall, "%");
  r->Add("window", wall, "s");
}

Bench::Bench(Options options) : options_(std::move(options)) {}

Bench::~Bench() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (sampler_.joinable()) sampler_.join();
  if (fleet_ != nullptr) fleet_->Shutdown();
  if (jobsetd_ != nullptr) {
    jobsetd_->Kill(SIGTERM).IgnoreError();
    if (!jobsetd_->Wait(absl::Seconds(20)).ok()) {
      jobsetd_->Kill(SIGKILL).IgnoreError();
      jobsetd_->Wait().IgnoreError();
    }
  }
  if (!dir_.empty() && !options_.keep) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

absl::StatusOr<std::unique_ptr<JobsetdProcess>> Bench::StartJobsetd(
    const std::string& listen) {
  JobsetdProcess::Options o;
  o.binary = options_.jobsetd;
  o.args = base_args_;
  o.args.push_back(absl::StrCat("--listen=", listen));
  o.stderr_path = dir_ + "/jobsetd.stderr";
  // A restart loads every pod of the store first.
  o.startup_timeout = absl::Seconds(120);
  absl::StatusOr<std::unique_ptr<JobsetdProcess>> p = JobsetdProcess::Start(o);
  if (!p.ok()) return p;
  jobsetd_pid_ = (*p)->pid();
  // "jobsetd metrics on http://127.0.0.1:PORT/metrics", printed before it
  // serves.
  const std::string out = (*p)->Stdout();
  const std::string prefix = "jobsetd metrics on http://127.0.0.1:";
  metrics_port_ = 0;
  if (size_t at = out.find(prefix); at != std::string::npos) {
    const size_t end = out.find('/', at + prefix.size());
    if (!absl::SimpleAtoi(
            out.substr(at + prefix.size(), end - at - prefix.size()),
            &metrics_port_)) {
      metrics_port_ = 0;
    }
  }
  return p;
}

absl::Status Bench::Start() {
  // Under a test's own directory when run by one.
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string tmpl =
      absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/fleet-sim-XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr)
    return absl::InternalError(absl::StrCat("mkdtemp ", tmpl, " failed"));
  dir_ = tmpl;
  base_args_ = {absl::StrCat("--data_dir=", dir_),
                absl::StrCat("--heartbeat_interval=",
                             absl::FormatDuration(options_.heartbeat_interval)),
                absl::StrCat("--node_lost_timeout=",
                             absl::FormatDuration(options_.node_lost_timeout)),
                "--metrics_listen=127.0.0.1:0"};
  for (const std::string& a : options_.jobsetd_args) base_args_.push_back(a);
  absl::StatusOr<std::unique_ptr<JobsetdProcess>> started =
      StartJobsetd("127.0.0.1:0");
  if (!started.ok()) return started.status();
  jobsetd_ = *std::move(started);
  address_ = jobsetd_->address();
  absl::StatusOr<ClusterCredentials> creds = ReadClusterCredentials(dir_);
  if (!creds.ok()) return creds.status();
  admin_ = std::make_unique<AdminClient>(address_, creds->ca_pem,
                                         creds->admin_token);
  sampler_ = std::thread([this] { SampleLoop(); });
  Fleet::Options fo;
  fo.address = address_;
  fo.ca_pem = creds->ca_pem;
  fo.join_token = creds->join_token;
  fo.agents = options_.agents;
  fo.join_concurrency = options_.join_concurrency;
  fo.mix = options_.mix;
  fleet_ = std::make_unique<Fleet>(fo);
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + options_.connect_timeout;
  joined_ = fleet_->JoinAndStart(deadline);
  join_seconds_ = Seconds(absl::Now() - start);
  fleet_->AwaitWelcomed(joined_, deadline);
  connect_seconds_ = Seconds(absl::Now() - start);
  return absl::OkStatus();
}

double Bench::Metric(const std::string& name) {
  if (metrics_port_ == 0) return -1;
  absl::StatusOr<double> value = ScrapeMetric(metrics_port_, name);
  return value.ok() ? *value : -1;
}

void Bench::SampleLoop() {
  while (true) {
    const int64_t rss = ReadProcStat(jobsetd_pid_.load()).rss_bytes;
    absl::MutexLock lock(&mu_);
    peak_rss_ = std::max(peak_rss_, rss);
    auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_;
    };
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping),
                             absl::Milliseconds(200))) {
      return;
    }
  }
}

int64_t Bench::TakePeakRss() {
  absl::MutexLock lock(&mu_);
  return std::exchange(peak_rss_, 0);
}

bool Bench::AwaitFleet(absl::Duration timeout, Result* r) {
  int want = 0;
  for (int i = 0; i < fleet_->size(); ++i)
    want += fleet_->agent(i).silent() ? 0 : 1;
  want = std::min(want, joined_);
  if (fleet_->AwaitWelcomed(want, absl::Now() + timeout)) {
    fleet_->recorder().ClearErrors();  // each scenario's own
    return true;
  }
  // The scenario runs on the agents there are (its figures say how many),
  // unless too few are left to place anything.
  r->Fail(absl::StrCat("only ", fleet_->welcomed(), " of ", want,
                       " agents welcomed after ", absl::FormatDuration(timeout),
                       "; ",
                       absl::StrJoin(fleet_->recorder().TopErrors(3), "; ")));
  r->Add("agents_welcomed", fleet_->welcomed());
  fleet_->recorder().ClearErrors();
  return fleet_->welcomed() >= std::min(want, 64);
}

bool Bench::CreateAll(const std::vector<api::JobSet>& jobsets, Result* r) {
  BatchResult b = admin_->CreateAll(jobsets, options_.create_concurrency,
                                    absl::Now() + absl::Seconds(600));
  if (b.failed == 0) return true;
  r->Fail(absl::StrCat("created ", b.ok, " of ", jobsets.size(),
                       " JobSets: ", absl::StrJoin(b.errors, "; ")));
  return false;
}

absl::Time Bench::AwaitRuns(const std::vector<api::JobSet>& jobsets,
                            int attempt, int pods, absl::Time deadline,
                            Result* r) {
  absl::Time last = absl::InfinitePast();
  int incomplete = 0;
  int64_t missing = 0;
  for (const api::JobSet& js : jobsets) {
    FleetRecorder::Tally t =
        fleet_->recorder().AwaitRuns(KeyOf(js), attempt, pods, deadline);
    if (t.runs < pods) {
      ++incomplete;
      missing += pods - t.runs;
    }
    last = std::max(last, t.last_run);
  }
  if (incomplete == 0) return last;
  r->Fail(absl::StrCat(incomplete, " of ", jobsets.size(),
                       " JobSets short of their attempt ", attempt,
                       " run orders (", missing, " pods) at the deadline; ",
                       fleet_->welcomed(), " agents welcomed; ",
                       absl::StrJoin(fleet_->recorder().TopErrors(3), "; ")));
  return absl::InfinitePast();
}

void Bench::CleanUp(const std::string& run, Result* r) {
  absl::StatusOr<std::vector<api::JobSet>> listed = admin_->List(run);
  if (!listed.ok()) {
    r->notes.push_back(absl::StrCat("cleanup: ", listed.status().message()));
    return;
  }
  std::vector<std::pair<std::string, std::string>> keys;
  for (const api::JobSet& js : *listed)
    keys.emplace_back(js.metadata().namespace_(), js.metadata().name());
  BatchResult b = admin_->DeleteAll(keys, options_.create_concurrency,
                                    absl::Now() + absl::Seconds(600));
  if (b.failed > 0) {
    r->notes.push_back(absl::StrCat("cleanup: ", b.failed, " deletes failed: ",
                                    absl::StrJoin(b.errors, "; ")));
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(300);
  int64_t left = fleet_->pods();
  while (left > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(200));
    left = fleet_->pods();
  }
  if (left > 0) {
    r->notes.push_back(
        absl::StrCat("cleanup: agents still hold ", left, " pods after 300s"));
  }
}

Result Bench::Connect() {
  Result r("connect");
  r.Add("agents", options_.agents);
  r.Add("joined", joined_);
  r.Add("welcomed", fleet_->welcomed());
  r.Add("join", join_seconds_, "s");
  r.Add("join_to_all_welcomed", connect_seconds_, "s");
  if (fleet_->welcomed() < options_.agents) {
    r.Fail(absl::StrCat("only ", fleet_->welcomed(), " of ", options_.agents,
                        " agents joined and welcomed within ",
                        absl::FormatDuration(options_.connect_timeout), "; ",
                        absl::StrJoin(fleet_->recorder().TopErrors(3), "; ")));
  }
  // Every agent beats within one interval of its Welcome.
  absl::SleepFor(options_.heartbeat_interval);
  fleet_->timers().TakeMaxLateness();
  Window w(this);
  fleet_->recorder().SetMeasuring(true);
  absl::SleepFor(options_.measure);
  fleet_->recorder().SetMeasuring(false);
  w.End(&r);
  const std::vector<double> rtts = fleet_->recorder().TakeRttsMs();
  const double expected = fleet_->welcomed() * Seconds(options_.measure) /
                          Seconds(options_.heartbeat_interval);
  r.Add("heartbeats", static_cast<double>(rtts.size()));
  r.Add("heartbeats_expected", std::round(expected));
  r.Add("rtt_p50", Percentile(rtts, 0.5), "ms");
  r.Add("rtt_p99", Percentile(rtts, 0.99), "ms");
  r.Add("rtt_max", rtts.empty() ? 0 : rtts.back(), "ms");
  r.Add("sim_timer_late_max",
        absl::ToDoubleMilliseconds(fleet_->timers().TakeMaxLateness()), "ms");
  if (rtts.size() < 0.9 * expected) {
    r.Fail(absl::StrCat("only ", rtts.size(), " heartbeats acknowledged of ~",
                        Number(std::round(expected)), " expected"));
  }
  const auto& f = r.figures;
  auto value = [&](const std::string& key) {
    for (const Result::Figure& x : f)
      if (x.key == key) return x.value;
    return 0.0;
  };
  r.Target("jobsetd RSS", value("jobsetd_rss"), 400, true, " MiB");
  r.Target("jobsetd CPU", value("jobsetd_cpu"), 25, true, "%");
  r.Target("heartbeat round trip p99", value("rtt_p99"), 50, true, " ms");
  return r;
}

Result Bench::Reconnect() {
  Result r("reconnect");
  if (!AwaitFleet(absl::Seconds(60), &r)) return r;
  std::vector<api::JobSet> jobsets;
  for (int i = 0; i < std::max(1, joined_ / 10); ++i) {
    jobsets.push_back(BuildJobSet(
        Shape("fleet-reconnect", absl::StrCat("rc-", i), "reconnect", 1, 10)));
  }
  if (!CreateAll(jobsets, &r)) return r;
  AwaitRuns(jobsets, 0, 10, absl::Now() + absl::Seconds(300), &r);
  const int64_t pods = fleet_->pods();
  const int welcomed = fleet_->welcomed();
  const FleetRecorder::Counts before = fleet_->recorder().counts();
  fleet_->recorder().ClearErrors();
  r.Add("agents", welcomed);
  r.Add("pods", static_cast<double>(pods));

  const absl::Time killed = absl::Now();
  jobsetd_->Kill(SIGKILL).IgnoreError();
  jobsetd_->Wait().IgnoreError();
  jobsetd_pid_ = 0;
  absl::StatusOr<std::unique_ptr<JobsetdProcess>> again =
      StartJobsetd(address_);
  if (!again.ok()) {
    r.Fail(absl::StrCat("jobsetd did not start again: ",
                        again.status().message()));
    jobsetd_.reset();
    return r;
  }
  jobsetd_ = *std::move(again);
  const absl::Time serving = absl::Now();
  Window w(this);
  const absl::Time deadline = killed + absl::Seconds(120);
  if (!fleet_->AwaitWelcomed(welcomed, deadline)) {
    r.Fail(absl::StrCat("only ", fleet_->welcomed(), " of ", welcomed,
                        " agents welcomed again after 120s; ",
                        absl::StrJoin(fleet_->recorder().TopErrors(3), "; ")));
  }
  const absl::Time all_welcomed = absl::Now();
  // jobsetd's word: every node Ready (polled).
  absl::Time ready = absl::InfinitePast();
  AdminClient::NodeCount nodes;
  while (absl::Now() < deadline) {
    absl::StatusOr<AdminClient::NodeCount> n = admin_->CountNodes();
    if (n.ok()) nodes = *n;
    if (n.ok() && n->ready >= welcomed) {
      ready = absl::Now();
      break;
    }
    absl::SleepFor(absl::Milliseconds(250));
  }
  w.End(&r);
  const FleetRecorder::Counts after = fleet_->recorder().counts();
  // How the agents' attempts ended while jobsetd was away and back.
  r.notes.push_back(absl::StrCat(
      "stream ends: ", absl::StrJoin(fleet_->recorder().TopErrors(4), "; ")));
  r.Add("down", Seconds(serving - killed), "s");
  r.Add("kill_to_all_welcomed", Seconds(all_welcomed - killed), "s");
  r.Add("kill_to_all_ready", Seconds(ready - killed), "s");
  r.Add("serving_to_all_ready", Seconds(ready - serving), "s");
  r.Add("nodes_ready", nodes.ready);
  if (ready == absl::InfinitePast()) {
    r.Fail(absl::StrCat("jobsetd says ", nodes.ready, " of ", nodes.nodes,
                        " nodes Ready after 120s"));
  }
  r.Add("pods_stopped", static_cast<double>(after.stops - before.stops));
  r.Add("pods_dropped",
        static_cast<double>(after.welcome_drops - before.welcome_drops));
  r.Add("pods_started", static_cast<double>(after.runs - before.runs));
  // The restarted jobsetd's count (its counters start at 0).
  const double lost = NodesLost();
  r.Add("nodes_lost", lost);
  int restarts = 0, failed = 0;
  absl::StatusOr<std::vector<api::JobSet>> listed = admin_->List("reconnect");
  if (listed.ok()) {
    for (const api::JobSet& js : *listed) {
      restarts += js.status().restarts();
      failed += js.status().terminal_state() == "Failed";
    }
  } else {
    r.Fail(std::string(listed.status().message()));
  }
  r.Add("jobset_restarts", restarts);
  r.Add("jobsets_failed", failed);
  r.Target("kill -9 to all agents Ready", Seconds(ready - killed), 30, true,
           " s");
  const double disturbed =
      static_cast<double>((after.stops - before.stops) +
                          (after.welcome_drops - before.welcome_drops) +
                          (after.runs - before.runs) + restarts + failed);
  r.Target("pods restarted (stopped, dropped or started anew)", disturbed, 0,
           true, "");
  r.Target("nodes declared lost", lost, 0, true, "");
  // A scheduler outage is not a failure (DESIGN.md): a broken invariant,
  // not a missed target.
  if (disturbed > 0 || lost > 0 || after.lost != before.lost) {
    r.Fail(absl::StrCat("jobsetd's restart disturbed pods or nodes (",
                        disturbed, " pods or JobSets, ", lost,
                        " nodes declared lost by jobsetd, ",
                        after.lost - before.lost, " streams ended as lost)"));
  }
  CleanUp("reconnect", &r);
  return r;
}

Result Bench::BigGang() {
  Result r("big_gang");
  if (!AwaitFleet(absl::Seconds(60), &r)) return r;
  const int slices = std::min(options_.big_gang_pods / 64, joined_ / 64);
  if (slices < 1) {
    r.Fail("needs at least 64 agents (one slice of 64 hosts)");
    return r;
  }
  const int pods = slices * 64;
  const std::vector<api::JobSet> gang = {BuildJobSet([&] {
    JobSetShape s = Shape("fleet-big-gang", "big-gang", "big_gang", slices, 64);
    s.gpus = fleet_->options().shape.gpus;
    s.exclusive = true;
    return s;
  }())};
  r.Add("pods", pods);
  r.Add("slices", slices);
  Window w(this);
  const absl::Time submitted = absl::Now();
  if (!CreateAll(gang, &r)) return r;
  const absl::Time acked = absl::Now();
  const absl::Time last =
      AwaitRuns(gang, 0, pods, submitted + absl::Seconds(120), &r);
  w.End(&r);
  const FleetRecorder::Tally t = fleet_->recorder().Get(KeyOf(gang[0]), 0);
  r.Add("create_acked", Seconds(acked - submitted), "s");
  r.Add("submit_to_first_run", Seconds(t.first_run - submitted), "s");
  r.Add("submit_to_all_runs", Seconds(last - submitted), "s");
  r.Add("hosts_per_order", std::round(static_cast<double>(t.host_entries) /
                                      std::max<int64_t>(1, t.runs)));
  r.Add("host_table_resends", static_cast<double>(t.host_updates));
  r.Add("host_entries_received",
        static_cast<double>(t.host_entries + t.host_update_entries));
  r.Add("host_table_bytes_received", static_cast<double>(t.host_table_bytes));
  // Exclusive placement, as the agents hold it: one pod a host, each Job
  // in a slice of its own.
  std::map<int, std::set<std::string>> slices_of_job;
  std::map<std::string, int> job_of_slice;
  int hosts = 0, crowded = 0, shared = 0;
  for (int i = 0; i < fleet_->size(); ++i) {
    int here = 0;
    const std::string slice =
        SimNode(i, fleet_->options().shape).labels().at(kSliceLabel);
    for (const SimAgent::PodView& p : fleet_->agent(i).Pods()) {
      if (p.jobset != KeyOf(gang[0])) continue;
      ++here;
      slices_of_job[p.job].insert(slice);
      auto [it, fresh] = job_of_slice.emplace(slice, p.job);
      if (!fresh && it->second != p.job) ++shared;
    }
    hosts += here > 0;
    crowded += here > 1;
  }
  int split = 0;
  for (const auto& [job, s] : slices_of_job) split += s.size() > 1;
  r.Add("hosts", hosts);
  if (crowded + split + shared > 0) {
    r.Fail(absl::StrCat(
        "placement not exclusive: ", crowded, " hosts with 2+ pods, ", split,
        " Jobs over 2+ slices, ", shared, " pods in another Job's slice"));
  }
  r.Target("submit to every run order received", Seconds(last - submitted), 1.0,
           true, " s");
  CleanUp("big_gang", &r);
  return r;
}

Result Bench::Restart() {
  Result r("restart");
  if (!AwaitFleet(absl::Seconds(60), &r)) return r;
  std::vector<api::JobSet> background;
  for (int i = 0; i < std::max(1, joined_ / 10); ++i) {
    background.push_back(BuildJobSet(
        Shape("fleet-restart", absl::StrCat("bg-", i), "restart", 1, 100)));
  }
  const absl::Time created = absl::Now();
  if (!CreateAll(background, &r)) return r;
  AwaitRuns(background, 0, 100, absl::Now() + absl::Seconds(600), &r);
  r.Add("background_jobsets", static_cast<double>(background.size()));
  r.Add("background_create_to_running", Seconds(absl::Now() - created), "s");
  const int per_job = std::max(1, options_.big_gang_pods / 64);
  const int pods = 64 * per_job;
  JobSetShape big_shape = Shape("fleet-restart", "big", "restart", 64, per_job);
  big_shape.max_restarts = 3;
  const std::vector<api::JobSet> big = {BuildJobSet(big_shape)};
  if (!CreateAll(big, &r)) return r;
  AwaitRuns(big, 0, pods, absl::Now() + absl::Seconds(120), &r);
  r.Add("pods_running", static_cast<double>(fleet_->pods()));
  r.Add("restarted_pods", pods);
  const FleetRecorder::Tally first = fleet_->recorder().Get(KeyOf(big[0]), 0);
  if (first.first_agent < 0) {
    r.Fail("no pod of the big JobSet ran");
    CleanUp("restart", &r);
    return r;
  }
  Window w(this);
  const std::optional<absl::Time> failed =
      fleet_->agent(first.first_agent).EndPod(first.first_uid, 1);
  if (!failed.has_value()) {
    r.Fail("could not fail a pod of the big JobSet");
    CleanUp("restart", &r);
    return r;
  }
  const absl::Time last =
      AwaitRuns(big, 1, pods, *failed + absl::Seconds(120), &r);
  w.End(&r);
  const FleetRecorder::Tally old = fleet_->recorder().Get(KeyOf(big[0]), 0);
  const FleetRecorder::Tally now = fleet_->recorder().Get(KeyOf(big[0]), 1);
  r.Add("failure_to_first_run", Seconds(now.first_run - *failed), "s");
  r.Add("failure_to_all_runs", Seconds(last - *failed), "s");
  r.Add("hosts_per_order", std::round(static_cast<double>(now.host_entries) /
                                      std::max<int64_t>(1, now.runs)));
  r.Add("host_table_resends", static_cast<double>(now.host_updates));
  r.Add("host_entries_received",
        static_cast<double>(now.host_entries + now.host_update_entries));
  r.Add("host_table_bytes_received", static_cast<double>(now.host_table_bytes));
  r.Add("old_pods_stopped", static_cast<double>(old.stops));
  r.Add("failure_to_last_stop", Seconds(old.last_stop - *failed), "s");
  r.Target("failure to every new run order received", Seconds(last - *failed),
           1.0, true, " s");
  CleanUp("restart", &r);
  return r;
}

Result Bench::Churn() {
  Result r("churn");
  if (!AwaitFleet(absl::Seconds(60), &r)) return r;
  const int n = options_.churn_jobsets;
  std::vector<api::JobSet> jobsets;
  jobsets.reserve(n);
  // Four namespaces: each stays under --max_jobsets_per_namespace.
  for (int i = 0; i < n; ++i) {
    JobSetShape shape = Shape(absl::StrCat("fleet-churn-", i % 4),
                              absl::StrCat("c-", i), "churn", 1, 1);
    shape.run_seconds = 0;
    jobsets.push_back(BuildJobSet(shape));
  }
  TerminalWatch watch(*admin_, "churn");
  watch.Start();
  Window w(this);
  const absl::Time start = absl::Now();
  CreateAll(jobsets, &r);
  const absl::Time created = absl::Now();
  const int finished = watch.AwaitTerminal(
      n, start + std::max(absl::Seconds(120), absl::Seconds(n / 100)));
  w.End(&r);
  const absl::Time done = watch.last_terminal();
  watch.Stop();
  r.Add("jobsets", n);
  r.Add("create", Seconds(created - start), "s");
  r.Add("creates_per_s", n / Seconds(created - start), "/s");
  r.Add("finished", finished);
  r.Add("failed", watch.failed());
  r.Add("submit_to_all_finished", Seconds(done - start), "s");
  r.Add("finished_per_s", finished / Seconds(done - start), "/s");
  if (finished < n) {
    r.Fail(absl::StrCat("only ", finished, " of ", n, " JobSets finished; ",
                        absl::StrJoin(watch.errors(), "; ")));
  }
  r.Target("JobSets finished per second", finished / Seconds(done - start),
           1000, false, "/s");
  r.notes.push_back("the finished JobSets are kept (they hold no node)");
  return r;
}

Result Bench::NodeLoss() {
  Result r("node_loss");
  if (!AwaitFleet(absl::Seconds(60), &r)) return r;
  // A quarter of the hosts busy: JobSets of 8 pods, a whole host each.
  std::vector<api::JobSet> jobsets;
  for (int i = 0; i < std::max(1, joined_ / 32); ++i) {
    JobSetShape shape =
        Shape("fleet-node-loss", absl::StrCat("nl-", i), "node_loss", 1, 8);
    shape.gpus = fleet_->options().shape.gpus;
    shape.max_restarts = 3;
    jobsets.push_back(BuildJobSet(shape));
  }
  if (!CreateAll(jobsets, &r)) return r;
  AwaitRuns(jobsets, 0, 8, absl::Now() + absl::Seconds(300), &r);
  std::set<std::string> ours;
  for (const api::JobSet& js : jobsets) ours.insert(KeyOf(js));
  // Every other busy host goes silent, up to --silent_agents.
  std::vector<int> busy;
  for (int i = 0; i < fleet_->size(); ++i) {
    for (const SimAgent::PodView& p : fleet_->agent(i).Pods()) {
      if (ours.contains(p.jobset)) {
        busy.push_back(i);
        break;
      }
    }
  }
  std::vector<int> silent;
  std::set<std::string> affected;
  for (size_t k = 0; k < busy.size() &&
                     static_cast<int>(silent.size()) < options_.silent_agents;
       k += 2) {
    silent.push_back(busy[k]);
    for (const SimAgent::PodView& p : fleet_->agent(busy[k]).Pods())
      if (ours.contains(p.jobset)) affected.insert(p.jobset);
  }
  r.Add("busy_hosts", static_cast<double>(busy.size()));
  r.Add("silent_agents", static_cast<double>(silent.size()));
  r.Add("affected_jobsets", static_cast<double>(affected.size()));
  const double lost_before = NodesLost();
  Window w(this);
  const absl::Time silenced = absl::Now();
  for (int i : silent) fleet_->agent(i).Silence();
  const absl::Time deadline =
      silenced + options_.node_lost_timeout + absl::Seconds(120);
  std::vector<double> took;
  int short_of = 0;
  for (const std::string& key : affected) {
    FleetRecorder::Tally t = fleet_->recorder().AwaitRuns(key, 1, 8, deadline);
    if (t.runs < 8) {
      ++short_of;
      continue;
    }
    took.push_back(Seconds(t.last_run - silenced));
  }
  w.End(&r);
  std::sort(took.begin(), took.end());
  // jobsetd's word on the silent nodes (a lost node's stream stays open
  // until its agent speaks again, so the agents cannot tell).
  AdminClient::NodeCount nodes;
  const absl::Time listed = absl::Now() + absl::Seconds(10);
  do {
    absl::StatusOr<AdminClient::NodeCount> n = admin_->CountNodes();
    if (n.ok()) nodes = *n;
    if (nodes.nodes - nodes.ready >= static_cast<int>(silent.size())) break;
    absl::SleepFor(absl::Milliseconds(250));
  } while (absl::Now() < listed);
  r.Add("nodes_not_ready", nodes.nodes - nodes.ready);
  r.Add("nodes_lost", NodesLost() - lost_before);
  if (nodes.nodes - nodes.ready < static_cast<int>(silent.size())) {
    r.Fail(absl::StrCat("jobsetd says ", nodes.nodes - nodes.ready,
                        " nodes not Ready; ", silent.size(), " went silent"));
  }
  r.Add("node_lost_timeout", Seconds(options_.node_lost_timeout), "s");
  r.Add("silence_to_restarted_p50",
        took.empty() ? std::nan("") : Percentile(took, 0.5), "s");
  const double all = took.empty() ? std::nan("") : took.back();
  r.Add("silence_to_all_restarted", all, "s");
  if (short_of > 0) {
    r.Fail(absl::StrCat(short_of, " of ", affected.size(),
                        " affected JobSets not restarted elsewhere by ",
                        absl::FormatDuration(deadline - silenced)));
  }
  r.Target("silence to every affected JobSet restarted", all,
           Seconds(options_.node_lost_timeout) + 2, true, " s");
  for (int i : silent) fleet_->agent(i).Resume();
  CleanUp("node_loss", &r);
  AwaitFleet(absl::Seconds(60), &r);
  return r;
}

}  // namespace jobset::testing::fleet
