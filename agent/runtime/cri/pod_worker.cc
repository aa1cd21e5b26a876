#include "agent/runtime/cri/pod_worker.h"

#include <algorithm>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "agent/runtime/cri/container_exit.h"
#include "agent/runtime/cri/container_probe.h"
#include "agent/runtime/cri/log_rotation.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/volumes.h"
#include "common/log.h"

namespace jobset::agent::cri {

namespace v1 = ::runtime::v1;

namespace {

RestartPolicy RestartPolicyOf(const api::PodSpec& spec) {
  // Checked by CheckAssignment before the pod was recorded.
  return ParseRestartPolicy(spec.restart_policy())
      .value_or(RestartPolicy::kNever);
}

absl::Duration GraceOf(const api::PodSpec& spec) {
  if (!spec.has_termination_grace_period_seconds()) return absl::Seconds(30);
  return absl::Seconds(
      std::max<int64_t>(0, spec.termination_grace_period_seconds()));
}

absl::StatusOr<v1::ContainerStatusResponse> StatusOf(const CriClient& client,
                                                     const std::string& id) {
  v1::ContainerStatusRequest request;
  request.set_container_id(id);
  return client.ContainerStatus(request);
}

}  // namespace

// ---- WorkerMailbox ----

void WorkerMailbox::RequestStop(absl::Duration grace) {
  absl::MutexLock lock(&mu_);
  stop_grace_ = stop_grace_.has_value() ? std::min(*stop_grace_, grace) : grace;
  kicked_ = true;
}

void WorkerMailbox::Quit() {
  absl::MutexLock lock(&mu_);
  quit_ = true;
  kicked_ = true;
}

std::optional<absl::Duration> WorkerMailbox::stop() const {
  absl::MutexLock lock(&mu_);
  return stop_grace_;
}

bool WorkerMailbox::quit() const {
  absl::MutexLock lock(&mu_);
  return quit_;
}

bool WorkerMailbox::WaitForKick(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  if (quit_) return false;
  mu_.AwaitWithTimeout(absl::Condition(&kicked_), timeout);
  kicked_ = false;
  return !quit_;
}

void WorkerMailbox::AwaitQuit() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(&quit_));
}

void WorkerMailbox::Publish(api::PodStatus status) {
  absl::MutexLock lock(&mu_);
  status_ = std::move(status);
}

api::PodStatus WorkerMailbox::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

// ---- CriPodWorker ----

CriPodWorker::CriPodWorker(std::shared_ptr<const CriClient> client,
                           Clock* clock, CriPodWorkerOptions options,
                           api::PodAssignment assignment)
    : client_(std::move(client)),
      clock_(clock),
      options_(std::move(options)),
      assignment_(std::move(assignment)),
      sandbox_(client_.get(), assignment_, options_.logs_dir),
      puller_(client_.get(), clock_, assignment_, sandbox_.config(), &events_),
      starter_(client_.get(), assignment_, sandbox_, options_.pod_dir,
               options_.logs_dir, options_.accelerators,
               options_.default_pod_uid) {
  const api::PodSpec& spec = assignment_.pod().spec();
  for (const api::Container& c : spec.init_containers()) {
    containers_.inits.emplace_back(c, /*init=*/true,
                                   options_.pull_backoff_start,
                                   options_.pull_backoff_cap);
  }
  for (const api::Container& c : spec.containers()) {
    containers_.mains.emplace_back(c, /*init=*/false,
                                   options_.pull_backoff_start,
                                   options_.pull_backoff_cap);
  }
  progress_.start_time = clock_->Now();
  progress_.conditions.Reset(progress_.start_time);
  api::PodStatus pending;
  pending.set_phase("Pending");
  mailbox_.Publish(std::move(pending));
}

CriPodWorker::~CriPodWorker() { Shutdown(false); }

void CriPodWorker::Run(bool adopt) {
  if (adopt) {
    // Before List can see the pod: what its containers show now.
    Adopt();
    Publish(clock_->Now());
  }
  thread_ = std::thread([this] { Loop(); });
}

void CriPodWorker::Finished(api::PodStatus status) {
  progress_.final_written = true;
  mailbox_.Publish(std::move(status));
}

void CriPodWorker::RequestStop(absl::Duration grace) {
  mailbox_.RequestStop(grace);
  puller_.Cancel();
}

void CriPodWorker::Shutdown(bool remove) {
  mailbox_.Quit();
  puller_.Cancel();
  if (thread_.joinable()) thread_.join();
  if (!remove) return;
  sandbox_.RemoveAll();
  // Memory emptyDirs and secret volumes are tmpfs mounts in the agent's
  // namespace.
  UnmountVolumes(options_.pod_dir, assignment_.pod().spec());
}

void CriPodWorker::Loop() {
  while (true) {
    SyncOnce(clock_->Now());
    Publish(clock_->Now());
    if (mailbox_.quit()) return;
    if (progress_.outcome.finished && progress_.stopped &&
        progress_.final_written) {
      // Nothing more happens to this pod until Remove.
      mailbox_.AwaitQuit();
      return;
    }
    if (!mailbox_.WaitForKick(options_.sync_period)) return;
  }
}

void CriPodWorker::Adopt() {
  std::optional<absl::Time> created = sandbox_.Adopt();
  if (!created.has_value()) return;
  progress_.start_time = *created;
  progress_.conditions.Reset(*created);
  absl::StatusOr<std::vector<v1::Container>> found = sandbox_.Containers();
  if (!found.ok()) {
    JOBSET_LOG(WARNING) << "pod " << uid() << ": " << found.status();
    return;
  }
  const absl::Time now = clock_->Now();
  // The newest attempt of each container is the one that counts; its
  // attempt number is the restart count.
  for (CriContainer* c : containers_.All()) {
    const v1::Container* latest = LatestAttempt(*found, c->spec.name());
    if (latest == nullptr) continue;
    c->id = latest->id();
    c->image.id = latest->image_ref();
    c->record.restart_count = static_cast<int>(latest->metadata().attempt());
    if (latest->state() == v1::CONTAINER_CREATED) continue;
    absl::StatusOr<v1::ContainerStatusResponse> s = StatusOf(*client_, c->id);
    const absl::Time started =
        s.ok() ? FromCriNanos(s->status().started_at()) : now;
    c->record = Started(std::move(c->record), started);
    c->next_probe = started + c->probe_settings.initial_delay;
    if (s.ok() && s->status().state() == v1::CONTAINER_EXITED) {
      OnExit(*c, s->status(), now);
    }
  }
  for (const CriContainer& c : containers_.inits) {
    if (!c.record.done || c.record.exit_code != 0) break;
    ++containers_.next_init;
  }
  for (const CriContainer& c : containers_.mains) {
    if (c.record.ever_started || !c.id.empty()) containers_.main_started = true;
  }
  if (containers_.InitsComplete() && containers_.main_started) {
    progress_.outcome.phase =
        RunningPhase(progress_.outcome.phase, containers_.MainRecords());
  }
}

void CriPodWorker::Fail(absl::string_view reason, absl::string_view message) {
  if (progress_.outcome.finished) return;
  progress_.outcome = PodFailed(std::move(progress_.outcome), reason, message);
  JOBSET_LOG(WARNING) << "pod " << uid() << " failed: " << reason << ": "
                      << message;
}

void CriPodWorker::OnContainerFailed(std::string message, absl::Time now) {
  progress_.outcome.phase = PodPhase::kFailed;
  progress_.outcome.message = std::move(message);
  progress_.outcome.finished = true;
  StopAll(GraceOf(assignment_.pod().spec()), now);
}

bool CriPodWorker::EnsureSandbox() {
  if (!sandbox_.id().empty()) return true;
  PodOutcome& outcome = progress_.outcome;
  if (absl::Status s = sandbox_.Ensure(); !s.ok()) {
    // kubelet's FailedCreatePodSandBox: retried on the next sync.
    outcome.reason = "FailedCreatePodSandBox";
    outcome.message = std::string(s.message());
    JOBSET_LOG(WARNING) << "pod " << uid() << ": " << s;
    return false;
  }
  if (outcome.reason == "FailedCreatePodSandBox") {
    outcome.reason.clear();
    outcome.message.clear();
  }
  return true;
}

void CriPodWorker::OnExit(CriContainer& c, const v1::ContainerStatus& s,
                          absl::Time now) {
  const ContainerExit exit = ExitOf(s);
  const bool start_error = exit.reason == "StartError";
  const bool ending = progress_.outcome.finished || progress_.stopped;
  c.record = start_error ? StartFailed(std::move(c.record), exit.message, now)
                         : Exited(std::move(c.record), exit,
                                  RestartPolicyOf(assignment_.pod().spec()),
                                  ending, now);
  if (!start_error) c.record.finished_at = FromCriNanos(s.finished_at());
  c.probe = ProbeRecord{};
  c.next_probe = absl::InfiniteFuture();
  JOBSET_LOG(INFO) << "pod " << uid() << ": container " << c.spec.name()
                   << " exited: code " << exit.exit_code << " " << exit.reason;
  if (ending || !c.record.done) return;
  const bool failed = exit.exit_code != 0;
  if (c.init) {
    if (failed) {
      Fail(start_error ? "StartError" : "InitContainerFailed",
           absl::StrCat("init container ", c.spec.name(), " exited with code ",
                        exit.exit_code));
      StopAll(GraceOf(assignment_.pod().spec()), now);
    } else {
      ++containers_.next_init;
    }
    return;
  }
  if (failed) {
    if (start_error) progress_.outcome.reason = "StartError";
    OnContainerFailed(
        absl::StrCat("container ", c.spec.name(), " exited with code ",
                     exit.exit_code, " (", exit.reason, ")"),
        now);
  }
}

void CriPodWorker::Refresh(absl::Time now) {
  for (CriContainer* c : containers_.All()) {
    if (c->id.empty() || c->record.state != ContainerState::kRunning) continue;
    absl::StatusOr<v1::ContainerStatusResponse> s = StatusOf(*client_, c->id);
    if (absl::IsNotFound(s.status())) {
      // Removed behind our back: kubelet's ContainerStatusUnknown.
      v1::ContainerStatus gone;
      gone.set_exit_code(137);
      gone.set_reason("ContainerStatusUnknown");
      gone.set_message("The container could not be located");
      c->id.clear();
      OnExit(*c, gone, now);
      continue;
    }
    if (!s.ok()) {
      JOBSET_LOG(WARNING) << "pod " << uid() << ": " << s.status();
      continue;
    }
    if (s->status().state() == v1::CONTAINER_EXITED) {
      if (ExitSettled(s->status(), now, &c->killed_seen)) {
        OnExit(*c, s->status(), now);
      }
    } else {
      RotateLogPastCap(*client_, options_.logs_dir, c->spec.name(), c->id,
                       options_.log_cap_bytes, uid());
      Probe(*c, now);
    }
  }
}

void CriPodWorker::Probe(CriContainer& c, absl::Time now) {
  if (!c.spec.has_readiness_probe() || now < c.next_probe) return;
  const bool ok =
      ProbeContainer(*client_, *clock_, c.spec, c.id, c.probe_settings);
  c.probe = Probed(c.probe, c.probe_settings, ok);
  c.next_probe = now + c.probe_settings.period;
}

void CriPodWorker::StartOne(CriContainer& c, absl::Time now) {
  if (!puller_.Ensure(c.spec, &c.pull, &c.image, &c.record, now)) return;
  StartOutcome started = starter_.Start(c, now);
  switch (started.kind) {
    case StartOutcome::Kind::kStarted:
      c.probe = ProbeRecord{};
      c.next_probe = now + c.probe_settings.initial_delay;
      return;
    case StartOutcome::Kind::kRetry:
      return;
    case StartOutcome::Kind::kFailed:
      if (c.init) {
        Fail(started.reason, started.message);
        StopAll(GraceOf(assignment_.pod().spec()), now);
      } else {
        progress_.outcome.reason = std::move(started.reason);
        OnContainerFailed(std::move(started.message), now);
      }
      return;
  }
}

void CriPodWorker::Advance(absl::Time now) {
  if (progress_.outcome.finished) return;
  if (!containers_.InitsComplete()) {
    CriContainer& c = containers_.inits[containers_.next_init];
    if (c.record.state != ContainerState::kRunning && !c.record.done &&
        now >= c.record.backoff.next_start) {
      StartOne(c, now);
    }
    return;
  }
  if (!containers_.main_started) {
    containers_.main_started = true;
    for (CriContainer& c : containers_.mains) {
      c.record.reason = "ContainerCreating";
    }
  }
  for (CriContainer& c : containers_.mains) {
    if (c.record.done || c.record.state == ContainerState::kRunning ||
        now < c.record.backoff.next_start) {
      continue;
    }
    StartOne(c, now);
    if (progress_.outcome.finished) return;
  }
  PodOutcome& outcome = progress_.outcome;
  outcome.phase = RunningPhase(outcome.phase, containers_.MainRecords());
  if (outcome.phase == PodPhase::kSucceeded ||
      outcome.phase == PodPhase::kFailed) {
    outcome.finished = true;
  }
}

void CriPodWorker::StopAll(absl::Duration grace, absl::Time now) {
  // Containers stop in parallel, each with the whole grace period
  // (kubelet's killContainersWithSyncResult).
  std::vector<std::thread> stops;
  for (CriContainer* c : containers_.All()) {
    if (c->id.empty() || c->record.state != ContainerState::kRunning) continue;
    stops.emplace_back([this, c, grace] {
      v1::StopContainerRequest request;
      request.set_container_id(c->id);
      // CRI counts whole seconds: a grace is rounded up, never cut short.
      request.set_timeout(
          absl::ToInt64Seconds(absl::Ceil(grace, absl::Seconds(1))));
      if (absl::StatusOr<v1::StopContainerResponse> r =
              client_->StopContainer(request, grace);
          !r.ok()) {
        JOBSET_LOG(WARNING) << "pod " << uid() << ": container "
                            << c->spec.name() << ": " << r.status().message();
      }
    });
  }
  for (std::thread& t : stops) t.join();
  progress_.stopped = true;
  // What the stop ended, as the runtime saw it.
  for (CriContainer* c : containers_.All()) {
    if (c->record.state != ContainerState::kRunning) {
      c->record.done = true;
      continue;
    }
    absl::StatusOr<v1::ContainerStatusResponse> s = StatusOf(*client_, c->id);
    v1::ContainerStatus exited;
    if (s.ok() && s->status().state() == v1::CONTAINER_EXITED) {
      exited = s->status();
    } else {
      exited.set_exit_code(137);
      exited.set_reason("Error");
    }
    OnExit(*c, exited, now);
    c->record.done = true;
  }
  sandbox_.Stop();
}

void CriPodWorker::SyncOnce(absl::Time now) {
  PodOutcome& outcome = progress_.outcome;
  const std::optional<absl::Duration> stop = mailbox_.stop();
  if (stop.has_value() && !progress_.stopped) {
    Refresh(now);
    if (!outcome.finished) {
      outcome.reason = "Stopped";
      outcome.message = absl::StrCat("stopped by the agent (grace ",
                                     absl::FormatDuration(*stop), ")");
    }
    const bool was_finished = outcome.finished;
    StopAll(*stop, now);
    if (!was_finished) {
      outcome.phase =
          StoppedPhase(containers_.InitsComplete(), containers_.MainRecords());
      outcome.finished = true;
    }
    return;
  }
  const absl::Duration grace = GraceOf(assignment_.pod().spec());
  if (outcome.finished) {
    if (!progress_.stopped) StopAll(grace, now);
    return;
  }
  if (!EnsureSandbox()) return;
  Refresh(now);
  Advance(now);
  if (outcome.finished && !progress_.stopped) StopAll(grace, now);
}

void CriPodWorker::Publish(absl::Time now) {
  const api::PodStatus& assigned = assignment_.pod().status();
  const PodOutcome& outcome = progress_.outcome;
  api::PodStatus status;
  status.set_phase(std::string(PodPhaseName(outcome.phase)));
  status.set_reason(outcome.reason);
  status.set_message(outcome.message);
  status.set_host_ip(assigned.host_ip());
  status.set_pod_ip(assigned.pod_ip().empty() ? assigned.host_ip()
                                              : assigned.pod_ip());
  SetTimestamp(progress_.start_time, status.mutable_start_time());
  for (const CriContainer& c : containers_.inits) {
    *status.add_init_container_statuses() = ToContainerStatus(
        c.spec.name(), c.record, ContainerReady(c.record, false, false));
  }
  std::vector<bool> ready;
  for (const CriContainer& c : containers_.mains) {
    const bool r =
        ContainerReady(c.record, c.spec.has_readiness_probe(), c.probe.ready);
    ready.push_back(r);
    *status.add_container_statuses() =
        ToContainerStatus(c.spec.name(), c.record, r);
  }
  const bool inits_complete = containers_.InitsComplete();
  const bool pod_ready =
      PodReady(outcome.finished || progress_.stopped, inits_complete, ready);
  progress_.conditions.Update(inits_complete, pod_ready, now);
  progress_.conditions.AppendTo(outcome.finished, &status);
  if (outcome.finished && progress_.stopped && !progress_.final_written) {
    // The final status outlives the containers (Remove, a runtime reset).
    absl::Status w = WriteProtoAtomic(
        absl::StrCat(options_.pod_dir, "/", kStatusFile), status);
    if (w.ok()) {
      progress_.final_written = true;
    } else {
      JOBSET_LOG(WARNING) << "pod " << uid() << ": " << w;
    }
  }
  mailbox_.Publish(std::move(status));
}

}  // namespace jobset::agent::cri
