#include "agent/runtime/pod_shim.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/runtime/container_launcher.h"
#include "agent/runtime/container_lifecycle.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/pod_setup.h"
#include "agent/runtime/process_tree.h"
#include "agent/runtime/status_files.h"
#include "common/log.h"
#include "proto/agent.pb.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {
namespace {

constexpr absl::Duration kLeftoverKillTimeout = absl::Seconds(10);
constexpr absl::Duration kLeaseGrace = absl::Seconds(1);

// Where the pod is in running its containers: init containers one at a
// time, then all containers.
struct Progress {
  size_t next_init = 0;
  bool main_started = false;
};

// A stop in progress: SIGTERM sent, SIGKILL at the deadline.
struct StopState {
  bool stopping = false;
  bool kill_sent = false;
  absl::Time kill_deadline = absl::InfiniteFuture();
};

// Runs one pod (see RunPodShim). Used only from the shim's one thread.
class PodShim {
 public:
  PodShim(PodShimOptions options, Clock* clock)
      : options_(std::move(options)),
        clock_(clock),
        lease_(options_.lease_file),
        status_file_(absl::StrCat(options_.pod_dir, "/", kStatusFile)) {}

  int Run();

 private:
  // Sets the pod up and makes its launcher; a failure fails the pod.
  void SetUp();
  void Fail(absl::string_view reason, absl::string_view message);
  // Starts what is due: the next init container, or every container.
  void Advance(absl::Time now);
  // Starts `c`; returns false when it could not start (its StartError has
  // been recorded and the pod fails).
  bool StartContainer(ShimContainer& c, absl::Time now);
  void OnExit(ShimContainer& c, int wait_status, absl::Time now);
  // A container failed for good: the pod fails, its other containers are
  // stopped with the pod's grace period first.
  void OnContainerFailed(std::string message, absl::Time now);
  void BeginStop(absl::Duration grace, absl::Time now);
  void KillEverything();
  // Stops the pod if the agent's lease ran out.
  void CheckLease(absl::Time now);
  void HandleSignals(int sfd, absl::Time now);
  void Reap(absl::Time now);
  // Ends a stop whose processes are all gone: Succeeded only if everything
  // had completed.
  void FinishStop();
  // Sleeps in poll(2) until a signal, container output or the next
  // deadline, draining the output that came.
  void Wait(int sfd, absl::Time now);
  bool PodReadyNow() const;
  api::PodStatus BuildStatus() const;
  void WriteStatus(bool force);
  void FinalCleanup();

  bool Ending() const { return record_.finished || stop_.stopping; }
  bool InitsComplete() const {
    return progress_.next_init >= pod_.inits.size();
  }
  bool AnyContainerProcess() const;
  // Every container, init containers first.
  std::vector<ShimContainer*> All() const;
  std::vector<const ContainerRecord*> MainRecords() const;

  const PodShimOptions options_;
  Clock* const clock_;
  PodSetup pod_;
  std::unique_ptr<ContainerLauncher> launcher_;
  PodProcessTree tree_;
  Progress progress_;
  PodOutcome record_;
  StopState stop_;
  LeaseWatch lease_;
  StatusFile status_file_;
  PodConditions conditions_;
  absl::Time start_time_;
};

std::vector<ShimContainer*> PodShim::All() const {
  std::vector<ShimContainer*> all;
  for (const auto& c : pod_.inits) all.push_back(c.get());
  for (const auto& c : pod_.mains) all.push_back(c.get());
  return all;
}

std::vector<const ContainerRecord*> PodShim::MainRecords() const {
  std::vector<const ContainerRecord*> records;
  for (const auto& c : pod_.mains) records.push_back(&c->record);
  return records;
}

bool PodShim::AnyContainerProcess() const {
  for (ShimContainer* c : All()) {
    if (c->pid != 0) return true;
  }
  return false;
}

void PodShim::SetUp() {
  absl::Status setup = SetUpPod(options_, &pod_);
  if (!setup.ok()) {
    const bool spec_error = setup.code() == absl::StatusCode::kInvalidArgument;
    Fail(spec_error ? "InvalidSpec" : "SetupError", setup.message());
  }
  launcher_ = MakeLauncher(options_, pod_);
  tree_ = PodProcessTree(pod_.cgroup_dirs);
}

void PodShim::Fail(absl::string_view reason, absl::string_view message) {
  if (record_.finished) return;
  record_ = PodFailed(std::move(record_), reason, message);
  JOBSET_LOG(WARNING) << "pod failed: " << reason << ": " << message;
}

bool PodShim::StartContainer(ShimContainer& c, absl::Time now) {
  c.signalled_by_us = false;
  c.output.DrainAndClose();
  if (pod_.cgroups != nullptr) {
    c.oom_before = pod_.cgroups->OomKills(c.spec.name());
  }
  absl::StatusOr<Launched> launched = launcher_->Launch(c.spec, c.memory_limit);
  if (launched.ok()) {
    c.pid = launched->pid;
    c.output.Attach(launched->out_fd);
    c.record = Started(std::move(c.record), now);
    c.probe.ContainerStarted(now);
    return true;
  }
  // The one place a StartError or a CreateContainerConfigError (the
  // launcher's FailedPrecondition) is recorded: the pod fails whatever its
  // restart policy.
  const absl::string_view error = launched.status().message();
  const bool config_error =
      launched.status().code() == absl::StatusCode::kFailedPrecondition;
  const absl::string_view reason =
      config_error ? "CreateContainerConfigError" : "StartError";
  c.record = config_error ? ConfigFailed(std::move(c.record), error)
                          : StartFailed(std::move(c.record), error, now);
  const std::string message =
      absl::StrCat(c.record.init ? "init container " : "container ",
                   c.spec.name(), ": ", error);
  if (c.record.init) {
    Fail(reason, message);
  } else {
    record_.reason = std::string(reason);
    OnContainerFailed(message, now);
  }
  return false;
}

void PodShim::Advance(absl::Time now) {
  if (stop_.stopping && !stop_.kill_sent && now >= stop_.kill_deadline) {
    KillEverything();
  }
  if (Ending()) return;
  if (!InitsComplete()) {
    ShimContainer& c = *pod_.inits[progress_.next_init];
    if (c.pid == 0 && now >= c.record.backoff.next_start) {
      StartContainer(c, now);
    }
    return;
  }
  if (!progress_.main_started) {
    progress_.main_started = true;
    for (auto& c : pod_.mains) c->record.reason = "ContainerCreating";
  }
  for (auto& c : pod_.mains) {
    if (c->record.done || c->pid != 0 || now < c->record.backoff.next_start) {
      continue;
    }
    if (!StartContainer(*c, now)) return;
  }
  record_.phase = RunningPhase(record_.phase, MainRecords());
  if (record_.phase == PodPhase::kSucceeded ||
      record_.phase == PodPhase::kFailed) {
    record_.finished = true;
  }
}

void PodShim::OnExit(ShimContainer& c, int wait_status, absl::Time now) {
  c.pid = 0;
  ExitFacts facts;
  facts.wait_status = wait_status;
  facts.oci = launcher_->oci();
  facts.runc_error = launcher_->Reaped(c.spec);
  facts.memory_limit = c.memory_limit > 0;
  if (facts.memory_limit && pod_.cgroups != nullptr && !launcher_->oci()) {
    facts.oom_count_grew = pod_.cgroups->OomKills(c.spec.name()) > c.oom_before;
  }
  facts.signalled_by_us = c.signalled_by_us;
  const ContainerExit exit = ClassifyExit(facts);
  const bool ending = Ending();
  c.record =
      Exited(std::move(c.record), exit, pod_.restart_policy, ending, now);
  c.probe.ContainerExited();
  JOBSET_LOG(INFO) << "container " << c.spec.name() << " exited: code "
                   << exit.exit_code << " signal " << exit.signal << " "
                   << exit.reason;
  if (ending || !c.record.done) return;  // Ending, or restarting.
  const bool failed = exit.exit_code != 0;
  if (c.record.init) {
    if (failed) {
      Fail("InitContainerFailed",
           absl::StrCat("init container ", c.spec.name(), " exited with code ",
                        exit.exit_code));
    } else {
      ++progress_.next_init;
    }
    return;
  }
  if (failed) {
    OnContainerFailed(
        absl::StrCat("container ", c.spec.name(), " exited with code ",
                     exit.exit_code, " (", exit.reason, ")"),
        now);
  }
}

void PodShim::OnContainerFailed(std::string message, absl::Time now) {
  record_.phase = PodPhase::kFailed;
  record_.message = std::move(message);
  if (AnyContainerProcess()) {
    BeginStop(pod_.grace, now);
    return;
  }
  record_.finished = true;
}

void PodShim::BeginStop(absl::Duration grace, absl::Time now) {
  if (stop_.stopping) {
    stop_.kill_deadline = std::min(stop_.kill_deadline, now + grace);
    return;
  }
  stop_.stopping = true;
  stop_.kill_deadline = now + grace;
  JOBSET_LOG(INFO) << "stopping, grace " << absl::FormatDuration(grace);
  for (ShimContainer* c : All()) {
    if (c->pid == 0) {
      c->record.done = true;
      continue;
    }
    c->signalled_by_us = true;
    launcher_->Terminate(c->spec, c->pid);
    c->probe.Kill();
  }
  // One SIGTERM, as the kubelet sends: the launcher's to each container
  // (its process group; runc's to its pid 1). Signalling the pod's whole
  // tree too would deliver it again (two or three times), which re-runs or
  // interrupts a handler writing a checkpoint. What outlives the grace
  // period, including processes that left the group, gets SIGKILL.
  if (grace <= absl::ZeroDuration()) KillEverything();
}

void PodShim::KillEverything() {
  stop_.kill_sent = true;
  for (ShimContainer* c : All()) {
    if (c->pid == 0) continue;
    c->signalled_by_us = true;
    launcher_->Kill(c->spec, c->pid);
  }
  tree_.SignalAll(SIGKILL);
}

void PodShim::CheckLease(absl::Time now) {
  if (!lease_.Due(now) || Ending()) return;
  std::optional<std::string> expired = lease_.Expired(now);
  if (!expired.has_value()) return;
  record_.reason = "LeaseExpired";
  record_.message = *std::move(expired);
  JOBSET_LOG(WARNING) << record_.message;
  BeginStop(std::min(pod_.grace, kLeaseGrace), now);
}

void PodShim::HandleSignals(int sfd, absl::Time now) {
  struct signalfd_siginfo info;
  while (read(sfd, &info, sizeof(info)) == sizeof(info)) {
    if (info.ssi_signo != SIGTERM && info.ssi_signo != SIGINT) continue;
    const absl::Duration grace =
        StopGrace(options_.pod_dir).value_or(pod_.grace);
    if (record_.finished) continue;
    if (record_.reason.empty()) {
      record_.reason = "Stopped";
      record_.message = absl::StrCat("stopped by the agent (grace ",
                                     absl::FormatDuration(grace), ")");
    }
    BeginStop(grace, now);
  }
}

void PodShim::Reap(absl::Time now) {
  while (true) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    for (ShimContainer* c : All()) {
      if (c->pid == pid) {
        c->output.Drain();
        OnExit(*c, status, now);
      } else {
        c->probe.Reaped(pid, status, now);
      }
    }
  }
}

void PodShim::FinishStop() {
  bool inits_complete = InitsComplete();
  for (auto& c : pod_.inits) inits_complete = inits_complete && c->record.done;
  record_.phase = StoppedPhase(inits_complete, MainRecords());
  if (record_.phase == PodPhase::kSucceeded) {
    record_.reason.clear();
    record_.message.clear();
  }
  record_.finished = true;
}

bool PodShim::PodReadyNow() const {
  std::vector<bool> ready;
  for (auto& c : pod_.mains) {
    ready.push_back(
        ContainerReady(c->record, c->probe.configured(), c->probe.ready()));
  }
  return PodReady(Ending(), InitsComplete(), ready);
}

api::PodStatus PodShim::BuildStatus() const {
  const api::PodStatus& assigned = pod_.assignment.pod().status();
  api::PodStatus status;
  status.set_phase(std::string(PodPhaseName(record_.phase)));
  status.set_reason(record_.reason);
  status.set_message(record_.message);
  status.set_host_ip(assigned.host_ip());
  status.set_pod_ip(assigned.pod_ip().empty() ? assigned.host_ip()
                                              : assigned.pod_ip());
  SetTimestamp(start_time_, status.mutable_start_time());
  for (auto& c : pod_.inits) {
    *status.add_init_container_statuses() = ToContainerStatus(
        c->spec.name(), c->record, ContainerReady(c->record, false, false));
  }
  for (auto& c : pod_.mains) {
    *status.add_container_statuses() = ToContainerStatus(
        c->spec.name(), c->record,
        ContainerReady(c->record, c->probe.configured(), c->probe.ready()));
  }
  conditions_.AppendTo(record_.finished, &status);
  return status;
}

void PodShim::WriteStatus(bool force) {
  const bool ready = PodReadyNow();
  conditions_.Update(InitsComplete(), ready, clock_->Now());
  status_file_.Write(BuildStatus(), force);
}

void PodShim::FinalCleanup() {
  // Whatever the containers left behind (daemonized children) goes with the
  // pod, as it would with its pid namespace.
  tree_.KillLeftovers(*clock_, kLeftoverKillTimeout);
  for (ShimContainer* c : All()) {
    if (c->record.ever_started) launcher_->Remove(c->spec);
  }
  if (pod_.cgroups != nullptr && !RemoveCgroups(pod_.cgroups->AllPodDirs())) {
    JOBSET_LOG(WARNING) << "some cgroups could not be removed";
  }
}

void PodShim::Wait(int sfd, absl::Time now) {
  absl::Time wake = std::min(now + absl::Seconds(1), lease_.next_check());
  if (stop_.stopping && !stop_.kill_sent) {
    wake = std::min(wake, stop_.kill_deadline);
  }
  std::vector<struct pollfd> fds = {{sfd, POLLIN, 0}};
  std::vector<ShimContainer*> owners = {nullptr};
  for (ShimContainer* c : All()) {
    if (!c->record.done && c->pid == 0) {
      wake = std::min(wake, c->record.backoff.next_start);
    }
    wake = std::min(wake, c->probe.NextWake());
    if (c->output.fd() >= 0) {
      fds.push_back({c->output.fd(), POLLIN, 0});
      owners.push_back(c);
    }
  }
  // poll(2) sleeps in real time: its timeout is what the clock has left.
  const int64_t ms =
      std::max<int64_t>(0, absl::ToInt64Milliseconds(wake - clock_->Now()) + 1);
  if (poll(fds.data(), fds.size(),
           static_cast<int>(std::min<int64_t>(ms, 1000))) > 0) {
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents != 0) owners[i]->output.Drain();
    }
  }
}

int PodShim::Run() {
  if (absl::Status s = WriteShimPid(options_.pod_dir); !s.ok()) {
    JOBSET_LOG(ERROR) << s.message();
  }
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  const int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  start_time_ = clock_->Now();
  conditions_.Reset(start_time_);

  // A final status already there (this pod ran, or was declared lost):
  // never run it again.
  api::PodStatus previous;
  if (ReadProtoFile(absl::StrCat(options_.pod_dir, "/", kStatusFile), &previous)
          .ok() &&
      IsFinalPhase(previous.phase())) {
    JOBSET_LOG(INFO) << "final status already recorded; not running the pod "
                        "again";
    return 0;
  }
  SetUp();
  if (StopRequested(options_.pod_dir)) {
    // Stopped before it ran.
    kill(getpid(), SIGTERM);  // handled below through the signalfd
  }
  WriteStatus(true);
  while (true) {
    const absl::Time now = clock_->Now();
    HandleSignals(sfd, now);
    CheckLease(now);
    Reap(now);
    Advance(now);
    if (Ending()) {
      // While stopping, orphans that outlive the containers get the rest of
      // the grace period too.
      const bool waiting_for_orphans =
          stop_.stopping && !stop_.kill_sent && !AnyContainerProcess() &&
          (tree_.HasDescendants() ||
           (pod_.cgroups != nullptr && !pod_.cgroups->Pids().empty()));
      if (!AnyContainerProcess() && !waiting_for_orphans) {
        if (stop_.stopping && !record_.finished) FinishStop();
        break;
      }
    }
    for (auto& c : pod_.mains) {
      if (c->record.state == ContainerState::kRunning) {
        c->probe.Tick(c->spec, c->pid, *launcher_, *clock_, now);
      }
    }
    WriteStatus(false);
    Wait(sfd, now);
  }
  for (ShimContainer* c : All()) c->output.Drain();
  FinalCleanup();
  WriteStatus(true);
  JOBSET_LOG(INFO) << "pod " << pod_.uid << " " << PodPhaseName(record_.phase)
                   << " " << record_.reason;
  return 0;
}

}  // namespace

int RunPodShim(const PodShimOptions& options, Clock* clock) {
  PodShim shim(options, clock);
  return shim.Run();
}

}  // namespace jobset::agent
