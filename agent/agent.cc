#include "agent/agent.h"

#include <cstdio>
#include <fstream>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/host.h"

namespace jobset::agent {
namespace {

constexpr char kGpu[] = "nvidia.com/gpu";
constexpr absl::Duration kDefaultGrace = absl::Seconds(30);
constexpr absl::Duration kLeaseGrace = absl::Seconds(1);
constexpr absl::Duration kWelcomeTimeout = absl::Seconds(10);
constexpr int32_t kMaxLogChunk = 1 << 20;

bool Finished(const api::PodStatus& s) {
  return s.phase() == "Succeeded" || s.phase() == "Failed";
}

absl::Duration GraceOf(const api::Pod& pod) {
  return pod.spec().has_termination_grace_period_seconds()
             ? absl::Seconds(pod.spec().termination_grace_period_seconds())
             : kDefaultGrace;
}

}  // namespace

Agent::Agent(Options options, Runtime* runtime)
    : options_(std::move(options)), runtime_(runtime) {
  absl::MutexLock lock(&mu_);
  last_contact_ = absl::Now();
}

Agent::~Agent() { Shutdown(); }

void Agent::Start() {
  LoadDevices();
  if (options_.metrics != nullptr) {
    options_.metrics->reattached.Increment(
        static_cast<double>(runtime_->List().size()));
  }
  absl::Status lease = runtime_->SetLease(options_.lease);
  if (!lease.ok()) {
    std::fprintf(stderr, "jobset-agent: %s\n", lease.ToString().c_str());
  }
  connect_thread_ = std::thread([this] { ConnectLoop(); });
  tick_thread_ = std::thread([this] { TickLoop(); });
}

void Agent::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    if (context_ != nullptr) context_->TryCancel();
  }
  if (connect_thread_.joinable()) connect_thread_.join();
  if (tick_thread_.joinable()) tick_thread_.join();
}

bool Agent::welcomed() {
  absl::MutexLock lock(&mu_);
  return welcomed_;
}

int64_t Agent::connects() {
  absl::MutexLock lock(&mu_);
  return connects_;
}

void Agent::ConnectLoop() {
  absl::Duration backoff = options_.min_backoff;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    Session();
    bool was_welcomed;
    {
      absl::MutexLock lock(&mu_);
      was_welcomed = std::exchange(welcomed_, false);
      if (stopping_) return;
    }
    if (was_welcomed) backoff = options_.min_backoff;
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

void Agent::Session() {
  // A fresh channel per attempt: the agent's own backoff paces reconnects,
  // not the state of a channel that saw the scheduler go away.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              absl::ToInt64Milliseconds(options_.min_backoff));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
              absl::ToInt64Milliseconds(options_.min_backoff));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              absl::ToInt64Milliseconds(options_.max_backoff));
  std::unique_ptr<api::AgentService::Stub> stub =
      api::AgentService::NewStub(grpc::CreateCustomChannel(
          options_.scheduler, grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext context;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    context_ = &context;
    stream_opened_ = absl::Now();
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
    *r->mutable_status() = std::move(pod.status);
  }
  if (stream->Write(hello)) {
    {
      absl::MutexLock lock(&mu_);
      sent_ = std::move(sent);
      ++connects_;
    }
    {
      absl::MutexLock lock(&write_mu_);
      stream_ = stream.get();
    }
    api::SchedulerMessage msg;
    absl::Time renewed = absl::InfinitePast();
    while (stream->Read(&msg)) {
      const absl::Time now = absl::Now();
      {
        absl::MutexLock lock(&mu_);
        last_contact_ = now;
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
    context_ = nullptr;
  }
  grpc::Status status = stream->Finish();
  bool report, was_welcomed;
  {
    // One line per outage, not one per attempt.
    absl::MutexLock lock(&mu_);
    was_welcomed = welcomed_;
    report = welcomed_ || !quiet_;
    quiet_ = !welcomed_;
  }
  if (report) {
    std::fprintf(stderr,
                 "jobset-agent: %s %s: code %d: %s (pods keep running; "
                 "reconnecting)\n",
                 was_welcomed ? "lost jobsetd at" : "cannot reach jobsetd at",
                 options_.scheduler.c_str(), status.error_code(),
                 status.error_message().c_str());
  }
}

bool Agent::Send(const api::AgentMessage& msg) {
  absl::MutexLock lock(&write_mu_);
  return stream_ != nullptr && stream_->Write(msg);
}

void Agent::Handle(const api::SchedulerMessage& msg) {
  switch (msg.kind_case()) {
    case api::SchedulerMessage::kWelcome:
      Reconcile(msg.welcome());
      break;
    case api::SchedulerMessage::kRun:
      // A pod already here: its attempt's host table grew.
      if (!absl::IsNotFound(runtime_->UpdateHosts(
              msg.run().pod().metadata().uid(), msg.run().hosts()))) {
        break;
      }
      StartPod(msg.run());
      break;
    case api::SchedulerMessage::kStop: {
      absl::Duration grace = kDefaultGrace;
      {
        absl::MutexLock lock(&mu_);
        if (auto it = grace_.find(msg.stop().pod_uid()); it != grace_.end())
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
      auto sent = heartbeats_.find(msg.heartbeat_ack().seq());
      if (sent != heartbeats_.end()) {
        if (options_.metrics != nullptr) {
          options_.metrics->heartbeat_rtt_seconds.Observe(
              absl::ToDoubleSeconds(absl::Now() - sent->second));
        }
        heartbeats_.erase(heartbeats_.begin(), std::next(sent));
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
      grace_[uid] = GraceOf(a->pod());
    }
    if (a->stop()) {
      if (known.contains(uid))
        runtime_->Stop(uid, GraceOf(a->pod())).IgnoreError();
      continue;
    }
    if (known.contains(uid)) {
      runtime_->UpdateHosts(uid, a->hosts()).IgnoreError();
    } else {
      StartPod(*a);
    }
  }
  absl::MutexLock lock(&mu_);
  heartbeat_interval_ =
      welcome.heartbeat_interval_ms() > 0
          ? absl::Milliseconds(welcome.heartbeat_interval_ms())
          : absl::Seconds(1);
  welcomed_ = true;
  if (std::exchange(quiet_, false)) {
    std::fprintf(stderr, "jobset-agent: connected to jobsetd at %s\n",
                 options_.scheduler.c_str());
  }
  if (lease_fired_) {
    std::fprintf(stderr, "jobset-agent: reconnected after the lease ran out\n");
    lease_fired_ = false;
  }
}

void Agent::StartPod(api::PodAssignment a) {
  const std::string uid = a.pod().metadata().uid();
  if (a.stop()) return;
  std::vector<int> gpus;
  std::string no_devices;
  {
    absl::MutexLock lock(&mu_);
    grace_[uid] = GraceOf(a.pod());
    if (devices_.contains(uid)) return;  // Started before: never twice.
    const int want = ExtendedRequest(a.pod().spec(), kGpu);
    if (want > 0) {
      int total = 0;
      auto cap = options_.registration.capacity().find(kGpu);
      if (cap != options_.registration.capacity().end() &&
          !absl::SimpleAtoi(cap->second, &total)) {
        total = 0;
      }
      std::set<int> used;
      for (const auto& [other, ids] : devices_)
        used.insert(ids.begin(), ids.end());
      absl::StatusOr<std::vector<int>> picked = PickDevices(want, total, used);
      if (picked.ok()) {
        gpus = *picked;
        devices_[uid] = gpus;
        SaveDevices();
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
  AddAcceleratorEnv(gpus, &a);
  const absl::Time ordered = absl::Now();
  absl::Status started = runtime_->Start(a);
  if (started.ok() && options_.metrics != nullptr) {
    options_.metrics->launches.Increment();
    absl::MutexLock lock(&mu_);
    launching_[uid] = ordered;
  }
  if (started.ok() || absl::IsAlreadyExists(started)) return;
  ReportFailure(a, "StartError", std::string(started.message()));
}

api::LogChunk Agent::ReadLog(const api::LogRequest& request) {
  api::LogChunk chunk;
  chunk.set_request_id(request.request_id());
  const std::string path =
      runtime_->LogPath(request.pod_uid(), request.container());
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (path.empty() || !in) {
    chunk.set_error(absl::StrCat("no log for container \"", request.container(),
                                 "\" of pod ", request.pod_uid(),
                                 " on this node"));
    return chunk;
  }
  const int64_t size = in.tellg();
  int64_t offset = request.offset();
  if (offset < 0) offset = std::max<int64_t>(0, size + offset);
  offset = std::min(offset, size);
  const int64_t n = std::min<int64_t>(
      size - offset, std::clamp(request.max_bytes(), 1, kMaxLogChunk));
  std::string data(n, '\0');
  in.seekg(offset);
  in.read(data.data(), n);
  data.resize(in.gcount());
  chunk.set_next_offset(offset + static_cast<int64_t>(data.size()));
  chunk.set_data(std::move(data));
  return chunk;
}

void Agent::ReportFailure(const api::PodAssignment& a,
                          const std::string& reason,
                          const std::string& message) {
  std::fprintf(stderr, "jobset-agent: pod %s: %s: %s\n",
               a.pod().metadata().name().c_str(), reason.c_str(),
               message.c_str());
  api::AgentMessage msg;
  api::PodReport* r = msg.mutable_pod_update();
  r->set_pod_uid(a.pod().metadata().uid());
  r->mutable_status()->set_phase("Failed");
  r->mutable_status()->set_reason(reason);
  r->mutable_status()->set_message(message);
  Send(msg);
}

void Agent::ReleasePod(const std::string& uid) {
  runtime_->Remove(uid).IgnoreError();
  absl::MutexLock lock(&mu_);
  sent_.erase(uid);
  grace_.erase(uid);
  exited_.erase(uid);
  if (devices_.erase(uid) > 0) SaveDevices();
}

void Agent::TickLoop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_;
      };
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping), options_.tick))
        return;
    }
    Tick();
  }
}

void Agent::Tick() {
  const absl::Time now = absl::Now();
  bool fire_lease = false;
  bool welcomed = false;
  bool heartbeat = false;
  api::AgentMessage hb;
  {
    absl::MutexLock lock(&mu_);
    if (options_.lease > absl::ZeroDuration() && !lease_fired_ &&
        now - last_contact_ > options_.lease) {
      lease_fired_ = fire_lease = true;
    }
    welcomed = welcomed_;
    // A stream that hears nothing is dead even if TCP has not noticed.
    const absl::Duration silence =
        std::max(3 * heartbeat_interval_, absl::Seconds(2));
    if (context_ != nullptr &&
        ((welcomed && now - last_contact_ > silence) ||
         (!welcomed && now - stream_opened_ > kWelcomeTimeout))) {
      context_->TryCancel();
    }
    if (welcomed && now - last_heartbeat_ >= heartbeat_interval_) {
      last_heartbeat_ = now;
      hb.mutable_heartbeat()->set_seq(++heartbeat_seq_);
      heartbeat = true;
      heartbeats_[heartbeat_seq_] = now;
      if (heartbeats_.size() > 100) heartbeats_.erase(heartbeats_.begin());
    }
  }
  std::vector<PodState> pods = runtime_->List();
  if (fire_lease) {
    std::fprintf(stderr,
                 "jobset-agent: no word from the scheduler for %s (lease): "
                 "stopping every pod\n",
                 absl::FormatDuration(options_.lease).c_str());
    for (const PodState& pod : pods) {
      if (!Finished(pod.status))
        runtime_->Stop(pod.uid, kLeaseGrace).IgnoreError();
    }
  }
  if (options_.metrics != nullptr) {
    RecordPods(pods, now);
    options_.metrics->connected.Set(welcomed ? 1 : 0);
  }
  if (!welcomed) return;
  if (heartbeat) Send(hb);
  for (PodState& pod : pods) {
    std::string now_status = pod.status.SerializeAsString();
    {
      absl::MutexLock lock(&mu_);
      auto it = sent_.find(pod.uid);
      if (it != sent_.end() && it->second == now_status) continue;
    }
    api::AgentMessage msg;
    msg.mutable_pod_update()->set_pod_uid(pod.uid);
    *msg.mutable_pod_update()->mutable_status() = std::move(pod.status);
    if (!Send(msg)) return;
    absl::MutexLock lock(&mu_);
    sent_[pod.uid] = std::move(now_status);
  }
}

void Agent::RecordPods(const std::vector<PodState>& pods, absl::Time now) {
  std::map<std::string, double> phases = {
      {"Pending", 0}, {"Running", 0}, {"Succeeded", 0}, {"Failed", 0}};
  absl::MutexLock lock(&mu_);
  for (const PodState& pod : pods) {
    phases[pod.status.phase().empty() ? "Pending" : pod.status.phase()] += 1;
    auto ordered = launching_.find(pod.uid);
    if (ordered != launching_.end() && pod.status.phase() != "Pending") {
      if (pod.status.phase() == "Running") {
        options_.metrics->launch_seconds.Observe(
            absl::ToDoubleSeconds(now - ordered->second));
      }
      launching_.erase(ordered);
    }
    // Each pod's end counts once.
    if (Finished(pod.status) && exited_.insert(pod.uid).second) {
      std::string reason = pod.status.reason();
      if (reason.empty() && pod.status.container_statuses_size() > 0)
        reason = pod.status.container_statuses(0).reason();
      options_.metrics->exits.Add({{"reason", reason}}).Increment();
    }
  }
  for (const auto& [phase, n] : phases)
    options_.metrics->pods.Add({{"phase", phase}}).Set(n);
}

void Agent::LoadDevices() {
  if (options_.state_dir.empty()) return;
  std::set<std::string> live;
  for (const PodState& pod : runtime_->List()) live.insert(pod.uid);
  std::ifstream in(absl::StrCat(options_.state_dir, "/devices"));
  std::string uid, ids;
  absl::MutexLock lock(&mu_);
  while (in >> uid >> ids) {
    if (!live.contains(uid)) continue;
    std::vector<int>& d = devices_[uid];
    for (absl::string_view id : absl::StrSplit(ids, ',', absl::SkipEmpty())) {
      int i = 0;
      if (absl::SimpleAtoi(id, &i)) d.push_back(i);
    }
  }
}

void Agent::SaveDevices() {
  if (options_.state_dir.empty()) return;
  const std::string path = absl::StrCat(options_.state_dir, "/devices");
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& [uid, ids] : devices_)
      out << uid << " " << (ids.empty() ? "-" : absl::StrJoin(ids, ","))
          << "\n";
  }
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace jobset::agent
