#ifndef JOBSET_API_CAPABILITIES_H_
#define JOBSET_API_CAPABILITIES_H_

// Linux capability names as a securityContext writes them ("NET_ADMIN" or
// "CAP_NET_ADMIN"), their numbers (linux/capability.h), and the default set
// a container gets from containerd and Docker when it is not privileged.
// Shared by validation (api/template_validation.cc) and the runtimes
// (agent/runtime/security_context.cc). Pure; thread-safe.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace jobset::api {

// securityContext user and group ids (runAsUser, runAsGroup, fsGroup,
// supplementalGroups): 0..2^31-1, Kubernetes' range.
inline constexpr int64_t kMaxUserId = 2147483647;

// The highest capability number this table names (CAP_CHECKPOINT_RESTORE).
inline constexpr int kLastKnownCapability = 40;

// The number of capability `name`, with or without the "CAP_" prefix, in
// upper case as Kubernetes and containerd write them; nullopt for any other
// string (including "ALL", which is not one capability).
std::optional<int> CapabilityNumber(absl::string_view name);

// "CAP_<NAME>" of capability `number` (0..kLastKnownCapability), else "".
std::string CapabilityName(int number);

// containerd's and Docker's default set for an unprivileged container: CHOWN,
// DAC_OVERRIDE, FSETID, FOWNER, MKNOD, NET_RAW, SETGID, SETUID, SETFCAP,
// SETPCAP, NET_BIND_SERVICE, SYS_CHROOT, KILL, AUDIT_WRITE (bit n = cap n).
uint64_t DefaultCapabilityMask();

}  // namespace jobset::api

#endif  // JOBSET_API_CAPABILITIES_H_
