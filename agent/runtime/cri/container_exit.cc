#include "agent/runtime/cri/container_exit.h"

namespace jobset::agent::cri {

namespace v1 = ::runtime::v1;

ContainerExit ExitOf(const v1::ContainerStatus& status) {
  ContainerExit exit;
  exit.exit_code = status.exit_code();
  exit.reason = status.reason().empty()
                    ? (status.exit_code() == 0 ? "Completed" : "Error")
                    : status.reason();
  exit.message = status.message();
  if (exit.exit_code > 128 && exit.exit_code < 128 + 65 &&
      exit.reason != "Completed") {
    exit.signal = exit.exit_code - 128;
  }
  return exit;
}

bool ExitSettled(const v1::ContainerStatus& status, absl::Time now,
                 absl::Time* killed_seen) {
  if (status.exit_code() == 137 &&
      (status.reason().empty() || status.reason() == "Error")) {
    if (*killed_seen == absl::InfiniteFuture()) *killed_seen = now;
    if (now - *killed_seen < kOomGrace) return false;
  }
  *killed_seen = absl::InfiniteFuture();
  return true;
}

absl::Time FromCriNanos(int64_t ns) {
  return ns <= 0 ? absl::InfinitePast() : absl::FromUnixNanos(ns);
}

}  // namespace jobset::agent::cri
