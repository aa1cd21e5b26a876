#include "agent/runtime/runc_launcher.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/runtime/accelerator_devices.h"
#include "agent/runtime/oci_bundle.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/process_launcher.h"
#include "agent/runtime/progress_dir.h"
#include "agent/runtime/security_context.h"
#include "agent/runtime/sub_path.h"
#include "agent/runtime/volumes.h"
#include "common/log.h"

namespace jobset::agent {

RuncLauncher::RuncLauncher(Options options, PodCgroups* cgroups)
    : options_(std::move(options)),
      cgroups_(cgroups),
      last_cap_(LastCapability()),
      available_caps_(PermittedCapabilities()) {}

RuncLauncher::~RuncLauncher() {
  while (!staged_.empty()) Unstage(staged_.begin()->first);
}

void RuncLauncher::Unstage(const std::string& name) {
  auto it = staged_.find(name);
  if (it == staged_.end()) return;
  for (const std::string& point : it->second) {
    (void)umount2(point.c_str(), MNT_DETACH);
  }
  staged_.erase(it);
}

absl::StatusOr<std::string> RuncLauncher::StageSubPath(
    const std::string& volume, const std::string& sub_path,
    const std::string& field, const std::string& staging) {
  if (!own_mount_namespace_) {
    // Private, so that nothing staged propagates back to the host.
    if (unshare(CLONE_NEWNS) != 0 ||
        mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      return absl::InternalError(absl::StrCat(
          "a mount namespace for subPath mounts: ", strerror(errno)));
    }
    own_mount_namespace_ = true;
  }
  // Opened in the namespace it is mounted in (a mount of another
  // namespace's fd is refused).
  absl::StatusOr<int> fd = OpenBeneath(volume, sub_path, field);
  if (!fd.ok()) return fd.status();
  struct stat st;
  if (fstat(*fd, &st) != 0) {
    const int err = errno;
    close(*fd);
    return absl::InternalError(absl::StrCat(field, ": stat: ", strerror(err)));
  }
  const std::string dir = absl::StrCat(options_.pod_dir, "/mounts");
  mkdir(dir.c_str(), 0700);
  (void)umount2(staging.c_str(), MNT_DETACH);
  (void)rmdir(staging.c_str());
  (void)unlink(staging.c_str());
  int made;
  if (S_ISDIR(st.st_mode)) {
    made = mkdir(staging.c_str(), 0700);
  } else {
    made = mknod(staging.c_str(), S_IFREG | 0600, 0);
  }
  if (made != 0) {
    const int err = errno;
    close(*fd);
    return absl::InternalError(
        absl::StrCat("creating ", staging, ": ", strerror(err)));
  }
  const std::string source = absl::StrCat("/proc/self/fd/", *fd);
  const int mounted =
      mount(source.c_str(), staging.c_str(), nullptr, MS_BIND, nullptr);
  const int err = errno;
  close(*fd);
  if (mounted != 0) {
    return absl::InternalError(
        absl::StrCat(field, ": bind-mounting ", sub_path, ": ", strerror(err)));
  }
  return staging;
}

std::string RuncLauncher::Id(const api::Container& spec) const {
  return absl::StrCat(options_.uid, "-", spec.name());
}

std::string RuncLauncher::Bundle(const api::Container& spec) const {
  return absl::StrCat(options_.pod_dir, "/oci/", spec.name());
}

void RuncLauncher::Runc(std::vector<std::string> args) const {
  std::vector<std::string> argv = {options_.runc, "--root",
                                   absl::StrCat(options_.pod_dir, "/runc")};
  argv.insert(argv.end(), args.begin(), args.end());
  RunCommand(argv);
}

absl::Status RuncLauncher::WriteBundle(const api::Container& spec,
                                       int64_t memory_limit) {
  Unstage(spec.name());
  // The images here name no user: without runAsUser (and no default user:
  // a privileged namespace), runc runs uid 0.
  EffectiveSecurity sc = Effective(options_.pod->spec(), spec);
  ApplyDefaultUser(options_.default_uid, &sc);
  if (absl::Status s =
          CheckRunAsNonRoot(sc, options_.pod->metadata(), spec.name(), 0);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::string> rootfs =
      ImageRootfs(options_.image_dir, spec.image());
  if (!rootfs.ok()) return rootfs.status();
  std::vector<std::string> argv = ContainerArgv(spec);
  if (argv.empty()) {
    return absl::InvalidArgumentError(
        "no command: images carry no entrypoint here; set command");
  }
  const std::string path_env = ContainerEnvValue(spec, "PATH");
  absl::StatusOr<std::string> exe = LookPath(*rootfs, argv[0], path_env);
  if (!exe.ok()) {
    return absl::NotFoundError(
        absl::StrCat(exe.status().message(), " (image ", spec.image(), ")"));
  }
  // runc searches the container's own PATH; without one it would not find a
  // bare name, so it gets the path found here.
  if (path_env.empty()) argv[0] = *exe;
  OciSpec oci;
  oci.args = argv;
  oci.env = ContainerEnv(spec);
  if (!spec.working_dir().empty()) {
    absl::StatusOr<std::string> wd = ResolveInRoot(*rootfs, spec.working_dir());
    struct stat st;
    if (!wd.ok() || stat(wd->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::NotFoundError(absl::StrCat(
          "cannot change to working directory \"", spec.working_dir(),
          "\": not a directory in image ", spec.image()));
    }
    oci.cwd = spec.working_dir();
  }
  oci.rootfs = *rootfs;
  oci.hostname = options_.hostname;
  oci.hosts_file = absl::StrCat(options_.pod_dir, "/", kHostsFile);
  oci.cgroups_path = cgroups_ != nullptr
                         ? cgroups_->RuncCgroupsPath(spec.name())
                         : absl::StrCat(options_.cgroup_root, "/", options_.uid,
                                        "/", spec.name());
  oci.memory_limit = memory_limit;
  oci.pids_limit = options_.pids_max;
  // Raising a hard limit needs CAP_SYS_RESOURCE: stay within the shim's.
  struct rlimit nofile;
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
      nofile.rlim_max != RLIM_INFINITY) {
    oci.nofile =
        std::min<int64_t>(oci.nofile, static_cast<int64_t>(nofile.rlim_max));
  }
  // The effective securityContext: user, groups, capabilities.
  oci.uid = static_cast<uint32_t>(sc.run_as_user.value_or(0));
  oci.gid = static_cast<uint32_t>(sc.run_as_group.value_or(0));
  for (gid_t g : SupplementaryGroups(sc)) oci.additional_gids.push_back(g);
  const CapabilitySets caps =
      ContainerCapabilities(sc, oci.uid, last_cap_, available_caps_);
  oci.bounding_caps = CapabilityNames(caps.bounding);
  oci.caps = CapabilityNames(caps.permitted);
  oci.ambient_caps = CapabilityNames(caps.ambient);
  oci.no_new_privileges = sc.allow_privilege_escalation.has_value() &&
                          !*sc.allow_privilege_escalation;
  oci.privileged = sc.privileged;
  if (sc.privileged) oci.devices = HostDevices();
  AcceleratorSetup accelerators;
  if (options_.devices != nullptr) {
    absl::StatusOr<AcceleratorSetup> setup =
        AcceleratorSetupFor(*options_.devices, options_.accelerators);
    if (!setup.ok()) return setup.status();
    accelerators = *std::move(setup);
    if (!accelerators.driver_source.empty()) {
      JOBSET_LOG(INFO) << "container " << spec.name()
                       << " gets the NVIDIA driver from "
                       << accelerators.driver_source;
    }
    // The agent's choice (never the pod's env); a privileged container has
    // the host's nodes already, unless dev_root names other ones.
    for (OciDevice& d : OciAcceleratorDevices(accelerators.devices)) {
      if (std::none_of(
              oci.devices.begin(), oci.devices.end(),
              [&](const OciDevice& have) { return have.path == d.path; })) {
        oci.devices.push_back(std::move(d));
      }
    }
    // The driver's env wins over the container's, as a CDI runtime's does.
    for (const std::string& e : accelerators.env) {
      const std::string key = e.substr(0, e.find('=') + 1);
      std::erase_if(oci.env, [&](const std::string& have) {
        return have.starts_with(key);
      });
      oci.env.push_back(e);
    }
  }
  // Volume and container names were checked (CheckAssignment) before the
  // pod was accepted; they are DNS labels, safe as path components. The
  // emptyDirs were made at pod setup (PrepareEmptyDirs).
  absl::StatusOr<std::vector<ContainerMount>> mounts =
      ContainerMounts(options_.pod_dir, options_.pod->spec().volumes(), spec);
  if (!mounts.ok()) return mounts.status();
  for (const ContainerMount& m : *mounts) {
    std::string source = m.source;
    if (!m.sub_path.empty()) {
      // A container of the pod may have planted a symlink in the volume:
      // the subPath is resolved beneath it, and runc binds what it
      // resolved to.
      absl::StatusOr<std::string> staged =
          StageSubPath(source, m.sub_path,
                       absl::StrCat("volumeMounts[", m.index, "].subPath"),
                       absl::StrCat(options_.pod_dir, "/mounts/", spec.name(),
                                    "-", m.index));
      if (!staged.ok()) return staged.status();
      staged_[spec.name()].push_back(*staged);
      source = *staged;
    }
    oci.mounts.push_back({source, m.destination, m.read_only});
  }
  for (const AcceleratorMount& m : accelerators.mounts) {
    oci.mounts.push_back({m.host_path, m.container_path, m.read_only});
  }
  // The progress directory (the agent made it when it started the pod), last
  // so that no volume shadows it.
  const std::string progress = ProgressDirOf(options_.pod_dir);
  if (struct stat st; stat(progress.c_str(), &st) == 0) {
    oci.mounts.push_back({progress, kProgressMountPath, false});
  }
  mkdir(absl::StrCat(options_.pod_dir, "/oci").c_str(), 0700);
  mkdir(Bundle(spec).c_str(), 0700);
  return WriteFileAtomic(absl::StrCat(Bundle(spec), "/config.json"),
                         OciConfigJson(oci));
}

absl::StatusOr<Launched> RuncLauncher::Launch(const api::Container& spec,
                                              int64_t memory_limit) {
  absl::Status bundle = WriteBundle(spec, memory_limit);
  if (!bundle.ok()) return bundle;
  const std::string runc_log = absl::StrCat(Bundle(spec), "/runc.log");
  (void)unlink(runc_log.c_str());
  // A container of the same id left from an earlier attempt.
  Runc({"delete", "-f", Id(spec)});
  const std::vector<std::string> argv = {
      options_.runc, "--root", absl::StrCat(options_.pod_dir, "/runc"),
      "--log",       runc_log, "--log-format",
      "json",        "run",    "--bundle",
      Bundle(spec),  Id(spec)};
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  absl::StatusOr<std::string> runc_path =
      LookPath("/", options_.runc, kDefaultPath);
  if (!runc_path.ok()) {
    close(out[0]);
    close(out[1]);
    return absl::NotFoundError(
        absl::StrCat("runc: ", runc_path.status().message()));
  }
  ExecFailure failure;
  const pid_t pid =
      ForkExec(*runc_path, argv, {absl::StrCat("PATH=", kDefaultPath)},
               Bundle(spec), out[1], {}, &failure);
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    return absl::InternalError(absl::StrCat("cannot execute ", *runc_path, ": ",
                                            strerror(failure.err)));
  }
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  return Launched{pid, out[0]};
}

void RuncLauncher::Terminate(const api::Container& spec, pid_t) {
  Runc({"kill", Id(spec), "TERM"});
}

void RuncLauncher::Kill(const api::Container& spec, pid_t) {
  Runc({"kill", "--all", Id(spec), "KILL"});
}

std::string RuncLauncher::Reaped(const api::Container& spec) {
  Unstage(spec.name());
  std::string last;
  absl::StatusOr<std::string> runc_log =
      ReadFileToString(absl::StrCat(Bundle(spec), "/runc.log"));
  if (runc_log.ok()) {
    for (absl::string_view line :
         absl::StrSplit(*runc_log, '\n', absl::SkipEmpty())) {
      if (absl::StrContains(line, "\"level\":\"error\"")) {
        last = std::string(line);
      }
    }
  }
  Runc({"delete", "-f", Id(spec)});
  return last;
}

void RuncLauncher::Remove(const api::Container& spec) {
  Unstage(spec.name());
  Runc({"delete", "-f", Id(spec)});
}

absl::StatusOr<pid_t> RuncLauncher::StartProbe(
    const api::Container& spec, pid_t,
    const std::vector<std::string>& command) const {
  std::vector<std::string> argv = {options_.runc, "--root",
                                   absl::StrCat(options_.pod_dir, "/runc"),
                                   "exec", Id(spec)};
  argv.insert(argv.end(), command.begin(), command.end());
  return SpawnCommand({std::move(argv),
                       {absl::StrCat("PATH=", kDefaultPath)},
                       "/",
                       kDefaultPath});
}

}  // namespace jobset::agent
