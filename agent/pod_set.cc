#include "agent/pod_set.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/host.h"
#include "agent/runtime/pod_input.h"
#include "api/env_expansion.h"
#include "api/pod_phase.h"
#include "common/log.h"

namespace jobset::agent {
namespace {

constexpr char kGpu[] = "nvidia.com/gpu";
constexpr absl::Duration kDefaultGrace = absl::Seconds(30);

absl::Duration GraceOf(const api::Pod& pod) {
  return pod.spec().has_termination_grace_period_seconds()
             ? absl::Seconds(pod.spec().termination_grace_period_seconds())
             : kDefaultGrace;
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// Replaces `path` with `text` (a crash leaves the old file or the new one).
void ReplaceFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
  }
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace

PodSet::PodSet(Options options, Runtime* runtime, Clock* clock,
               PodReporter* reporter, PodReporter::Send send)
    : options_(std::move(options)),
      runtime_(runtime),
      clock_(clock),
      reporter_(reporter),
      send_(std::move(send)) {}

int PodSet::GpuCapacity(const api::NodeRegistration& node) {
  int total = 0;
  auto cap = node.capacity().find(kGpu);
  if (cap == node.capacity().end() || !absl::SimpleAtoi(cap->second, &total) ||
      total < 0) {
    return 0;
  }
  return total;
}

void PodSet::Load() {
  if (options_.state_dir.empty()) return;
  std::set<std::string> live;
  for (const PodState& pod : runtime_->List()) live.insert(pod.uid);
  const std::string attempts =
      ReadWholeFile(absl::StrCat(options_.state_dir, "/attempts"));
  const std::string devices =
      ReadWholeFile(absl::StrCat(options_.state_dir, "/devices"));
  absl::MutexLock lock(&mu_);
  barrier_ = RestartBarrier::Parse(attempts, live);
  devices_ = DeviceLedger::Parse(devices, live);
}

void PodSet::SaveLedger() {
  if (options_.state_dir.empty()) return;
  ReplaceFile(absl::StrCat(options_.state_dir, "/devices"),
              devices_.Serialize());
  ReplaceFile(absl::StrCat(options_.state_dir, "/attempts"),
              barrier_.Serialize());
}

void PodSet::Reconcile(const api::Welcome& welcome) {
  // Copies: each one's host table is expanded in place.
  std::vector<api::PodAssignment> pods(welcome.pods().begin(),
                                       welcome.pods().end());
  std::map<std::string, api::PodAssignment*> desired;
  for (api::PodAssignment& a : pods) desired[a.pod().metadata().uid()] = &a;
  std::set<std::string> known;
  for (const PodState& pod : runtime_->List()) {
    if (!desired.contains(pod.uid)) {
      Release(pod.uid);
    } else {
      known.insert(pod.uid);
    }
  }
  for (const auto& [uid, a] : desired) {
    {
      absl::MutexLock lock(&mu_);
      grace_[uid] = GraceOf(a->pod());
    }
    if (!ExpandHosts(a)) continue;
    if (a->stop()) {
      if (known.contains(uid))
        runtime_->Stop(uid, GraceOf(a->pod())).IgnoreError();
      continue;
    }
    if (known.contains(uid)) {
      if (!RestartInPlace(*a))
        runtime_->UpdateHosts(uid, a->hosts()).IgnoreError();
    } else {
      StartPod(*a);
    }
  }
}

void PodSet::Run(const api::PodAssignment& order) {
  api::PodAssignment a = order;
  if (!ExpandHosts(&a)) return;
  if (RestartInPlace(a)) return;
  // A pod already here: its attempt's host table grew. The runtime checks
  // the uid and the table before it writes anything.
  const std::string& uid = a.pod().metadata().uid();
  absl::Status updated = runtime_->UpdateHosts(uid, a.hosts());
  if (!absl::IsNotFound(updated)) {
    if (!updated.ok()) {
      JOBSET_LOG(WARNING) << "pod " << uid
                          << ": host table refused: " << updated.message();
    }
    return;
  }
  StartPod(std::move(a));
}

bool PodSet::ExpandHosts(api::PodAssignment* a) {
  const absl::Status expanded = ExpandHostTable(a);
  if (expanded.ok()) return true;
  if (a->stop()) {  // Stopping needs no table.
    a->clear_hosts();
    a->clear_hosts_table();
    return true;
  }
  // As a `hosts` that does not pass: a pod here keeps the table it has
  // (UpdateHosts refuses the new one); a new pod, or a restart in place,
  // fails.
  const std::string& uid = a->pod().metadata().uid();
  bool here = false;
  for (const PodState& pod : runtime_->List()) here |= pod.uid == uid;
  bool restart = false;
  absl::StatusOr<std::optional<int32_t>> attempt = InPlaceAttemptOf(a->pod());
  if (here && attempt.ok() && attempt->has_value()) {
    absl::MutexLock lock(&mu_);
    restart = barrier_.IsLater(uid, **attempt);
  }
  if (here && !restart) {
    JOBSET_LOG(WARNING) << "pod " << uid
                        << ": host table refused: " << expanded.message();
  } else {
    ReportFailure(*a, "InvalidAssignment", std::string(expanded.message()));
  }
  return false;
}

void PodSet::Stop(const std::string& uid) {
  absl::Duration grace = kDefaultGrace;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = grace_.find(uid); it != grace_.end()) grace = it->second;
  }
  runtime_->Stop(uid, grace).IgnoreError();
}

void PodSet::StartPod(api::PodAssignment a) {
  const std::string uid = a.pod().metadata().uid();
  if (a.stop()) return;
  // Untrusted input: nothing is allocated, written or built from an
  // assignment that does not pass.
  if (absl::Status s = CheckAssignment(a); !s.ok()) {
    ReportFailure(a, "InvalidAssignment", std::string(s.message()));
    return;
  }
  if (absl::Status s = InPlaceAttemptOf(a.pod()).status(); !s.ok()) {
    ReportFailure(a, "InvalidAssignment", std::string(s.message()));
    return;
  }
  const int want = ExtendedRequest(a.pod().spec(), kGpu);
  // Devices of pods that finished are free for admission (DeviceLedger).
  const std::set<std::string> finished =
      want > 0 ? FinishedPods() : std::set<std::string>{};
  std::vector<int> gpus;
  std::string no_devices;
  {
    absl::MutexLock lock(&mu_);
    grace_[uid] = GraceOf(a.pod());
    if (devices_.Contains(uid)) return;  // Started before: never twice.
    if (want > 0) {
      absl::StatusOr<std::vector<int>> picked = devices_.Allocate(
          uid, want, options_.gpu_capacity, barrier_.Unrestarted(finished));
      if (picked.ok()) {
        gpus = *picked;
        SaveLedger();
      } else {
        no_devices = absl::StrCat("Allocate failed due to ", kGpu, ": ",
                                  picked.status().message());
      }
    }
  }
  if (!no_devices.empty()) {
    ReportFailure(a, "UnexpectedAdmissionError", no_devices);
    return;
  }
  Launch(std::move(a), gpus);
}

std::set<std::string> PodSet::FinishedPods() {
  std::set<std::string> finished;
  for (const PodState& pod : runtime_->List()) {
    if (PodFinished(pod.status)) finished.insert(pod.uid);
  }
  return finished;
}

void PodSet::Launch(api::PodAssignment a, const std::vector<int>& gpus) {
  const std::string uid = a.pod().metadata().uid();
  absl::StatusOr<std::optional<int32_t>> attempt = InPlaceAttemptOf(a.pod());
  if (attempt.ok() && attempt->has_value()) {
    absl::MutexLock lock(&mu_);
    barrier_.SetRunning(uid, **attempt);
    SaveLedger();
  }
  SetPodDevices(gpus, &a);
  AddAcceleratorEnv(gpus, &a);
  // As kubelet, once the env is complete: $(NAME) in command and args, for
  // every runtime.
  api::PodSpec& spec = *a.mutable_pod()->mutable_spec();
  for (api::Container& c : *spec.mutable_init_containers())
    api::ExpandCommandAndArgs(&c);
  for (api::Container& c : *spec.mutable_containers())
    api::ExpandCommandAndArgs(&c);
  const absl::Time ordered = clock_->Now();
  absl::Status started = runtime_->Start(a);
  if (started.ok()) reporter_->Launched(uid, ordered);
  if (started.ok() || absl::IsAlreadyExists(started)) return;
  ReportFailure(a, "StartError", std::string(started.message()));
}

void PodSet::ReportFailure(const api::PodAssignment& a,
                           const std::string& reason,
                           const std::string& message) {
  JOBSET_LOG(WARNING) << "pod " << a.pod().metadata().name() << ": " << reason
                      << ": " << message;
  api::AgentMessage msg;
  api::PodReport* r = msg.mutable_pod_update();
  r->set_pod_uid(a.pod().metadata().uid());
  // Of the attempt it was to run, so that jobsetd takes it.
  absl::StatusOr<std::optional<int32_t>> attempt = InPlaceAttemptOf(a.pod());
  r->set_in_place_restart_attempt(attempt.ok() && attempt->has_value()
                                      ? **attempt
                                      : AttemptRunning(r->pod_uid()));
  r->mutable_status()->set_phase(api::kPodFailed);
  r->mutable_status()->set_reason(reason);
  r->mutable_status()->set_message(message);
  send_(msg);
}

void PodSet::Release(const std::string& uid) {
  runtime_->Remove(uid).IgnoreError();
  reporter_->Forget(uid);
  absl::MutexLock lock(&mu_);
  grace_.erase(uid);
  const bool devices = devices_.Erase(uid);
  if (barrier_.Erase(uid) || devices) SaveLedger();
}

int32_t PodSet::AttemptRunning(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  return barrier_.Running(uid);
}

PodReporter::AttemptOf PodSet::Attempts() {
  std::map<std::string, int32_t> attempts;
  {
    absl::MutexLock lock(&mu_);
    attempts = barrier_.attempts();
  }
  return [attempts = std::move(attempts)](const std::string& uid) {
    auto it = attempts.find(uid);
    return it == attempts.end() ? 0 : it->second;
  };
}

bool PodSet::RestartInPlace(const api::PodAssignment& a) {
  if (a.stop()) return false;
  const std::string uid = a.pod().metadata().uid();
  absl::StatusOr<std::optional<int32_t>> attempt = InPlaceAttemptOf(a.pod());
  if (!attempt.ok() || !attempt->has_value()) return false;
  // Only a pod the runtime has restarts; any other is started as new.
  std::optional<bool> finished;
  for (const PodState& pod : runtime_->List()) {
    if (pod.uid == uid) finished = PodFinished(pod.status);
  }
  if (!finished.has_value()) return false;
  {
    absl::MutexLock lock(&mu_);
    if (!barrier_.IsLater(uid, **attempt)) return false;
    grace_[uid] = GraceOf(a.pod());
  }
  // Untrusted input, as in StartPod: nothing is stopped or restarted for an
  // assignment that does not pass.
  if (absl::Status s = CheckAssignment(a); !s.ok()) {
    ReportFailure(a, "InvalidAssignment", std::string(s.message()));
    return true;
  }
  {
    absl::MutexLock lock(&mu_);
    barrier_.Hold(a);
  }
  if (*finished) {
    FinishRestart(uid);
  } else {
    // The barrier is jobsetd's: it sends the next attempt only once every
    // pod stopped, so this pod is normally stopped already.
    runtime_->Stop(uid, GraceOf(a.pod())).IgnoreError();
  }
  return true;
}

void PodSet::FinishRestarts(const std::vector<PodState>& pods) {
  std::vector<std::string> ready;
  {
    absl::MutexLock lock(&mu_);
    ready = barrier_.Ready(pods);
  }
  for (const std::string& uid : ready) FinishRestart(uid);
}

void PodSet::FinishRestart(const std::string& uid) {
  const std::set<std::string> finished = FinishedPods();
  std::optional<api::PodAssignment> a;
  std::vector<int> gpus;
  std::string no_devices;
  {
    absl::MutexLock lock(&mu_);
    a = barrier_.Take(uid);
    if (!a.has_value()) return;
    gpus = devices_.Of(uid);
    // While this pod was finished its devices were free for admission: one
    // given out since then means it is admitted again on others.
    const std::set<std::string> others = barrier_.Unrestarted(finished);
    if (devices_.Contested(uid, others)) {
      devices_.Erase(uid);
      absl::StatusOr<std::vector<int>> picked = devices_.Allocate(
          uid, static_cast<int>(gpus.size()), options_.gpu_capacity, others);
      if (picked.ok()) {
        gpus = *picked;
      } else {
        no_devices = absl::StrCat("Allocate failed due to ", kGpu, ": ",
                                  picked.status().message());
      }
      SaveLedger();
    }
  }
  if (!no_devices.empty()) {
    runtime_->Remove(uid).IgnoreError();
    ReportFailure(*a, "UnexpectedAdmissionError", no_devices);
    return;
  }
  // The old attempt's state goes (its logs stay); the pod starts again under
  // its uid, on its devices. The ledger says which attempt the runtime's
  // state is of, so an agent restarted in between neither loses an exit nor
  // runs an attempt twice.
  runtime_->Remove(uid).IgnoreError();
  reporter_->Restarted(uid);
  JOBSET_LOG(INFO) << "pod " << a->pod().metadata().name()
                   << ": restarting in place";
  Launch(*std::move(a), gpus);
}

}  // namespace jobset::agent
