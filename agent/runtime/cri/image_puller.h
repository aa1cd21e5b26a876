#ifndef JOBSET_AGENT_RUNTIME_CRI_IMAGE_PULLER_H_
#define JOBSET_AGENT_RUNTIME_CRI_IMAGE_PULLER_H_

// Makes a container's image present in the CRI runtime (kubelet's
// EnsureImageExists) as ImagePullState (image_pull_policy.h) decides:
// ImageStatus, then PullImage with each of the pod's imagePullSecrets
// credentials that match the image's registry in turn (the keyring,
// registry_auth.h) until one works, anonymously when none matches.

#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/runtime/container_lifecycle.h"
#include "agent/runtime/cri/cri_client.h"
#include "agent/runtime/cri/cri_config.h"
#include "agent/runtime/cri/image_pull_policy.h"
#include "agent/runtime/cri/pod_event_log.h"
#include "common/clock.h"
#include "grpcpp/grpcpp.h"
#include "proto/agent.pb.h"
#include "proto/cluster.pb.h"

namespace jobset::agent::cri {

// The image puller of one pod. Ensure runs on the pod's worker thread;
// Cancel may come from any. Thread-safe.
class ImagePuller {
 public:
  // Pulls for the pod of `assignment` (its uid and pull credentials) in
  // sandbox `sandbox_config`, timing pulls by `clock` and recording the
  // pod's image events in `events`; all must outlive the puller.
  ImagePuller(const CriClient* client, Clock* clock,
              const api::PodAssignment& assignment,
              const runtime::v1::PodSandboxConfig& sandbox_config,
              PodEventLog* events);

  // Returns whether `spec`'s image is present (pulling it if its policy
  // says so), with `*image` what ImageStatus says of it. Otherwise
  // `*record` waits with the reason and message `*state` decided (left as
  // it is when a pull was cancelled).
  bool Ensure(const api::Container& spec, ImagePullState* state,
              ImageFacts* image, ContainerRecord* record, absl::Time now);
  // Cancels the pull in progress and every later one (the pod is stopping).
  void Cancel();

 private:
  // Whether `image` is in the runtime's store, setting `*facts`; nullopt
  // when ImageStatus failed (`*error` says why).
  std::optional<bool> Inspect(const std::string& image, ImageFacts* facts,
                              std::string* error) const;
  // Records `step`'s events; sets `*record` waiting when it says to.
  // Returns whether the image is ready.
  bool Apply(ImageStep step, ContainerRecord* record);

  const CriClient* const client_;
  Clock* const clock_;
  const api::PodAssignment& assignment_;
  const runtime::v1::PodSandboxConfig& sandbox_config_;
  PodEventLog* const events_;
  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* pulling_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_IMAGE_PULLER_H_
