#include "tests/fleet_sim_support.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace jobset::testing::fleet {
namespace {

constexpr char kJobSetNameKey[] = "jobset.sigs.k8s.io/jobset-name";
constexpr char kRestartAttemptKey[] = "jobset.sigs.k8s.io/restart-attempt";
constexpr char kJobIndexKey[] = "jobset.sigs.k8s.io/job-index";

// Min-heap order for TimerQueue's entries.
struct Later {
  template <typename E>
  bool operator()(const E& a, const E& b) const {
    return a.when != b.when ? a.when > b.when : a.seq > b.seq;
  }
};

}  // namespace

absl::StatusOr<Workload> WorkloadOf(const api::Pod& pod) {
  Workload w;
  std::optional<int> fail_attempts;
  for (const api::Container& c : pod.spec().containers()) {
    bool found = false;
    for (const api::EnvVar& e : c.env()) {
      if (e.name() == kRunSecondsEnv) {
        found = true;
        double seconds = 0;
        if (!absl::SimpleAtod(e.value(), &seconds) || !std::isfinite(seconds) ||
            seconds < 0 || seconds > kMaxRunSeconds) {
          return absl::InvalidArgumentError(absl::StrCat(
              "container ", c.name(), ": env ", kRunSecondsEnv,
              ": Invalid value: \"", e.value().substr(0, 64),
              "\": must be a number of seconds from 0 to ", kMaxRunSeconds));
        }
        w.run = absl::Seconds(seconds);
      } else if (e.name() == kExitCodeEnv) {
        found = true;
        int code = 0;
        if (!absl::SimpleAtoi(e.value(), &code) || code < 0 || code > 255) {
          return absl::InvalidArgumentError(
              absl::StrCat("container ", c.name(), ": env ", kExitCodeEnv,
                           ": Invalid value: \"", e.value().substr(0, 64),
                           "\": must be an exit code from 0 to 255"));
        }
        w.exit_code = code;
      } else if (e.name() == kFailAttemptsEnv) {
        found = true;
        int attempts = 0;
        if (!absl::SimpleAtoi(e.value(), &attempts) || attempts < 0 ||
            attempts > 1000) {
          return absl::InvalidArgumentError(
              absl::StrCat("container ", c.name(), ": env ", kFailAttemptsEnv,
                           ": Invalid value: \"", e.value().substr(0, 64),
                           "\": must be a number of attempts from 0 to 1000"));
        }
        fail_attempts = attempts;
      }
    }
    if (found) break;
  }
  if (fail_attempts.has_value() && RestartAttemptOf(pod) >= *fail_attempts)
    w.exit_code = 0;
  return w;
}

std::string JobSetKeyOf(const api::Pod& pod) {
  const auto& labels = pod.metadata().labels();
  auto it = labels.find(kJobSetNameKey);
  if (it == labels.end()) return "";
  return absl::StrCat(pod.metadata().namespace_(), "/", it->second);
}

int RestartAttemptOf(const api::Pod& pod) {
  for (const auto* map :
       {&pod.metadata().labels(), &pod.metadata().annotations()}) {
    auto it = map->find(kRestartAttemptKey);
    int attempt = 0;
    if (it != map->end() && absl::SimpleAtoi(it->second, &attempt) &&
        attempt >= 0) {
      return attempt;
    }
  }
  return 0;
}

int JobIndexOf(const api::Pod& pod) {
  const auto& labels = pod.metadata().labels();
  auto it = labels.find(kJobIndexKey);
  int index = -1;
  if (it == labels.end() || !absl::SimpleAtoi(it->second, &index)) return -1;
  return index;
}

std::string TaskKeyOf(const api::Pod& pod) {
  const std::string& name = pod.metadata().name();
  const size_t dash = name.rfind('-');
  return absl::StrCat(JobSetKeyOf(pod), "/", RestartAttemptOf(pod), "/",
                      name.substr(0, dash == std::string::npos ? 0 : dash));
}

std::string SimNodeName(int index) { return absl::StrCat("sim-", index); }

api::NodeRegistration SimNode(int index, const NodeShape& shape) {
  api::NodeRegistration r;
  r.set_name(SimNodeName(index));
  r.set_address(absl::StrCat("10.", index / 65536, ".", (index / 256) % 256,
                             ".", index % 256));
  (*r.mutable_capacity())["cpu"] = shape.cpu;
  (*r.mutable_capacity())["memory"] = shape.memory;
  if (shape.gpus > 0) {
    (*r.mutable_capacity())["nvidia.com/gpu"] = absl::StrCat(shape.gpus);
  }
  (*r.mutable_labels())[kSliceLabel] =
      absl::StrCat("slice-", index / std::max(1, shape.hosts_per_slice));
  r.set_agent_version("jobset-agent fleet-sim");
  return r;
}

void TimerQueue::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void TimerQueue::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&mu_);
  heap_.clear();
}

void TimerQueue::At(absl::Time when, std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  heap_.push_back({when, seq_++, std::move(fn)});
  std::push_heap(heap_.begin(), heap_.end(), Later());
  if (heap_.front().seq == seq_ - 1) cv_.Signal();  // a new earliest
}

absl::Duration TimerQueue::TakeMaxLateness() {
  absl::MutexLock lock(&mu_);
  return std::exchange(max_late_, absl::ZeroDuration());
}

void TimerQueue::Loop() {
  while (true) {
    std::function<void()> fn;
    {
      absl::MutexLock lock(&mu_);
      while (!stopping_) {
        if (heap_.empty()) {
          cv_.Wait(&mu_);
          continue;
        }
        const absl::Time now = absl::Now();
        if (heap_.front().when > now) {
          cv_.WaitWithDeadline(&mu_, heap_.front().when);
          continue;
        }
        max_late_ = std::max(max_late_, now - heap_.front().when);
        std::pop_heap(heap_.begin(), heap_.end(), Later());
        fn = std::move(heap_.back().fn);
        heap_.pop_back();
        break;
      }
      if (stopping_) return;
    }
    fn();
  }
}

void FleetRecorder::Run(const std::string& jobset, int attempt, int agent,
                        const std::string& uid, absl::Time at,
                        bool from_welcome, int host_entries,
                        int64_t table_bytes) {
  absl::MutexLock lock(&mu_);
  Tally& t = tallies_[jobset][attempt];
  t.host_entries += host_entries;
  t.host_table_bytes += table_bytes;
  if (t.runs++ == 0) {
    t.first_agent = agent;
    t.first_uid = uid;
  }
  t.first_run = std::min(t.first_run, at);
  t.last_run = std::max(t.last_run, at);
  ++counts_.runs;
  if (from_welcome) ++counts_.welcome_runs;
}

void FleetRecorder::Launch(const std::string& uid, const std::string& jobset,
                           int attempt, const std::string& task) {
  absl::MutexLock lock(&mu_);
  if (!launched_.emplace(uid, std::make_pair(jobset, attempt)).second)
    ++counts_.double_launches;
  if (++task_launches_[task] > 1) ++counts_.double_task_launches;
}

void FleetRecorder::ReportCopy(const std::string& uid, bool sent, bool stale) {
  absl::MutexLock lock(&mu_);
  if (!sent) {
    ++counts_.copies_dropped;
    return;
  }
  ++counts_.copies_sent;
  if (stale) ++counts_.stale_copies;
  auto it = launched_.find(uid);
  if (it == launched_.end()) return;
  auto js = tallies_.find(it->second.first);
  if (js != tallies_.end() && js->second.contains(it->second.second + 1) &&
      js->second.at(it->second.second + 1).runs > 0) {
    ++counts_.copies_after_restart;
  }
}

void FleetRecorder::HostUpdate(const std::string& jobset, int attempt,
                               int host_entries, int64_t table_bytes) {
  absl::MutexLock lock(&mu_);
  Tally& t = tallies_[jobset][attempt];
  ++t.host_updates;
  t.host_update_entries += host_entries;
  t.host_table_bytes += table_bytes;
}

void FleetRecorder::Stop(const std::string& jobset, int attempt,
                         absl::Time at) {
  absl::MutexLock lock(&mu_);
  Tally& t = tallies_[jobset][attempt];
  ++t.stops;
  t.last_stop = std::max(t.last_stop, at);
  ++counts_.stops;
}

void FleetRecorder::Release() {
  absl::MutexLock lock(&mu_);
  ++counts_.releases;
}

void FleetRecorder::Welcome(int64_t dropped) {
  absl::MutexLock lock(&mu_);
  ++counts_.welcomes;
  counts_.welcome_drops += dropped;
}

void FleetRecorder::RefusedPod() {
  absl::MutexLock lock(&mu_);
  ++counts_.refused_pods;
}

void FleetRecorder::StreamEnded(const grpc::Status& status, bool was_welcomed) {
  absl::MutexLock lock(&mu_);
  // jobsetd ends a lost node's stream with FAILED_PRECONDITION.
  if (was_welcomed &&
      status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
    ++counts_.lost;
  }
  if (status.error_code() == grpc::StatusCode::CANCELLED) return;
  ++errors_[absl::StrCat("stream: code ", status.error_code(), ": ",
                         status.error_message().substr(0, 200))];
}

void FleetRecorder::JoinFailed(const std::string& error) {
  absl::MutexLock lock(&mu_);
  ++errors_[absl::StrCat("join: ", error.substr(0, 200))];
}

FleetRecorder::Tally FleetRecorder::Get(const std::string& jobset,
                                        int attempt) {
  absl::MutexLock lock(&mu_);
  auto js = tallies_.find(jobset);
  if (js == tallies_.end()) return {};
  auto it = js->second.find(attempt);
  return it == js->second.end() ? Tally{} : it->second;
}

FleetRecorder::Counts FleetRecorder::counts() {
  absl::MutexLock lock(&mu_);
  return counts_;
}

FleetRecorder::Tally FleetRecorder::AwaitRuns(const std::string& jobset,
                                              int attempt, int64_t runs,
                                              absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto js = tallies_.find(jobset);
    if (js == tallies_.end()) return false;
    auto it = js->second.find(attempt);
    return it != js->second.end() && it->second.runs >= runs;
  };
  mu_.AwaitWithDeadline(absl::Condition(&reached), deadline);
  auto js = tallies_.find(jobset);
  if (js == tallies_.end()) return {};
  auto it = js->second.find(attempt);
  return it == js->second.end() ? Tally{} : it->second;
}

void FleetRecorder::SetMeasuring(bool on) {
  absl::MutexLock lock(&mu_);
  measuring_ = on;
}

void FleetRecorder::Rtt(absl::Duration rtt) {
  absl::MutexLock lock(&mu_);
  if (measuring_) rtts_ms_.push_back(absl::ToDoubleMilliseconds(rtt));
}

std::vector<double> FleetRecorder::TakeRttsMs() {
  absl::MutexLock lock(&mu_);
  std::vector<double> out = std::exchange(rtts_ms_, {});
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> FleetRecorder::TopErrors(int n) {
  std::vector<std::pair<int64_t, std::string>> all;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [message, count] : errors_)
      all.emplace_back(count, message);
  }
  std::sort(all.rbegin(), all.rend());
  std::vector<std::string> out;
  for (int i = 0; i < n && i < static_cast<int>(all.size()); ++i)
    out.push_back(absl::StrCat(all[i].first, " x ", all[i].second));
  return out;
}

void FleetRecorder::ClearErrors() {
  absl::MutexLock lock(&mu_);
  errors_.clear();
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t i = static_cast<size_t>(p * static_cast<double>(sorted.size()));
  return sorted[std::min(sorted.size() - 1, i)];
}

ProcStat ReadProcStat(pid_t pid) {
  ProcStat s;
  std::ifstream stat(pid == 0 ? std::string("/proc/self/stat")
                              : absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(stat, line)) return s;
  // The command (field 2) may hold spaces: count fields after its ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return s;
  std::vector<std::string> fields;
  std::string field;
  for (size_t i = close + 2; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == ' ') {
      fields.push_back(std::move(field));
      field.clear();
    } else {
      field += line[i];
    }
  }
  // After the command: field 3 (state) is fields[0]; utime 14, stime 15,
  // rss 24 (1-based) are fields[11], [12], [21].
  int64_t utime = 0, stime = 0, rss = 0;
  if (fields.size() > 21 && absl::SimpleAtoi(fields[11], &utime) &&
      absl::SimpleAtoi(fields[12], &stime) &&
      absl::SimpleAtoi(fields[21], &rss)) {
    s.cpu_seconds = static_cast<double>(utime + stime) / sysconf(_SC_CLK_TCK);
    s.rss_bytes = rss * sysconf(_SC_PAGESIZE);
  }
  return s;
}

}  // namespace jobset::testing::fleet
