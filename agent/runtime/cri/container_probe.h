#ifndef JOBSET_AGENT_RUNTIME_CRI_CONTAINER_PROBE_H_
#define JOBSET_AGENT_RUNTIME_CRI_CONTAINER_PROBE_H_

// A readiness probe of a CRI container (kubelet's prober): exec through
// ExecSync in the container, tcpSocket and httpGet on the host network (the
// pod's), as ProbeSocket (readiness_probe.h) does for the shim. The results
// are kept, and the probe's schedule decided, by the caller with
// container_lifecycle.h's Probed.

#include <string>

#include "agent/runtime/container_lifecycle.h"
#include "agent/runtime/cri/cri_client.h"
#include "common/clock.h"
#include "proto/cluster.pb.h"

namespace jobset::agent::cri {

// Runs `spec`'s readiness probe (which it must have) once against its
// running container `container_id`, and returns whether it passed: exit code
// 0 within settings.timeout (whole seconds, at least 1, the call a second
// more), or a connection (and an HTTP 200-399 answer) within the timeout by
// `clock`. Blocks for about the timeout at most. Thread-safe.
bool ProbeContainer(const CriClient& client, const Clock& clock,
                    const api::Container& spec, const std::string& container_id,
                    const ProbeSettings& settings);

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_CONTAINER_PROBE_H_
