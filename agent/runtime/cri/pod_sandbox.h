#ifndef JOBSET_AGENT_RUNTIME_CRI_POD_SANDBOX_H_
#define JOBSET_AGENT_RUNTIME_CRI_POD_SANDBOX_H_

// A pod's sandbox in the CRI runtime (kubelet's RunPodSandbox,
// StopPodSandbox, RemovePodSandbox): made once, on the host network, from
// SandboxConfig (cri_config.h); found again by the pod-uid label after an
// agent restart, with the containers in it.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/runtime/cri/api.pb.h"
#include "agent/runtime/cri/cri_client.h"
#include "proto/agent.pb.h"

namespace jobset::agent::cri {

// Returns the newest attempt (the highest metadata.attempt) of the container
// named `name` (its container label) among `containers`, or nullptr.
const runtime::v1::Container* LatestAttempt(
    const std::vector<runtime::v1::Container>& containers,
    const std::string& name);

// The sandbox of one pod. Used only from the pod's worker thread (or, once
// that has ended, the thread that removes the pod). Thread-compatible.
class PodSandbox {
 public:
  // `client` must outlive the sandbox; the pod's logs go to `logs_dir`.
  PodSandbox(const CriClient* client, const api::PodAssignment& assignment,
             const std::string& logs_dir);

  // The sandbox's id; "" before Ensure or Adopt found one.
  const std::string& id() const { return id_; }
  // What RunPodSandbox was (or is) given; PullImage and CreateContainer
  // take it too.
  const runtime::v1::PodSandboxConfig& config() const { return config_; }

  // Finds the pod's newest sandbox (the agent restarted) and returns when
  // it was made (InfinitePast when the runtime does not say); nullopt when
  // there is none or ListPodSandbox failed (logged).
  std::optional<absl::Time> Adopt();
  // Returns the containers in the adopted sandbox that carry the pod's uid.
  absl::StatusOr<std::vector<runtime::v1::Container>> Containers() const;
  // Runs the sandbox unless there is one. The error is RunPodSandbox's
  // (kubelet's FailedCreatePodSandBox; the next sync tries again).
  absl::Status Ensure();
  // Stops the sandbox, if there is one (a failure is logged).
  void Stop();
  // Removes every container and sandbox labelled with the pod's uid,
  // whether this agent made them or an earlier one did.
  void RemoveAll();

 private:
  const CriClient* const client_;
  const std::string uid_;
  const runtime::v1::PodSandboxConfig config_;
  std::string id_;
};

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_POD_SANDBOX_H_
