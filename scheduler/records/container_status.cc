#include "scheduler/records/container_status.h"

#include <string>

namespace jobset::scheduler {
namespace {

// The reason of the termination a restarting container remembers: the
// agent's CrashLoopBackOff message names it ("back-off 10s restarting
// container (last exit: Error, exit code 1)"); else what its exit code
// says.
std::string LastExitReason(const api::ContainerStatus& reported) {
  absl::string_view message = reported.message();
  const size_t at = message.find("last exit: ");
  if (at != absl::string_view::npos) {
    absl::string_view rest = message.substr(at + 11);
    const size_t end = rest.find(',');
    if (end != absl::string_view::npos && end > 0) {
      return std::string(rest.substr(0, end));
    }
  }
  return reported.exit_code() == 0 ? "Completed" : "Error";
}

// The last termination of a container that restarted; nothing when the
// report does not say.
void SetLastState(const api::ContainerStatus& reported,
                  api::ContainerState* last) {
  const bool running = reported.flat_state() == "running";
  const bool waiting = !running && reported.flat_state() != "terminated";
  if (reported.restart_count() <= 0) return;
  if (waiting && !reported.has_finished_at()) return;
  if (!running && !waiting) return;
  api::ContainerStateTerminated* t = last->mutable_terminated();
  t->set_exit_code(reported.exit_code());
  t->set_signal(reported.signal());
  t->set_reason(LastExitReason(reported));
  // Running again: its start and finish times are the new run's.
  if (waiting) {
    if (reported.has_started_at())
      *t->mutable_started_at() = reported.started_at();
    *t->mutable_finished_at() = reported.finished_at();
  }
}

}  // namespace

api::ContainerStatus KubernetesContainerStatus(
    const api::ContainerStatus& reported, absl::string_view image) {
  api::ContainerStatus out;
  out.set_name(reported.name());
  out.set_ready(reported.ready());
  out.set_restart_count(reported.restart_count());
  out.set_image(std::string(image));
  out.set_image_id(reported.image_id());
  out.set_container_id(reported.container_id());
  api::ContainerState* state = out.mutable_state();
  if (reported.flat_state() == "running") {
    api::ContainerStateRunning* running = state->mutable_running();
    if (reported.has_started_at())
      *running->mutable_started_at() = reported.started_at();
  } else if (reported.flat_state() == "terminated") {
    api::ContainerStateTerminated* t = state->mutable_terminated();
    t->set_exit_code(reported.exit_code());
    t->set_signal(reported.signal());
    t->set_reason(reported.reason());
    t->set_message(reported.message());
    if (reported.has_started_at())
      *t->mutable_started_at() = reported.started_at();
    if (reported.has_finished_at())
      *t->mutable_finished_at() = reported.finished_at();
    t->set_container_id(reported.container_id());
  } else {
    api::ContainerStateWaiting* waiting = state->mutable_waiting();
    waiting->set_reason(reported.reason());
    waiting->set_message(reported.message());
  }
  SetLastState(reported, out.mutable_last_state());
  out.set_started(reported.flat_state() == "running");
  return out;
}

void ToKubernetesPodStatus(const api::PodSpec& spec, api::PodStatus* status) {
  auto image_of = [](const auto& containers,
                     absl::string_view name) -> absl::string_view {
    for (const api::Container& c : containers) {
      if (c.name() == name) return c.image();
    }
    return "";
  };
  for (api::ContainerStatus& c : *status->mutable_init_container_statuses())
    c = KubernetesContainerStatus(c,
                                  image_of(spec.init_containers(), c.name()));
  for (api::ContainerStatus& c : *status->mutable_container_statuses())
    c = KubernetesContainerStatus(c, image_of(spec.containers(), c.name()));
  status->clear_host_ips();
  if (!status->host_ip().empty())
    status->add_host_ips()->set_ip(status->host_ip());
  status->clear_pod_ips();
  if (!status->pod_ip().empty())
    status->add_pod_ips()->set_ip(status->pod_ip());
}

}  // namespace jobset::scheduler
