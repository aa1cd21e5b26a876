#include "agent/runtime/cri/container_start.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "agent/runtime/container_lifecycle.h"
#include "agent/runtime/cri/cri_config.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/progress_dir.h"
#include "agent/runtime/sub_path.h"
#include "agent/runtime/volumes.h"
#include "common/log.h"

namespace jobset::agent::cri {

namespace v1 = ::runtime::v1;

namespace {

// File descriptors held open until the runtime has mounted what they name.
class HeldFds {
 public:
  HeldFds() = default;
  HeldFds(const HeldFds&) = delete;
  HeldFds& operator=(const HeldFds&) = delete;
  ~HeldFds() { Close(); }

  void Hold(int fd) { fds_.push_back(fd); }
  void Close() {
    for (int fd : fds_) close(fd);
    fds_.clear();
  }

 private:
  std::vector<int> fds_;
};

// Appends `spec`'s volume mounts to `mounts`, opening each subPath beneath
// its volume (held in `held`).
absl::Status AddVolumeMounts(const std::string& pod_dir,
                             const api::PodSpec& pod,
                             const api::Container& spec, HeldFds* held,
                             std::vector<HostMount>* mounts) {
  absl::StatusOr<std::vector<ContainerMount>> volume_mounts =
      ContainerMounts(pod_dir, pod.volumes(), spec);
  if (!volume_mounts.ok()) return volume_mounts.status();
  for (const ContainerMount& m : *volume_mounts) {
    std::string source = m.source;
    if (!m.sub_path.empty()) {
      absl::StatusOr<int> fd =
          OpenBeneath(m.source, m.sub_path,
                      absl::StrCat("volumeMounts[", m.index, "].subPath"));
      if (!fd.ok()) return fd.status();
      held->Hold(*fd);
      source = absl::StrCat("/proc/", getpid(), "/fd/", *fd);
    }
    mounts->push_back({source, m.destination, m.read_only});
  }
  return absl::OkStatus();
}

}  // namespace

ContainerStarter::ContainerStarter(const CriClient* client,
                                   const api::PodAssignment& assignment,
                                   const PodSandbox& sandbox,
                                   std::string pod_dir, std::string logs_dir,
                                   AcceleratorOptions accelerators,
                                   int64_t default_pod_uid)
    : client_(client),
      assignment_(assignment),
      sandbox_(sandbox),
      pod_dir_(std::move(pod_dir)),
      logs_dir_(std::move(logs_dir)),
      accelerators_(std::move(accelerators)),
      default_pod_uid_(default_pod_uid) {}

void ContainerStarter::RemovePrevious(CriContainer& c) {
  if (c.id.empty()) return;
  v1::RemoveContainerRequest request;
  request.set_container_id(c.id);
  if (absl::StatusOr<v1::RemoveContainerResponse> r =
          client_->RemoveContainer(request);
      !r.ok()) {
    JOBSET_LOG(WARNING) << "pod " << assignment_.pod().metadata().uid() << ": "
                        << r.status();
  }
  c.id.clear();
}

StartOutcome ContainerStarter::Start(CriContainer& c, absl::Time now) {
  const std::string& uid = assignment_.pod().metadata().uid();
  std::vector<HostMount> mounts = {
      {absl::StrCat(pod_dir_, "/", kHostsFile), "/etc/hosts", false}};
  HeldFds held;
  const absl::Status mount_error = AddVolumeMounts(
      pod_dir_, assignment_.pod().spec(), c.spec, &held, &mounts);
  auto failed = [&](absl::string_view reason, absl::string_view error) {
    held.Close();
    c.record = reason == "CreateContainerConfigError"
                   ? ConfigFailed(std::move(c.record), error)
                   : StartFailed(std::move(c.record), error, now);
    StartOutcome outcome;
    outcome.kind = StartOutcome::Kind::kFailed;
    outcome.reason = std::string(reason);
    outcome.message = absl::StrCat(c.init ? "init container " : "container ",
                                   c.spec.name(), ": ", error);
    return outcome;
  };
  if (!mount_error.ok()) return failed("StartError", mount_error.message());
  // Last, so that no volume shadows it (a pod from before it has none).
  if (struct stat st; stat(ProgressDirOf(pod_dir_).c_str(), &st) == 0) {
    mounts.push_back({ProgressDirOf(pod_dir_), kProgressMountPath, false});
  }
  absl::StatusOr<AcceleratorSetup> accelerators =
      AcceleratorSetupFor(assignment_.devices(), accelerators_);
  if (!accelerators.ok()) {
    return failed("StartError", accelerators.status().message());
  }
  if (!accelerators->driver_source.empty() && c.record.restart_count == 0) {
    JOBSET_LOG(INFO) << "pod " << uid << ": container " << c.spec.name()
                     << " gets the NVIDIA driver from "
                     << accelerators->driver_source;
  }
  absl::StatusOr<v1::ContainerConfig> config =
      ContainerConfigFor(assignment_, c.spec, c.init, c.record.restart_count,
                         c.image, default_pod_uid_, mounts, *accelerators);
  if (!config.ok()) {
    const bool config_error =
        config.status().code() == absl::StatusCode::kFailedPrecondition;
    return failed(config_error ? "CreateContainerConfigError" : "StartError",
                  config.status().message());
  }
  // The previous attempt goes once its successor is made.
  RemovePrevious(c);
  // The runtime appends to the log; made here first so that it is private
  // (containerd would make it 0640).
  const std::string log =
      absl::StrCat(logs_dir_, "/", ContainerLogName(c.spec.name()));
  if (int fd =
          open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      fd >= 0) {
    close(fd);
  }
  v1::CreateContainerRequest create;
  create.set_pod_sandbox_id(sandbox_.id());
  *create.mutable_config() = *std::move(config);
  *create.mutable_sandbox_config() = sandbox_.config();
  absl::StatusOr<v1::CreateContainerResponse> created =
      client_->CreateContainer(create);
  if (!created.ok()) {
    held.Close();
    // kubelet's CreateContainerError: tried again after a back-off.
    c.record.reason = "CreateContainerError";
    c.record.message = std::string(created.status().message());
    c.record.backoff.next_start = now + c.record.backoff.delay;
    c.record.backoff.delay = std::min(2 * c.record.backoff.delay, kBackoffCap);
    StartOutcome outcome;
    outcome.kind = StartOutcome::Kind::kRetry;
    return outcome;
  }
  c.id = created->container_id();
  v1::StartContainerRequest start;
  start.set_container_id(c.id);
  absl::StatusOr<v1::StartContainerResponse> started =
      client_->StartContainer(start);
  held.Close();
  if (!started.ok()) return failed("StartError", started.status().message());
  c.record = Started(std::move(c.record), now);
  return StartOutcome{};
}

}  // namespace jobset::agent::cri
