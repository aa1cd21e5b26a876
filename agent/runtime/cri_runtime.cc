#include "agent/runtime/cri_runtime.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/runtime/cri/cri_client.h"
#include "agent/runtime/cri/cri_config.h"
#include "agent/runtime/cri/pod_worker.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/pod_input.h"
#include "agent/runtime/progress_dir.h"
#include "agent/runtime/volumes.h"
#include "common/clock.h"
#include "common/log.h"

namespace jobset::agent {

using cri::CriClient;
using cri::CriPodWorker;

CriRuntime::CriRuntime(Options options, std::shared_ptr<const CriClient> client,
                       Clock* clock)
    : options_(std::move(options)), client_(std::move(client)), clock_(clock) {}

CriRuntime::~CriRuntime() {
  std::map<std::string, std::unique_ptr<CriPodWorker>> pods;
  {
    absl::MutexLock lock(&mu_);
    pods.swap(pods_);
  }
  for (auto& [uid, worker] : pods) worker->Shutdown(false);
}

absl::StatusOr<std::unique_ptr<CriRuntime>> CriRuntime::Create(
    const Options& options) {
  if (options.work_dir.empty()) {
    return absl::InvalidArgumentError("cri runtime: work_dir is empty");
  }
  if (options.endpoint.empty()) {
    return absl::InvalidArgumentError("cri runtime: --cri_endpoint is empty");
  }
  CriClient::Options client_options;
  client_options.endpoint = options.endpoint;
  client_options.request_timeout = options.request_timeout;
  client_options.pull_timeout = options.pull_timeout;
  absl::StatusOr<std::unique_ptr<CriClient>> client =
      CriClient::Connect(client_options);
  if (!client.ok()) return client.status();
  for (const char* sub : {"", "/pods", "/logs"}) {
    if (absl::Status s = MakeDirIfMissing(options.work_dir + sub); !s.ok()) {
      return s;
    }
  }
  JOBSET_LOG(INFO) << "cri runtime: " << (*client)->runtime_name() << " "
                   << (*client)->runtime_version() << " at "
                   << options.endpoint;
  // The one place the pods' clock is chosen.
  Clock* clock = options.clock != nullptr ? options.clock : RealClock::Get();
  std::unique_ptr<CriRuntime> runtime(
      new CriRuntime(options, *std::move(client), clock));
  std::error_code ec;
  absl::MutexLock lock(&runtime->mu_);
  for (const auto& entry :
       std::filesystem::directory_iterator(options.work_dir + "/pods", ec)) {
    const std::string uid = entry.path().filename().string();
    if (ValidPodUid(uid)) runtime->TakeUp(uid);
  }
  return runtime;
}

std::string CriRuntime::PodDir(const std::string& uid) const {
  return absl::StrCat(options_.work_dir, "/pods/", uid);
}

std::unique_ptr<CriPodWorker> CriRuntime::NewWorker(
    api::PodAssignment assignment) const {
  const std::string& uid = assignment.pod().metadata().uid();
  cri::CriPodWorkerOptions o;
  o.pod_dir = PodDir(uid);
  o.logs_dir = absl::StrCat(options_.work_dir, "/logs/", uid);
  o.sync_period = options_.sync_period;
  o.log_cap_bytes = options_.log_cap_bytes;
  o.pull_backoff_start = options_.pull_backoff_start;
  o.pull_backoff_cap = options_.pull_backoff_cap;
  o.accelerators = options_.accelerators;
  o.default_pod_uid = options_.default_pod_uid;
  return std::make_unique<CriPodWorker>(client_, clock_, std::move(o),
                                        std::move(assignment));
}

void CriRuntime::TakeUp(const std::string& uid) {
  api::PodAssignment assignment;
  const std::string dir = PodDir(uid);
  if (absl::Status s =
          ReadProtoFile(absl::StrCat(dir, "/", kAssignmentFile), &assignment);
      !s.ok() || !CheckAssignment(assignment).ok() ||
      assignment.pod().metadata().uid() != uid) {
    JOBSET_LOG(WARNING) << "cri runtime: pod directory " << dir
                        << " holds no valid assignment; left alone";
    return;
  }
  std::unique_ptr<CriPodWorker> worker = NewWorker(std::move(assignment));
  api::PodStatus final_status;
  if (ReadProtoFile(absl::StrCat(dir, "/", kStatusFile), &final_status).ok() &&
      IsFinalPhase(final_status.phase())) {
    worker->Finished(std::move(final_status));
  } else {
    worker->Run(/*adopt=*/true);
  }
  pods_[uid] = std::move(worker);
}

std::string CriRuntime::ProgressDir(const std::string& uid) const {
  if (!ValidPodUid(uid)) return "";
  return ProgressDirOf(PodDir(uid));
}

absl::Status CriRuntime::Start(const api::PodAssignment& assignment) {
  if (absl::Status s = CheckAssignment(assignment); !s.ok()) return s;
  const std::string& uid = assignment.pod().metadata().uid();
  absl::MutexLock lock(&mu_);
  if (pods_.contains(uid)) {
    return absl::AlreadyExistsError(absl::StrCat("pod ", uid, " is known"));
  }
  const std::string dir = PodDir(uid);
  if (mkdir(dir.c_str(), 0700) != 0) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(absl::StrCat("pod ", uid, " is known"));
    }
    return absl::InternalError(
        absl::StrCat("mkdir ", dir, ": ", strerror(errno)));
  }
  const std::string logs = absl::StrCat(options_.work_dir, "/logs/", uid);
  api::PodAssignment recorded = assignment;
  absl::Status s = MakeDirIfMissing(logs);
  if (s.ok()) s = PrepareEmptyDirs(dir, assignment.pod().spec());
  if (s.ok()) s = MakeProgressDir(dir, assignment.pod().spec());
  SetProgressEnv(ProgressFileInPod(dir, /*mounted=*/true),
                 recorded.mutable_pod()->mutable_spec());
  if (s.ok()) {
    s = PrepareConfigVolumes(dir, assignment.pod().spec(),
                             assignment.config_volumes());
  }
  // The intent, durable before anything runs; then the hosts file from it.
  if (s.ok()) {
    s = WriteProtoAtomic(absl::StrCat(dir, "/", kAssignmentFile), recorded);
  }
  if (s.ok()) s = FsyncDir(options_.work_dir + "/pods");
  if (s.ok()) s = WriteHostsFile(dir, &recorded);
  if (!s.ok()) {
    UnmountVolumes(dir, assignment.pod().spec());
    (void)RemoveTree(dir);
    return s;
  }
  std::unique_ptr<CriPodWorker> worker = NewWorker(std::move(recorded));
  worker->Run(/*adopt=*/false);
  pods_[uid] = std::move(worker);
  return absl::OkStatus();
}

absl::Status CriRuntime::Stop(const std::string& uid, absl::Duration grace) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(uid);
  if (it == pods_.end()) {
    return absl::NotFoundError(absl::StrCat("pod ", uid, " is not known"));
  }
  it->second->RequestStop(grace);
  return absl::OkStatus();
}

absl::Status CriRuntime::Remove(const std::string& uid) {
  if (!ValidPodUid(uid)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad pod uid \"", uid, "\""));
  }
  std::unique_ptr<CriPodWorker> worker;
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(uid);
    if (it == pods_.end()) return absl::OkStatus();
    worker = std::move(it->second);
    pods_.erase(it);
  }
  worker->Shutdown(/*remove=*/true);
  return RemoveTree(PodDir(uid));
}

std::map<std::string, std::vector<api::PodEvent>> CriRuntime::TakeEvents() {
  absl::MutexLock lock(&mu_);
  std::map<std::string, std::vector<api::PodEvent>> out;
  for (const auto& [uid, worker] : pods_) {
    std::vector<api::PodEvent> events = worker->TakeEvents();
    if (!events.empty()) out[uid] = std::move(events);
  }
  return out;
}

std::vector<PodState> CriRuntime::List() {
  absl::MutexLock lock(&mu_);
  std::vector<PodState> out;
  out.reserve(pods_.size());
  for (const auto& [uid, worker] : pods_) {
    out.push_back({uid, worker->Status()});
  }
  return out;
}

absl::Status CriRuntime::UpdateHosts(
    const std::string& uid,
    const google::protobuf::RepeatedPtrField<api::HostEntry>& hosts) {
  if (!ValidPodUid(uid)) {
    return absl::NotFoundError(absl::StrCat("no pod \"", uid, "\""));
  }
  if (absl::Status s = CheckHostEntries("hosts", hosts); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  if (!pods_.contains(uid)) {
    return absl::NotFoundError(absl::StrCat("pod ", uid, " is not known"));
  }
  return UpdateHostsFile(PodDir(uid), hosts);
}

absl::Status CriRuntime::SetLease(absl::Duration lease) {
  if (lease <= absl::ZeroDuration()) return absl::OkStatus();
  return absl::UnimplementedError(
      "the cri runtime has no lease: the CRI runtime keeps pods running while "
      "the agent is down");
}

std::string CriRuntime::LogPath(const std::string& uid,
                                const std::string& container) const {
  if (!ValidPodUid(uid) || !CheckDnsLabel("container", container).ok()) {
    return "";
  }
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(uid);
    if (it != pods_.end()) {
      const api::PodSpec& spec = it->second->assignment().pod().spec();
      bool found = false;
      for (const auto* list : {&spec.init_containers(), &spec.containers()}) {
        for (const api::Container& c : *list) found |= c.name() == container;
      }
      if (!found) return "";
    }
  }
  const std::string path = absl::StrCat(options_.work_dir, "/logs/", uid, "/",
                                        cri::ContainerLogName(container));
  return access(path.c_str(), F_OK) == 0 ? path : "";
}

}  // namespace jobset::agent
