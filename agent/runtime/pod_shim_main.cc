// jobset-pod-shim: supervises one pod; started detached by ShimRuntime.
//
//   jobset-pod-shim --pod_dir=DIR --logs_dir=DIR [--mode=process|oci]
//       [--image_dir=DIR] [--runc=PATH] [--device_root=DIR]
//       [--driver_root=DIR] [--cdi_dirs=DIR,...]
//       [--cgroup_root=PATH] [--log_cap_bytes=N] [--pids_max=N]
//       [--default_pod_uid=N]
//
// It expects SIGTERM and SIGCHLD blocked (the runtime starts it so, closing
// the window before it reads them from a signalfd) and fd 3, when open, to
// hold the flock on <pod_dir>/shim.lock. Its stderr is <pod_dir>/shim.log.

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "agent/runtime/pod_shim.h"
#include "common/clock.h"
#include "common/log.h"

ABSL_FLAG(std::string, pod_dir, "", "the pod's directory");
ABSL_FLAG(std::string, logs_dir, "", "where <container>.log files go");
ABSL_FLAG(std::string, mode, "process", "process or oci");
ABSL_FLAG(std::string, image_dir, "", "oci: <image_dir>/<image>/rootfs");
ABSL_FLAG(std::string, runc, "runc", "oci: the runc binary");
ABSL_FLAG(std::string, device_root, "/dev",
          "oci: where the pod's accelerator device nodes are");
ABSL_FLAG(std::string, driver_root, "/",
          "oci: where the NVIDIA driver's libraries are (under usr/lib...)");
ABSL_FLAG(std::vector<std::string>, cdi_dirs,
          std::vector<std::string>({"/etc/cdi", "/var/run/cdi"}),
          "oci: where CDI specs are, lowest rank first");
ABSL_FLAG(std::string, cgroup_root, "jobset-pods",
          "relative (below the shim's own cgroup) or absolute cgroup path");
ABSL_FLAG(int64_t, log_cap_bytes, 10 << 20,
          "size at which a container log is rotated to .log.1");
ABSL_FLAG(int64_t, pids_max, 4096, "pids.max of the pod (0: none)");
ABSL_FLAG(
    std::string, lease_file, "",
    "the agent's lease file: stop the pod once it is not renewed in time");

ABSL_FLAG(int64_t, default_pod_uid, jobset::agent::kDefaultPodUid,
          "uid (and gid) of a container that sets no runAsUser, outside "
          "privileged namespaces; 0: the shim's own");

ABSL_FLAG(std::vector<std::string>, pod_host_mounts, {},
          "process: host directories bound read-write into every pod");

int main(int argc, char** argv) {
  // First of all, so that a stop request is never the default action.
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  // The inherited lock fd must not reach the containers.
  if (fcntl(3, F_GETFD) >= 0) fcntl(3, F_SETFD, FD_CLOEXEC);
  absl::ParseCommandLine(argc, argv);
  jobset::agent::PodShimOptions options;
  options.pod_dir = absl::GetFlag(FLAGS_pod_dir);
  options.logs_dir = absl::GetFlag(FLAGS_logs_dir);
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (options.pod_dir.empty() || options.logs_dir.empty() ||
      (mode != "process" && mode != "oci")) {
    JOBSET_LOG(ERROR) << "usage: jobset-pod-shim --pod_dir=DIR --logs_dir=DIR "
                         "[--mode=process|oci]";
    return 2;
  }
  options.oci = mode == "oci";
  options.image_dir = absl::GetFlag(FLAGS_image_dir);
  options.runc = absl::GetFlag(FLAGS_runc);
  options.accelerators.dev_root = absl::GetFlag(FLAGS_device_root);
  options.accelerators.driver_root = absl::GetFlag(FLAGS_driver_root);
  options.accelerators.cdi_dirs = absl::GetFlag(FLAGS_cdi_dirs);
  options.cgroup_root = absl::GetFlag(FLAGS_cgroup_root);
  options.log_cap_bytes = absl::GetFlag(FLAGS_log_cap_bytes);
  options.pids_max = absl::GetFlag(FLAGS_pids_max);
  options.lease_file = absl::GetFlag(FLAGS_lease_file);
  options.default_pod_uid = absl::GetFlag(FLAGS_default_pod_uid);
  options.pod_host_mounts = absl::GetFlag(FLAGS_pod_host_mounts);
  if (options.default_pod_uid < 0 || options.default_pod_uid >= 4294967295) {
    JOBSET_LOG(ERROR) << "--default_pod_uid=" << options.default_pod_uid
                      << ": not a uid (0 to 4294967294)";
    return 2;
  }
  return jobset::agent::RunPodShim(options, jobset::RealClock::Get());
}
