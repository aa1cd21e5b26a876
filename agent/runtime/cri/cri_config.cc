#include "agent/runtime/cri/cri_config.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "agent/runtime/security_context.h"
#include "api/quantity.h"

namespace jobset::agent::cri {
namespace {

namespace v1 = ::runtime::v1;

constexpr int64_t kCpuPeriodUs = 100000;
constexpr int64_t kMinCpuShares = 2;

void SetNamespaces(const api::PodSpec& spec, v1::NamespaceOption* ns) {
  ns->set_network(v1::NODE);
  ns->set_pid(spec.host_pid() ? v1::NODE : v1::CONTAINER);
  ns->set_ipc(spec.host_ipc() ? v1::NODE : v1::POD);
}

void SetProfile(const std::string& type, const std::string& localhost,
                v1::SecurityProfile* out) {
  if (type == "Unconfined") {
    out->set_profile_type(v1::SecurityProfile::Unconfined);
  } else if (type == "Localhost") {
    out->set_profile_type(v1::SecurityProfile::Localhost);
    out->set_localhost_ref(localhost);
  } else {
    out->set_profile_type(v1::SecurityProfile::RuntimeDefault);
  }
}

bool Names(const std::vector<std::string>& caps, absl::string_view cap) {
  return std::any_of(caps.begin(), caps.end(), [cap](const std::string& c) {
    return c == cap || c == absl::StrCat("CAP_", cap);
  });
}

bool AnyPrivileged(const api::PodSpec& spec) {
  for (const auto* list : {&spec.init_containers(), &spec.containers()}) {
    for (const api::Container& c : *list) {
      if (c.security_context().has_privileged() &&
          c.security_context().privileged()) {
        return true;
      }
    }
  }
  return false;
}

std::vector<int64_t> Groups(const api::PodSecurityContext& psc) {
  std::vector<int64_t> groups;
  if (psc.has_fs_group()) groups.push_back(psc.fs_group());
  for (int64_t g : psc.supplemental_groups()) {
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) {
      groups.push_back(g);
    }
  }
  return groups;
}

// Whether the image runs as root when nothing else names a user: it names
// none, uid 0, or the name "root" (or "0").
bool ImageUserIsRoot(const ImageFacts& image) {
  if (image.uid.has_value()) return *image.uid == 0;
  return image.username.empty() || image.username == "root" ||
         image.username == "0";
}

std::string PodRef(const api::ObjectMeta& meta) {
  return absl::StrCat("pod: \"", meta.name(), "_", meta.namespace_(), "(",
                      meta.uid(), ")\"");
}

absl::Status SetResources(const api::Container& spec, const std::string& field,
                          v1::LinuxContainerResources* out) {
  const auto& limits = spec.resources().limits();
  const auto& requests = spec.resources().requests();
  auto parse = [&](const auto& map, const char* kind,
                   const char* name) -> absl::StatusOr<api::Quantity> {
    absl::StatusOr<api::Quantity> q = api::ParseQuantity(map.at(name));
    if (!q.ok() || q->MilliValue() <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".resources.", kind, ".", name,
                       ": bad quantity \"", map.at(name), "\""));
    }
    return q;
  };
  if (limits.contains("memory")) {
    absl::StatusOr<api::Quantity> q = parse(limits, "limits", "memory");
    if (!q.ok()) return q.status();
    out->set_memory_limit_in_bytes(q->Value());
  }
  if (limits.contains("cpu")) {
    absl::StatusOr<api::Quantity> q = parse(limits, "limits", "cpu");
    if (!q.ok()) return q.status();
    out->set_cpu_period(kCpuPeriodUs);
    // kubelet's milliCPUToQuota, with its 1 ms floor.
    out->set_cpu_quota(
        std::max<int64_t>(1000, q->MilliValue() * kCpuPeriodUs / 1000));
  }
  const char* share_source = requests.contains("cpu") ? "requests"
                             : limits.contains("cpu") ? "limits"
                                                      : nullptr;
  if (share_source != nullptr) {
    const auto& map = requests.contains("cpu") ? requests : limits;
    absl::StatusOr<api::Quantity> q = parse(map, share_source, "cpu");
    if (!q.ok()) return q.status();
    out->set_cpu_shares(
        std::max<int64_t>(kMinCpuShares, q->MilliValue() * 1024 / 1000));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ContainerLogName(const std::string& name) {
  return absl::StrCat(name, ".log");
}

v1::PodSandboxConfig SandboxConfig(const api::PodAssignment& assignment,
                                   const std::string& log_directory) {
  const api::Pod& pod = assignment.pod();
  v1::PodSandboxConfig config;
  v1::PodSandboxMetadata* meta = config.mutable_metadata();
  meta->set_name(pod.metadata().name());
  meta->set_uid(pod.metadata().uid());
  meta->set_namespace_(pod.metadata().namespace_());
  config.set_log_directory(log_directory);
  (*config.mutable_labels())[kPodUidLabel] = pod.metadata().uid();
  v1::LinuxSandboxSecurityContext* sc =
      config.mutable_linux()->mutable_security_context();
  SetNamespaces(pod.spec(), sc->mutable_namespace_options());
  const api::PodSecurityContext& psc = pod.spec().security_context();
  if (psc.has_run_as_user()) {
    sc->mutable_run_as_user()->set_value(psc.run_as_user());
    if (psc.has_run_as_group()) {
      sc->mutable_run_as_group()->set_value(psc.run_as_group());
    }
  }
  for (int64_t g : Groups(psc)) sc->add_supplemental_groups(g);
  sc->set_privileged(AnyPrivileged(pod.spec()));
  // kubelet always confines the sandbox (pause) with the default profile.
  sc->mutable_seccomp()->set_profile_type(v1::SecurityProfile::RuntimeDefault);
  return config;
}

absl::StatusOr<v1::ContainerConfig> ContainerConfigFor(
    const api::PodAssignment& assignment, const api::Container& spec, bool init,
    int attempt, const ImageFacts& image, int64_t default_pod_uid,
    const std::vector<HostMount>& mounts,
    const AcceleratorSetup& accelerators) {
  const api::Pod& pod = assignment.pod();
  EffectiveSecurity sc = Effective(pod.spec(), spec);
  // No runAsUser and an image that would run as root: the agent's default
  // user, as the process and oci runtimes give it (and its group, never
  // root's). An image that names another user keeps it.
  if (ImageUserIsRoot(image)) {
    ApplyDefaultUser(
        DefaultUserFor(default_pod_uid, assignment.pod_security_level()), &sc);
  }
  // kubelet's verifyRunAsNonRoot, against the user the container runs as:
  // the image's when neither the spec nor the default names one.
  if (sc.run_as_non_root && !sc.run_as_user.has_value() &&
      !image.uid.has_value() && !image.username.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "container has runAsNonRoot and image has non-numeric user (",
        image.username, "), cannot verify user is non-root (",
        PodRef(pod.metadata()), ", container: ", spec.name(), ")"));
  }
  if (absl::Status s = CheckRunAsNonRoot(sc, pod.metadata(), spec.name(),
                                         image.uid.value_or(0));
      !s.ok()) {
    return s;
  }

  v1::ContainerConfig config;
  config.mutable_metadata()->set_name(spec.name());
  config.mutable_metadata()->set_attempt(static_cast<uint32_t>(attempt));
  config.mutable_image()->set_image(image.id);
  for (const std::string& a : spec.command()) config.add_command(a);
  for (const std::string& a : spec.args()) config.add_args(a);
  config.set_working_dir(spec.working_dir());
  for (const api::EnvVar& e : spec.env()) {
    v1::KeyValue* kv = config.add_envs();
    kv->set_key(e.name());
    kv->set_value(e.value());
  }
  for (const std::string& e : accelerators.env) {
    v1::KeyValue* kv = config.add_envs();
    const size_t eq = e.find('=');
    kv->set_key(e.substr(0, eq));
    kv->set_value(eq == std::string::npos ? "" : e.substr(eq + 1));
  }
  auto add_mount = [&config](const auto& m) {
    v1::Mount* mount = config.add_mounts();
    mount->set_host_path(m.host_path);
    mount->set_container_path(m.container_path);
    mount->set_readonly(m.read_only);
  };
  for (const HostMount& m : mounts) add_mount(m);
  for (const AcceleratorMount& m : accelerators.mounts) add_mount(m);
  // The runtime makes each node in the container and allows it in the
  // device cgroup (containers-cri.md §5: no CDI in containerd 1.6).
  for (const AcceleratorDevice& d : accelerators.devices) {
    v1::Device* device = config.add_devices();
    device->set_container_path(d.container_path);
    device->set_host_path(d.host_path);
    device->set_permissions("rwm");
  }
  (*config.mutable_labels())[kPodUidLabel] = pod.metadata().uid();
  (*config.mutable_labels())[kContainerLabel] = spec.name();
  if (init) (*config.mutable_labels())[kInitLabel] = "true";
  config.set_log_path(ContainerLogName(spec.name()));

  v1::LinuxContainerConfig* linux = config.mutable_linux();
  const std::string field = absl::StrCat(
      init ? "spec.initContainers[" : "spec.containers[", spec.name(), "]");
  if (absl::Status s = SetResources(spec, field, linux->mutable_resources());
      !s.ok()) {
    return s;
  }
  v1::LinuxContainerSecurityContext* csc = linux->mutable_security_context();
  SetNamespaces(pod.spec(), csc->mutable_namespace_options());
  // kubelet always names the user (getImageUser): the spec's (or the
  // default above), else the image's uid or name, else root. The image's
  // group is then not used unless runAsGroup says so (containers-cri.md
  // §9.9).
  if (sc.run_as_user.has_value()) {
    csc->mutable_run_as_user()->set_value(*sc.run_as_user);
  } else if (image.uid.has_value()) {
    csc->mutable_run_as_user()->set_value(*image.uid);
  } else if (!image.username.empty()) {
    csc->set_run_as_username(image.username);
  } else {
    csc->mutable_run_as_user()->set_value(0);
  }
  if (sc.run_as_group.has_value()) {
    csc->mutable_run_as_group()->set_value(*sc.run_as_group);
  }
  for (int64_t g : Groups(pod.spec().security_context())) {
    csc->add_supplemental_groups(g);
  }
  csc->set_privileged(sc.privileged);
  csc->set_readonly_rootfs(sc.read_only_root_filesystem);
  if (sc.allow_privilege_escalation.has_value()) {
    csc->set_no_new_privs(!*sc.allow_privilege_escalation);
  }
  if (!sc.cap_add.empty() || !sc.cap_drop.empty()) {
    for (const std::string& c : sc.cap_add) {
      csc->mutable_capabilities()->add_add_capabilities(c);
    }
    for (const std::string& c : sc.cap_drop) {
      csc->mutable_capabilities()->add_drop_capabilities(c);
    }
  }
  // NET_RAW leaves the CRI runtime's default set (containerd 1's has it;
  // containerd 2's, Docker's and the process and oci runtimes' do not):
  // every pod shares the host's network, where raw sockets would sniff and
  // spoof its neighbours' traffic. A container gets it by adding it (or
  // ALL), or privileged.
  if (!sc.privileged && !Names(sc.cap_add, "NET_RAW") &&
      !Names(sc.cap_add, "ALL") && !Names(sc.cap_drop, "ALL") &&
      !Names(sc.cap_drop, "NET_RAW")) {
    csc->mutable_capabilities()->add_drop_capabilities("NET_RAW");
  }
  // Only a profile the pod asks for is sent: a present, empty one would
  // read as RuntimeDefault (containers-cri.md §1.2).
  const api::SeccompProfile& seccomp =
      spec.security_context().has_seccomp_profile()
          ? spec.security_context().seccomp_profile()
          : pod.spec().security_context().seccomp_profile();
  if (!seccomp.type().empty()) {
    SetProfile(seccomp.type(), seccomp.localhost_profile(),
               csc->mutable_seccomp());
  }
  const api::AppArmorProfile& apparmor =
      spec.security_context().has_app_armor_profile()
          ? spec.security_context().app_armor_profile()
          : pod.spec().security_context().app_armor_profile();
  if (!apparmor.type().empty()) {
    SetProfile(apparmor.type(), apparmor.localhost_profile(),
               csc->mutable_apparmor());
  }
  return config;
}

}  // namespace jobset::agent::cri
