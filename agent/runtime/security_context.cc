#include "agent/runtime/security_context.h"

#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "agent/runtime/pod_files.h"
#include "api/capabilities.h"

namespace jobset::agent {
namespace {

bool Contains(const std::vector<std::string>& list, absl::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

uint64_t Bit(int cap) { return uint64_t{1} << cap; }

uint64_t MaskOf(const std::vector<std::string>& names) {
  uint64_t mask = 0;
  for (const std::string& name : names) {
    // Validation refused unknown names; one that got here anyway is skipped.
    if (std::optional<int> n = api::CapabilityNumber(name); n.has_value()) {
      mask |= Bit(*n);
    }
  }
  return mask;
}

}  // namespace

EffectiveSecurity Effective(const api::PodSpec& pod,
                            const api::Container& container) {
  EffectiveSecurity sc;
  const api::PodSecurityContext& p = pod.security_context();
  const api::SecurityContext& c = container.security_context();
  if (c.has_run_as_user()) {
    sc.run_as_user = c.run_as_user();
  } else if (p.has_run_as_user()) {
    sc.run_as_user = p.run_as_user();
  }
  if (c.has_run_as_group()) {
    sc.run_as_group = c.run_as_group();
  } else if (p.has_run_as_group()) {
    sc.run_as_group = p.run_as_group();
  }
  sc.run_as_non_root =
      c.has_run_as_non_root() ? c.run_as_non_root() : p.run_as_non_root();
  sc.supplemental_groups.assign(p.supplemental_groups().begin(),
                                p.supplemental_groups().end());
  if (p.has_fs_group()) sc.fs_group = p.fs_group();
  sc.privileged = c.privileged();
  sc.read_only_root_filesystem = c.read_only_root_filesystem();
  if (c.has_allow_privilege_escalation()) {
    sc.allow_privilege_escalation = c.allow_privilege_escalation();
  }
  sc.cap_add.assign(c.capabilities().add().begin(),
                    c.capabilities().add().end());
  sc.cap_drop.assign(c.capabilities().drop().begin(),
                     c.capabilities().drop().end());
  return sc;
}

std::vector<gid_t> SupplementaryGroups(const EffectiveSecurity& sc) {
  std::vector<gid_t> groups;
  auto add = [&groups](int64_t g) {
    const gid_t gid = static_cast<gid_t>(g);
    if (std::find(groups.begin(), groups.end(), gid) == groups.end()) {
      groups.push_back(gid);
    }
  };
  if (sc.fs_group.has_value()) add(*sc.fs_group);
  for (int64_t g : sc.supplemental_groups) add(g);
  if (sc.run_as_group.has_value()) add(*sc.run_as_group);
  return groups;
}

std::optional<int64_t> DefaultUserFor(int64_t default_pod_uid,
                                      absl::string_view pod_security_level) {
  if (default_pod_uid == 0 || pod_security_level == "privileged") {
    return std::nullopt;
  }
  return default_pod_uid;
}

void ApplyDefaultUser(std::optional<int64_t> default_uid,
                      EffectiveSecurity* sc) {
  if (!default_uid.has_value() || sc->run_as_user.has_value()) return;
  sc->run_as_user = *default_uid;
  if (!sc->run_as_group.has_value()) sc->run_as_group = *default_uid;
}

absl::Status CheckRunAsNonRoot(const EffectiveSecurity& sc,
                               const api::ObjectMeta& pod,
                               const std::string& container,
                               int64_t default_uid) {
  if (!sc.run_as_non_root) return absl::OkStatus();
  // kubelet's format.Pod: name_namespace(uid), quoted with %q.
  const std::string where =
      absl::StrCat(" (pod: \"", pod.name(), "_", pod.namespace_(), "(",
                   pod.uid(), ")\", container: ", container, ")");
  if (sc.run_as_user.has_value()) {
    if (*sc.run_as_user != 0) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("container's runAsUser breaks non-root policy", where));
  }
  if (default_uid != 0) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "container has runAsNonRoot and image will run as root", where));
}

uint64_t AllCapabilities(int last_cap) {
  last_cap = std::clamp(last_cap, 0, 63);
  return last_cap == 63 ? ~uint64_t{0} : Bit(last_cap + 1) - 1;
}

int LastCapability() {
  absl::StatusOr<std::string> text =
      ReadFileToString("/proc/sys/kernel/cap_last_cap");
  int n = 0;
  if (text.ok() && absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &n) &&
      n >= 0 && n <= 63) {
    return n;
  }
  return api::kLastKnownCapability;
}

uint64_t PermittedCapabilities() {
  __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return 0;
  return (uint64_t{data[1].permitted} << 32) | data[0].permitted;
}

CapabilitySets ContainerCapabilities(const EffectiveSecurity& sc, int64_t uid,
                                     int last_cap, uint64_t available) {
  const uint64_t all = AllCapabilities(last_cap);
  uint64_t set = 0;
  if (sc.privileged) {
    set = all;
  } else {
    set = api::DefaultCapabilityMask() & ~Bit(CAP_NET_RAW);
    if (Contains(sc.cap_add, "ALL")) set = all;
    if (Contains(sc.cap_drop, "ALL")) set = 0;
    set |= MaskOf(sc.cap_add);
    set &= ~MaskOf(sc.cap_drop);
  }
  set &= all & available;
  CapabilitySets sets;
  sets.bounding = set;
  sets.permitted = set;
  // A non-root user keeps across execve only what the container asked for
  // by name (or all of it, privileged or "ALL"): the runtime default raised
  // as ambient would hand a pod that sets no user DAC_OVERRIDE and SETUID,
  // root in all but name. containerd gives a non-root user none.
  const bool asked_all = sc.privileged || Contains(sc.cap_add, "ALL");
  sets.ambient = uid == 0 ? 0 : (asked_all ? set : set & MaskOf(sc.cap_add));
  return sets;
}

std::vector<std::string> CapabilityNames(uint64_t mask) {
  std::vector<std::string> names;
  for (int i = 0; i <= api::kLastKnownCapability; ++i) {
    if ((mask & Bit(i)) != 0) names.push_back(api::CapabilityName(i));
  }
  return names;
}

ProcessCredentials CredentialsFor(const EffectiveSecurity& sc, uid_t shim_uid,
                                  int last_cap, uint64_t available) {
  ProcessCredentials c;
  c.groups = SupplementaryGroups(sc);
  // A user without groups of its own: root's supplementary groups are
  // dropped whenever the user or group changes, as a container's are.
  c.set_groups = !c.groups.empty() || sc.run_as_user.has_value() ||
                 sc.run_as_group.has_value();
  if (sc.run_as_group.has_value()) {
    c.set_gid = true;
    c.gid = static_cast<gid_t>(*sc.run_as_group);
  }
  if (sc.run_as_user.has_value()) {
    c.set_uid = true;
    c.uid = static_cast<uid_t>(*sc.run_as_user);
  }
  c.last_cap = std::clamp(last_cap, 0, 63);
  c.set_caps = shim_uid == 0;
  c.caps = ContainerCapabilities(
      sc, c.set_uid ? static_cast<int64_t>(c.uid) : shim_uid, c.last_cap,
      available);
  c.no_new_privs = sc.allow_privilege_escalation.has_value() &&
                   !*sc.allow_privilege_escalation;
  return c;
}

CredentialStep ApplyCredentials(const ProcessCredentials& c) {
  if (c.set_groups &&
      syscall(SYS_setgroups, c.groups.size(), c.groups.data()) != 0) {
    return CredentialStep::kSetGroups;
  }
  if (c.set_gid && syscall(SYS_setresgid, c.gid, c.gid, c.gid) != 0) {
    return CredentialStep::kSetGid;
  }
  const bool to_non_root = c.set_uid && c.uid != 0;
  if (c.set_caps) {
    for (int cap = 0; cap <= c.last_cap; ++cap) {
      if ((c.caps.bounding & Bit(cap)) != 0) continue;
      // Already out (a shim started with a narrower set): nothing to drop,
      // and no CAP_SETPCAP needed.
      if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1) continue;
      if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
        return CredentialStep::kBounding;
      }
    }
    if (to_non_root && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) {
      return CredentialStep::kKeepCaps;
    }
  }
  if (c.set_uid && syscall(SYS_setresuid, c.uid, c.uid, c.uid) != 0) {
    return CredentialStep::kSetUid;
  }
  if (c.set_caps) {
    __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    for (int i = 0; i < 2; ++i) {
      const uint32_t word = static_cast<uint32_t>(c.caps.permitted >> (32 * i));
      data[i].effective = word;
      data[i].permitted = word;
      data[i].inheritable = word;
    }
    if (syscall(SYS_capset, &header, data) != 0) return CredentialStep::kCapSet;
    if (to_non_root) {
      for (int cap = 0; cap <= c.last_cap; ++cap) {
        if ((c.caps.ambient & Bit(cap)) == 0) continue;
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0) {
          return CredentialStep::kAmbient;
        }
      }
    }
  }
  if (c.no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return CredentialStep::kNoNewPrivs;
  }
  return CredentialStep::kNone;
}

const char* CredentialStepName(CredentialStep step) {
  switch (step) {
    case CredentialStep::kNone:
      return "none";
    case CredentialStep::kSetGroups:
      return "setgroups";
    case CredentialStep::kSetGid:
      return "setresgid";
    case CredentialStep::kBounding:
      return "PR_CAPBSET_DROP";
    case CredentialStep::kKeepCaps:
      return "PR_SET_KEEPCAPS";
    case CredentialStep::kSetUid:
      return "setresuid";
    case CredentialStep::kCapSet:
      return "capset";
    case CredentialStep::kAmbient:
      return "PR_CAP_AMBIENT_RAISE";
    case CredentialStep::kNoNewPrivs:
      return "PR_SET_NO_NEW_PRIVS";
  }
  return "?";
}

}  // namespace jobset::agent
