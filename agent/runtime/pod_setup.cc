#include "agent/runtime/pod_setup.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/runtime/accelerator_devices.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/pod_input.h"
#include "agent/runtime/process_launcher.h"
#include "agent/runtime/progress_dir.h"
#include "agent/runtime/runc_launcher.h"
#include "agent/runtime/volumes.h"
#include "api/quantity.h"
#include "common/log.h"

namespace jobset::agent {
namespace {

absl::Status AddContainer(const PodShimOptions& options,
                          const api::Container& spec, bool init, int index,
                          std::set<std::string>* names, PodSetup* pod) {
  const std::string field = absl::StrCat(
      init ? "spec.initContainers[" : "spec.containers[", index, "]");
  if (!names->insert(spec.name()).second) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".name: duplicate name \"", spec.name(), "\""));
  }
  int64_t memory_limit = 0;
  auto it = spec.resources().limits().find("memory");
  if (it != spec.resources().limits().end()) {
    absl::StatusOr<api::Quantity> q = api::ParseQuantity(it->second);
    if (!q.ok() || q->Value() <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".resources.limits.memory: bad quantity \"",
                       it->second, "\""));
    }
    memory_limit = q->Value();
  }
  auto c = std::make_unique<ShimContainer>(
      spec, init, absl::StrCat(options.logs_dir, "/", spec.name(), ".log"),
      options.log_cap_bytes);
  c->memory_limit = memory_limit;
  (init ? pod->inits : pod->mains).push_back(std::move(c));
  return absl::OkStatus();
}

// Sets `*private_mounts` once the shim is in a mount namespace of its own.
absl::Status SetUpNamespaces(const std::string& pod_dir,
                             const std::string& hostname,
                             bool* private_mounts) {
  // IPC, as the hostname, is the pod's: its containers share it, as a
  // Kubernetes pod's do.
  if (unshare(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC) != 0) {
    // Root without CAP_SYS_ADMIN (an unprivileged container): run on.
    JOBSET_LOG(WARNING) << "unshare: " << strerror(errno)
                        << "; running without namespaces";
    return absl::OkStatus();
  }
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return absl::InternalError(
        absl::StrCat("making mounts private: ", strerror(errno)));
  }
  *private_mounts = true;
  if (sethostname(hostname.data(), hostname.size()) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot set hostname \"", hostname, "\": ", strerror(errno)));
  }
  const std::string hosts = absl::StrCat(pod_dir, "/", kHostsFile);
  struct stat st;
  if (stat("/etc/hosts", &st) == 0 && S_ISREG(st.st_mode)) {
    if (mount(hosts.c_str(), "/etc/hosts", nullptr, MS_BIND, nullptr) != 0) {
      return absl::InternalError(
          absl::StrCat("bind-mounting ", hosts, ": ", strerror(errno)));
    }
  } else {
    JOBSET_LOG(WARNING)
        << "/etc/hosts is not a regular file; the pod sees the host's";
  }
  return absl::OkStatus();
}

// The agent's work dir: <work_dir>/pods/<uid> is the pod's.
std::string WorkDirOf(const std::string& pod_dir) {
  std::string dir = pod_dir;
  for (int i = 0; i < 2; ++i) {
    const size_t slash = dir.rfind('/');
    dir = slash == std::string::npos || slash == 0 ? "/" : dir.substr(0, slash);
  }
  return dir;
}

// Where the pod's containers mount volumes (subPath mounts, which process
// mode refuses, aside), and whether each is a file: a hostPath to a file.
std::vector<std::pair<std::string, bool>> MountPoints(
    const api::PodSpec& spec) {
  std::vector<std::pair<std::string, bool>> points;
  for (const auto* list : {&spec.init_containers(), &spec.containers()}) {
    for (const api::Container& c : *list) {
      for (const api::VolumeMount& vm : c.volume_mounts()) {
        if (!vm.sub_path().empty()) continue;
        bool file = false;
        for (const api::Volume& v : spec.volumes()) {
          if (v.name() != vm.name() || !v.has_host_path()) continue;
          struct stat st;
          file = v.host_path().type() == "FileOrCreate" ||
                 (stat(v.host_path().path().c_str(), &st) == 0 &&
                  !S_ISDIR(st.st_mode));
        }
        points.emplace_back(vm.mount_path(), file);
      }
    }
  }
  return points;
}

absl::Status SetUpRoot(const PodShimOptions& options, PodSetup* pod) {
  PodRootSpec spec;
  spec.pod_dir = options.pod_dir;
  spec.work_dir = WorkDirOf(options.pod_dir);
  spec.hosts_file = absl::StrCat(options.pod_dir, "/", kHostsFile);
  spec.progress_dir = ProgressDirOf(options.pod_dir);
  spec.devices = AcceleratorDevices(pod->assignment.devices(),
                                    options.accelerators.dev_root);
  spec.mount_points = MountPoints(pod->assignment.pod().spec());
  spec.host_mounts = options.pod_host_mounts;
  absl::StatusOr<std::unique_ptr<PodRoot>> root = PodRoot::Build(spec);
  if (!root.ok()) return root.status();
  pod->root = *std::move(root);
  return absl::OkStatus();
}

absl::Status SetUpCgroups(const PodShimOptions& options, PodSetup* pod) {
  absl::StatusOr<CgroupLayout> layout = DetectCgroupLayout();
  if (!layout.ok()) {
    JOBSET_LOG(WARNING) << "no cgroups: " << layout.status().message();
    return absl::OkStatus();
  }
  pod->cgroups =
      std::make_unique<PodCgroups>(*layout, options.cgroup_root, pod->uid);
  pod->cgroup_dirs = pod->cgroups->PodDirs();
  // Recorded before they exist, so that Remove finds them even if the shim
  // dies half way.
  absl::Status s = WriteFileAtomic(
      absl::StrCat(options.pod_dir, "/", kCgroupsFile),
      absl::StrCat(absl::StrJoin(pod->cgroups->AllPodDirs(), "\n"), "\n"), 0600,
      Durability::kProcessCrash);  // No cgroup outlives its host.
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<std::string>> created =
      pod->cgroups->CreatePod(options.pids_max);
  if (!created.ok()) {
    JOBSET_LOG(WARNING) << "cgroups: " << created.status().message()
                        << "; running without limits";
    pod->cgroups.reset();
  }
  return absl::OkStatus();
}

}  // namespace

ShimContainer::ShimContainer(const api::Container& container_spec, bool init,
                             const std::string& log_path, int64_t log_cap)
    : spec(container_spec),
      record(NewContainer(init)),
      output(log_path, log_cap),
      probe(container_spec) {}

absl::Status SetUpPod(const PodShimOptions& options, PodSetup* pod) {
  absl::Status read = ReadProtoFile(
      absl::StrCat(options.pod_dir, "/", kAssignmentFile), &pod->assignment);
  if (!read.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read the assignment: ", read.message()));
  }
  // The runtime checked it before writing it; the shim builds paths from it
  // too, so it checks again.
  if (absl::Status s = CheckAssignment(pod->assignment); !s.ok()) return s;
  const api::PodSpec& spec = pod->assignment.pod().spec();
  const api::ObjectMeta& metadata = pod->assignment.pod().metadata();
  pod->uid = metadata.uid();  // Checked above: never empty.
  pod->hostname = spec.hostname().empty() ? metadata.name() : spec.hostname();
  if (pod->hostname.empty()) pod->hostname = pod->uid;
  if (spec.has_termination_grace_period_seconds()) {
    pod->grace = absl::Seconds(
        std::max<int64_t>(0, spec.termination_grace_period_seconds()));
  }
  absl::StatusOr<RestartPolicy> policy =
      ParseRestartPolicy(spec.restart_policy());
  if (!policy.ok()) return policy.status();
  pod->restart_policy = *policy;
  if (spec.containers().empty()) {
    return absl::InvalidArgumentError("spec.containers: pod has no containers");
  }
  if (absl::Status s = MakeDirIfMissing(options.logs_dir); !s.ok()) return s;
  std::set<std::string> names;
  for (int i = 0; i < spec.init_containers_size(); ++i) {
    absl::Status s =
        AddContainer(options, spec.init_containers(i), true, i, &names, pod);
    if (!s.ok()) return s;
  }
  for (int i = 0; i < spec.containers_size(); ++i) {
    absl::Status s =
        AddContainer(options, spec.containers(i), false, i, &names, pod);
    if (!s.ok()) return s;
  }
  // The pod's /etc/hosts (the agent rewrites it in place as the attempt's
  // host table grows), from the host table as it is now: the agent may have
  // grown it since the assignment was read above.
  if (absl::Status s = WriteHostsFile(options.pod_dir, &pod->assignment);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = MakeDirIfMissing(absl::StrCat(options.pod_dir, "/work"));
      !s.ok()) {
    return s;
  }
  const bool is_root = geteuid() == 0;
  if (options.oci && !is_root) {
    return absl::FailedPreconditionError("oci mode needs root to run runc");
  }
  bool private_mounts = false;
  if (is_root && !options.oci) {
    absl::Status ns =
        SetUpNamespaces(options.pod_dir, pod->hostname, &private_mounts);
    if (!ns.ok()) return ns;
  }
  if (is_root) {
    // A Memory emptyDir's or a secret volume's tmpfs lives in the shim's own
    // mount namespace, so that it goes when the shim does, whatever ends it
    // (and a secret's bytes are never on the host's disk).
    if (HasTmpfsVolume(spec) && !private_mounts) {
      if (unshare(CLONE_NEWNS) != 0 ||
          mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        return absl::InternalError(absl::StrCat(
            "a mount namespace for Memory emptyDir and secret volumes: ",
            strerror(errno)));
      }
    }
    // The default workingDir: writable by the pod's users as an emptyDir.
    if (absl::Status s =
            OwnPodWritableDir(absl::StrCat(options.pod_dir, "/work"), spec);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = PrepareEmptyDirs(options.pod_dir, spec); !s.ok()) {
      return s;
    }
    if (absl::Status s = PrepareConfigVolumes(options.pod_dir, spec,
                                              pod->assignment.config_volumes());
        !s.ok()) {
      return s;
    }
    if (private_mounts) {
      if (absl::Status s = SetUpRoot(options, pod); !s.ok()) return s;
    }
    return SetUpCgroups(options, pod);
  }
  return absl::OkStatus();
}

std::unique_ptr<ContainerLauncher> MakeLauncher(const PodShimOptions& options,
                                                const PodSetup& pod) {
  const std::optional<int64_t> default_uid = DefaultUserFor(
      options.default_pod_uid, pod.assignment.pod_security_level());
  if (!options.oci) {
    return std::make_unique<ProcessLauncher>(
        options.pod_dir, &pod.assignment.pod(), pod.cgroups.get(),
        pod.root.get(), default_uid);
  }
  RuncLauncher::Options o;
  o.runc = options.runc;
  o.pod_dir = options.pod_dir;
  o.image_dir = options.image_dir;
  o.uid = pod.uid;
  o.hostname = pod.hostname;
  o.cgroup_root = options.cgroup_root;
  o.pids_max = options.pids_max;
  o.pod = &pod.assignment.pod();
  o.devices = &pod.assignment.devices();
  o.accelerators = options.accelerators;
  o.default_uid = default_uid;
  return std::make_unique<RuncLauncher>(std::move(o), pod.cgroups.get());
}

}  // namespace jobset::agent
