#include "scheduler/controller/pass_metrics.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "api/pod_phase.h"
#include "scheduler/records/constants.h"

namespace jobset::scheduler {
namespace {

std::string Label(const api::ObjectMeta& meta, const char* key) {
  auto it = meta.labels().find(key);
  return it == meta.labels().end() ? "" : it->second;
}

int64_t JobRestarts(const api::JobSetStatus& s) {
  int64_t n = 0;
  for (const api::ReplicatedJobStatus& r : s.replicated_jobs_status())
    for (int32_t c : r.job_restarts()) n += c;
  return n;
}

}  // namespace

void RecordReconcile(ControllerMetrics& metrics, TrackedJobSet& t,
                     const api::JobSetStatus& before,
                     const std::vector<JobSetEvent>& events, absl::Time now) {
  const api::JobSetStatus& after = t.jobset.status();
  if (before.terminal_state().empty() && !after.terminal_state().empty()) {
    metrics.Finished(t.jobset.metadata().namespace_(),
                     t.jobset.metadata().name(),
                     after.terminal_state() == "Completed");
  }
  const std::string reason = events.empty() ? "" : events.back().reason;
  if (after.restarts() > before.restarts()) {
    metrics.Restarted("RestartJobSet", reason,
                      after.restarts() - before.restarts());
    t.timing.restart_decided = now;
    t.timing.last_restart = now;
  }
  if (JobRestarts(after) > JobRestarts(before)) {
    metrics.Restarted("RestartJob", reason,
                      JobRestarts(after) - JobRestarts(before));
  }
  if ((t.timing.first_running_seen && !t.timing.restart_decided) ||
      !after.terminal_state().empty()) {
    return;
  }
  // Is every pod of the current attempt running?
  int64_t expected = 0;
  for (const api::ReplicatedJob& r : t.jobset.spec().replicated_jobs()) {
    const api::JobSpec& job = r.template_().spec();
    const int64_t per_job =
        std::min(job.has_parallelism() ? job.parallelism() : 1,
                 job.has_completions() ? job.completions() : 1 << 30);
    expected += r.replicas() * per_job;
  }
  const std::string attempt = absl::StrCat(after.restarts());
  int64_t running = 0;
  for (const auto& [name, job] : t.jobs) {
    if (Label(job.job.metadata(), kRestartAttemptKey) != attempt) continue;
    for (const auto& [pod_name, pod] : job.pods) {
      if (pod.has_deletion_timestamp()) continue;
      if (pod.status().phase() != api::kPodRunning) return;
      ++running;
    }
  }
  if (expected == 0 || running < expected) return;
  if (t.timing.restart_decided) {
    metrics.RestartedToRunning(now - *t.timing.restart_decided);
    t.timing.restart_decided.reset();
  } else {
    metrics.SubmittedToRunning(
        now - t.timing.accepted.value_or(absl::FromUnixSeconds(
                  t.jobset.metadata().creation_timestamp().seconds())));
  }
  t.timing.first_running_seen = true;
}

void RecordGauges(ControllerMetrics& metrics, const ControllerState& state,
                  int64_t pending, absl::Time now) {
  std::vector<JobSetGoodput> goodput;
  std::map<std::string, int64_t> states = {{"pending", 0},
                                           {"running", 0},
                                           {"suspended", 0},
                                           {"completed", 0},
                                           {"failed", 0}};
  std::map<std::string, int64_t> phases = {{api::kPodPending, 0},
                                           {api::kPodRunning, 0},
                                           {api::kPodSucceeded, 0},
                                           {api::kPodFailed, 0}};
  for (const auto& [key, t] : state.jobsets()) {
    const api::JobSetStatus& status = t.jobset.status();
    bool running = false;
    for (const auto& [name, job] : t.jobs) {
      for (const auto& [pod_name, pod] : job.pods) {
        const std::string& phase = pod.status().phase().empty()
                                       ? api::kPodPending
                                       : pod.status().phase();
        ++phases[phase];
        running |= phase == api::kPodRunning;
      }
    }
    if (status.terminal_state() == "Completed") {
      ++states["completed"];
    } else if (status.terminal_state() == "Failed") {
      ++states["failed"];
    } else if (t.jobset.spec().suspend()) {
      ++states["suspended"];
    } else {
      ++states[running ? "running" : "pending"];
    }
    if (t.goodput.has_value()) {
      const resilience::GoodputReport r = t.goodput->Report(now);
      JobSetGoodput& g = goodput.emplace_back();
      g.namespace_name = t.jobset.metadata().namespace_();
      g.name = t.jobset.metadata().name();
      g.seconds = {{"Queued", absl::ToDoubleSeconds(r.times.queued)},
                   {"Starting", absl::ToDoubleSeconds(r.times.starting)},
                   {"Productive", absl::ToDoubleSeconds(r.times.productive)},
                   {"Stalled", absl::ToDoubleSeconds(r.times.stalled)},
                   {"Restarting", absl::ToDoubleSeconds(r.times.restarting)}};
      g.ratio = r.goodput;
    }
  }
  metrics.Gauges(states, phases, pending);
  metrics.GoodputGauges(goodput);
}

}  // namespace jobset::scheduler
