#include "agent/runtime/container_lifecycle.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/pod_phase.h"

namespace jobset::agent {
void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out) {
  const int64_t nanos = absl::ToUnixNanos(t);
  out->set_seconds(nanos / 1000000000);
  out->set_nanos(static_cast<int32_t>(nanos % 1000000000));
}

absl::string_view ContainerStateName(ContainerState state) {
  switch (state) {
    case ContainerState::kWaiting:
      return "waiting";
    case ContainerState::kRunning:
      return "running";
    case ContainerState::kTerminated:
      return "terminated";
  }
  return "waiting";
}

absl::StatusOr<RestartPolicy> ParseRestartPolicy(absl::string_view policy) {
  if (policy.empty() || policy == "Never") return RestartPolicy::kNever;
  if (policy == "OnFailure") return RestartPolicy::kOnFailure;
  if (policy == "Always") return RestartPolicy::kAlways;
  return absl::InvalidArgumentError(
      absl::StrCat("spec.restartPolicy: unsupported value \"", policy, "\""));
}

absl::string_view PodPhaseName(PodPhase phase) {
  switch (phase) {
    case PodPhase::kPending:
      return api::kPodPending;
    case PodPhase::kRunning:
      return api::kPodRunning;
    case PodPhase::kSucceeded:
      return api::kPodSucceeded;
    case PodPhase::kFailed:
      return api::kPodFailed;
  }
  return api::kPodPending;
}

ContainerRecord NewContainer(bool init) {
  ContainerRecord c;
  c.init = init;
  c.reason = init ? "PodInitializing" : "ContainerCreating";
  return c;
}

ContainerRecord Started(ContainerRecord c, absl::Time now) {
  c.ever_started = true;
  c.state = ContainerState::kRunning;
  c.reason.clear();
  c.message.clear();
  c.finished_at = absl::InfinitePast();
  c.started_at = now;
  return c;
}

ContainerRecord StartFailed(ContainerRecord c, absl::string_view message,
                            absl::Time now) {
  c.state = ContainerState::kTerminated;
  c.reason = "StartError";
  c.message = std::string(message);
  c.exit_code = kStartErrorExitCode;
  c.finished_at = now;
  c.done = true;
  return c;
}

ContainerRecord ConfigFailed(ContainerRecord c, absl::string_view message) {
  c.state = ContainerState::kWaiting;
  c.reason = "CreateContainerConfigError";
  c.message = std::string(message);
  c.done = true;
  return c;
}

ContainerExit ClassifyExit(const ExitFacts& facts) {
  ContainerExit exit;
  if (WIFSIGNALED(facts.wait_status)) {
    exit.signal = WTERMSIG(facts.wait_status);
    exit.exit_code = 128 + exit.signal;
  } else {
    exit.exit_code = WEXITSTATUS(facts.wait_status);
    if (facts.oci && exit.exit_code > 128 && exit.exit_code < 128 + 65) {
      exit.signal = exit.exit_code - 128;
    }
  }
  exit.reason = exit.exit_code == 0 ? "Completed" : "Error";
  if (exit.exit_code != 0 && !facts.runc_error.empty()) {
    // runc itself failed: the container never ran.
    exit.reason = "StartError";
    exit.message = absl::StrCat("runc: ", facts.runc_error);
  }
  if (exit.signal == SIGKILL && facts.memory_limit) {
    if (facts.oom_count_grew.has_value()) {
      if (*facts.oom_count_grew) exit.reason = "OOMKilled";
    } else if (!facts.signalled_by_us) {
      exit.reason = "OOMKilled";
    }
  }
  return exit;
}

ContainerRecord Exited(ContainerRecord c, const ContainerExit& exit,
                       RestartPolicy policy, bool pod_ending, absl::Time now) {
  c.state = ContainerState::kTerminated;
  c.exit_code = exit.exit_code;
  c.signal = exit.signal;
  c.reason = exit.reason;
  c.message = exit.message;
  c.finished_at = now;
  if (pod_ending) {
    c.done = true;
    return c;
  }
  const bool failed = exit.exit_code != 0;
  // Under Always a main container runs again whatever its end was.
  const bool restart = (failed && policy != RestartPolicy::kNever &&
                        exit.reason != "StartError") ||
                       (policy == RestartPolicy::kAlways && !c.init);
  if (!restart) {
    c.done = true;
    return c;
  }
  ++c.restart_count;
  c.backoff.next_start = now + c.backoff.delay;
  c.state = ContainerState::kWaiting;
  c.message = absl::StrCat("back-off ", absl::FormatDuration(c.backoff.delay),
                           " restarting container (last exit: ", exit.reason,
                           ", exit code ", exit.exit_code, ")");
  c.reason = "CrashLoopBackOff";
  c.backoff.delay = std::min(c.backoff.delay * 2, kBackoffCap);
  return c;
}

PodOutcome PodFailed(PodOutcome pod, absl::string_view reason,
                     absl::string_view message) {
  if (pod.finished) return pod;
  pod.phase = PodPhase::kFailed;
  pod.reason = std::string(reason);
  pod.message = std::string(message);
  pod.finished = true;
  return pod;
}

PodPhase RunningPhase(PodPhase current,
                      const std::vector<const ContainerRecord*>& containers) {
  bool all_done = true;
  bool all_started = true;
  bool all_ok = true;
  for (const ContainerRecord* c : containers) {
    all_done = all_done && c->done;
    all_started = all_started && c->ever_started;
    all_ok = all_ok && c->exit_code == 0;
  }
  if (all_done) return all_ok ? PodPhase::kSucceeded : PodPhase::kFailed;
  if (current == PodPhase::kPending && all_started) return PodPhase::kRunning;
  return current;
}

PodPhase StoppedPhase(bool inits_complete,
                      const std::vector<const ContainerRecord*>& containers) {
  bool ok = inits_complete;
  for (const ContainerRecord* c : containers) {
    ok = ok && c->state == ContainerState::kTerminated && c->exit_code == 0;
  }
  return ok ? PodPhase::kSucceeded : PodPhase::kFailed;
}

ProbeSettings ProbeSettingsOf(const api::Probe& probe) {
  ProbeSettings s;
  s.initial_delay = absl::Seconds(probe.initial_delay_seconds());
  if (probe.period_seconds() > 0)
    s.period = absl::Seconds(probe.period_seconds());
  if (probe.timeout_seconds() > 0) {
    s.timeout = absl::Seconds(probe.timeout_seconds());
  }
  s.success_threshold = std::max(1, probe.success_threshold());
  if (probe.failure_threshold() > 0) {
    s.failure_threshold = probe.failure_threshold();
  }
  return s;
}

ProbeRecord Probed(ProbeRecord r, const ProbeSettings& settings, bool ok) {
  if (ok) {
    ++r.successes;
    r.failures = 0;
    if (r.successes >= settings.success_threshold) r.ready = true;
  } else {
    ++r.failures;
    r.successes = 0;
    if (r.failures >= settings.failure_threshold) r.ready = false;
  }
  return r;
}

bool ContainerReady(const ContainerRecord& c, bool has_probe,
                    bool probe_ready) {
  if (c.init) return c.state == ContainerState::kTerminated && c.exit_code == 0;
  return c.state == ContainerState::kRunning && (!has_probe || probe_ready);
}

bool PodReady(bool ending, bool inits_complete,
              const std::vector<bool>& containers_ready) {
  bool ready = !ending && inits_complete && !containers_ready.empty();
  for (bool r : containers_ready) ready = ready && r;
  return ready;
}

void PodConditions::Update(bool initialized, bool ready, absl::Time now) {
  if (initialized != initialized_.value) initialized_ = {initialized, now};
  if (ready != ready_.value) ready_ = {ready, now};
}

void PodConditions::AppendTo(bool finished, api::PodStatus* status) const {
  auto add = [&](const char* type, const Since& s, const char* not_reason) {
    api::Condition* c = status->add_conditions();
    c->set_type(type);
    c->set_status(s.value ? "True" : "False");
    if (finished) {
      c->set_reason("PodCompleted");
    } else if (!s.value) {
      c->set_reason(not_reason);
    }
    SetTimestamp(s.since, c->mutable_last_transition_time());
  };
  add("Initialized", initialized_, "ContainersNotInitialized");
  add("Ready", ready_, "ContainersNotReady");
  add("ContainersReady", ready_, "ContainersNotReady");
}

api::ContainerStatus ToContainerStatus(absl::string_view name,
                                       const ContainerRecord& c, bool ready) {
  api::ContainerStatus s;
  s.set_name(std::string(name));
  s.set_ready(ready);
  s.set_restart_count(c.restart_count);
  s.set_flat_state(std::string(ContainerStateName(c.state)));
  s.set_exit_code(c.exit_code);
  s.set_signal(c.signal);
  s.set_reason(c.reason);
  s.set_message(c.message);
  if (c.started_at != absl::InfinitePast()) {
    SetTimestamp(c.started_at, s.mutable_started_at());
  }
  if (c.finished_at != absl::InfinitePast()) {
    SetTimestamp(c.finished_at, s.mutable_finished_at());
  }
  return s;
}

}  // namespace jobset::agent
