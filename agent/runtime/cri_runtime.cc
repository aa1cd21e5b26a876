#include "agent/runtime/cri_runtime.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "agent/runtime/accelerator_devices.h"
#include "agent/runtime/container_lifecycle.h"
#include "agent/runtime/cri/api.grpc.pb.h"
#include "agent/runtime/cri/cri_config.h"
#include "agent/runtime/cri/registry_auth.h"
#include "agent/runtime/pod_files.h"
#include "agent/runtime/pod_input.h"
#include "agent/runtime/readiness_probe.h"
#include "agent/runtime/sub_path.h"
#include "agent/runtime/volumes.h"
#include "api/image_reference.h"
#include "common/clock.h"
#include "common/log.h"
#include "grpcpp/grpcpp.h"

namespace jobset::agent {

namespace v1 = ::runtime::v1;

// The two CRI services on one channel.
struct CriStubs {
  std::unique_ptr<v1::RuntimeService::Stub> runtime;
  std::unique_ptr<v1::ImageService::Stub> images;
  absl::Duration timeout;
  absl::Duration pull_timeout;
};

namespace {

absl::Status FromGrpc(const grpc::Status& s, absl::string_view call) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat(call, ": ", s.error_message()));
}

void SetDeadline(grpc::ClientContext* ctx, absl::Duration timeout) {
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

// One CRI call with the standard deadline.
template <typename Req, typename Resp, typename Method>
absl::StatusOr<Resp> Call(const CriStubs& stubs, Method method,
                          absl::string_view name, const Req& req) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, stubs.timeout);
  Resp resp;
  grpc::Status s = method(&ctx, req, &resp);
  if (!s.ok()) return FromGrpc(s, name);
  return resp;
}

#define CRI_RUNTIME_CALL(stubs, Rpc, req)                                  \
  Call<v1::Rpc##Request, v1::Rpc##Response>(                               \
      stubs,                                                               \
      [&](grpc::ClientContext* c, const v1::Rpc##Request& r,               \
          v1::Rpc##Response* o) { return (stubs).runtime->Rpc(c, r, o); }, \
      #Rpc, req)
#define CRI_IMAGE_CALL(stubs, Rpc, req)                                   \
  Call<v1::Rpc##Request, v1::Rpc##Response>(                              \
      stubs,                                                              \
      [&](grpc::ClientContext* c, const v1::Rpc##Request& r,              \
          v1::Rpc##Response* o) { return (stubs).images->Rpc(c, r, o); }, \
      #Rpc, req)

absl::Time FromNanos(int64_t ns) {
  return ns <= 0 ? absl::InfinitePast() : absl::FromUnixNanos(ns);
}

// One container as the pod's worker drives it.
struct CriContainer {
  api::Container spec;
  bool init = false;
  ContainerRecord record;
  std::string id;  // the current attempt's CRI container ("" : none)
  cri::ImageFacts image;
  // Image pull back-off (kubelet's, per pod and image).
  absl::Time pull_next = absl::InfinitePast();
  absl::Duration pull_delay = absl::ZeroDuration();
  std::string last_pull_error;
  // The waiting reason (or "Pulled") its events last told of: an event is
  // recorded once per change (a back-off once per failed pull).
  std::string last_event_reason;
  ProbeSettings probe_settings;
  ProbeRecord probe;
  absl::Time next_probe = absl::InfiniteFuture();
  // When an exit by SIGKILL without a reason was first seen: the runtime's
  // OOM event can land after the exit (then the reason becomes OOMKilled),
  // so such an exit is taken only once it says so or kOomGrace has passed.
  absl::Time killed_seen = absl::InfiniteFuture();
};

constexpr absl::Duration kOomGrace = absl::Seconds(2);

}  // namespace

// Drives one pod (kubelet's pod worker): its own thread, which alone makes
// CRI calls for the pod; Stop, Remove and List talk to it under mu_.
class CriPodWorker {
 public:
  CriPodWorker(std::shared_ptr<CriStubs> stubs, const CriRuntime::Options& o,
               std::string pod_dir, std::string logs_dir,
               api::PodAssignment assignment);
  ~CriPodWorker();

  // Starts the thread (after a restart: first finds the pod's sandbox and
  // containers by label).
  void Run(bool adopt);
  // Publishes a final status read from disk: the worker has nothing to do.
  void Finished(api::PodStatus status);
  void RequestStop(absl::Duration grace);
  // Ends the thread, then removes every CRI object of the pod.
  void Shutdown(bool remove);
  api::PodStatus Status() const;
  // The events since the last call (kubelet's image events), oldest first.
  std::vector<api::PodEvent> TakeEvents();
  const api::PodAssignment& assignment() const { return assignment_; }

 private:
  void Loop();
  void Adopt();
  void SyncOnce(absl::Time now);
  bool EnsureSandbox();
  void Refresh(absl::Time now);
  void OnExit(CriContainer& c, const v1::ContainerStatus& s, absl::Time now);
  void Advance(absl::Time now);
  // Starts `c`; false when it did not (waiting for an image, or failed).
  bool StartOne(CriContainer& c, absl::Time now);
  // Whether `c`'s image is present (pulling it under its policy); otherwise
  // `c` is left waiting with the reason.
  bool EnsureImage(CriContainer& c, absl::Time now);
  void Probe(CriContainer& c, absl::Time now);
  // Rotates `c`'s log when it is past options_.log_cap_bytes.
  void RotateLog(const CriContainer& c);
  void StopAll(absl::Duration grace, absl::Time now);
  void Fail(absl::string_view reason, absl::string_view message);
  void OnContainerFailed(std::string message, absl::Time now);
  void Publish(absl::Time now);
  // Records an event (at most Runtime::kMaxEventsPerPod are kept).
  void Event(const char* type, const char* reason, std::string message);
  std::vector<CriContainer*> All();
  std::vector<const ContainerRecord*> MainRecords() const;
  bool InitsComplete() const { return next_init_ >= inits_.size(); }
  void RemoveObjects();

  const std::shared_ptr<CriStubs> stubs_;
  const CriRuntime::Options options_;
  const std::string pod_dir_;
  const std::string logs_dir_;
  const api::PodAssignment assignment_;
  const std::string uid_;

  // Worker-thread state.
  RestartPolicy restart_policy_ = RestartPolicy::kNever;
  absl::Duration grace_ = absl::Seconds(30);
  std::string sandbox_id_;
  std::vector<CriContainer> inits_;
  std::vector<CriContainer> mains_;
  size_t next_init_ = 0;
  bool main_started_ = false;
  PodOutcome outcome_;
  bool stopped_ = false;  // the stop has been carried out
  bool final_written_ = false;
  absl::Time start_time_;
  PodConditions conditions_;
  std::thread thread_;

  mutable absl::Mutex mu_;
  bool quit_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_requested_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration stop_grace_ ABSL_GUARDED_BY(mu_);
  bool kicked_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* pulling_ ABSL_GUARDED_BY(mu_) = nullptr;
  api::PodStatus status_ ABSL_GUARDED_BY(mu_);
  std::vector<api::PodEvent> events_ ABSL_GUARDED_BY(mu_);
};

CriPodWorker::CriPodWorker(std::shared_ptr<CriStubs> stubs,
                           const CriRuntime::Options& o, std::string pod_dir,
                           std::string logs_dir, api::PodAssignment assignment)
    : stubs_(std::move(stubs)),
      options_(o),
      pod_dir_(std::move(pod_dir)),
      logs_dir_(std::move(logs_dir)),
      assignment_(std::move(assignment)),
      uid_(assignment_.pod().metadata().uid()) {
  const api::PodSpec& spec = assignment_.pod().spec();
  // Checked by CheckAssignment before the pod was recorded.
  restart_policy_ =
      ParseRestartPolicy(spec.restart_policy()).value_or(RestartPolicy::kNever);
  if (spec.has_termination_grace_period_seconds()) {
    grace_ = absl::Seconds(
        std::max<int64_t>(0, spec.termination_grace_period_seconds()));
  }
  for (const api::Container& c : spec.init_containers()) {
    CriContainer cc;
    cc.spec = c;
    cc.init = true;
    cc.record = NewContainer(true);
    inits_.push_back(std::move(cc));
  }
  for (const api::Container& c : spec.containers()) {
    CriContainer cc;
    cc.spec = c;
    cc.record = NewContainer(false);
    if (c.has_readiness_probe()) {
      cc.probe_settings = ProbeSettingsOf(c.readiness_probe());
    }
    mains_.push_back(std::move(cc));
  }
  start_time_ = absl::Now();
  conditions_.Reset(start_time_);
  absl::MutexLock lock(&mu_);
  status_.set_phase("Pending");
}

CriPodWorker::~CriPodWorker() { Shutdown(false); }

void CriPodWorker::Run(bool adopt) {
  if (adopt) {
    // Before List can see the pod: what its containers show now.
    Adopt();
    Publish(absl::Now());
  }
  thread_ = std::thread([this] { Loop(); });
}

void CriPodWorker::Finished(api::PodStatus status) {
  final_written_ = true;
  absl::MutexLock lock(&mu_);
  status_ = std::move(status);
}

void CriPodWorker::RequestStop(absl::Duration grace) {
  absl::MutexLock lock(&mu_);
  if (stop_requested_) {
    stop_grace_ = std::min(stop_grace_, grace);
  } else {
    stop_requested_ = true;
    stop_grace_ = grace;
  }
  kicked_ = true;
  if (pulling_ != nullptr) pulling_->TryCancel();
}

void CriPodWorker::Shutdown(bool remove) {
  {
    absl::MutexLock lock(&mu_);
    quit_ = true;
    kicked_ = true;
    if (pulling_ != nullptr) pulling_->TryCancel();
  }
  if (thread_.joinable()) thread_.join();
  if (remove) RemoveObjects();
}

void CriPodWorker::Event(const char* type, const char* reason,
                         std::string message) {
  api::PodEvent e;
  e.set_type(type);
  e.set_reason(reason);
  e.set_message(std::move(message));
  absl::MutexLock lock(&mu_);
  if (events_.size() >= Runtime::kMaxEventsPerPod)
    events_.erase(events_.begin());
  events_.push_back(std::move(e));
}

std::vector<api::PodEvent> CriPodWorker::TakeEvents() {
  absl::MutexLock lock(&mu_);
  return std::exchange(events_, {});
}

api::PodStatus CriPodWorker::Status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

std::vector<CriContainer*> CriPodWorker::All() {
  std::vector<CriContainer*> all;
  for (CriContainer& c : inits_) all.push_back(&c);
  for (CriContainer& c : mains_) all.push_back(&c);
  return all;
}

std::vector<const ContainerRecord*> CriPodWorker::MainRecords() const {
  std::vector<const ContainerRecord*> records;
  for (const CriContainer& c : mains_) records.push_back(&c.record);
  return records;
}

void CriPodWorker::Loop() {
  while (true) {
    const absl::Time now = absl::Now();
    SyncOnce(now);
    Publish(absl::Now());
    absl::MutexLock lock(&mu_);
    if (quit_) return;
    if (outcome_.finished && stopped_ && final_written_) {
      // Nothing more happens to this pod until Remove.
      mu_.Await(absl::Condition(&quit_));
      return;
    }
    auto woken = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return kicked_; };
    mu_.AwaitWithTimeout(absl::Condition(&woken), options_.sync_period);
    kicked_ = false;
    if (quit_) return;
  }
}

void CriPodWorker::Adopt() {
  v1::ListPodSandboxRequest sreq;
  (*sreq.mutable_filter()->mutable_label_selector())[cri::kPodUidLabel] = uid_;
  absl::StatusOr<v1::ListPodSandboxResponse> sandboxes =
      CRI_RUNTIME_CALL(*stubs_, ListPodSandbox, sreq);
  if (!sandboxes.ok()) {
    JOBSET_LOG(WARNING) << "pod " << uid_ << ": " << sandboxes.status();
    return;
  }
  int64_t newest = -1;
  for (const v1::PodSandbox& s : sandboxes->items()) {
    if (s.created_at() > newest) {
      newest = s.created_at();
      sandbox_id_ = s.id();
    }
  }
  if (sandbox_id_.empty()) return;
  start_time_ = FromNanos(newest);
  conditions_.Reset(start_time_);
  v1::ListContainersRequest creq;
  creq.mutable_filter()->set_pod_sandbox_id(sandbox_id_);
  (*creq.mutable_filter()->mutable_label_selector())[cri::kPodUidLabel] = uid_;
  absl::StatusOr<v1::ListContainersResponse> containers =
      CRI_RUNTIME_CALL(*stubs_, ListContainers, creq);
  if (!containers.ok()) {
    JOBSET_LOG(WARNING) << "pod " << uid_ << ": " << containers.status();
    return;
  }
  const absl::Time now = absl::Now();
  // The newest attempt of each container is the one that counts; its
  // attempt number is the restart count.
  for (CriContainer* c : All()) {
    const v1::Container* latest = nullptr;
    for (const v1::Container& k : containers->containers()) {
      auto it = k.labels().find(cri::kContainerLabel);
      if (it == k.labels().end() || it->second != c->spec.name()) continue;
      if (latest == nullptr ||
          k.metadata().attempt() > latest->metadata().attempt()) {
        latest = &k;
      }
    }
    if (latest == nullptr) continue;
    c->id = latest->id();
    c->image.id = latest->image_ref();
    c->record.restart_count = static_cast<int>(latest->metadata().attempt());
    if (latest->state() == v1::CONTAINER_CREATED) continue;
    v1::ContainerStatusRequest req;
    req.set_container_id(c->id);
    absl::StatusOr<v1::ContainerStatusResponse> s =
        CRI_RUNTIME_CALL(*stubs_, ContainerStatus, req);
    const absl::Time started =
        s.ok() ? FromNanos(s->status().started_at()) : now;
    c->record = Started(std::move(c->record), started);
    c->next_probe = started + c->probe_settings.initial_delay;
    if (s.ok() && s->status().state() == v1::CONTAINER_EXITED) {
      OnExit(*c, s->status(), now);
    }
  }
  for (const CriContainer& c : inits_) {
    if (!c.record.done || c.record.exit_code != 0) break;
    ++next_init_;
  }
  for (const CriContainer& c : mains_) {
    if (c.record.ever_started || !c.id.empty()) main_started_ = true;
  }
  if (InitsComplete() && main_started_) {
    outcome_.phase = RunningPhase(outcome_.phase, MainRecords());
  }
}

void CriPodWorker::Fail(absl::string_view reason, absl::string_view message) {
  if (outcome_.finished) return;
  outcome_ = PodFailed(std::move(outcome_), reason, message);
  JOBSET_LOG(WARNING) << "pod " << uid_ << " failed: " << reason << ": "
                      << message;
}

void CriPodWorker::OnContainerFailed(std::string message, absl::Time now) {
  outcome_.phase = PodPhase::kFailed;
  outcome_.message = std::move(message);
  outcome_.finished = true;
  StopAll(grace_, now);
}

bool CriPodWorker::EnsureSandbox() {
  if (!sandbox_id_.empty()) return true;
  v1::RunPodSandboxRequest req;
  *req.mutable_config() = cri::SandboxConfig(assignment_, logs_dir_);
  absl::StatusOr<v1::RunPodSandboxResponse> r =
      CRI_RUNTIME_CALL(*stubs_, RunPodSandbox, req);
  if (!r.ok()) {
    // kubelet's FailedCreatePodSandBox: retried on the next sync.
    outcome_.reason = "FailedCreatePodSandBox";
    outcome_.message = std::string(r.status().message());
    JOBSET_LOG(WARNING) << "pod " << uid_ << ": " << r.status();
    return false;
  }
  sandbox_id_ = r->pod_sandbox_id();
  if (outcome_.reason == "FailedCreatePodSandBox") {
    outcome_.reason.clear();
    outcome_.message.clear();
  }
  return true;
}

void CriPodWorker::OnExit(CriContainer& c, const v1::ContainerStatus& s,
                          absl::Time now) {
  ContainerExit exit;
  exit.exit_code = s.exit_code();
  exit.reason = s.reason().empty()
                    ? (s.exit_code() == 0 ? "Completed" : "Error")
                    : s.reason();
  exit.message = s.message();
  if (exit.exit_code > 128 && exit.exit_code < 128 + 65 &&
      exit.reason != "Completed") {
    exit.signal = exit.exit_code - 128;
  }
  const bool start_error = exit.reason == "StartError";
  const bool ending = outcome_.finished || stopped_;
  c.record = start_error ? StartFailed(std::move(c.record), exit.message, now)
                         : Exited(std::move(c.record), exit, restart_policy_,
                                  ending, now);
  if (!start_error) {
    c.record.finished_at = FromNanos(s.finished_at());
  }
  c.probe = ProbeRecord{};
  c.next_probe = absl::InfiniteFuture();
  JOBSET_LOG(INFO) << "pod " << uid_ << ": container " << c.spec.name()
                   << " exited: code " << exit.exit_code << " " << exit.reason;
  if (ending || !c.record.done) return;
  const bool failed = exit.exit_code != 0;
  if (c.init) {
    if (failed) {
      Fail(start_error ? "StartError" : "InitContainerFailed",
           absl::StrCat("init container ", c.spec.name(), " exited with code ",
                        exit.exit_code));
      StopAll(grace_, now);
    } else {
      ++next_init_;
    }
    return;
  }
  if (failed) {
    if (start_error) outcome_.reason = "StartError";
    OnContainerFailed(
        absl::StrCat("container ", c.spec.name(), " exited with code ",
                     exit.exit_code, " (", exit.reason, ")"),
        now);
  }
}

void CriPodWorker::Refresh(absl::Time now) {
  for (CriContainer* c : All()) {
    if (c->id.empty() || c->record.state != ContainerState::kRunning) continue;
    v1::ContainerStatusRequest req;
    req.set_container_id(c->id);
    absl::StatusOr<v1::ContainerStatusResponse> s =
        CRI_RUNTIME_CALL(*stubs_, ContainerStatus, req);
    if (absl::IsNotFound(s.status())) {
      // Removed behind our back: kubelet's ContainerStatusUnknown.
      v1::ContainerStatus gone;
      gone.set_exit_code(137);
      gone.set_reason("ContainerStatusUnknown");
      gone.set_message("The container could not be located");
      c->id.clear();
      OnExit(*c, gone, now);
      continue;
    }
    if (!s.ok()) {
      JOBSET_LOG(WARNING) << "pod " << uid_ << ": " << s.status();
      continue;
    }
    if (s->status().state() == v1::CONTAINER_EXITED) {
      const v1::ContainerStatus& st = s->status();
      if (st.exit_code() == 137 &&
          (st.reason().empty() || st.reason() == "Error")) {
        if (c->killed_seen == absl::InfiniteFuture()) c->killed_seen = now;
        if (now - c->killed_seen < kOomGrace) continue;
      }
      c->killed_seen = absl::InfiniteFuture();
      OnExit(*c, st, now);
    } else {
      RotateLog(*c);
      Probe(*c, now);
    }
  }
}

void CriPodWorker::RotateLog(const CriContainer& c) {
  if (options_.log_cap_bytes <= 0) return;
  const std::string log =
      absl::StrCat(logs_dir_, "/", cri::ContainerLogName(c.spec.name()));
  struct stat st;
  if (stat(log.c_str(), &st) != 0 || st.st_size <= options_.log_cap_bytes) {
    return;
  }
  // As kubelet: rename, then have the runtime reopen its log_path; renamed
  // back when it cannot (the container keeps writing the file it has).
  const std::string old = log + ".1";
  if (rename(log.c_str(), old.c_str()) != 0) {
    JOBSET_LOG(WARNING) << "pod " << uid_ << ": rotating " << log << ": "
                        << strerror(errno);
    return;
  }
  v1::ReopenContainerLogRequest req;
  req.set_container_id(c.id);
  absl::StatusOr<v1::ReopenContainerLogResponse> r =
      CRI_RUNTIME_CALL(*stubs_, ReopenContainerLog, req);
  if (!r.ok()) {
    JOBSET_LOG(WARNING) << "pod " << uid_ << ": rotating " << log << ": "
                        << r.status();
    if (rename(old.c_str(), log.c_str()) != 0) {
      JOBSET_LOG(WARNING) << "pod " << uid_ << ": renaming " << old
                          << " back: " << strerror(errno);
    }
  }
}

void CriPodWorker::Probe(CriContainer& c, absl::Time now) {
  if (!c.spec.has_readiness_probe() || now < c.next_probe) return;
  const api::Probe& p = c.spec.readiness_probe();
  const ProbeSettings& settings = c.probe_settings;
  bool ok = false;
  if (p.has_exec()) {
    v1::ExecSyncRequest req;
    req.set_container_id(c.id);
    for (const std::string& a : p.exec().command()) req.add_cmd(a);
    req.set_timeout(
        std::max<int64_t>(1, absl::ToInt64Seconds(settings.timeout)));
    grpc::ClientContext ctx;
    SetDeadline(&ctx, settings.timeout + absl::Seconds(1));
    v1::ExecSyncResponse resp;
    ok = stubs_->runtime->ExecSync(&ctx, req, &resp).ok() &&
         resp.exit_code() == 0;
  } else {
    const bool http = p.has_http_get();
    const std::string port = http ? p.http_get().port() : p.tcp_socket().port();
    const std::string host = http ? p.http_get().host() : p.tcp_socket().host();
    const int n = ResolvePort(c.spec, port);
    // Host network: the container's ports are the host's.
    ok = n > 0 && ProbeSocket(host, n, http ? &p.http_get().path() : nullptr,
                              settings.timeout, *RealClock::Get());
  }
  c.probe = Probed(c.probe, settings, ok);
  c.next_probe = now + settings.period;
}

bool CriPodWorker::EnsureImage(CriContainer& c, absl::Time now) {
  const std::string& image = c.spec.image();
  absl::StatusOr<api::ImageReference> ref = api::ParseImageReference(image);
  if (!ref.ok()) {
    c.record.reason = "InvalidImageName";
    c.record.message = absl::StrCat("Failed to apply default image tag \"",
                                    image, "\": couldn't parse image name \"",
                                    image, "\": ", ref.status().message());
    if (c.last_event_reason != c.record.reason) {
      Event("Warning", "InspectFailed", c.record.message);
      Event("Warning", "Failed", "Error: InvalidImageName");
    }
    c.last_event_reason = c.record.reason;
    return false;
  }
  const std::string name = ref->Normalized();
  const std::string policy = c.spec.image_pull_policy().empty()
                                 ? std::string(api::DefaultPullPolicy(image))
                                 : c.spec.image_pull_policy();
  auto inspect = [&](const std::string& what) -> std::optional<bool> {
    v1::ImageStatusRequest req;
    req.mutable_image()->set_image(what);
    absl::StatusOr<v1::ImageStatusResponse> s =
        CRI_IMAGE_CALL(*stubs_, ImageStatus, req);
    if (!s.ok()) {
      c.record.reason = "ImageInspectError";
      c.record.message = std::string(s.status().message());
      return std::nullopt;
    }
    if (!s->has_image() || s->image().id().empty()) return false;
    c.image.id = s->image().id();
    c.image.uid.reset();
    c.image.username.clear();
    if (s->image().has_uid()) {
      c.image.uid = s->image().uid().value();
    } else {
      c.image.username = s->image().username();
    }
    return true;
  };
  if (policy != "Always") {
    std::optional<bool> present = inspect(name);
    if (!present.has_value()) return false;
    if (*present) {
      if (c.last_event_reason != "Pulled") {
        Event("Normal", "Pulled",
              absl::StrCat("Container image \"", image,
                           "\" already present on machine"));
      }
      c.last_event_reason = "Pulled";
      return true;
    }
    if (policy == "Never") {
      c.record.reason = "ErrImageNeverPull";
      c.record.message = absl::StrCat("Container image \"", image,
                                      "\" is not present with pull policy of "
                                      "Never");
      if (c.last_event_reason != c.record.reason) {
        Event("Warning", "ErrImageNeverPull", c.record.message);
        Event("Warning", "Failed", "Error: ErrImageNeverPull");
      }
      c.last_event_reason = c.record.reason;
      return false;
    }
  }
  if (now < c.pull_next) {
    c.record.reason = "ImagePullBackOff";
    c.record.message = absl::StrCat("Back-off pulling image \"", image,
                                    "\": ErrImagePull: ", c.last_pull_error);
    if (c.last_event_reason != c.record.reason) {
      Event("Normal", "BackOff",
            absl::StrCat("Back-off pulling image \"", image, "\""));
      Event("Warning", "Failed", "Error: ImagePullBackOff");
    }
    c.last_event_reason = c.record.reason;
    return false;
  }
  v1::PullImageRequest req;
  req.mutable_image()->set_image(name);
  *req.mutable_sandbox_config() = cri::SandboxConfig(assignment_, logs_dir_);
  // As kubelet: each matching imagePullSecrets credential in turn until one
  // works; anonymous only when none matches. The error is the last one.
  const std::vector<cri::RegistryAuth> auths =
      cri::MatchingCredentials(name, assignment_.pull_credentials());
  JOBSET_LOG(INFO) << "pod " << uid_ << ": Pulling image \"" << image << "\"";
  Event("Normal", "Pulling", absl::StrCat("Pulling image \"", image, "\""));
  const absl::Time began = absl::Now();
  v1::PullImageResponse resp;
  grpc::Status pulled;
  for (size_t i = 0; i < std::max<size_t>(1, auths.size()); ++i) {
    req.clear_auth();
    if (i < auths.size()) {
      // The user and password (all kubelet sends) and the registry they are
      // for: containerd sends them to that host only, never to a mirror.
      req.mutable_auth()->set_username(auths[i].username);
      req.mutable_auth()->set_password(auths[i].password);
      req.mutable_auth()->set_server_address(auths[i].server_address);
    }
    grpc::ClientContext ctx;
    SetDeadline(&ctx, stubs_->pull_timeout);
    {
      absl::MutexLock lock(&mu_);
      if (quit_ || stop_requested_) return false;
      pulling_ = &ctx;
    }
    resp.Clear();
    pulled = stubs_->images->PullImage(&ctx, req, &resp);
    {
      absl::MutexLock lock(&mu_);
      pulling_ = nullptr;
    }
    if (pulled.ok()) break;
    if (i + 1 < auths.size()) {
      // The key names the registry entry, never the user or password.
      JOBSET_LOG(WARNING) << "pod " << uid_ << ": pulling image \"" << image
                          << "\" with the credential for \"" << auths[i].key
                          << "\" (" << i + 1 << " of " << auths.size()
                          << ") failed: " << pulled.error_message();
    }
  }
  if (!pulled.ok()) {
    c.pull_delay = c.pull_delay == absl::ZeroDuration()
                       ? options_.pull_backoff_start
                       : std::min(2 * c.pull_delay, options_.pull_backoff_cap);
    c.pull_next = absl::Now() + c.pull_delay;
    c.last_pull_error = pulled.error_message();
    c.record.reason = "ErrImagePull";
    c.record.message = absl::StrCat("Failed to pull image \"", image,
                                    "\": ", pulled.error_message());
    JOBSET_LOG(WARNING) << "pod " << uid_ << ": " << c.record.message;
    Event("Warning", "Failed", c.record.message);
    Event("Warning", "Failed", "Error: ErrImagePull");
    c.last_event_reason = c.record.reason;
    return false;
  }
  c.pull_delay = absl::ZeroDuration();
  c.pull_next = absl::InfinitePast();
  const std::string pulled_in =
      absl::StrCat("Successfully pulled image \"", image, "\" in ",
                   absl::FormatDuration(absl::Trunc(absl::Now() - began,
                                                    absl::Milliseconds(1))));
  JOBSET_LOG(INFO) << "pod " << uid_ << ": " << pulled_in;
  Event("Normal", "Pulled", pulled_in);
  c.last_event_reason = "Pulled";
  std::optional<bool> present = inspect(resp.image_ref());
  if (!present.has_value()) return false;
  if (!*present) {
    c.record.reason = "ErrImagePull";
    c.record.message =
        absl::StrCat("image \"", image, "\" is not present after its pull");
    return false;
  }
  return true;
}

bool CriPodWorker::StartOne(CriContainer& c, absl::Time now) {
  if (!EnsureImage(c, now)) return false;
  // Mounts: the pod's /etc/hosts, then its volumes. A subPath is opened
  // beneath its volume and handed over as /proc/<agent>/fd/<n>, held open
  // until the runtime has mounted it (StartContainer).
  std::vector<cri::HostMount> mounts = {
      {absl::StrCat(pod_dir_, "/", kHostsFile), "/etc/hosts", false}};
  std::vector<int> held;
  auto close_held = [&held] {
    for (int fd : held) close(fd);
    held.clear();
  };
  absl::StatusOr<std::vector<ContainerMount>> volume_mounts =
      ContainerMounts(pod_dir_, assignment_.pod().spec().volumes(), c.spec);
  absl::Status mount_error =
      volume_mounts.ok() ? absl::OkStatus() : volume_mounts.status();
  if (mount_error.ok()) {
    for (const ContainerMount& m : *volume_mounts) {
      std::string source = m.source;
      if (!m.sub_path.empty()) {
        absl::StatusOr<int> fd =
            OpenBeneath(m.source, m.sub_path,
                        absl::StrCat("volumeMounts[", m.index, "].subPath"));
        if (!fd.ok()) {
          mount_error = fd.status();
          break;
        }
        held.push_back(*fd);
        source = absl::StrCat("/proc/", getpid(), "/fd/", *fd);
      }
      mounts.push_back({source, m.destination, m.read_only});
    }
  }
  const std::string what =
      absl::StrCat(c.init ? "init container " : "container ", c.spec.name());
  auto start_failed = [&](absl::string_view reason, absl::string_view error) {
    close_held();
    c.record = reason == "CreateContainerConfigError"
                   ? ConfigFailed(std::move(c.record), error)
                   : StartFailed(std::move(c.record), error, now);
    const std::string message = absl::StrCat(what, ": ", error);
    if (c.init) {
      Fail(reason, message);
      StopAll(grace_, now);
    } else {
      outcome_.reason = std::string(reason);
      OnContainerFailed(message, now);
    }
    return false;
  };
  if (!mount_error.ok())
    return start_failed("StartError", mount_error.message());
  absl::StatusOr<AcceleratorSetup> accelerators =
      AcceleratorSetupFor(assignment_.devices(), options_.accelerators);
  if (!accelerators.ok()) {
    return start_failed("StartError", accelerators.status().message());
  }
  if (!accelerators->driver_source.empty() && c.record.restart_count == 0) {
    JOBSET_LOG(INFO) << "pod " << uid_ << ": container " << c.spec.name()
                     << " gets the NVIDIA driver from "
                     << accelerators->driver_source;
  }
  absl::StatusOr<v1::ContainerConfig> config = cri::ContainerConfigFor(
      assignment_, c.spec, c.init, c.record.restart_count, c.image, mounts,
      *accelerators);
  if (!config.ok()) {
    const bool config_error =
        config.status().code() == absl::StatusCode::kFailedPrecondition;
    return start_failed(
        config_error ? "CreateContainerConfigError" : "StartError",
        config.status().message());
  }
  if (!c.id.empty()) {
    // The previous attempt goes once its successor is made (its exit is in
    // the record; its log stays).
    v1::RemoveContainerRequest req;
    req.set_container_id(c.id);
    if (absl::StatusOr<v1::RemoveContainerResponse> r =
            CRI_RUNTIME_CALL(*stubs_, RemoveContainer, req);
        !r.ok()) {
      JOBSET_LOG(WARNING) << "pod " << uid_ << ": " << r.status();
    }
    c.id.clear();
  }
  // The runtime appends to the log; made here first so that it is private
  // (containerd would make it 0640).
  const std::string log =
      absl::StrCat(logs_dir_, "/", cri::ContainerLogName(c.spec.name()));
  if (int fd =
          open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      fd >= 0) {
    close(fd);
  }
  v1::CreateContainerRequest create;
  create.set_pod_sandbox_id(sandbox_id_);
  *create.mutable_config() = *std::move(config);
  *create.mutable_sandbox_config() = cri::SandboxConfig(assignment_, logs_dir_);
  absl::StatusOr<v1::CreateContainerResponse> created =
      CRI_RUNTIME_CALL(*stubs_, CreateContainer, create);
  if (!created.ok()) {
    close_held();
    // kubelet's CreateContainerError: tried again after a back-off.
    c.record.reason = "CreateContainerError";
    c.record.message = std::string(created.status().message());
    c.record.backoff.next_start = now + c.record.backoff.delay;
    c.record.backoff.delay = std::min(2 * c.record.backoff.delay, kBackoffCap);
    return false;
  }
  c.id = created->container_id();
  v1::StartContainerRequest start;
  start.set_container_id(c.id);
  absl::StatusOr<v1::StartContainerResponse> started =
      CRI_RUNTIME_CALL(*stubs_, StartContainer, start);
  close_held();
  if (!started.ok()) {
    return start_failed("StartError", started.status().message());
  }
  c.record = Started(std::move(c.record), now);
  c.probe = ProbeRecord{};
  c.next_probe = now + c.probe_settings.initial_delay;
  return true;
}

void CriPodWorker::Advance(absl::Time now) {
  if (outcome_.finished) return;
  if (!InitsComplete()) {
    CriContainer& c = inits_[next_init_];
    if (c.record.state != ContainerState::kRunning && !c.record.done &&
        now >= c.record.backoff.next_start) {
      StartOne(c, now);
    }
    return;
  }
  if (!main_started_) {
    main_started_ = true;
    for (CriContainer& c : mains_) c.record.reason = "ContainerCreating";
  }
  for (CriContainer& c : mains_) {
    if (c.record.done || c.record.state == ContainerState::kRunning ||
        now < c.record.backoff.next_start) {
      continue;
    }
    StartOne(c, now);
    if (outcome_.finished) return;
  }
  outcome_.phase = RunningPhase(outcome_.phase, MainRecords());
  if (outcome_.phase == PodPhase::kSucceeded ||
      outcome_.phase == PodPhase::kFailed) {
    outcome_.finished = true;
  }
}

void CriPodWorker::StopAll(absl::Duration grace, absl::Time now) {
  // Containers stop in parallel, each with the whole grace period
  // (kubelet's killContainersWithSyncResult).
  std::vector<std::thread> stops;
  for (CriContainer* c : All()) {
    if (c->id.empty() || c->record.state != ContainerState::kRunning) continue;
    stops.emplace_back([this, c, grace] {
      v1::StopContainerRequest req;
      req.set_container_id(c->id);
      // CRI counts whole seconds: a grace is rounded up, never cut short.
      req.set_timeout(
          absl::ToInt64Seconds(absl::Ceil(grace, absl::Seconds(1))));
      grpc::ClientContext ctx;
      SetDeadline(&ctx, grace + stubs_->timeout);
      v1::StopContainerResponse resp;
      grpc::Status s = stubs_->runtime->StopContainer(&ctx, req, &resp);
      if (!s.ok()) {
        JOBSET_LOG(WARNING) << "pod " << uid_ << ": StopContainer "
                            << c->spec.name() << ": " << s.error_message();
      }
    });
  }
  for (std::thread& t : stops) t.join();
  stopped_ = true;
  // What the stop ended, as the runtime saw it.
  for (CriContainer* c : All()) {
    if (c->record.state != ContainerState::kRunning) {
      c->record.done = true;
      continue;
    }
    v1::ContainerStatusRequest req;
    req.set_container_id(c->id);
    absl::StatusOr<v1::ContainerStatusResponse> s =
        CRI_RUNTIME_CALL(*stubs_, ContainerStatus, req);
    v1::ContainerStatus exited;
    if (s.ok() && s->status().state() == v1::CONTAINER_EXITED) {
      exited = s->status();
    } else {
      exited.set_exit_code(137);
      exited.set_reason("Error");
    }
    OnExit(*c, exited, now);
    c->record.done = true;
  }
  if (!sandbox_id_.empty()) {
    v1::StopPodSandboxRequest req;
    req.set_pod_sandbox_id(sandbox_id_);
    if (absl::StatusOr<v1::StopPodSandboxResponse> r =
            CRI_RUNTIME_CALL(*stubs_, StopPodSandbox, req);
        !r.ok()) {
      JOBSET_LOG(WARNING) << "pod " << uid_ << ": " << r.status();
    }
  }
}

void CriPodWorker::SyncOnce(absl::Time now) {
  bool stop = false;
  absl::Duration grace;
  {
    absl::MutexLock lock(&mu_);
    stop = stop_requested_;
    grace = stop_grace_;
  }
  if (stop && !stopped_) {
    Refresh(now);
    if (!outcome_.finished) {
      outcome_.reason = "Stopped";
      outcome_.message = absl::StrCat("stopped by the agent (grace ",
                                      absl::FormatDuration(grace), ")");
    }
    const bool was_finished = outcome_.finished;
    StopAll(grace, now);
    if (!was_finished) {
      outcome_.phase = StoppedPhase(InitsComplete(), MainRecords());
      outcome_.finished = true;
    }
    return;
  }
  if (outcome_.finished) {
    if (!stopped_) StopAll(grace_, now);
    return;
  }
  if (!EnsureSandbox()) return;
  Refresh(now);
  Advance(now);
  if (outcome_.finished && !stopped_) StopAll(grace_, now);
}

void CriPodWorker::Publish(absl::Time now) {
  const api::PodStatus& assigned = assignment_.pod().status();
  api::PodStatus status;
  status.set_phase(std::string(PodPhaseName(outcome_.phase)));
  status.set_reason(outcome_.reason);
  status.set_message(outcome_.message);
  status.set_host_ip(assigned.host_ip());
  status.set_pod_ip(assigned.pod_ip().empty() ? assigned.host_ip()
                                              : assigned.pod_ip());
  SetTimestamp(start_time_, status.mutable_start_time());
  for (const CriContainer& c : inits_) {
    *status.add_init_container_statuses() = ToContainerStatus(
        c.spec.name(), c.record, ContainerReady(c.record, false, false));
  }
  std::vector<bool> ready;
  for (const CriContainer& c : mains_) {
    const bool r =
        ContainerReady(c.record, c.spec.has_readiness_probe(), c.probe.ready);
    ready.push_back(r);
    *status.add_container_statuses() =
        ToContainerStatus(c.spec.name(), c.record, r);
  }
  const bool pod_ready =
      PodReady(outcome_.finished || stopped_, InitsComplete(), ready);
  conditions_.Update(InitsComplete(), pod_ready, now);
  conditions_.AppendTo(outcome_.finished, &status);
  if (outcome_.finished && stopped_ && !final_written_) {
    // The final status outlives the containers (Remove, a runtime reset).
    absl::Status w =
        WriteProtoAtomic(absl::StrCat(pod_dir_, "/", kStatusFile), status);
    if (w.ok()) {
      final_written_ = true;
    } else {
      JOBSET_LOG(WARNING) << "pod " << uid_ << ": " << w;
    }
  }
  absl::MutexLock lock(&mu_);
  status_ = std::move(status);
}

void CriPodWorker::RemoveObjects() {
  v1::ListContainersRequest creq;
  (*creq.mutable_filter()->mutable_label_selector())[cri::kPodUidLabel] = uid_;
  if (absl::StatusOr<v1::ListContainersResponse> cs =
          CRI_RUNTIME_CALL(*stubs_, ListContainers, creq);
      cs.ok()) {
    for (const v1::Container& k : cs->containers()) {
      v1::RemoveContainerRequest req;
      req.set_container_id(k.id());
      (void)CRI_RUNTIME_CALL(*stubs_, RemoveContainer, req);
    }
  }
  v1::ListPodSandboxRequest sreq;
  (*sreq.mutable_filter()->mutable_label_selector())[cri::kPodUidLabel] = uid_;
  if (absl::StatusOr<v1::ListPodSandboxResponse> ss =
          CRI_RUNTIME_CALL(*stubs_, ListPodSandbox, sreq);
      ss.ok()) {
    for (const v1::PodSandbox& s : ss->items()) {
      v1::StopPodSandboxRequest stop;
      stop.set_pod_sandbox_id(s.id());
      (void)CRI_RUNTIME_CALL(*stubs_, StopPodSandbox, stop);
      v1::RemovePodSandboxRequest rm;
      rm.set_pod_sandbox_id(s.id());
      (void)CRI_RUNTIME_CALL(*stubs_, RemovePodSandbox, rm);
    }
  }
  // Memory emptyDirs and secret volumes are tmpfs mounts in the agent's
  // namespace.
  UnmountVolumes(pod_dir_, assignment_.pod().spec());
}

// ---- CriRuntime ----

CriRuntime::CriRuntime(Options options, std::shared_ptr<CriStubs> stubs)
    : options_(std::move(options)), stubs_(std::move(stubs)) {}

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
  auto stubs = std::make_shared<CriStubs>();
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(options.endpoint, grpc::InsecureChannelCredentials());
  stubs->runtime = v1::RuntimeService::NewStub(channel);
  stubs->images = v1::ImageService::NewStub(channel);
  stubs->timeout = options.request_timeout;
  stubs->pull_timeout = options.pull_timeout;
  v1::VersionRequest vreq;
  vreq.set_version("0.1.0");
  grpc::ClientContext ctx;
  SetDeadline(&ctx, std::min(options.request_timeout, absl::Seconds(10)));
  v1::VersionResponse version;
  if (grpc::Status s = stubs->runtime->Version(&ctx, vreq, &version); !s.ok()) {
    return absl::UnavailableError(absl::StrCat(
        "cri runtime: ", options.endpoint,
        " does not answer runtime.v1 Version: ", s.error_message()));
  }
  if (version.runtime_api_version() != "v1") {
    return absl::FailedPreconditionError(
        absl::StrCat("cri runtime: ", options.endpoint, " speaks CRI \"",
                     version.runtime_api_version(), "\", not v1"));
  }
  for (const char* sub : {"", "/pods", "/logs"}) {
    if (absl::Status s = MakeDirIfMissing(options.work_dir + sub); !s.ok()) {
      return s;
    }
  }
  JOBSET_LOG(INFO) << "cri runtime: " << version.runtime_name() << " "
                   << version.runtime_version() << " at " << options.endpoint;
  std::unique_ptr<CriRuntime> runtime(
      new CriRuntime(options, std::move(stubs)));
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
  auto worker = std::make_unique<CriPodWorker>(
      stubs_, options_, dir, absl::StrCat(options_.work_dir, "/logs/", uid),
      std::move(assignment));
  api::PodStatus final_status;
  if (ReadProtoFile(absl::StrCat(dir, "/", kStatusFile), &final_status).ok() &&
      IsFinalPhase(final_status.phase())) {
    worker->Finished(std::move(final_status));
  } else {
    worker->Run(/*adopt=*/true);
  }
  pods_[uid] = std::move(worker);
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
  auto worker = std::make_unique<CriPodWorker>(stubs_, options_, dir, logs,
                                               std::move(recorded));
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
