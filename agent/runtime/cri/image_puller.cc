#include "agent/runtime/cri/image_puller.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "agent/runtime/cri/registry_auth.h"
#include "api/image_reference.h"
#include "common/log.h"

namespace jobset::agent::cri {

namespace v1 = ::runtime::v1;

ImagePuller::ImagePuller(const CriClient* client, Clock* clock,
                         const api::PodAssignment& assignment,
                         const v1::PodSandboxConfig& sandbox_config,
                         PodEventLog* events)
    : client_(client),
      clock_(clock),
      assignment_(assignment),
      sandbox_config_(sandbox_config),
      events_(events) {}

void ImagePuller::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  if (pulling_ != nullptr) pulling_->TryCancel();
}

bool ImagePuller::Apply(ImageStep step, ContainerRecord* record) {
  if (!step.events.empty()) events_->Record(std::move(step.events));
  if (step.action == ImageStep::Action::kWait) {
    record->reason = std::move(step.reason);
    record->message = std::move(step.message);
  }
  return step.action == ImageStep::Action::kReady;
}

std::optional<bool> ImagePuller::Inspect(const std::string& image,
                                         ImageFacts* facts,
                                         std::string* error) const {
  v1::ImageStatusRequest request;
  request.mutable_image()->set_image(image);
  absl::StatusOr<v1::ImageStatusResponse> s = client_->ImageStatus(request);
  if (!s.ok()) {
    *error = std::string(s.status().message());
    return std::nullopt;
  }
  if (!s->has_image() || s->image().id().empty()) return false;
  facts->id = s->image().id();
  facts->uid.reset();
  facts->username.clear();
  if (s->image().has_uid()) {
    facts->uid = s->image().uid().value();
  } else {
    facts->username = s->image().username();
  }
  return true;
}

bool ImagePuller::Ensure(const api::Container& spec, ImagePullState* state,
                         ImageFacts* image, ContainerRecord* record,
                         absl::Time now) {
  const std::string& uid = assignment_.pod().metadata().uid();
  const std::string& given = spec.image();
  absl::StatusOr<api::ImageReference> ref = api::ParseImageReference(given);
  if (!ref.ok())
    return Apply(state->InvalidName(ref.status().message()), record);
  const std::string name = ref->Normalized();
  std::string error;
  std::optional<bool> present;
  if (state->ChecksPresence()) {
    present = Inspect(name, image, &error);
    if (!present.has_value()) return Apply(state->InspectFailed(error), record);
  }
  ImageStep step = state->Decide(present, now);
  if (step.action != ImageStep::Action::kPull) {
    return Apply(std::move(step), record);
  }
  v1::PullImageRequest request;
  request.mutable_image()->set_image(name);
  *request.mutable_sandbox_config() = sandbox_config_;
  // As kubelet: each matching imagePullSecrets credential in turn until one
  // works; anonymous only when none matches. The error is the last one.
  const std::vector<RegistryAuth> auths =
      MatchingCredentials(name, assignment_.pull_credentials());
  JOBSET_LOG(INFO) << "pod " << uid << ": Pulling image \"" << given << "\"";
  events_->Record(std::move(step.events));
  const absl::Time began = clock_->Now();
  absl::StatusOr<v1::PullImageResponse> pulled;
  for (size_t i = 0; i < std::max<size_t>(1, auths.size()); ++i) {
    request.clear_auth();
    if (i < auths.size()) {
      // The user and password (all kubelet sends) and the registry they are
      // for: containerd sends them to that host only, never to a mirror.
      request.mutable_auth()->set_username(auths[i].username);
      request.mutable_auth()->set_password(auths[i].password);
      request.mutable_auth()->set_server_address(auths[i].server_address);
    }
    grpc::ClientContext context;
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_) return false;
      pulling_ = &context;
    }
    pulled = client_->PullImage(request, &context);
    {
      absl::MutexLock lock(&mu_);
      pulling_ = nullptr;
    }
    if (pulled.ok()) break;
    if (i + 1 < auths.size()) {
      // The key names the registry entry, never the user or password.
      JOBSET_LOG(WARNING) << "pod " << uid << ": pulling image \"" << given
                          << "\" with the credential for \"" << auths[i].key
                          << "\" (" << i + 1 << " of " << auths.size()
                          << ") failed: " << pulled.status().message();
    }
  }
  if (!pulled.ok()) {
    step = state->PullFailed(pulled.status().message(), clock_->Now());
    JOBSET_LOG(WARNING) << "pod " << uid << ": " << step.message;
    return Apply(std::move(step), record);
  }
  step = state->Pulled(clock_->Now() - began);
  JOBSET_LOG(INFO) << "pod " << uid << ": " << step.events.front().message();
  Apply(std::move(step), record);
  present = Inspect(pulled->image_ref(), image, &error);
  if (!present.has_value()) return Apply(state->InspectFailed(error), record);
  if (!*present) return Apply(state->MissingAfterPull(), record);
  return true;
}

}  // namespace jobset::agent::cri
