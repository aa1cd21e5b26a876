#include "agent/runtime/pod_input.h"

#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/capabilities.h"
#include "api/host_table.h"
#include "api/names.h"
#include "common/quote.h"

namespace jobset::agent {
namespace {

// Quoted as Go's %q (common/quote.h). Long values are cut in messages: the
// refusal itself must stay small.
std::string Quoted(absl::string_view value) {
  constexpr size_t kShown = 100;
  std::string quoted = Quote(value.substr(0, kShown));
  if (value.size() > kShown) quoted.insert(quoted.size() - 1, "...");
  return quoted;
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

absl::Status ExpandHostTable(api::PodAssignment* assignment) {
  if (assignment->hosts_table().empty()) return absl::OkStatus();
  if (assignment->hosts_size() > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hosts and hosts_table: both set (", assignment->hosts_size(),
        " entries and ", assignment->hosts_table().size(),
        " bytes); an assignment carries its host table once"));
  }
  absl::StatusOr<api::HostTable> table =
      api::DecodeHostTable("hosts_table", assignment->hosts_table());
  if (!table.ok()) return table.status();
  if (absl::Status s = CheckHostEntries("hosts_table.hosts", table->hosts());
      !s.ok()) {
    return s;
  }
  assignment->mutable_hosts()->Swap(table->mutable_hosts());
  assignment->clear_hosts_table();
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

namespace {

// A config volume's file path: as a subPath, and neither empty nor with an
// empty or "." component (each names a directory or the file to write).
absl::Status CheckConfigFilePath(const std::string& field,
                                 absl::string_view path) {
  if (path.empty()) return Invalid(field, path, "must not be empty");
  if (absl::Status s = CheckSubPath(field, path); !s.ok()) return s;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == ".") {
      return Invalid(field, path, "must not contain an empty or '.' component");
    }
  }
  return absl::OkStatus();
}

// The files of one config volume, `at` its field path. `bytes` sums the
// data of every volume of the pod.
absl::Status CheckConfigFiles(const std::string& at,
                              const api::ConfigVolume& volume, int64_t* bytes) {
  if (volume.files_size() > kMaxConfigFiles) {
    return absl::InvalidArgumentError(
        absl::StrCat(at, ".files: ", volume.files_size(),
                     " files, more than the ", kMaxConfigFiles, " allowed"));
  }
  std::set<std::string> paths;
  for (int j = 0; j < volume.files_size(); ++j) {
    const api::ConfigFile& f = volume.files(j);
    const std::string file = absl::StrCat(at, ".files[", j, "]");
    const std::string field = absl::StrCat(file, ".path");
    if (absl::Status s = CheckConfigFilePath(field, f.path()); !s.ok()) {
      return s;
    }
    if (!paths.insert(f.path()).second) {
      return Invalid(field, f.path(), "duplicate path in the volume");
    }
    if (f.mode() < 0 || f.mode() > 0777) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ".mode: invalid value ", f.mode(),
                       ": must be a number between 0 and 0777 (octal), both "
                       "inclusive"));
    }
    // The data is never quoted: it may be a secret's.
    *bytes += static_cast<int64_t>(f.data().size());
    if (*bytes > kMaxConfigBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(file,
                       ".data: the pod's secret and configMap volumes "
                       "hold more than ",
                       kMaxConfigBytes, " bytes"));
    }
  }
  // A path that is a file cannot also be a directory of another.
  for (int j = 0; j < volume.files_size(); ++j) {
    const std::string& path = volume.files(j).path();
    for (size_t slash = path.find('/'); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
      const std::string dir = path.substr(0, slash);
      if (paths.contains(dir)) {
        return Invalid(
            absl::StrCat(at, ".files[", j, "].path"), path,
            absl::StrCat(Quoted(dir), " is a file of the volume too"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckConfigVolumes(
    const api::PodSpec& spec,
    const google::protobuf::RepeatedPtrField<api::ConfigVolume>& volumes) {
  std::set<std::string> seen;
  int64_t bytes = 0;
  for (int i = 0; i < volumes.size(); ++i) {
    const api::ConfigVolume& v = volumes[i];
    const std::string at = absl::StrCat("config_volumes[", i, "]");
    const std::string name_field = absl::StrCat(at, ".name");
    const api::Volume* source = nullptr;
    for (const api::Volume& pv : spec.volumes()) {
      if (pv.name() == v.name()) source = &pv;
    }
    if (source == nullptr) {
      return Invalid(name_field, v.name(), "not a volume of the pod");
    }
    if (v.secret() && !source->has_secret()) {
      return Invalid(name_field, v.name(), "not a secret volume of the pod");
    }
    if (!v.secret() && !source->has_config_map()) {
      return Invalid(name_field, v.name(), "not a configMap volume of the pod");
    }
    if (!seen.insert(v.name()).second) {
      return Invalid(name_field, v.name(), "duplicate config volume");
    }
    if (absl::Status s = CheckConfigFiles(at, v, &bytes); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckPullCredentials(
    const google::protobuf::RepeatedPtrField<api::RegistryCredential>&
        credentials) {
  if (credentials.size() > kMaxPullCredentials) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pull_credentials: ", credentials.size(), " entries, more than the ",
        kMaxPullCredentials, " allowed"));
  }
  // Only the server is ever quoted: the username and password are secrets.
  for (int i = 0; i < credentials.size(); ++i) {
    const std::string field = absl::StrCat("pull_credentials[", i, "].server");
    const std::string& server = credentials[i].server();
    if (server.empty()) return Invalid(field, server, "must not be empty");
    if (server.size() > kMaxRegistryServerBytes) {
      return Invalid(
          field, server,
          absl::StrCat("longer than ", kMaxRegistryServerBytes, " bytes"));
    }
    for (char c : server) {
      const unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) {
        return Invalid(field, server,
                       "must not contain NUL or control characters");
      }
    }
  }
  return absl::OkStatus();
}

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
    const api::Volume& v = spec.volumes(i);
    if (v.has_host_path() + v.has_empty_dir() + v.has_secret() +
            v.has_config_map() >
        1) {
      return absl::InvalidArgumentError(
          absl::StrCat("pod.spec.volumes[", i,
                       "]: may not specify more than 1 volume type"));
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
  if (!assignment.hosts_table().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "hosts_table: ", assignment.hosts_table().size(), " bytes not expanded",
        assignment.hosts_size() > 0 ? ", and hosts set too" : "",
        "; the agent expands the table on receipt (ExpandHostTable)"));
  }
  if (absl::Status s = CheckHostEntries("hosts", assignment.hosts()); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckConfigVolumes(spec, assignment.config_volumes());
      !s.ok()) {
    return s;
  }
  return CheckPullCredentials(assignment.pull_credentials());
}

}  // namespace jobset::agent
