#include "api/pod_security.h"

#include <cctype>
#include <functional>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/quote.h"

namespace jobset::api {
namespace {

using Violations = std::vector<PodSecurityViolation>;
using Names = std::vector<std::string>;
using SortedNames = std::set<std::string>;

// Escapes control bytes, so that a hostile name cannot forge a line of its
// own, where upstream prints names unquoted or in its joinQuote (quoted
// values use common/quote.h). Names that validation admits come out
// unchanged.
std::string Safe(absl::string_view s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      absl::StrAppend(&out, "\\x", absl::Hex(u, absl::kZeroPad2));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// `"a", "b"`, as Kubernetes' joinQuote (which does not escape).
template <typename Container>
std::string JoinQuote(const Container& items) {
  if (items.empty()) return "";
  std::vector<std::string> safe;
  for (const std::string& item : items) safe.push_back(Safe(item));
  return absl::StrCat("\"", absl::StrJoin(safe, "\", \""), "\"");
}

absl::string_view Plural(absl::string_view singular, absl::string_view plural,
                         size_t count) {
  return count == 1 ? singular : plural;
}

// "containers \"a\", \"b\"".
std::string ContainersPhrase(const Names& names) {
  return absl::StrCat(Plural("container", "containers", names.size()), " ",
                      JoinQuote(names));
}

// Visits init containers, then containers, as Kubernetes' visitContainers.
void VisitContainers(const PodSpec& spec,
                     const std::function<void(const Container&)>& visit) {
  for (const Container& c : spec.init_containers()) visit(c);
  for (const Container& c : spec.containers()) visit(c);
}

bool AllowedProfileType(absl::string_view type) {
  return type == "RuntimeDefault" || type == "Localhost";
}

// A check appends its violation, if any, to `out`.
using Check = std::function<void(const ObjectMeta&, const PodSpec&,
                                 const AllowedHostPaths&, Violations*)>;

void AppArmorProfile(const ObjectMeta& meta, const PodSpec& spec,
                     const AllowedHostPaths&, Violations* out) {
  Names setters;
  SortedNames bad_values;
  if (spec.has_security_context() &&
      spec.security_context().has_app_armor_profile() &&
      !AllowedProfileType(spec.security_context().app_armor_profile().type())) {
    setters.push_back("pod");
    bad_values.insert(spec.security_context().app_armor_profile().type());
  }
  Names containers;
  VisitContainers(spec, [&](const Container& c) {
    if (c.has_security_context() &&
        c.security_context().has_app_armor_profile() &&
        !AllowedProfileType(c.security_context().app_armor_profile().type())) {
      containers.push_back(c.name());
      bad_values.insert(c.security_context().app_armor_profile().type());
    }
  });
  if (!containers.empty()) setters.push_back(ContainersPhrase(containers));
  // The deprecated per-container annotations.
  constexpr absl::string_view kPrefix =
      "container.apparmor.security.beta.kubernetes.io/";
  SortedNames annotations;
  for (const auto& [key, value] : meta.annotations()) {
    if (!absl::StartsWith(key, kPrefix)) continue;
    if (value.empty() || value == "runtime/default" ||
        absl::StartsWith(value, "localhost/")) {
      continue;
    }
    annotations.insert(absl::StrCat(Safe(key), "=", Quote(value)));
  }
  std::vector<std::string> values(bad_values.begin(), bad_values.end());
  values.insert(values.end(), annotations.begin(), annotations.end());
  if (!annotations.empty()) {
    setters.push_back(
        std::string(Plural("annotation", "annotations", annotations.size())));
  }
  if (setters.empty()) return;
  out->push_back(
      {std::string(Plural("forbidden AppArmor profile",
                          "forbidden AppArmor profiles", values.size())),
       absl::StrCat(absl::StrJoin(setters, " and "),
                    " must not set AppArmor profile type to ",
                    JoinQuote(values))});
}

constexpr absl::string_view kBaselineCapabilities[] = {
    "AUDIT_WRITE", "CHOWN",  "DAC_OVERRIDE",     "FOWNER",  "FSETID",
    "KILL",        "MKNOD",  "NET_BIND_SERVICE", "SETFCAP", "SETGID",
    "SETPCAP",     "SETUID", "SYS_CHROOT",
};

bool BaselineCapability(absl::string_view cap) {
  for (absl::string_view allowed : kBaselineCapabilities) {
    if (cap == allowed) return true;
  }
  return false;
}

void CapabilitiesBaseline(const ObjectMeta&, const PodSpec& spec,
                          const AllowedHostPaths&, Violations* out) {
  Names containers;
  SortedNames caps;
  VisitContainers(spec, [&](const Container& c) {
    bool valid = true;
    for (const std::string& cap : c.security_context().capabilities().add()) {
      if (!BaselineCapability(cap)) {
        valid = false;
        caps.insert(cap);
      }
    }
    if (!valid) containers.push_back(c.name());
  });
  if (containers.empty()) return;
  out->push_back(
      {"non-default capabilities",
       absl::StrCat(ContainersPhrase(containers), " must not include ",
                    JoinQuote(caps), " in securityContext.capabilities.add")});
}

// hostNetwork is jobsetd's model (every pod uses the host's network), so it
// is not checked; hostPID and hostIPC are.
void HostNamespaces(const ObjectMeta&, const PodSpec& spec,
                    const AllowedHostPaths&, Violations* out) {
  Names found;
  if (spec.host_pid()) found.push_back("hostPID=true");
  if (spec.host_ipc()) found.push_back("hostIPC=true");
  if (found.empty()) return;
  out->push_back({"host namespaces", absl::StrJoin(found, ", ")});
}

// The hostPath volumes of `spec` outside the allowed prefixes.
Names HostPathsNotAllowed(const PodSpec& spec,
                          const AllowedHostPaths& allowed) {
  Names volumes;
  for (const Volume& v : spec.volumes()) {
    if (v.has_host_path() && !allowed.Allows(v.host_path().path())) {
      volumes.push_back(v.name());
    }
  }
  return volumes;
}

void HostPathVolumes(const ObjectMeta&, const PodSpec& spec,
                     const AllowedHostPaths& allowed, Violations* out) {
  const Names volumes = HostPathsNotAllowed(spec, allowed);
  if (volumes.empty()) return;
  out->push_back({"hostPath volumes",
                  absl::StrCat(Plural("volume", "volumes", volumes.size()), " ",
                               JoinQuote(volumes))});
}

void HostPorts(const ObjectMeta&, const PodSpec& spec, const AllowedHostPaths&,
               Violations* out) {
  Names containers;
  // Go's sets.String sorts the ports as strings ("10", "8080", "9").
  SortedNames ports;
  VisitContainers(spec, [&](const Container& c) {
    bool valid = true;
    for (const ContainerPort& p : c.ports()) {
      if (p.host_port() != 0) {
        valid = false;
        ports.insert(absl::StrCat(p.host_port()));
      }
    }
    if (!valid) containers.push_back(c.name());
  });
  if (containers.empty()) return;
  out->push_back(
      {"hostPort", absl::StrCat(ContainersPhrase(containers), " ",
                                Plural("uses", "use", containers.size()), " ",
                                Plural("hostPort", "hostPorts", ports.size()),
                                " ", absl::StrJoin(ports, ", "))});
}

// Of the probes and lifecycle handlers Kubernetes checks, jobsetd reads only
// the readiness probe (the others are ignored fields).
void HostProbes(const ObjectMeta&, const PodSpec& spec, const AllowedHostPaths&,
                Violations* out) {
  SortedNames containers;
  SortedNames hosts;
  VisitContainers(spec, [&](const Container& c) {
    if (!c.has_readiness_probe()) return;
    const Probe& probe = c.readiness_probe();
    for (const std::string* host :
         {&probe.http_get().host(), &probe.tcp_socket().host()}) {
      if (host->empty()) continue;
      containers.insert(c.name());
      hosts.insert(*host);
    }
  });
  if (containers.empty()) return;
  out->push_back(
      {"probe or lifecycle host",
       absl::StrCat(Plural("container", "containers", containers.size()), " ",
                    JoinQuote(containers), " ",
                    Plural("uses", "use", containers.size()), " ",
                    Plural("probe or lifecycle host",
                           "probe or lifecycle hosts", hosts.size()),
                    " ", JoinQuote(hosts))});
}

void Privileged(const ObjectMeta&, const PodSpec& spec, const AllowedHostPaths&,
                Violations* out) {
  Names containers;
  VisitContainers(spec, [&](const Container& c) {
    if (c.security_context().privileged()) containers.push_back(c.name());
  });
  if (containers.empty()) return;
  out->push_back(
      {"privileged",
       absl::StrCat(ContainersPhrase(containers),
                    " must not set securityContext.privileged=true")});
}

// hostUsers is an ignored field, so Kubernetes' user-namespace relaxation
// never applies.
void ProcMount(const ObjectMeta&, const PodSpec& spec, const AllowedHostPaths&,
               Violations* out) {
  Names containers;
  SortedNames types;
  VisitContainers(spec, [&](const Container& c) {
    const std::string& mount = c.security_context().proc_mount();
    if (!c.has_security_context() || mount.empty() || mount == "Default") {
      return;
    }
    containers.push_back(c.name());
    types.insert(mount);
  });
  if (containers.empty()) return;
  out->push_back(
      {"procMount", absl::StrCat(ContainersPhrase(containers),
                                 " must not set securityContext.procMount to ",
                                 JoinQuote(types))});
}

bool AllowedSeLinuxType(absl::string_view type) {
  return type.empty() || type == "container_t" || type == "container_init_t" ||
         type == "container_kvm_t" || type == "container_engine_t";
}

void SeLinuxOptions(const ObjectMeta&, const PodSpec& spec,
                    const AllowedHostPaths&, Violations* out) {
  Names setters;
  SortedNames bad_types;
  bool set_user = false;
  bool set_role = false;
  auto valid = [&](const api::SELinuxOptions& opts) {
    bool ok = true;
    if (!AllowedSeLinuxType(opts.type())) {
      ok = false;
      bad_types.insert(opts.type());
    }
    if (!opts.user().empty()) {
      ok = false;
      set_user = true;
    }
    if (!opts.role().empty()) {
      ok = false;
      set_role = true;
    }
    return ok;
  };
  if (spec.security_context().has_se_linux_options() &&
      !valid(spec.security_context().se_linux_options())) {
    setters.push_back("pod");
  }
  Names containers;
  VisitContainers(spec, [&](const Container& c) {
    if (c.security_context().has_se_linux_options() &&
        !valid(c.security_context().se_linux_options())) {
      containers.push_back(c.name());
    }
  });
  if (!containers.empty()) setters.push_back(ContainersPhrase(containers));
  if (setters.empty()) return;
  Names data;
  if (!bad_types.empty()) {
    data.push_back(absl::StrCat(Plural("type", "types", bad_types.size()), " ",
                                JoinQuote(bad_types)));
  }
  if (set_user) data.push_back("user may not be set");
  if (set_role) data.push_back("role may not be set");
  out->push_back(
      {"seLinuxOptions",
       absl::StrCat(absl::StrJoin(setters, " and "),
                    " set forbidden securityContext.seLinuxOptions: ",
                    absl::StrJoin(data, "; "))});
}

// Shared by the baseline and restricted seccomp checks: the explicit bad
// setters (pod, containers) and, for restricted, the containers that leave
// it unset without a pod-level profile.
void Seccomp(const PodSpec& spec, bool require, Violations* out) {
  Names setters;
  SortedNames bad_values;
  bool pod_set = false;
  if (spec.security_context().has_seccomp_profile()) {
    const std::string& type = spec.security_context().seccomp_profile().type();
    if (!AllowedProfileType(type)) {
      setters.push_back("pod");
      bad_values.insert(type);
    } else {
      pod_set = true;
    }
  }
  Names explicit_bad;
  Names implicit_bad;
  VisitContainers(spec, [&](const Container& c) {
    if (c.security_context().has_seccomp_profile()) {
      const std::string& type = c.security_context().seccomp_profile().type();
      if (!AllowedProfileType(type)) {
        explicit_bad.push_back(c.name());
        bad_values.insert(type);
      }
    } else if (!pod_set) {
      implicit_bad.push_back(c.name());
    }
  });
  if (!explicit_bad.empty()) setters.push_back(ContainersPhrase(explicit_bad));
  if (!setters.empty()) {
    out->push_back(
        {"seccompProfile",
         absl::StrCat(absl::StrJoin(setters, " and "),
                      " must not set securityContext.seccompProfile.type to ",
                      JoinQuote(bad_values))});
    return;
  }
  if (require && !implicit_bad.empty()) {
    out->push_back(
        {"seccompProfile",
         absl::StrCat("pod or ", ContainersPhrase(implicit_bad),
                      " must set securityContext.seccompProfile.type to "
                      "\"RuntimeDefault\" or \"Localhost\"")});
  }
}

void SeccompBaseline(const ObjectMeta&, const PodSpec& spec,
                     const AllowedHostPaths&, Violations* out) {
  Seccomp(spec, /*require=*/false, out);
}

// Kubernetes' safe set at its latest version (1.37).
constexpr absl::string_view kSafeSysctls[] = {
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_notsent_lowat",
};

void Sysctls(const ObjectMeta&, const PodSpec& spec, const AllowedHostPaths&,
             Violations* out) {
  Names forbidden;
  for (const Sysctl& s : spec.security_context().sysctls()) {
    bool safe = false;
    for (absl::string_view allowed : kSafeSysctls)
      safe = safe || s.name() == allowed;
    if (!safe) forbidden.push_back(Safe(s.name()));
  }
  if (forbidden.empty()) return;
  out->push_back({"forbidden sysctls", absl::StrJoin(forbidden, ", ")});
}

void AllowPrivilegeEscalation(const ObjectMeta&, const PodSpec& spec,
                              const AllowedHostPaths&, Violations* out) {
  Names containers;
  VisitContainers(spec, [&](const Container& c) {
    if (!c.security_context().has_allow_privilege_escalation() ||
        c.security_context().allow_privilege_escalation()) {
      containers.push_back(c.name());
    }
  });
  if (containers.empty()) return;
  out->push_back(
      {"allowPrivilegeEscalation != false",
       absl::StrCat(
           ContainersPhrase(containers),
           " must set securityContext.allowPrivilegeEscalation=false")});
}

void CapabilitiesRestricted(const ObjectMeta&, const PodSpec& spec,
                            const AllowedHostPaths&, Violations* out) {
  Names missing_drop_all;
  Names adding_forbidden;
  SortedNames forbidden;
  VisitContainers(spec, [&](const Container& c) {
    if (!c.security_context().has_capabilities()) {
      missing_drop_all.push_back(c.name());
      return;
    }
    const Capabilities& caps = c.security_context().capabilities();
    bool dropped_all = false;
    for (const std::string& d : caps.drop())
      dropped_all = dropped_all || d == "ALL";
    if (!dropped_all) missing_drop_all.push_back(c.name());
    bool added_forbidden = false;
    for (const std::string& a : caps.add()) {
      if (a != "NET_BIND_SERVICE") {
        added_forbidden = true;
        forbidden.insert(a);
      }
    }
    if (added_forbidden) adding_forbidden.push_back(c.name());
  });
  Names details;
  if (!missing_drop_all.empty()) {
    details.push_back(
        absl::StrCat(ContainersPhrase(missing_drop_all),
                     " must set securityContext.capabilities.drop=[\"ALL\"]"));
  }
  if (!adding_forbidden.empty()) {
    details.push_back(absl::StrCat(ContainersPhrase(adding_forbidden),
                                   " must not include ", JoinQuote(forbidden),
                                   " in securityContext.capabilities.add"));
  }
  if (details.empty()) return;
  out->push_back({"unrestricted capabilities", absl::StrJoin(details, "; ")});
}

// Of the volume sources, jobsetd reads hostPath, emptyDir, secret and
// configMap (the others are ignored fields, dropped at load): of those,
// restricted allows all but hostPath (Kubernetes' list: configMap, csi,
// downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected,
// secret).
void RestrictedVolumes(const ObjectMeta&, const PodSpec& spec,
                       const AllowedHostPaths& allowed, Violations* out) {
  const Names volumes = HostPathsNotAllowed(spec, allowed);
  if (volumes.empty()) return;
  out->push_back({"restricted volume types",
                  absl::StrCat(Plural("volume", "volumes", volumes.size()), " ",
                               JoinQuote(volumes), " ",
                               Plural("uses", "use", volumes.size()),
                               " restricted volume type \"hostPath\"")});
}

void RunAsNonRoot(const ObjectMeta&, const PodSpec& spec,
                  const AllowedHostPaths&, Violations* out) {
  Names setters;
  bool pod_non_root = false;
  if (spec.security_context().has_run_as_non_root()) {
    if (!spec.security_context().run_as_non_root()) {
      setters.push_back("pod");
    } else {
      pod_non_root = true;
    }
  }
  Names explicit_bad;
  Names implicit_bad;
  VisitContainers(spec, [&](const Container& c) {
    if (c.security_context().has_run_as_non_root()) {
      if (!c.security_context().run_as_non_root())
        explicit_bad.push_back(c.name());
    } else if (!pod_non_root) {
      implicit_bad.push_back(c.name());
    }
  });
  if (!explicit_bad.empty()) setters.push_back(ContainersPhrase(explicit_bad));
  if (!setters.empty()) {
    out->push_back(
        {"runAsNonRoot != true",
         absl::StrCat(absl::StrJoin(setters, " and "),
                      " must not set securityContext.runAsNonRoot=false")});
    return;
  }
  if (!implicit_bad.empty()) {
    out->push_back(
        {"runAsNonRoot != true",
         absl::StrCat("pod or ", ContainersPhrase(implicit_bad),
                      " must set securityContext.runAsNonRoot=true")});
  }
}

void RunAsUser(const ObjectMeta&, const PodSpec& spec, const AllowedHostPaths&,
               Violations* out) {
  Names setters;
  if (spec.security_context().has_run_as_user() &&
      spec.security_context().run_as_user() == 0) {
    setters.push_back("pod");
  }
  Names containers;
  VisitContainers(spec, [&](const Container& c) {
    if (c.security_context().has_run_as_user() &&
        c.security_context().run_as_user() == 0) {
      containers.push_back(c.name());
    }
  });
  if (!containers.empty()) setters.push_back(ContainersPhrase(containers));
  if (setters.empty()) return;
  out->push_back({"runAsUser=0", absl::StrCat(absl::StrJoin(setters, " and "),
                                              " must not set runAsUser=0")});
}

void SeccompRestricted(const ObjectMeta&, const PodSpec& spec,
                       const AllowedHostPaths&, Violations* out) {
  Seccomp(spec, /*require=*/true, out);
}

// Kubernetes orders checks by id, baseline ids first. At restricted, four
// baseline checks give way to the restricted ones that cover them
// (capabilities_baseline, hostPathVolumes, procMount, seccompProfile_baseline;
// procMount_restricted is the same check as procMount, run in its restricted
// place). windowsHostProcess is not
// here: windowsOptions is an ignored field, dropped at load.
struct OrderedCheck {
  absl::string_view id;
  bool restricted_only;  // A restricted check.
  bool baseline_only;    // Overridden at restricted.
  Check check;
};

const std::vector<OrderedCheck>& Checks() {
  static const auto* checks = new std::vector<OrderedCheck>{
      {"appArmorProfile", false, false, AppArmorProfile},
      {"capabilities_baseline", false, true, CapabilitiesBaseline},
      {"hostNamespaces", false, false, HostNamespaces},
      {"hostPathVolumes", false, true, HostPathVolumes},
      {"hostPorts", false, false, HostPorts},
      {"hostProbesAndHostLifecycle", false, false, HostProbes},
      {"privileged", false, false, Privileged},
      {"procMount", false, true, ProcMount},
      {"seLinuxOptions", false, false, SeLinuxOptions},
      {"seccompProfile_baseline", false, true, SeccompBaseline},
      {"sysctls", false, false, Sysctls},
      {"allowPrivilegeEscalation", true, false, AllowPrivilegeEscalation},
      {"capabilities_restricted", true, false, CapabilitiesRestricted},
      {"procMount_restricted", true, false, ProcMount},
      {"restrictedVolumes", true, false, RestrictedVolumes},
      {"runAsNonRoot", true, false, RunAsNonRoot},
      // jobsetd's rule, stricter than upstream (whose baseline admits
      // runAsUser 0): every jobsetd pod shares its host's network and, in
      // process mode, its kernel objects, so explicit root needs a
      // privileged namespace; the check keeps its id, its place and its
      // wording at both levels.
      {"runAsUser", false, false, RunAsUser},
      {"seccompProfile_restricted", true, false, SeccompRestricted},
  };
  return *checks;
}

// Splits an absolute path into its components, dropping empty ones and ".".
std::vector<std::string> Components(absl::string_view path) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == ".") continue;
    out.emplace_back(part);
  }
  return out;
}

bool HasDotDot(const std::vector<std::string>& parts) {
  for (const std::string& p : parts) {
    if (p == "..") return true;
  }
  return false;
}

std::string TemplatePath(int index) {
  return absl::StrCat("spec.replicatedJobs[", index,
                      "].template.spec.template");
}

// "v1.<minor>", as Kubernetes' versionRegexp `^v1\.([0-9]|[1-9][0-9]*)$`.
bool ValidVersion(absl::string_view v) {
  if (v == "latest") return true;
  if (!absl::ConsumePrefix(&v, "v1.") || v.empty() || v.size() > 9)
    return false;
  if (v.size() > 1 && v[0] == '0') return false;
  for (char c : v) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

absl::string_view PodSecurityLevelName(PodSecurityLevel level) {
  switch (level) {
    case PodSecurityLevel::kPrivileged:
      return "privileged";
    case PodSecurityLevel::kBaseline:
      return "baseline";
    case PodSecurityLevel::kRestricted:
      return "restricted";
  }
  return "restricted";
}

absl::StatusOr<PodSecurityLevel> ParsePodSecurityLevel(
    absl::string_view what, absl::string_view value) {
  for (PodSecurityLevel level :
       {PodSecurityLevel::kPrivileged, PodSecurityLevel::kBaseline,
        PodSecurityLevel::kRestricted}) {
    if (value == PodSecurityLevelName(level)) return level;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": Invalid value: ", Quote(value),
                   ": must be one of privileged, baseline, restricted"));
}

absl::StatusOr<AllowedHostPaths> AllowedHostPaths::Parse(
    absl::string_view what, absl::string_view list) {
  AllowedHostPaths out;
  if (list.empty()) return out;
  // Bounded: a flag, but a flag file can be long.
  constexpr size_t kMaxEntries = 1000;
  std::vector<absl::string_view> entries = absl::StrSplit(list, ',');
  if (entries.size() > kMaxEntries) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", entries.size(),
                     " entries, more than the limit of ", kMaxEntries));
  }
  for (absl::string_view entry : entries) {
    entry = absl::StripAsciiWhitespace(entry);
    if (entry.empty() || entry[0] != '/') {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": Invalid value: ", Quote(entry),
                       ": must be an absolute path"));
    }
    std::vector<std::string> parts = Components(entry);
    if (HasDotDot(parts)) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": Invalid value: ", Quote(entry), ": must not contain '..'"));
    }
    out.prefixes_.push_back(std::move(parts));
  }
  return out;
}

bool AllowedHostPaths::Allows(absl::string_view path) const {
  if (path.empty() || path[0] != '/') return false;
  const std::vector<std::string> parts = Components(path);
  if (HasDotDot(parts)) return false;
  for (const std::vector<std::string>& prefix : prefixes_) {
    if (prefix.size() > parts.size()) continue;
    bool under = true;
    for (size_t i = 0; i < prefix.size() && under; ++i) {
      under = prefix[i] == parts[i];
    }
    if (under) return true;
  }
  return false;
}

absl::StatusOr<NamespacePodSecurity> ParseNamespacePodSecurity(
    const google::protobuf::Map<std::string, std::string>& labels) {
  NamespacePodSecurity out;
  auto level = [&](absl::string_view key,
                   std::optional<PodSecurityLevel>* into) -> absl::Status {
    auto it = labels.find(std::string(key));
    if (it == labels.end()) return absl::OkStatus();
    absl::StatusOr<PodSecurityLevel> parsed = ParsePodSecurityLevel(
        absl::StrCat("metadata.labels[", key, "]"), it->second);
    if (!parsed.ok()) return parsed.status();
    *into = *parsed;
    return absl::OkStatus();
  };
  auto version = [&](absl::string_view key) -> absl::Status {
    auto it = labels.find(std::string(key));
    if (it == labels.end() || ValidVersion(it->second)) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "metadata.labels[", key, "]: Invalid value: ", Quote(it->second),
        ": must be \"latest\" or \"v1.x\""));
  };
  if (absl::Status s = level(kEnforceLabel, &out.enforce); !s.ok()) return s;
  if (absl::Status s = version(kEnforceVersionLabel); !s.ok()) return s;
  if (absl::Status s = level(kWarnLabel, &out.warn); !s.ok()) return s;
  if (absl::Status s = version(kWarnVersionLabel); !s.ok()) return s;
  return out;
}

std::vector<PodSecurityViolation> CheckPodSecurity(
    const ObjectMeta& pod_metadata, const PodSpec& pod_spec,
    PodSecurityLevel level, const AllowedHostPaths& allowed_host_paths) {
  Violations out;
  if (level == PodSecurityLevel::kPrivileged) return out;
  const bool restricted = level == PodSecurityLevel::kRestricted;
  for (const OrderedCheck& c : Checks()) {
    if (c.restricted_only && !restricted) continue;
    if (c.baseline_only && restricted) continue;
    c.check(pod_metadata, pod_spec, allowed_host_paths, &out);
  }
  return out;
}

std::string FormatPodSecurityViolations(PodSecurityLevel level,
                                        const Violations& found) {
  std::string out = absl::StrCat("violates PodSecurity \"",
                                 PodSecurityLevelName(level), ":latest\": ");
  for (size_t i = 0; i < found.size(); ++i) {
    if (i > 0) out.append(", ");
    out.append(found[i].reason);
    if (!found[i].detail.empty())
      absl::StrAppend(&out, " (", found[i].detail, ")");
  }
  return out;
}

namespace {

// Returns "<template path>: violates PodSecurity ..." for each replicatedJob
// whose pod template fails `level`.
std::vector<std::string> TemplateViolations(const JobSet& jobset,
                                            PodSecurityLevel level,
                                            const AllowedHostPaths& allowed) {
  std::vector<std::string> out;
  const auto& rjobs = jobset.spec().replicated_jobs();
  for (int i = 0; i < rjobs.size(); ++i) {
    const PodTemplateSpec& pod = rjobs[i].template_().spec().template_();
    Violations found =
        CheckPodSecurity(pod.metadata(), pod.spec(), level, allowed);
    if (found.empty()) continue;
    out.push_back(absl::StrCat(TemplatePath(i), ": ",
                               FormatPodSecurityViolations(level, found)));
  }
  return out;
}

}  // namespace

absl::Status CheckJobSetPodSecurity(
    const JobSet& jobset, PodSecurityLevel level,
    const AllowedHostPaths& allowed_host_paths) {
  std::vector<std::string> found =
      TemplateViolations(jobset, level, allowed_host_paths);
  if (found.empty()) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("jobsets.jobset.x-k8s.io ", Quote(jobset.metadata().name()),
                   " is forbidden: ", absl::StrJoin(found, "; ")));
}

std::vector<std::string> PodSecurityWarnings(
    const JobSet& jobset, PodSecurityLevel level,
    const AllowedHostPaths& allowed_host_paths) {
  std::vector<std::string> out =
      TemplateViolations(jobset, level, allowed_host_paths);
  for (std::string& w : out) {
    const size_t at = w.find("violates PodSecurity");
    w.replace(at, 8, "would violate");
  }
  return out;
}

}  // namespace jobset::api
