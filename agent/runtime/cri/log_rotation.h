#ifndef JOBSET_AGENT_RUNTIME_CRI_LOG_ROTATION_H_
#define JOBSET_AGENT_RUNTIME_CRI_LOG_ROTATION_H_

// A running CRI container's log rotation (kubelet's container log manager,
// keeping one old file as the shim does).

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "agent/runtime/cri/cri_client.h"

namespace jobset::agent::cri {

// Rotates container `name`'s log under `logs_dir` when it is past
// `cap_bytes` (0: never): renames it to <name>.log.1 (replacing the older
// one), then has the runtime reopen its log path (ReopenContainerLog of
// container `container_id`); renames it back when that fails (the container
// keeps writing the file it has). Failures are logged for pod `uid`.
// Thread-safe.
void RotateLogPastCap(const CriClient& client, const std::string& logs_dir,
                      const std::string& name, const std::string& container_id,
                      int64_t cap_bytes, absl::string_view uid);

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_LOG_ROTATION_H_
