#include "agent/runtime/cri/pod_sandbox.h"

#include <string>
#include <vector>

#include "agent/runtime/cri/container_exit.h"
#include "agent/runtime/cri/cri_config.h"
#include "common/log.h"

namespace jobset::agent::cri {

namespace v1 = ::runtime::v1;

const v1::Container* LatestAttempt(const std::vector<v1::Container>& containers,
                                   const std::string& name) {
  const v1::Container* latest = nullptr;
  for (const v1::Container& k : containers) {
    auto it = k.labels().find(kContainerLabel);
    if (it == k.labels().end() || it->second != name) continue;
    if (latest == nullptr ||
        k.metadata().attempt() > latest->metadata().attempt()) {
      latest = &k;
    }
  }
  return latest;
}

PodSandbox::PodSandbox(const CriClient* client,
                       const api::PodAssignment& assignment,
                       const std::string& logs_dir)
    : client_(client),
      uid_(assignment.pod().metadata().uid()),
      config_(SandboxConfig(assignment, logs_dir)) {}

std::optional<absl::Time> PodSandbox::Adopt() {
  v1::ListPodSandboxRequest request;
  (*request.mutable_filter()->mutable_label_selector())[kPodUidLabel] = uid_;
  absl::StatusOr<v1::ListPodSandboxResponse> sandboxes =
      client_->ListPodSandbox(request);
  if (!sandboxes.ok()) {
    JOBSET_LOG(WARNING) << "pod " << uid_ << ": " << sandboxes.status();
    return std::nullopt;
  }
  int64_t newest = -1;
  for (const v1::PodSandbox& s : sandboxes->items()) {
    if (s.created_at() > newest) {
      newest = s.created_at();
      id_ = s.id();
    }
  }
  if (id_.empty()) return std::nullopt;
  return FromCriNanos(newest);
}

absl::StatusOr<std::vector<v1::Container>> PodSandbox::Containers() const {
  v1::ListContainersRequest request;
  request.mutable_filter()->set_pod_sandbox_id(id_);
  (*request.mutable_filter()->mutable_label_selector())[kPodUidLabel] = uid_;
  absl::StatusOr<v1::ListContainersResponse> listed =
      client_->ListContainers(request);
  if (!listed.ok()) return listed.status();
  return std::vector<v1::Container>(listed->containers().begin(),
                                    listed->containers().end());
}

absl::Status PodSandbox::Ensure() {
  if (!id_.empty()) return absl::OkStatus();
  v1::RunPodSandboxRequest request;
  *request.mutable_config() = config_;
  absl::StatusOr<v1::RunPodSandboxResponse> r = client_->RunPodSandbox(request);
  if (!r.ok()) return r.status();
  id_ = r->pod_sandbox_id();
  return absl::OkStatus();
}

void PodSandbox::Stop() {
  if (id_.empty()) return;
  v1::StopPodSandboxRequest request;
  request.set_pod_sandbox_id(id_);
  if (absl::StatusOr<v1::StopPodSandboxResponse> r =
          client_->StopPodSandbox(request);
      !r.ok()) {
    JOBSET_LOG(WARNING) << "pod " << uid_ << ": " << r.status();
  }
}

void PodSandbox::RemoveAll() {
  v1::ListContainersRequest containers;
  (*containers.mutable_filter()->mutable_label_selector())[kPodUidLabel] = uid_;
  if (absl::StatusOr<v1::ListContainersResponse> cs =
          client_->ListContainers(containers);
      cs.ok()) {
    for (const v1::Container& k : cs->containers()) {
      v1::RemoveContainerRequest request;
      request.set_container_id(k.id());
      (void)client_->RemoveContainer(request);
    }
  }
  v1::ListPodSandboxRequest sandboxes;
  (*sandboxes.mutable_filter()->mutable_label_selector())[kPodUidLabel] = uid_;
  if (absl::StatusOr<v1::ListPodSandboxResponse> ss =
          client_->ListPodSandbox(sandboxes);
      ss.ok()) {
    for (const v1::PodSandbox& s : ss->items()) {
      v1::StopPodSandboxRequest stop;
      stop.set_pod_sandbox_id(s.id());
      (void)client_->StopPodSandbox(stop);
      v1::RemovePodSandboxRequest remove;
      remove.set_pod_sandbox_id(s.id());
      (void)client_->RemovePodSandbox(remove);
    }
  }
}

}  // namespace jobset::agent::cri
