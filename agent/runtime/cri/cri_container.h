#ifndef JOBSET_AGENT_RUNTIME_CRI_CRI_CONTAINER_H_
#define JOBSET_AGENT_RUNTIME_CRI_CRI_CONTAINER_H_

// One container of a pod as the cri runtime's pod worker drives it, and
// the pod's containers in the order they run. Plain data with the
// lifecycle of container_lifecycle.h; used only from the pod's worker
// thread. Thread-compatible.

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "agent/runtime/container_lifecycle.h"
#include "agent/runtime/cri/cri_config.h"
#include "agent/runtime/cri/image_pull_policy.h"
#include "proto/cluster.pb.h"

namespace jobset::agent::cri {

struct CriContainer {
  // Container `spec` (an init container if `init`), its image pulled with
  // a back-off from `pull_backoff_start` doubling to `pull_backoff_cap`.
  CriContainer(const api::Container& spec, bool init,
               absl::Duration pull_backoff_start,
               absl::Duration pull_backoff_cap);

  api::Container spec;
  bool init = false;
  ContainerRecord record;
  std::string id;  // the current attempt's CRI container ("": none)
  ImageFacts image;
  ImagePullState pull;
  ProbeSettings probe_settings;
  ProbeRecord probe;
  absl::Time next_probe = absl::InfiniteFuture();
  // When an exit by SIGKILL without a reason was first seen (see
  // ExitSettled in container_exit.h).
  absl::Time killed_seen = absl::InfiniteFuture();
};

// A pod's containers: its init containers run one at a time, in order,
// then all its containers.
struct PodContainers {
  std::vector<CriContainer> inits;
  std::vector<CriContainer> mains;
  size_t next_init = 0;       // the init container to run next
  bool main_started = false;  // the containers' turn has come

  bool InitsComplete() const { return next_init >= inits.size(); }
  // Every container, init containers first.
  std::vector<CriContainer*> All();
  std::vector<const ContainerRecord*> MainRecords() const;
};

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_CRI_CONTAINER_H_
