#include "agent/fake_runtime.h"

#include <signal.h>

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/runtime/pod_input.h"
#include "api/pod_phase.h"

namespace jobset::agent {
namespace {

void Terminate(api::PodStatus* status, int exit_code, int signal,
               const std::string& reason) {
  status->set_phase(exit_code == 0 ? api::kPodSucceeded : api::kPodFailed);
  for (api::ContainerStatus& c : *status->mutable_container_statuses()) {
    c.set_flat_state("terminated");
    c.set_ready(false);
    c.set_exit_code(exit_code);
    c.set_signal(signal);
    c.set_reason(reason);
  }
  for (api::Condition& c : *status->mutable_conditions()) {
    if (c.type() == "Ready" || c.type() == "ContainersReady")
      c.set_status("False");
  }
}

}  // namespace

absl::Status FakeRuntime::Start(const api::PodAssignment& assignment) {
  absl::MutexLock lock(&mu_);
  const std::string& uid = assignment.pod().metadata().uid();
  if (absl::Status s = CheckAssignment(assignment); !s.ok()) return s;
  if (pods_.contains(uid)) {
    return absl::AlreadyExistsError(absl::StrCat("pod ", uid, " is known"));
  }
  started_.push_back(assignment);
  hosts_[uid] = assignment.hosts();
  PodState& state = pods_[uid];
  state.uid = uid;
  state.status.set_phase(api::kPodRunning);
  for (const api::Container& c : assignment.pod().spec().containers()) {
    api::ContainerStatus* s = state.status.add_container_statuses();
    s->set_name(c.name());
    s->set_flat_state("running");
    s->set_ready(true);
    const absl::Duration since_epoch = clock_->Now() - absl::UnixEpoch();
    s->mutable_started_at()->set_seconds(absl::ToInt64Seconds(since_epoch));
    s->mutable_started_at()->set_nanos(static_cast<int32_t>(
        absl::ToInt64Nanoseconds(since_epoch % absl::Seconds(1))));
  }
  for (const char* type : {"Initialized", "Ready", "ContainersReady"}) {
    api::Condition* c = state.status.add_conditions();
    c->set_type(type);
    c->set_status("True");
  }
  return absl::OkStatus();
}

absl::Status FakeRuntime::Stop(const std::string& uid, absl::Duration) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) {
    return absl::NotFoundError(absl::StrCat("pod ", uid, " is not known"));
  }
  if (it->second.status.phase() == api::kPodRunning) {
    // As the shim runtime reports a pod it had to SIGKILL.
    Terminate(&it->second.status, 128 + SIGKILL, SIGKILL, "Error");
    it->second.status.set_reason("Stopped");
    it->second.status.set_message("stopped by the agent");
  }
  return absl::OkStatus();
}

absl::Status FakeRuntime::Remove(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  pods_.erase(uid);
  hosts_.erase(uid);
  return absl::OkStatus();
}

std::vector<PodState> FakeRuntime::List() {
  absl::MutexLock lock(&mu_);
  std::vector<PodState> out;
  for (const auto& [uid, state] : pods_) out.push_back(state);
  return out;
}

void FakeRuntime::Exit(const std::string& uid, int exit_code) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end() || it->second.status.phase() != api::kPodRunning)
    return;
  Terminate(&it->second.status, exit_code, 0,
            exit_code == 0 ? "Completed" : "Error");
}

absl::Status FakeRuntime::UpdateHosts(
    const std::string& uid,
    const google::protobuf::RepeatedPtrField<api::HostEntry>& hosts) {
  if (absl::Status s = CheckHostEntries("hosts", hosts); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  if (!pods_.contains(uid)) {
    return absl::NotFoundError(absl::StrCat("pod ", uid, " is not known"));
  }
  hosts_[uid] = hosts;
  return absl::OkStatus();
}

std::vector<std::string> FakeRuntime::HostNames(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> names;
  for (const api::HostEntry& e : hosts_[uid])
    names.insert(names.end(), e.names().begin(), e.names().end());
  return names;
}

std::vector<api::PodAssignment> FakeRuntime::started() {
  absl::MutexLock lock(&mu_);
  return started_;
}

bool FakeRuntime::Has(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  return pods_.contains(uid);
}

void FakeRuntime::AddEvent(const std::string& uid, api::PodEvent event) {
  absl::MutexLock lock(&mu_);
  events_[uid].push_back(std::move(event));
}

std::map<std::string, std::vector<api::PodEvent>> FakeRuntime::TakeEvents() {
  absl::MutexLock lock(&mu_);
  return std::exchange(events_, {});
}

}  // namespace jobset::agent
