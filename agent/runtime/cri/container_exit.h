#ifndef JOBSET_AGENT_RUNTIME_CRI_CONTAINER_EXIT_H_
#define JOBSET_AGENT_RUNTIME_CRI_CONTAINER_EXIT_H_

// How a CRI container's end reads in the API (kubelet's
// toKubeContainerStatus), as pure functions of the runtime's
// ContainerStatus: the exit's reason and signal, and when an exit without
// a reason is settled. No I/O, no clock. Thread-compatible.

#include "absl/time/time.h"
#include "agent/runtime/container_lifecycle.h"
#include "agent/runtime/cri/api.pb.h"

namespace jobset::agent::cri {

// How long an exit by SIGKILL without a reason waits for the runtime's OOM
// event, which can land after the exit.
inline constexpr absl::Duration kOomGrace = absl::Seconds(2);

// Returns `status`'s exit: its code, its reason (the runtime's, else
// Completed for code 0 and Error otherwise), its message, and for codes
// 129-192 but a Completed one, the signal (code - 128).
ContainerExit ExitOf(const runtime::v1::ContainerStatus& status);

// Returns whether exited container `status` may be taken as it is at `now`.
// An exit by SIGKILL (137) without a reason ("" or Error) waits for the
// runtime's OOM event (its reason becomes OOMKilled) up to kOomGrace after
// it was first seen; `*killed_seen` (InfiniteFuture until then) keeps when,
// and is InfiniteFuture again once the exit is settled.
bool ExitSettled(const runtime::v1::ContainerStatus& status, absl::Time now,
                 absl::Time* killed_seen);

// The time of a CRI timestamp in ns (InfinitePast when the runtime gives
// none: 0 or less).
absl::Time FromCriNanos(int64_t ns);

}  // namespace jobset::agent::cri

#endif  // JOBSET_AGENT_RUNTIME_CRI_CONTAINER_EXIT_H_
