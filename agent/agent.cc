#include "agent/agent.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/host.h"
#include "agent/runtime/cri/cri_log.h"
#include "agent/runtime/pod_input.h"
#include "api/env_expansion.h"
#include "api/pod_phase.h"
#include "common/log.h"

namespace jobset::agent {
namespace {

constexpr char kGpu[] = "nvidia.com/gpu";

void SetDuration(absl::Duration d, google::protobuf::Duration* out) {
  out->set_seconds(absl::IDivDuration(d, absl::Seconds(1), &d));
  out->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(d)));
}

absl::Time ToTime(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}
constexpr absl::Duration kDefaultGrace = absl::Seconds(30);
constexpr absl::Duration kLeaseGrace = absl::Seconds(1);
constexpr absl::Duration kWelcomeTimeout = absl::Seconds(10);
// The shortest time between two ticks woken by the runtime's changes.
constexpr absl::Duration kMinTick = absl::Milliseconds(5);
constexpr char kInPlaceRestartAttemptKey[] =
    "jobset.sigs.k8s.io/in-place-restart-attempt";

// The restart in place attempt a pod is to run at (restartStrategy
// InPlaceRestart): nullopt when it has none, an error when the annotation
// is not a non-negative 32-bit integer.
absl::StatusOr<std::optional<int32_t>> InPlaceAttemptOf(const api::Pod& pod) {
  auto it = pod.metadata().annotations().find(kInPlaceRestartAttemptKey);
  if (it == pod.metadata().annotations().end()) return std::nullopt;
  int32_t attempt = 0;
  if (!absl::SimpleAtoi(it->second, &attempt) || attempt < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metadata.annotations[", kInPlaceRestartAttemptKey, "]: \"",
        it->second.substr(0, 32), "\" is not a non-negative 32-bit integer"));
  }
  return attempt;
}

bool Finished(const api::PodStatus& s) {
  return s.phase() == api::kPodSucceeded || s.phase() == api::kPodFailed;
}

absl::Duration GraceOf(const api::Pod& pod) {
  return pod.spec().has_termination_grace_period_seconds()
             ? absl::Seconds(pod.spec().termination_grace_period_seconds())
             : kDefaultGrace;
}

}  // namespace

Agent::Agent(Options options, Runtime* runtime, Clock* clock)
    : options_(std::move(options)),
      replicas_(Replicas::Parse("--scheduler", options_.scheduler)),
      runtime_(runtime),
      clock_(clock) {
  absl::MutexLock lock(&mu_);
  conn_.last_contact = clock_->Now();
}

Agent::~Agent() { Shutdown(); }

void Agent::Start() {
  LoadLedger();
  if (options_.metrics != nullptr) {
    options_.metrics->reattached.Increment(
        static_cast<double>(runtime_->List().size()));
  }
  absl::Status lease = runtime_->SetLease(options_.lease);
  if (!lease.ok()) {
    JOBSET_LOG(ERROR) << "setting the lease: " << lease;
  }
  connect_thread_ = std::thread([this] { ConnectLoop(); });
  tick_thread_ = std::thread([this] { TickLoop(); });
}

void Agent::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    conn_.stopping = true;
    if (conn_.context != nullptr) conn_.context->TryCancel();
  }
  if (connect_thread_.joinable()) connect_thread_.join();
  if (tick_thread_.joinable()) tick_thread_.join();
}

bool Agent::welcomed() {
  absl::MutexLock lock(&mu_);
  return conn_.welcomed;
}

int64_t Agent::connects() {
  absl::MutexLock lock(&mu_);
  return conn_.connects;
}

void Agent::ConnectLoop() {
  absl::Duration backoff = options_.min_backoff;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (conn_.stopping) return;
    }
    const bool redirected = Session();
    bool was_welcomed;
    {
      absl::MutexLock lock(&mu_);
      was_welcomed = std::exchange(conn_.welcomed, false);
      if (conn_.stopping) return;
    }
    if (was_welcomed) backoff = options_.min_backoff;
    if (redirected) continue;  // To the leader, at once.
    {
      // A real-time wait (gRPC's reconnects are real time too) that
      // Shutdown cuts short.
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return conn_.stopping;
      };
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping), backoff)) return;
    }
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

bool Agent::Session() {
  // A fresh channel per attempt: the agent's own backoff paces reconnects,
  // not the state of a channel that saw the scheduler go away.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              absl::ToInt64Milliseconds(options_.min_backoff));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
              absl::ToInt64Milliseconds(options_.min_backoff));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              absl::ToInt64Milliseconds(options_.max_backoff));
  // Asked for per attempt: a renewed node certificate is used from the next
  // connection on, without a restart.
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      grpc::InsecureChannelCredentials();
  if (!replicas_.ok()) {
    JOBSET_LOG(ERROR) << replicas_.status().message();
    return false;
  }
  const std::string target = replicas_->current();
  if (options_.credentials) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> c =
        options_.credentials();
    if (!c.ok()) {
      bool report;
      {
        absl::MutexLock lock(&mu_);
        report = !conn_.quiet;
        conn_.quiet = true;
      }
      if (report) {
        JOBSET_LOG(ERROR) << "cannot connect to jobsetd at " << target << ": "
                          << c.status().message()
                          << " (pods keep running; retrying)";
      }
      return false;
    }
    credentials = *std::move(c);
    if (!options_.server_name.empty()) {
      args.SetSslTargetNameOverride(options_.server_name);
    }
  }
  std::unique_ptr<api::AgentService::Stub> stub = api::AgentService::NewStub(
      grpc::CreateCustomChannel(target, std::move(credentials), args));
  grpc::ClientContext context;
  {
    absl::MutexLock lock(&mu_);
    if (conn_.stopping) return false;
    conn_.context = &context;
    conn_.deposed = false;
    conn_.opened = clock_->Now();
  }
  std::unique_ptr<
      grpc::ClientReaderWriter<api::AgentMessage, api::SchedulerMessage>>
      stream = stub->Connect(&context);
  api::AgentMessage hello;
  *hello.mutable_hello()->mutable_node() = options_.registration;
  std::map<std::string, std::string> sent;
  for (PodState& pod : runtime_->List()) {
    sent[pod.uid] = pod.status.SerializeAsString();
    api::PodReport* r = hello.mutable_hello()->add_pods();
    r->set_pod_uid(pod.uid);
    r->set_in_place_restart_attempt(AttemptRunning(pod.uid));
    *r->mutable_status() = std::move(pod.status);
  }
  if (stream->Write(hello)) {
    {
      absl::MutexLock lock(&mu_);
      pods_.sent = std::move(sent);
      ++conn_.connects;
    }
    {
      absl::MutexLock lock(&write_mu_);
      stream_ = stream.get();
    }
    api::SchedulerMessage msg;
    absl::Time renewed = absl::InfinitePast();
    while (stream->Read(&msg)) {
      const absl::Time now = clock_->Now();
      {
        absl::MutexLock lock(&mu_);
        conn_.last_contact = now;
      }
      if (options_.lease > absl::ZeroDuration() &&
          now - renewed >= absl::Milliseconds(100)) {
        runtime_->RenewLease().IgnoreError();
        renewed = now;
      }
      Handle(msg);
    }
    absl::MutexLock lock(&write_mu_);
    stream_ = nullptr;
  }
  {
    absl::MutexLock lock(&mu_);
    conn_.context = nullptr;
  }
  grpc::Status status = stream->Finish();
  bool report, was_welcomed;
  {
    // One line per outage, not one per attempt.
    absl::MutexLock lock(&mu_);
    was_welcomed = conn_.welcomed;
    report = conn_.welcomed || !conn_.quiet;
    conn_.quiet = !conn_.welcomed;
  }
  if (report) {
    JOBSET_LOG(WARNING) << (was_welcomed ? "lost jobsetd at "
                                         : "cannot reach jobsetd at ")
                        << target << ": code " << status.error_code() << ": "
                        << status.error_message()
                        << " (pods keep running; reconnecting)";
  }
  bool deposed;
  {
    absl::MutexLock lock(&mu_);
    deposed = conn_.deposed;
  }
  if (deposed) {
    // As if it could not be reached: the next replica, after the backoff.
    replicas_->After(grpc::Status(grpc::StatusCode::UNAVAILABLE, "deposed"),
                     std::nullopt);
    return false;
  }
  if (was_welcomed) replicas_->Reached();
  return replicas_->After(context, status);
}

bool Agent::Send(const api::AgentMessage& msg) {
  absl::MutexLock lock(&write_mu_);
  return stream_ != nullptr && stream_->Write(msg);
}

bool Agent::AcceptLeader(int64_t epoch) {
  absl::MutexLock lock(&mu_);
  // 0: a jobsetd that runs alone claims no order among leaders.
  if (epoch <= 0 || epoch >= conn_.epoch) {
    conn_.epoch = std::max(conn_.epoch, epoch);
    return true;
  }
  JOBSET_LOG(WARNING) << "jobsetd welcomed this node as leader epoch " << epoch
                      << ", older than epoch " << conn_.epoch
                      << " seen before: a deposed leader; ignoring it";
  conn_.deposed = true;
  if (conn_.context != nullptr) conn_.context->TryCancel();
  return false;
}

void Agent::Handle(const api::SchedulerMessage& msg) {
  if (msg.has_welcome() && !AcceptLeader(msg.welcome().leader_epoch())) return;
  {
    absl::MutexLock lock(&mu_);
    if (conn_.deposed) return;  // Nothing from a deposed leader is obeyed.
  }
  switch (msg.kind_case()) {
    case api::SchedulerMessage::kWelcome:
      Reconcile(msg.welcome());
      break;
    case api::SchedulerMessage::kRun: {
      if (RestartInPlace(msg.run())) break;
      // A pod already here: its attempt's host table grew. The runtime
      // checks the uid and the table before it writes anything.
      absl::Status updated = runtime_->UpdateHosts(
          msg.run().pod().metadata().uid(), msg.run().hosts());
      if (!absl::IsNotFound(updated)) {
        if (!updated.ok()) {
          JOBSET_LOG(WARNING) << "pod " << msg.run().pod().metadata().uid()
                              << ": host table refused: " << updated.message();
        }
        break;
      }
      StartPod(msg.run());
      break;
    }
    case api::SchedulerMessage::kStop: {
      absl::Duration grace = kDefaultGrace;
      {
        absl::MutexLock lock(&mu_);
        if (auto it = pods_.grace.find(msg.stop().pod_uid());
            it != pods_.grace.end())
          grace = it->second;
      }
      runtime_->Stop(msg.stop().pod_uid(), grace).IgnoreError();
      break;
    }
    case api::SchedulerMessage::kRelease:
      ReleasePod(msg.release().pod_uid());
      break;
    case api::SchedulerMessage::kLogRequest: {
      api::AgentMessage reply;
      *reply.mutable_log_chunk() = ReadLog(msg.log_request());
      Send(reply);
      break;
    }
    case api::SchedulerMessage::kHeartbeatAck: {
      absl::MutexLock lock(&mu_);
      auto sent = heartbeats_.in_flight.find(msg.heartbeat_ack().seq());
      if (sent != heartbeats_.in_flight.end()) {
        if (options_.metrics != nullptr) {
          options_.metrics->heartbeat_rtt_seconds.Observe(
              absl::ToDoubleSeconds(clock_->Now() - sent->second));
        }
        heartbeats_.in_flight.erase(heartbeats_.in_flight.begin(),
                                    std::next(sent));
      }
      break;
    }
    default:
      break;
  }
}

void Agent::Reconcile(const api::Welcome& welcome) {
  std::map<std::string, const api::PodAssignment*> desired;
  for (const api::PodAssignment& a : welcome.pods())
    desired[a.pod().metadata().uid()] = &a;
  std::set<std::string> known;
  // Whatever the scheduler does not want goes at once: an old attempt, a pod
  // re-placed elsewhere while this node was lost.
  for (const PodState& pod : runtime_->List()) {
    if (!desired.contains(pod.uid)) {
      ReleasePod(pod.uid);
    } else {
      known.insert(pod.uid);
    }
  }
  for (const auto& [uid, a] : desired) {
    {
      absl::MutexLock lock(&mu_);
      pods_.grace[uid] = GraceOf(a->pod());
    }
    if (a->stop()) {
      if (known.contains(uid))
        runtime_->Stop(uid, GraceOf(a->pod())).IgnoreError();
      continue;
    }
    if (known.contains(uid)) {
      if (!RestartInPlace(*a))
        runtime_->UpdateHosts(uid, a->hosts()).IgnoreError();
    } else {
      StartPod(*a);
    }
  }
  absl::MutexLock lock(&mu_);
  heartbeats_.interval =
      welcome.heartbeat_interval_ms() > 0
          ? absl::Milliseconds(welcome.heartbeat_interval_ms())
          : absl::Seconds(1);
  conn_.welcomed = true;
  conn_.quiet = false;
  // One line per connection (the first, and each after a loss or a
  // failover), naming the replica that leads.
  JOBSET_LOG(INFO) << "connected to jobsetd at "
                   << (replicas_.ok() ? replicas_->current()
                                      : options_.scheduler)
                   << " (leader epoch " << welcome.leader_epoch() << ")";
  if (conn_.lease_fired) {
    JOBSET_LOG(INFO) << "reconnected after the lease ran out";
    conn_.lease_fired = false;
  }
}

void Agent::StartPod(api::PodAssignment a) {
  const std::string uid = a.pod().metadata().uid();
  if (a.stop()) return;
  // Untrusted input: nothing is allocated, written or built from an
  // assignment that does not pass. It fails that pod, never the agent.
  if (absl::Status s = CheckAssignment(a); !s.ok()) {
    ReportFailure(a, "InvalidAssignment", std::string(s.message()));
    return;
  }
  if (absl::Status s = InPlaceAttemptOf(a.pod()).status(); !s.ok()) {
    ReportFailure(a, "InvalidAssignment", std::string(s.message()));
    return;
  }
  const int want = ExtendedRequest(a.pod().spec(), kGpu);
  // Devices of pods that finished are free for admission (DeviceLedger).
  const std::set<std::string> finished =
      want > 0 ? FinishedPods() : std::set<std::string>{};
  std::vector<int> gpus;
  std::string no_devices;
  {
    absl::MutexLock lock(&mu_);
    pods_.grace[uid] = GraceOf(a.pod());
    if (pods_.devices.Contains(uid)) return;  // Started before: never twice.
    if (want > 0) {
      absl::StatusOr<std::vector<int>> picked = pods_.devices.Allocate(
          uid, want, GpuCapacity(), Unrestarted(finished));
      if (picked.ok()) {
        gpus = *picked;
        SaveLedger();
      } else {
        no_devices = absl::StrCat("Allocate failed due to ", kGpu, ": ",
                                  picked.status().message());
      }
    }
  }
  if (!no_devices.empty()) {
    ReportFailure(a, "UnexpectedAdmissionError", no_devices);
    return;
  }
  Launch(std::move(a), gpus);
}

std::set<std::string> Agent::FinishedPods() {
  std::set<std::string> finished;
  for (const PodState& pod : runtime_->List()) {
    if (Finished(pod.status)) finished.insert(pod.uid);
  }
  return finished;
}

std::set<std::string> Agent::Unrestarted(std::set<std::string> finished) {
  for (const auto& [uid, order] : pods_.restarts) finished.erase(uid);
  return finished;
}

int Agent::GpuCapacity() const {
  int total = 0;
  auto cap = options_.registration.capacity().find(kGpu);
  if (cap == options_.registration.capacity().end() ||
      !absl::SimpleAtoi(cap->second, &total) || total < 0) {
    return 0;
  }
  return total;
}

void Agent::Launch(api::PodAssignment a, const std::vector<int>& gpus) {
  const std::string uid = a.pod().metadata().uid();
  absl::StatusOr<std::optional<int32_t>> attempt = InPlaceAttemptOf(a.pod());
  if (attempt.ok() && attempt->has_value()) {
    absl::MutexLock lock(&mu_);
    pods_.attempts[uid] = **attempt;
    SaveLedger();
  }
  SetPodDevices(gpus, &a);
  AddAcceleratorEnv(gpus, &a);
  // As kubelet, once the env is complete: $(NAME) in command and args, for
  // every runtime.
  api::PodSpec& spec = *a.mutable_pod()->mutable_spec();
  for (api::Container& c : *spec.mutable_init_containers())
    api::ExpandCommandAndArgs(&c);
  for (api::Container& c : *spec.mutable_containers())
    api::ExpandCommandAndArgs(&c);
  const absl::Time ordered = clock_->Now();
  absl::Status started = runtime_->Start(a);
  if (started.ok()) {
    if (options_.metrics != nullptr) options_.metrics->launches.Increment();
    absl::MutexLock lock(&mu_);
    pods_.launching[uid] = ordered;
  }
  if (started.ok() || absl::IsAlreadyExists(started)) return;
  ReportFailure(a, "StartError", std::string(started.message()));
}

api::LogChunk ReadLogChunk(const Runtime& runtime,
                           const api::LogRequest& request) {
  api::LogChunk chunk;
  chunk.set_request_id(request.request_id());
  if (absl::Status s = CheckPodUid("logRequest.podUid", request.pod_uid());
      !s.ok()) {
    chunk.set_error(absl::StrCat("not found: ", s.message()));
    return chunk;
  }
  if (absl::Status s =
          CheckDnsLabel("logRequest.container", request.container());
      !s.ok()) {
    chunk.set_error(absl::StrCat("not found: ", s.message()));
    return chunk;
  }
  const std::string path =
      runtime.LogPath(request.pod_uid(), request.container());
  std::ifstream in;
  if (!path.empty()) in.open(path, std::ios::binary | std::ios::ate);
  if (path.empty() || !in) {
    chunk.set_error(absl::StrCat("not found: no log for container \"",
                                 request.container(), "\" of pod ",
                                 request.pod_uid(), " on this node"));
    return chunk;
  }
  const int64_t size = in.tellg();
  int64_t offset = request.offset();
  if (offset < 0) {
    // Capped before it is negated (no overflow at INT64_MIN).
    const int64_t back = -std::max(offset, -kMaxLogTailBytes);
    offset = std::max<int64_t>(0, size - back);
  }
  offset = std::min(offset, size);
  const int64_t n = std::min<int64_t>(
      size - offset, std::clamp(request.max_bytes(), 1, kMaxLogChunkBytes));
  std::string data(n, '\0');
  in.seekg(offset);
  in.read(data.data(), n);
  data.resize(in.gcount());
  if (!runtime.CriLogFormat()) {
    chunk.set_next_offset(offset + static_cast<int64_t>(data.size()));
    chunk.set_data(std::move(data));
    return chunk;
  }
  // A CRI log: whole lines decoded to the container's output; a tail starts
  // at the first whole line; offsets stay the file's.
  size_t skipped = 0;
  if (request.offset() < 0 && offset > 0) {
    const size_t nl = data.find('\n');
    skipped = nl == std::string::npos ? data.size() : nl + 1;
  }
  size_t consumed = 0;
  std::string decoded =
      cri::DecodeCriLog(absl::string_view(data).substr(skipped), &consumed);
  if (consumed == 0 && static_cast<int64_t>(data.size()) == n && n > 0 &&
      skipped == 0) {
    // One line longer than a chunk: passed on undecoded rather than stuck.
    consumed = data.size();
    decoded = data;
  }
  chunk.set_next_offset(offset + static_cast<int64_t>(skipped + consumed));
  chunk.set_data(std::move(decoded));
  return chunk;
}

api::LogChunk Agent::ReadLog(const api::LogRequest& request) {
  return ReadLogChunk(*runtime_, request);
}

void Agent::ReportFailure(const api::PodAssignment& a,
                          const std::string& reason,
                          const std::string& message) {
  JOBSET_LOG(WARNING) << "pod " << a.pod().metadata().name() << ": " << reason
                      << ": " << message;
  api::AgentMessage msg;
  api::PodReport* r = msg.mutable_pod_update();
  r->set_pod_uid(a.pod().metadata().uid());
  // Of the attempt it was to run, so that jobsetd takes it.
  absl::StatusOr<std::optional<int32_t>> attempt = InPlaceAttemptOf(a.pod());
  r->set_in_place_restart_attempt(attempt.ok() && attempt->has_value()
                                      ? **attempt
                                      : AttemptRunning(r->pod_uid()));
  r->mutable_status()->set_phase(api::kPodFailed);
  r->mutable_status()->set_reason(reason);
  r->mutable_status()->set_message(message);
  Send(msg);
}

void Agent::ReleasePod(const std::string& uid) {
  runtime_->Remove(uid).IgnoreError();
  absl::MutexLock lock(&mu_);
  pods_.sent.erase(uid);
  pods_.grace.erase(uid);
  pods_.exited.erase(uid);
  pods_.restarts.erase(uid);
  pods_.launching.erase(uid);
  const bool devices = pods_.devices.Erase(uid);
  if (pods_.attempts.erase(uid) > 0 || devices) SaveLedger();
}

int32_t Agent::AttemptRunning(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.attempts.find(uid);
  return it == pods_.attempts.end() ? 0 : it->second;
}

bool Agent::RestartInPlace(const api::PodAssignment& a) {
  if (a.stop()) return false;
  const std::string uid = a.pod().metadata().uid();
  absl::StatusOr<std::optional<int32_t>> attempt = InPlaceAttemptOf(a.pod());
  if (!attempt.ok() || !attempt->has_value()) return false;
  // Only a pod the runtime has restarts; any other is started as new.
  std::optional<bool> finished;
  for (const PodState& pod : runtime_->List()) {
    if (pod.uid == uid) finished = Finished(pod.status);
  }
  if (!finished.has_value()) return false;
  {
    absl::MutexLock lock(&mu_);
    // No entry: the pod was started at attempt 0 (its entry is written
    // before any later attempt starts).
    auto it = pods_.attempts.find(uid);
    const int32_t running = it == pods_.attempts.end() ? 0 : it->second;
    if (**attempt <= running) return false;
    pods_.grace[uid] = GraceOf(a.pod());
  }
  // Untrusted input, as in StartPod: nothing is stopped or restarted for an
  // assignment that does not pass.
  if (absl::Status s = CheckAssignment(a); !s.ok()) {
    ReportFailure(a, "InvalidAssignment", std::string(s.message()));
    return true;
  }
  {
    absl::MutexLock lock(&mu_);
    pods_.restarts[uid] = a;
  }
  if (*finished) {
    FinishRestart(uid);
  } else {
    // The barrier is jobsetd's: it sends the next attempt only once every
    // pod stopped, so this pod is normally stopped already.
    runtime_->Stop(uid, GraceOf(a.pod())).IgnoreError();
  }
  return true;
}

void Agent::FinishRestarts(const std::vector<PodState>& pods) {
  std::vector<std::string> ready;
  {
    absl::MutexLock lock(&mu_);
    if (pods_.restarts.empty()) return;
    for (const PodState& pod : pods) {
      if (pods_.restarts.contains(pod.uid) && Finished(pod.status))
        ready.push_back(pod.uid);
    }
  }
  for (const std::string& uid : ready) FinishRestart(uid);
}

void Agent::FinishRestart(const std::string& uid) {
  const std::set<std::string> finished = FinishedPods();
  api::PodAssignment a;
  std::vector<int> gpus;
  std::string no_devices;
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_.restarts.find(uid);
    if (it == pods_.restarts.end()) return;
    a = std::move(it->second);
    pods_.restarts.erase(it);
    gpus = pods_.devices.Of(uid);
    // While this pod was finished its devices were free for admission: one
    // given out since then means it is admitted again on others.
    const std::set<std::string> others = Unrestarted(finished);
    if (pods_.devices.Contested(uid, others)) {
      pods_.devices.Erase(uid);
      absl::StatusOr<std::vector<int>> picked = pods_.devices.Allocate(
          uid, static_cast<int>(gpus.size()), GpuCapacity(), others);
      if (picked.ok()) {
        gpus = *picked;
      } else {
        no_devices = absl::StrCat("Allocate failed due to ", kGpu, ": ",
                                  picked.status().message());
      }
      SaveLedger();
    }
  }
  if (!no_devices.empty()) {
    runtime_->Remove(uid).IgnoreError();
    ReportFailure(a, "UnexpectedAdmissionError", no_devices);
    return;
  }
  // The old attempt's state goes (its logs stay); the pod starts again under
  // its uid, on its devices. The ledger says which attempt the runtime's
  // state is of, so an agent restarted in between neither loses an exit nor
  // runs an attempt twice.
  runtime_->Remove(uid).IgnoreError();
  {
    absl::MutexLock lock(&mu_);
    pods_.sent.erase(uid);
    pods_.exited.erase(uid);
  }
  JOBSET_LOG(INFO) << "pod " << a.pod().metadata().name()
                   << ": restarting in place";
  Launch(std::move(a), gpus);
}

void Agent::TickLoop() {
  absl::Time last = absl::InfinitePast();
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return conn_.stopping;
      };
      // A runtime that tells of changes wakes the tick early (a pod's exit
      // or start is reported at once), but at most every kMinTick; one that
      // cannot is polled every tick.
      const absl::Duration since = clock_->Now() - last;
      const absl::Duration pause =
          since < kMinTick ? kMinTick - since : absl::ZeroDuration();
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping), pause)) return;
    }
    if (!runtime_->WaitForChange(options_.tick)) {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return conn_.stopping;
      };
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping), options_.tick))
        return;
    }
    last = clock_->Now();
    Tick();
  }
}

void Agent::Tick() {
  const absl::Time now = clock_->Now();
  bool fire_lease = false;
  bool welcomed = false;
  bool heartbeat = false;
  api::AgentMessage hb;
  {
    absl::MutexLock lock(&mu_);
    if (options_.lease > absl::ZeroDuration() && !conn_.lease_fired &&
        now - conn_.last_contact > options_.lease) {
      conn_.lease_fired = fire_lease = true;
    }
    welcomed = conn_.welcomed;
    // A stream that hears nothing is dead even if TCP has not noticed.
    const absl::Duration silence =
        std::max(3 * heartbeats_.interval, absl::Seconds(2));
    if (conn_.context != nullptr &&
        ((welcomed && now - conn_.last_contact > silence) ||
         (!welcomed && now - conn_.opened > kWelcomeTimeout))) {
      conn_.context->TryCancel();
    }
    if (welcomed && now - heartbeats_.last_sent >= heartbeats_.interval) {
      heartbeats_.last_sent = now;
      hb.mutable_heartbeat()->set_seq(++heartbeats_.seq);
      heartbeat = true;
      heartbeats_.in_flight[heartbeats_.seq] = now;
      if (heartbeats_.in_flight.size() > 100)
        heartbeats_.in_flight.erase(heartbeats_.in_flight.begin());
    }
  }
  if (now - last_log_sweep_ >= options_.log_sweep) {
    last_log_sweep_ = now;
    absl::StatusOr<int> pruned =
        runtime_->PruneLogs(now, options_.log_retention);
    if (!pruned.ok()) {
      JOBSET_LOG(WARNING) << "log retention: " << pruned.status().message();
    } else if (*pruned > 0) {
      JOBSET_LOG(INFO) << "log retention: removed the logs of " << *pruned
                       << " released pods";
    }
  }
  std::vector<PodState> pods = runtime_->List();
  if (fire_lease) {
    JOBSET_LOG(WARNING) << "no word from the scheduler for "
                        << absl::FormatDuration(options_.lease)
                        << " (lease): stopping every pod";
    for (const PodState& pod : pods) {
      if (!Finished(pod.status))
        runtime_->Stop(pod.uid, kLeaseGrace).IgnoreError();
    }
  }
  FinishRestarts(pods);
  if (options_.metrics != nullptr) {
    RecordPods(pods);
    options_.metrics->connected.Set(welcomed ? 1 : 0);
  }
  if (!welcomed) return;
  if (heartbeat) Send(hb);
  // Events go once, with the pod's next report (one is sent for them even
  // when the status did not change); lost if the stream is.
  std::map<std::string, std::vector<api::PodEvent>> events =
      runtime_->TakeEvents();
  for (PodState& pod : pods) {
    std::string now_status = pod.status.SerializeAsString();
    auto pod_events = events.find(pod.uid);
    if (pod_events == events.end()) {
      absl::MutexLock lock(&mu_);
      auto it = pods_.sent.find(pod.uid);
      if (it != pods_.sent.end() && it->second == now_status) continue;
    }
    api::AgentMessage msg;
    api::PodReport* report = msg.mutable_pod_update();
    report->set_pod_uid(pod.uid);
    report->set_in_place_restart_attempt(AttemptRunning(pod.uid));
    *report->mutable_status() = std::move(pod.status);
    TakeLaunch(pod.uid, report->status(), now, report);
    if (pod_events != events.end()) {
      const std::vector<api::PodEvent>& e = pod_events->second;
      // jobsetd takes at most kMaxEventsPerPod in one report: the latest.
      const size_t skip = e.size() > Runtime::kMaxEventsPerPod
                              ? e.size() - Runtime::kMaxEventsPerPod
                              : 0;
      for (size_t i = skip; i < e.size(); ++i) *report->add_events() = e[i];
    }
    if (!Send(msg)) return;
    absl::MutexLock lock(&mu_);
    pods_.sent[pod.uid] = std::move(now_status);
  }
}

void Agent::TakeLaunch(const std::string& uid, const api::PodStatus& status,
                       absl::Time now, api::PodReport* report) {
  if (status.phase().empty() || status.phase() == api::kPodPending) return;
  absl::Time ordered;
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_.launching.find(uid);
    if (it == pods_.launching.end()) return;
    ordered = it->second;
    pods_.launching.erase(it);
  }
  // A pod seen only once it had finished has no launch to time.
  if (status.phase() != api::kPodRunning) return;
  const absl::Duration to_report =
      std::max(now - ordered, absl::ZeroDuration());
  api::LaunchTimings* launch = report->mutable_launch();
  SetDuration(to_report, launch->mutable_received_to_reported());
  // The runtime's start times are the host's wall clock, as is `ordered`
  // with jobset-agent's clock.
  absl::Time started = absl::InfinitePast();
  for (const api::ContainerStatus& c : status.container_statuses()) {
    if (c.has_started_at()) started = std::max(started, ToTime(c.started_at()));
  }
  if (started >= ordered && started - ordered <= to_report)
    SetDuration(started - ordered, launch->mutable_received_to_started());
  if (options_.metrics != nullptr)
    options_.metrics->launch_seconds.Observe(absl::ToDoubleSeconds(to_report));
}

void Agent::RecordPods(const std::vector<PodState>& pods) {
  std::map<std::string, double> phases = {{api::kPodPending, 0},
                                          {api::kPodRunning, 0},
                                          {api::kPodSucceeded, 0},
                                          {api::kPodFailed, 0}};
  absl::MutexLock lock(&mu_);
  for (const PodState& pod : pods) {
    phases[pod.status.phase().empty() ? api::kPodPending
                                      : pod.status.phase()] += 1;
    // Each pod's end counts once.
    if (Finished(pod.status) && pods_.exited.insert(pod.uid).second) {
      std::string reason = pod.status.reason();
      if (reason.empty() && pod.status.container_statuses_size() > 0)
        reason = pod.status.container_statuses(0).reason();
      options_.metrics->exits.Add({{"reason", reason}}).Increment();
    }
  }
  for (const auto& [phase, n] : phases)
    options_.metrics->pods.Add({{"phase", phase}}).Set(n);
}

void Agent::LoadLedger() {
  if (options_.state_dir.empty()) return;
  std::set<std::string> live;
  for (const PodState& pod : runtime_->List()) live.insert(pod.uid);
  absl::MutexLock lock(&mu_);
  {
    std::ifstream in(absl::StrCat(options_.state_dir, "/attempts"));
    std::string uid, attempt;
    while (in >> uid >> attempt) {
      int32_t n = 0;
      if (live.contains(uid) && absl::SimpleAtoi(attempt, &n) && n >= 0)
        pods_.attempts[uid] = n;
    }
  }
  std::ifstream in(absl::StrCat(options_.state_dir, "/devices"));
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  pods_.devices = DeviceLedger::Parse(text, live);
}

namespace {

// Replaces `path` with `text` (a crash leaves the old file or the new one).
void ReplaceFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
  }
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace

void Agent::SaveLedger() {
  if (options_.state_dir.empty()) return;
  ReplaceFile(absl::StrCat(options_.state_dir, "/devices"),
              pods_.devices.Serialize());
  std::string attempts;
  for (const auto& [uid, attempt] : pods_.attempts)
    absl::StrAppend(&attempts, uid, " ", attempt, "\n");
  ReplaceFile(absl::StrCat(options_.state_dir, "/attempts"), attempts);
}

}  // namespace jobset::agent
