#include "agent/runtime/pod_input.h"

#include <set>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/capabilities.h"
#include "api/names.h"

namespace jobset::agent {
namespace {

// Long values are cut in messages: the refusal itself must stay small.
std::string Quoted(absl::string_view value) {
  constexpr size_t kShown = 100;
  std::string shown = absl::CEscape(value.substr(0, kShown));
  if (value.size() > kShown) absl::StrAppend(&shown, "...");
  return absl::StrCat("\"", shown, "\"");
}

absl::Status Invalid(absl::string_view field, absl::string_view value,
                     absl::string_view rule) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": invalid value ", Quoted(value), ": ", rule));
}

}  // namespace

bool ValidPodUid(absl::string_view uid) {
  if (uid.empty() || uid.size() > kMaxPodUidBytes || uid == "." ||
      uid == "..") {
    return false;
  }
  for (char c : uid) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

absl::Status CheckPodUid(absl::string_view field, absl::string_view uid) {
  if (ValidPodUid(uid)) return absl::OkStatus();
  return Invalid(field, uid,
                 absl::StrCat("a pod uid is 1-", kMaxPodUidBytes,
                              " characters of [A-Za-z0-9._-], not \".\" or "
                              "\"..\""));
}

absl::Status CheckDnsLabel(absl::string_view field, absl::string_view value) {
  if (api::IsDns1123Label(value).empty()) return absl::OkStatus();
  return Invalid(field, value,
                 absl::StrCat("must be a DNS-1123 label (1-", kMaxDnsLabelBytes,
                              " characters of [a-z0-9-], starting and ending "
                              "alphanumeric)"));
}

absl::Status CheckDnsSubdomain(absl::string_view field,
                               absl::string_view value) {
  if (api::IsDns1123Subdomain(value).empty()) return absl::OkStatus();
  return Invalid(
      field, value,
      absl::StrCat("must be a DNS-1123 subdomain (at most ",
                   kMaxDnsSubdomainBytes,
                   " characters: labels of [a-z0-9-] joined by '.')"));
}

absl::Status CheckIpAddress(absl::string_view field, absl::string_view value) {
  if (api::IsIpLiteral(value)) return absl::OkStatus();
  return Invalid(field, value, "must be an IPv4 or IPv6 address literal");
}

absl::Status CheckSubPath(absl::string_view field, absl::string_view value) {
  if (value.size() > kMaxSubPathBytes) {
    return Invalid(field, value,
                   absl::StrCat("longer than ", kMaxSubPathBytes, " bytes"));
  }
  if (value.find('\0') != absl::string_view::npos) {
    return Invalid(field, value, "must not contain NUL");
  }
  if (!value.empty() && value.front() == '/') {
    return Invalid(field, value, "must be a relative path");
  }
  for (absl::string_view part : absl::StrSplit(value, '/')) {
    if (part == "..") return Invalid(field, value, "must not contain '..'");
  }
  return absl::OkStatus();
}

absl::Status CheckHostEntries(
    absl::string_view field,
    const google::protobuf::RepeatedPtrField<api::HostEntry>& hosts) {
  if (hosts.size() > kMaxHostEntries) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", hosts.size(), " entries, more than the ",
                     kMaxHostEntries, " allowed"));
  }
  for (int i = 0; i < hosts.size(); ++i) {
    const api::HostEntry& e = hosts[i];
    const std::string at = absl::StrCat(field, "[", i, "]");
    if (!e.address().empty()) {
      if (absl::Status s =
              CheckIpAddress(absl::StrCat(at, ".address"), e.address());
          !s.ok()) {
        return s;
      }
    }
    if (e.names_size() > kMaxHostNames) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, ".names: ", e.names_size(), " names, more than the ",
                       kMaxHostNames, " allowed"));
    }
    for (int j = 0; j < e.names_size(); ++j) {
      if (absl::Status s = CheckDnsSubdomain(
              absl::StrCat(at, ".names[", j, "]"), e.names(j));
          !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

namespace {

// A uid or gid the shim hands to setresuid/setgroups: 0..2^31-1, as
// Kubernetes validates them (a -1 would mean "unchanged" to the kernel).
absl::Status CheckId(const std::string& field, int64_t id) {
  if (id >= 0 && id <= api::kMaxUserId) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", id, " is not between 0 and ", api::kMaxUserId,
                   ", inclusive"));
}

absl::Status CheckCapabilities(
    const std::string& field,
    const google::protobuf::RepeatedPtrField<std::string>& names) {
  for (int i = 0; i < names.size(); ++i) {
    if (names[i] == "ALL" || api::CapabilityNumber(names[i]).has_value()) {
      continue;
    }
    return Invalid(absl::StrCat(field, "[", i, "]"), names[i],
                   "not a Linux capability name or ALL");
  }
  return absl::OkStatus();
}

absl::Status CheckPodSecurity(const api::PodSecurityContext& sc) {
  const std::string at = "pod.spec.securityContext";
  if (sc.has_run_as_user()) {
    if (absl::Status s = CheckId(at + ".runAsUser", sc.run_as_user());
        !s.ok()) {
      return s;
    }
  }
  if (sc.has_run_as_group()) {
    if (absl::Status s = CheckId(at + ".runAsGroup", sc.run_as_group());
        !s.ok()) {
      return s;
    }
  }
  if (sc.has_fs_group()) {
    if (absl::Status s = CheckId(at + ".fsGroup", sc.fs_group()); !s.ok()) {
      return s;
    }
  }
  if (sc.supplemental_groups_size() > kMaxSupplementalGroups) {
    return absl::InvalidArgumentError(
        absl::StrCat(at, ".supplementalGroups: ", sc.supplemental_groups_size(),
                     " groups, more than ", kMaxSupplementalGroups));
  }
  for (int i = 0; i < sc.supplemental_groups_size(); ++i) {
    if (absl::Status s =
            CheckId(absl::StrCat(at, ".supplementalGroups[", i, "]"),
                    sc.supplemental_groups(i));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckContainerSecurity(const std::string& at,
                                    const api::SecurityContext& sc) {
  if (sc.has_run_as_user()) {
    if (absl::Status s = CheckId(at + ".runAsUser", sc.run_as_user());
        !s.ok()) {
      return s;
    }
  }
  if (sc.has_run_as_group()) {
    if (absl::Status s = CheckId(at + ".runAsGroup", sc.run_as_group());
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s =
          CheckCapabilities(at + ".capabilities.add", sc.capabilities().add());
      !s.ok()) {
    return s;
  }
  return CheckCapabilities(at + ".capabilities.drop", sc.capabilities().drop());
}

}  // namespace

absl::Status CheckAssignment(const api::PodAssignment& assignment) {
  const api::Pod& pod = assignment.pod();
  const api::PodSpec& spec = pod.spec();
  if (absl::Status s = CheckPodUid("pod.metadata.uid", pod.metadata().uid());
      !s.ok()) {
    return s;
  }
  if (!pod.metadata().name().empty()) {
    if (absl::Status s =
            CheckDnsSubdomain("pod.metadata.name", pod.metadata().name());
        !s.ok()) {
      return s;
    }
  }
  if (!spec.hostname().empty()) {
    if (absl::Status s = CheckDnsLabel("pod.spec.hostname", spec.hostname());
        !s.ok()) {
      return s;
    }
  }
  if (!spec.subdomain().empty()) {
    if (absl::Status s = CheckDnsLabel("pod.spec.subdomain", spec.subdomain());
        !s.ok()) {
      return s;
    }
  }
  if (!pod.status().host_ip().empty()) {
    if (absl::Status s =
            CheckIpAddress("pod.status.hostIP", pod.status().host_ip());
        !s.ok()) {
      return s;
    }
  }
  if (!pod.status().pod_ip().empty()) {
    if (absl::Status s =
            CheckIpAddress("pod.status.podIP", pod.status().pod_ip());
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = CheckPodSecurity(spec.security_context()); !s.ok()) {
    return s;
  }
  std::set<std::string> volumes;
  for (int i = 0; i < spec.volumes_size(); ++i) {
    const std::string field = absl::StrCat("pod.spec.volumes[", i, "].name");
    const std::string& name = spec.volumes(i).name();
    if (absl::Status s = CheckDnsLabel(field, name); !s.ok()) return s;
    if (!volumes.insert(name).second) {
      return Invalid(field, name, "duplicate volume name");
    }
  }
  std::set<std::string> containers;
  for (bool init : {true, false}) {
    const auto& list = init ? spec.init_containers() : spec.containers();
    for (int i = 0; i < list.size(); ++i) {
      const api::Container& c = list[i];
      const std::string at = absl::StrCat(
          init ? "pod.spec.initContainers[" : "pod.spec.containers[", i, "]");
      const std::string name_field = absl::StrCat(at, ".name");
      if (absl::Status s = CheckDnsLabel(name_field, c.name()); !s.ok()) {
        return s;
      }
      if (!containers.insert(c.name()).second) {
        return Invalid(name_field, c.name(), "duplicate container name");
      }
      if (absl::Status s = CheckContainerSecurity(
              absl::StrCat(at, ".securityContext"), c.security_context());
          !s.ok()) {
        return s;
      }
      for (int j = 0; j < c.volume_mounts_size(); ++j) {
        const api::VolumeMount& vm = c.volume_mounts(j);
        const std::string mount = absl::StrCat(at, ".volumeMounts[", j, "]");
        if (!volumes.contains(vm.name())) {
          return Invalid(absl::StrCat(mount, ".name"), vm.name(),
                         "not a volume of the pod");
        }
        if (absl::Status s =
                CheckSubPath(absl::StrCat(mount, ".subPath"), vm.sub_path());
            !s.ok()) {
          return s;
        }
      }
    }
  }
  return CheckHostEntries("hosts", assignment.hosts());
}

}  // namespace jobset::agent
