#include "api/capabilities.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace jobset::api {
namespace {

// Index = capability number.
constexpr absl::string_view kNames[kLastKnownCapability + 1] = {
    "CHOWN",
    "DAC_OVERRIDE",
    "DAC_READ_SEARCH",
    "FOWNER",
    "FSETID",
    "KILL",
    "SETGID",
    "SETUID",
    "SETPCAP",
    "LINUX_IMMUTABLE",
    "NET_BIND_SERVICE",
    "NET_BROADCAST",
    "NET_ADMIN",
    "NET_RAW",
    "IPC_LOCK",
    "IPC_OWNER",
    "SYS_MODULE",
    "SYS_RAWIO",
    "SYS_CHROOT",
    "SYS_PTRACE",
    "SYS_PACCT",
    "SYS_ADMIN",
    "SYS_BOOT",
    "SYS_NICE",
    "SYS_RESOURCE",
    "SYS_TIME",
    "SYS_TTY_CONFIG",
    "MKNOD",
    "LEASE",
    "AUDIT_WRITE",
    "AUDIT_CONTROL",
    "SETFCAP",
    "MAC_OVERRIDE",
    "MAC_ADMIN",
    "SYSLOG",
    "WAKE_ALARM",
    "BLOCK_SUSPEND",
    "AUDIT_READ",
    "PERFMON",
    "BPF",
    "CHECKPOINT_RESTORE"};

constexpr absl::string_view kDefaults[] = {
    "CHOWN",   "DAC_OVERRIDE", "FSETID",           "FOWNER",
    "MKNOD",   "NET_RAW",      "SETGID",           "SETUID",
    "SETFCAP", "SETPCAP",      "NET_BIND_SERVICE", "SYS_CHROOT",
    "KILL",    "AUDIT_WRITE"};

}  // namespace

std::optional<int> CapabilityNumber(absl::string_view name) {
  absl::ConsumePrefix(&name, "CAP_");
  for (int i = 0; i <= kLastKnownCapability; ++i) {
    if (kNames[i] == name) return i;
  }
  return std::nullopt;
}

std::string CapabilityName(int number) {
  if (number < 0 || number > kLastKnownCapability) return "";
  return absl::StrCat("CAP_", kNames[number]);
}

uint64_t DefaultCapabilityMask() {
  uint64_t mask = 0;
  for (absl::string_view name : kDefaults) {
    mask |= uint64_t{1} << *CapabilityNumber(name);
  }
  return mask;
}

}  // namespace jobset::api
