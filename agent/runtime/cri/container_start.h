#ifndef JOBSET_AGENT_RUNTIME_CRI_CONTAINER_START_H_
#define JOBSET_AGENT_RUNTIME_CRI_CONTAINER_START_H_

// Creates and starts one attempt of a container in its pod's sandbox
// (kubelet's startContainer, once its image is present): the container's
// mounts (the pod's /etc/hosts, then its volumes, a subPath opened beneath
// its volume and handed over as /proc/<agent>/fd/<n> until the runtime has
// mounted it), the pod's accelerators, its config (cri_config.h), the
// previous attempt removed, its private log file, CreateContainer and
// StartContainer.

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "agent/runtime/accelerator_devices.h"
#include "agent/runtime/cri/cri_client.h"
#include "agent/runtime/cri/cri_container.h"
#include "agent/runtime/cri/pod_sandbox.h"
#include "proto/agent.pb.h"

namespace jobset::agent::cri {

// What came of a start.
struct StartOutcome {
  enum class Kind {
    kStarted,  // c.id is the new attempt, running
    kRetry,    // CreateContainer failed: waiting (CreateContainerError)
               // for the back-off in c.record
    kFailed,   // c.record is StartFailed or ConfigFailed for good
  };
  Kind kind = Kind::kStarted;
  // kFailed: StartError or CreateContainerConfigError, and
  // "[init ]container <name>: <error>".
  std::string reason;
  std::string message;
};

// Starts the containers of one pod. Used only from the pod's worker thread.
// Thread-compatible.
class ContainerStarter {
 public:
  // The pod of `assignment`, whose directory is `pod_dir` and whose logs go
  // to `logs_dir`, in `sandbox`, its accelerators as `accelerators` says,
  // a container that sets no runAsUser on an image that would run as root
  // as `default_pod_uid` (ContainerConfigFor); `client`, `assignment` and
  // `sandbox` must outlive the starter.
  ContainerStarter(const CriClient* client,
                   const api::PodAssignment& assignment,
                   const PodSandbox& sandbox, std::string pod_dir,
                   std::string logs_dir, AcceleratorOptions accelerators,
                   int64_t default_pod_uid);

  // Starts attempt c.record.restart_count of `c` (its image present, as
  // c.image says) at `now`, updating c.id and c.record.
  StartOutcome Start(CriContainer& c, absl::Time now);

 private:
  // Removes `c`'s previous attempt (its exit is in its record; its log
  // stays).
  void RemovePrevious(CriContainer& c);

  const CriClient* const client_;
  const api::PodAssignment& assignment_;
  const PodSandbox& sandbox_;
  const std::string pod_dir_;
  const std::string logs_dir_;
  const AcceleratorOptions accelerators_;
  const int64_t default_pod_uid_;
};

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_CONTAINER_START_H_
