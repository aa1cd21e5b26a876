#ifndef JOBSET_AGENT_RUNTIME_SECURITY_CONTEXT_H_
#define JOBSET_AGENT_RUNTIME_SECURITY_CONTEXT_H_

// A container's effective securityContext (the container's fields over the
// pod's, as kubelet merges them), what it means for the process (user,
// groups, capability sets, no_new_privs), kubelet's runAsNonRoot check, and
// the one function that applies it in a child between fork and exec
// (ApplyCredentials: raw syscalls only). Pure otherwise; thread-compatible.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "proto/cluster.pb.h"

namespace jobset::agent {

struct EffectiveSecurity {
  std::optional<int64_t> run_as_user;
  std::optional<int64_t> run_as_group;
  bool run_as_non_root = false;
  std::vector<int64_t> supplemental_groups;  // the pod's
  std::optional<int64_t> fs_group;           // the pod's
  bool privileged = false;
  bool read_only_root_filesystem = false;
  // Unset: Kubernetes' default (no no_new_privs).
  std::optional<bool> allow_privilege_escalation;
  std::vector<std::string> cap_add;
  std::vector<std::string> cap_drop;
};

// The container's fields over the pod's (DetermineEffectiveSecurityContext).
EffectiveSecurity Effective(const api::PodSpec& pod,
                            const api::Container& container);

// The supplementary groups: fsGroup, then supplementalGroups, then
// runAsGroup (each once, in that order).
std::vector<gid_t> SupplementaryGroups(const EffectiveSecurity& sc);

// The agent's --default_pod_uid: nobody (and nogroup) on Debian and most
// distributions, a user that owns nothing on the host.
inline constexpr int64_t kDefaultPodUid = 65534;

// The uid the agent gives a container that sets no runAsUser (container or
// pod level): `default_pod_uid` (the agent's --default_pod_uid), unless the
// pod's namespace is "privileged" (PodAssignment.pod_security_level) or
// `default_pod_uid` is 0; nullopt then: the shim's own uid (process mode)
// or 0 (oci, and cri for an image that names no user or root). Any other
// level, "" (a jobsetd that sends none) included, gets the default: the safe
// side. (The cri runtime asks only for an image that would run as root: one
// that names another user runs as it, as under kubelet.)
std::optional<int64_t> DefaultUserFor(int64_t default_pod_uid,
                                      absl::string_view pod_security_level);

// Gives `sc` the user `default_uid` when it names none (runAsUser unset):
// runAsUser = default_uid and, without runAsGroup, runAsGroup = default_uid
// too (65534 is nobody's and nogroup's), never the root group. No-op for
// nullopt.
void ApplyDefaultUser(std::optional<int64_t> default_uid,
                      EffectiveSecurity* sc);

// kubelet's verifyRunAsNonRoot. `default_uid` is the uid the process runs as
// when no runAsUser is set (the shim's in process mode, 0 in oci mode: the
// images here name no user). FailedPrecondition with kubelet's message, e.g.
// `container's runAsUser breaks non-root policy (pod: "p_ns(uid)",
// container: c)`.
absl::Status CheckRunAsNonRoot(const EffectiveSecurity& sc,
                               const api::ObjectMeta& pod,
                               const std::string& container,
                               int64_t default_uid);

// Capability sets, bit n = capability n.
struct CapabilitySets {
  uint64_t bounding = 0;
  // Effective, permitted and inheritable before exec.
  uint64_t permitted = 0;
  // Raised as ambient (non-root users only: what they keep across execve).
  uint64_t ambient = 0;
};

// Every capability the running kernel has (0..cap_last_cap, at most 63).
uint64_t AllCapabilities(int last_cap);
// /proc/sys/kernel/cap_last_cap, else api::kLastKnownCapability.
int LastCapability();
// The calling process's permitted set (capget); 0 on error. Nothing can
// hand a container more than this.
uint64_t PermittedCapabilities();

// The sets for `sc` run as `uid`: privileged: every capability; else the
// container runtime default less NET_RAW (containerd 2's and Docker's: a
// pod on the host's network opens no AF_PACKET socket unless it adds
// NET_RAW, which baseline admits), "ALL" in add gives all, "ALL" in drop starts
// empty, then named adds, then named drops (containerd's order); all within
// `available` (the shim's own). A non-root uid gets as ambient capabilities
// only those it added by name (all of them when privileged or adding "ALL"):
// the default set stays in its bounding set, not in its effective one
// (containerd gives a non-root user none at all).
CapabilitySets ContainerCapabilities(const EffectiveSecurity& sc, int64_t uid,
                                     int last_cap,
                                     uint64_t available = ~uint64_t{0});

// The "CAP_*" names of `mask` (for runc's config.json).
std::vector<std::string> CapabilityNames(uint64_t mask);

// What a child applies before exec; plain data prepared before fork.
struct ProcessCredentials {
  bool set_groups = false;
  std::vector<gid_t> groups;
  bool set_gid = false;
  gid_t gid = 0;
  bool set_uid = false;
  uid_t uid = 0;
  bool set_caps = false;  // only when the shim is root
  int last_cap = 0;
  CapabilitySets caps;
  bool no_new_privs = false;
};

// The credentials for `sc` in process mode, applied by a shim whose
// effective uid is `shim_uid` (capabilities only when it is 0).
ProcessCredentials CredentialsFor(const EffectiveSecurity& sc, uid_t shim_uid,
                                  int last_cap,
                                  uint64_t available = ~uint64_t{0});

// Steps ApplyCredentials reports a failure of.
enum class CredentialStep {
  kNone,
  kSetGroups,
  kSetGid,
  kBounding,
  kKeepCaps,
  kSetUid,
  kCapSet,
  kAmbient,
  kNoNewPrivs
};

// In the child between fork and exec: setgroups, setresgid, bounding-set
// drops (PR_CAPBSET_DROP of those still in it), PR_SET_KEEPCAPS for a
// non-root uid, setresuid,
// capset, ambient raises, PR_SET_NO_NEW_PRIVS, in that order. Raw syscalls
// only (async-signal-safe, no allocation). Returns kNone, or the failed step
// with errno set.
CredentialStep ApplyCredentials(const ProcessCredentials& c);

// "setgroups", "setresuid", ... for a step's error message.
const char* CredentialStepName(CredentialStep step);

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_RUNTIME_SECURITY_CONTEXT_H_
