#include "tests/fleet_sim_agent.h"

#include <signal.h>

#include <algorithm>
#include <deque>
#include <set>
#include <utility>

#include "absl/random/random.h"

namespace jobset::testing::fleet {
namespace {

// As agent/scheduler_stream.cc.
constexpr absl::Duration kWelcomeTimeout = absl::Seconds(10);
constexpr absl::Duration kMinSilence = absl::Seconds(2);

constexpr char kRunning[] = "Running";
constexpr char kSucceeded[] = "Succeeded";
constexpr char kFailed[] = "Failed";

void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out) {
  const int64_t nanos = absl::ToUnixNanos(t);
  out->set_seconds(nanos / 1'000'000'000);
  out->set_nanos(static_cast<int32_t>(nanos % 1'000'000'000));
}

void SetDuration(absl::Duration d, google::protobuf::Duration* out) {
  out->set_seconds(absl::IDivDuration(d, absl::Seconds(1), &d));
  out->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(d)));
}

// A random fraction in [0, 1), from a generator per thread (timers and
// gRPC's callbacks call it).
double Jitter() {
  thread_local absl::BitGen gen;
  return absl::Uniform(gen, 0.0, 1.0);
}

}  // namespace

// One AgentService.Connect call on the callback API. Writes go one at a
// time from a queue: Enqueue (under the agent's lock, so that messages keep
// the agent's order) says whether the caller is to start the queue's first
// write (StartQueued, with no lock held). A hold keeps the call open while
// the agent may still write from outside a reaction (timers), and is
// released once reading has ended and no write is in flight. The agent and
// the call itself (until OnDone) own it.
class AgentStream final
    : public grpc::ClientBidiReactor<api::AgentMessage, api::SchedulerMessage> {
 public:
  AgentStream(SimAgent* agent, std::shared_ptr<grpc::Channel> channel)
      : agent_(agent),
        channel_(std::move(channel)),
        stub_(api::AgentService::NewStub(channel_)) {}

  // Starts the call; `write`: Enqueue asked for the first write.
  void Open(std::shared_ptr<AgentStream> self, bool write) {
    self_ = std::move(self);
    stub_->async()->Connect(&context_, this);
    AddHold();
    if (write) StartQueued();
    StartRead(&in_);
    StartCall();
  }

  // Queues `msg`; true when the caller must StartQueued. Dropped once the
  // stream is ending.
  bool Enqueue(api::AgentMessage msg) {
    absl::MutexLock lock(&mu_);
    if (closed_) return false;
    out_.push_back(std::move(msg));
    if (writing_) return false;
    writing_ = true;
    return true;
  }

  void StartQueued() {
    const api::AgentMessage* next;
    {
      absl::MutexLock lock(&mu_);
      next = &out_.front();
    }
    StartWrite(next);
  }

  void Cancel() { context_.TryCancel(); }

  void OnReadDone(bool ok) override {
    if (ok) {
      agent_->OnMessage(this, in_);
      StartRead(&in_);
      return;
    }
    bool release;
    {
      absl::MutexLock lock(&mu_);
      closed_ = true;
      release = ReleasableLocked();
    }
    if (release) RemoveHold();
  }

  void OnWriteDone(bool ok) override {
    bool more = false, release = false;
    {
      absl::MutexLock lock(&mu_);
      out_.pop_front();
      if (!ok) closed_ = true;
      if (closed_ || out_.empty()) {
        writing_ = false;
        if (closed_) out_.clear();
        release = ReleasableLocked();
      } else {
        more = true;
      }
    }
    if (more) {
      StartQueued();
    } else if (release) {
      RemoveHold();
    } else if (!ok) {
      // A failed write ends the call; the read still pending ends with it.
      context_.TryCancel();
    }
  }

  void OnDone(const grpc::Status& status) override {
    agent_->OnStreamDone(this, status);
    // The agent has let go; this may be the last owner.
    std::shared_ptr<AgentStream> self = std::move(self_);
  }

 private:
  bool ReleasableLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!closed_ || writing_ || released_) return false;
    released_ = true;
    return true;
  }

  SimAgent* const agent_;
  const std::shared_ptr<grpc::Channel> channel_;
  const std::unique_ptr<api::AgentService::Stub> stub_;
  grpc::ClientContext context_;
  api::SchedulerMessage in_;
  std::shared_ptr<AgentStream> self_;  // set by Open, dropped by OnDone

  absl::Mutex mu_;
  std::deque<api::AgentMessage> out_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
};

SimAgent::SimAgent(Fleet* fleet, int index)
    : fleet_(fleet),
      index_(index),
      name_(SimNodeName(index)),
      backoff_(fleet->options().min_backoff),
      mixer_(fleet->options().mix, static_cast<uint64_t>(index)) {}

SimAgent::~SimAgent() { Shutdown(); }

SimAgent::Effects SimAgent::TakeEffectsLocked() {
  Effects e;
  e.write = std::exchange(write_, false);
  e.cancel = std::exchange(cancel_, false);
  if (e.write || e.cancel) e.stream = stream_;
  return e;
}

void SimAgent::Apply(const Effects& e) {
  if (e.stream == nullptr) return;
  if (e.write) e.stream->StartQueued();
  if (e.cancel) e.stream->Cancel();
}

void SimAgent::SetIdentity(const std::string& key_pem,
                           const std::string& cert_pem,
                           const std::string& ca_pem) {
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ca_pem;
  ssl.pem_cert_chain = cert_pem;
  ssl.pem_private_key = key_pem;
  absl::MutexLock lock(&mu_);
  credentials_ = grpc::SslCredentials(ssl);
}

void SimAgent::Start() {
  // On the one connector thread, as every reconnect: streams opened from
  // many threads at once made jobsetd's TLS handshakes fail in numbers
  // (docs/benchmarks.md, "Fleet (issue 42)").
  fleet_->connects().At(absl::Now(), [this] { Connect(); });
}

void SimAgent::BeginShutdown() {
  Effects e;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    cancel_ = stream_ != nullptr;
    e = TakeEffectsLocked();
  }
  Apply(e);
}

void SimAgent::Shutdown() {
  BeginShutdown();
  // The stream ends on gRPC's threads; wait for it (bounded).
  absl::MutexLock lock(&mu_);
  auto gone = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stream_ == nullptr;
  };
  mu_.AwaitWithTimeout(absl::Condition(&gone), absl::Seconds(5));
}

void SimAgent::Silence() {
  absl::MutexLock lock(&mu_);
  silent_ = true;
}

void SimAgent::Resume() {
  Effects e;
  {
    absl::MutexLock lock(&mu_);
    if (!silent_) return;
    silent_ = false;
    if (stream_ == nullptr) {
      backoff_ = fleet_->options().min_backoff;
      fleet_->connects().At(absl::Now(), [this] { Connect(); });
      return;
    }
    // The stream it kept while silent ends; OnStreamDone reconnects.
    cancel_ = true;
    e = TakeEffectsLocked();
  }
  Apply(e);
}

void SimAgent::Reconnect() {
  Effects e;
  {
    absl::MutexLock lock(&mu_);
    if (silent_ || stopping_ || stream_ == nullptr) return;
    // OnStreamDone reconnects.
    cancel_ = true;
    e = TakeEffectsLocked();
  }
  Apply(e);
}

bool SimAgent::welcomed() {
  absl::MutexLock lock(&mu_);
  return welcomed_;
}

bool SimAgent::silent() {
  absl::MutexLock lock(&mu_);
  return silent_;
}

std::vector<SimAgent::PodView> SimAgent::Pods() {
  absl::MutexLock lock(&mu_);
  std::vector<PodView> out;
  out.reserve(pods_.size());
  for (const auto& [uid, p] : pods_)
    out.push_back({uid, p.jobset, p.attempt, p.job, p.phase == kRunning});
  return out;
}

int SimAgent::pod_count() {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(pods_.size());
}

ReportMixer::Counts SimAgent::mixed() {
  absl::MutexLock lock(&mu_);
  return mixer_.counts();
}

std::optional<absl::Time> SimAgent::EndPod(const std::string& uid,
                                           int exit_code) {
  std::optional<absl::Time> sent;
  Effects e;
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(uid);
    if (it == pods_.end() || it->second.phase != kRunning) return std::nullopt;
    EndPodLocked(it->second, exit_code);
    sent = absl::Now();
    if (!ReportLocked(uid, it->second, std::nullopt)) sent.reset();
    e = TakeEffectsLocked();
  }
  Apply(e);
  return sent;
}

void SimAgent::Connect() {
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("server.jobsetd");
  // A connection of its own, as each real agent (a process per host) has.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  const Fleet::Options& o = fleet_->options();
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              absl::ToInt64Milliseconds(o.min_backoff));
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS,
              absl::ToInt64Milliseconds(o.min_backoff));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              absl::ToInt64Milliseconds(o.max_backoff));
  std::shared_ptr<AgentStream> stream;
  bool write = false;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ || silent_ || stream_ != nullptr || credentials_ == nullptr)
      return;
    stream = std::make_shared<AgentStream>(
        this, grpc::CreateCustomChannel(o.address, credentials_, args));
    stream_ = stream;
    const int64_t connection = ++connection_;
    welcomed_ = false;
    in_flight_.clear();
    mixer_.Clear();
    const absl::Time now = absl::Now();
    last_contact_ = now;
    fleet_->timers().At(now + kWelcomeTimeout,
                        [this, connection] { WelcomeDeadline(connection); });
    write = stream->Enqueue(HelloLocked());
  }
  stream->Open(stream, write);
}

api::PodStatus SimAgent::StatusOf(const SimPod& p) {
  // FakeRuntime's pod status: Running with ready containers, or
  // terminated with the exit code.
  api::PodStatus s;
  s.set_phase(p.phase);
  const bool running = p.phase == kRunning;
  if (!running && !p.reason.empty()) {
    s.set_reason(p.reason);
    s.set_message(p.message);
  }
  for (const std::string& name : p.containers) {
    api::ContainerStatus* c = s.add_container_statuses();
    c->set_name(name);
    c->set_ready(running);
    SetTimestamp(p.started, c->mutable_started_at());
    if (running) {
      c->set_flat_state("running");
    } else {
      c->set_flat_state("terminated");
      c->set_exit_code(p.exit_code);
      c->set_signal(p.signal);
      c->set_reason(p.exit_code == 0 ? "Completed" : "Error");
    }
  }
  for (const char* type : {"Initialized", "Ready", "ContainersReady"}) {
    api::Condition* c = s.add_conditions();
    c->set_type(type);
    c->set_status(running || std::string(type) == "Initialized" ? "True"
                                                                : "False");
  }
  return s;
}

api::AgentMessage SimAgent::HelloLocked() {
  // PodReporter::Hello: the registration and every pod known.
  api::AgentMessage hello;
  *hello.mutable_hello()->mutable_node() =
      SimNode(index_, fleet_->options().shape);
  for (const auto& [uid, p] : pods_) {
    api::PodReport* r = hello.mutable_hello()->add_pods();
    r->set_pod_uid(uid);
    *r->mutable_status() = StatusOf(p);
  }
  return hello;
}

void SimAgent::OnMessage(AgentStream* stream,
                         const api::SchedulerMessage& msg) {
  const absl::Time now = absl::Now();
  Effects e;
  {
    absl::MutexLock lock(&mu_);
    if (stream != stream_.get() || silent_) return;
    last_contact_ = now;
    HandleLocked(msg, now);
    e = TakeEffectsLocked();
  }
  Apply(e);
}

void SimAgent::HandleLocked(const api::SchedulerMessage& msg, absl::Time now) {
  switch (msg.kind_case()) {
    case api::SchedulerMessage::kWelcome:
      WelcomeLocked(msg.welcome(), now);
      break;
    case api::SchedulerMessage::kHeartbeatAck: {
      auto sent = in_flight_.find(msg.heartbeat_ack().seq());
      if (sent == in_flight_.end()) break;
      fleet_->recorder().Rtt(now - sent->second);
      in_flight_.erase(in_flight_.begin(), std::next(sent));
      break;
    }
    case api::SchedulerMessage::kRun: {
      // A pod already here: its attempt's host table grew (no report).
      auto it = pods_.find(msg.run().pod().metadata().uid());
      if (it == pods_.end()) {
        StartPodLocked(msg.run(), /*from_welcome=*/false, now);
      } else {
        fleet_->recorder().HostUpdate(it->second.jobset, it->second.attempt,
                                      fleet_->HostEntries(msg.run()),
                                      msg.run().hosts_table().size());
      }
      break;
    }
    case api::SchedulerMessage::kStop:
      StopPodLocked(msg.stop().pod_uid(), now);
      break;
    case api::SchedulerMessage::kRelease:
      if (pods_.erase(msg.release().pod_uid()) > 0)
        fleet_->recorder().Release();
      break;
    case api::SchedulerMessage::kLogRequest: {
      api::AgentMessage reply;
      reply.mutable_log_chunk()->set_request_id(msg.log_request().request_id());
      reply.mutable_log_chunk()->set_next_offset(msg.log_request().offset());
      reply.mutable_log_chunk()->set_error(
          "the fleet simulator's pods write no logs");
      SendLocked(std::move(reply));
      break;
    }
    default:
      break;
  }
}

void SimAgent::WelcomeLocked(const api::Welcome& welcome, absl::Time now) {
  // PodSet::Reconcile: what the scheduler does not want goes at once.
  std::set<std::string> desired;
  for (const api::PodAssignment& a : welcome.pods())
    desired.insert(a.pod().metadata().uid());
  int64_t dropped = 0;
  for (auto it = pods_.begin(); it != pods_.end();) {
    if (desired.contains(it->first)) {
      ++it;
      continue;
    }
    pods_.erase(it++);
    ++dropped;
  }
  for (const api::PodAssignment& a : welcome.pods()) {
    const std::string& uid = a.pod().metadata().uid();
    if (a.stop()) {
      StopPodLocked(uid, now);
    } else if (!pods_.contains(uid)) {
      StartPodLocked(a, /*from_welcome=*/true, now);
    }
  }
  fleet_->recorder().Welcome(dropped);
  interval_ = welcome.heartbeat_interval_ms() > 0
                  ? absl::Milliseconds(welcome.heartbeat_interval_ms())
                  : absl::Seconds(1);
  if (!welcomed_) {
    welcomed_ = true;
    ++fleet_->welcomed_;
    backoff_ = fleet_->options().min_backoff;
    // The first heartbeat somewhere in the first interval, so that agents
    // welcomed together do not beat together.
    const int64_t connection = connection_;
    fleet_->timers().At(now + interval_ * Jitter(),
                        [this, connection] { HeartbeatTick(connection); });
  }
}

void SimAgent::StartPodLocked(const api::PodAssignment& a, bool from_welcome,
                              absl::Time now) {
  const api::Pod& pod = a.pod();
  const std::string& uid = pod.metadata().uid();
  if (uid.empty() || uid.size() > 128) return;  // jobsetd never sends one
  const std::string jobset = JobSetKeyOf(pod);
  const int attempt = RestartAttemptOf(pod);
  fleet_->recorder().Run(jobset, attempt, index_, uid, now, from_welcome,
                         fleet_->HostEntries(a), a.hosts_table().size());
  fleet_->recorder().Launch(uid, jobset, attempt, TaskKeyOf(pod));
  absl::StatusOr<Workload> workload = WorkloadOf(pod);
  if (!workload.ok()) {
    fleet_->recorder().RefusedPod();
    ReportFailureLocked(a, "InvalidAssignment",
                        std::string(workload.status().message()));
    return;
  }
  SimPod& p = pods_[uid];
  p.jobset = jobset;
  p.attempt = attempt;
  p.job = JobIndexOf(pod);
  p.phase = kRunning;
  p.started = now;
  p.generation = ++next_generation_;
  for (const api::Container& c : pod.spec().containers())
    p.containers.push_back(c.name());
  ReportLocked(uid, p, absl::Now() - now);
  if (!workload->run.has_value()) return;
  if (*workload->run <= absl::ZeroDuration()) {
    EndPodLocked(p, workload->exit_code);
    ReportLocked(uid, p, std::nullopt);
    return;
  }
  fleet_->timers().At(
      now + *workload->run,
      [this, uid, generation = p.generation, code = workload->exit_code] {
        WorkloadExit(uid, generation, code);
      });
}

void SimAgent::StopPodLocked(const std::string& uid, absl::Time now) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  SimPod& p = it->second;
  fleet_->recorder().Stop(p.jobset, p.attempt, now);
  if (p.phase != kRunning) return;
  // As FakeRuntime::Stop: a pod the runtime had to SIGKILL.
  EndPodLocked(p, 128 + SIGKILL);
  p.signal = SIGKILL;
  p.reason = "Stopped";
  p.message = "stopped by the agent";
  ReportLocked(uid, p, std::nullopt);
}

void SimAgent::EndPodLocked(SimPod& p, int exit_code) {
  p.phase = exit_code == 0 ? kSucceeded : kFailed;
  p.exit_code = exit_code;
}

void SimAgent::WorkloadExit(const std::string& uid, int64_t generation,
                            int exit_code) {
  Effects e;
  {
    absl::MutexLock lock(&mu_);
    auto it = pods_.find(uid);
    if (it == pods_.end() || it->second.generation != generation ||
        it->second.phase != kRunning) {
      return;
    }
    EndPodLocked(it->second, exit_code);
    ReportLocked(uid, it->second, std::nullopt);
    e = TakeEffectsLocked();
  }
  Apply(e);
}

bool SimAgent::ReportLocked(const std::string& uid, const SimPod& p,
                            std::optional<absl::Duration> launch) {
  api::AgentMessage msg;
  api::PodReport* r = msg.mutable_pod_update();
  r->set_pod_uid(uid);
  *r->mutable_status() = StatusOf(p);
  if (launch.has_value()) {
    SetDuration(std::max(*launch, absl::ZeroDuration()),
                r->mutable_launch()->mutable_received_to_reported());
  }
  return SendLocked(std::move(msg));
}

bool SimAgent::ReportFailureLocked(const api::PodAssignment& a,
                                   const std::string& reason,
                                   const std::string& message) {
  api::AgentMessage msg;
  api::PodReport* r = msg.mutable_pod_update();
  r->set_pod_uid(a.pod().metadata().uid());
  r->mutable_status()->set_phase(kFailed);
  r->mutable_status()->set_reason(reason);
  r->mutable_status()->set_message(message);
  return SendLocked(std::move(msg));
}

bool SimAgent::SendLocked(api::AgentMessage msg) {
  if (silent_ || stream_ == nullptr) return false;
  // Through the mixer, which counts them, and passes them on at once when
  // it is off.
  if (msg.has_pod_update()) {
    MixedLocked(mixer_.Report(std::move(msg), absl::Now()));
    return true;
  }
  if (stream_->Enqueue(std::move(msg))) write_ = true;
  return true;
}

void SimAgent::MixedLocked(ReportMixer::Out out) {
  for (api::AgentMessage& m : out.send)
    if (stream_->Enqueue(std::move(m))) write_ = true;
  const int64_t connection = connection_;
  for (auto& later : out.later) {
    fleet_->timers().At(later.first,
                        [this, connection, copy = std::move(later.second)] {
                          ReportCopy(connection, copy);
                        });
  }
  if (out.flush.has_value()) {
    fleet_->timers().At(out.flush->first,
                        [this, connection, window = out.flush->second] {
                          FlushReports(connection, window);
                        });
  }
}

void SimAgent::ReportCopy(int64_t connection, api::AgentMessage msg) {
  Effects e;
  {
    absl::MutexLock lock(&mu_);
    const std::string& uid = msg.pod_update().pod_uid();
    if (connection != connection_ || stream_ == nullptr || silent_) {
      fleet_->recorder().ReportCopy(uid, /*sent=*/false, /*stale=*/false);
      return;
    }
    // Stale: the pod has moved on since (another phase), or is gone
    // (released, or not in a Welcome).
    auto it = pods_.find(uid);
    const bool stale = it == pods_.end() ||
                       it->second.phase != msg.pod_update().status().phase();
    fleet_->recorder().ReportCopy(uid, /*sent=*/true, stale);
    MixedLocked(mixer_.Copy(std::move(msg), absl::Now()));
    e = TakeEffectsLocked();
  }
  Apply(e);
}

void SimAgent::FlushReports(int64_t connection, int64_t window) {
  Effects e;
  {
    absl::MutexLock lock(&mu_);
    if (connection != connection_ || stream_ == nullptr || silent_) return;
    for (api::AgentMessage& m : mixer_.Flush(window))
      if (stream_->Enqueue(std::move(m))) write_ = true;
    e = TakeEffectsLocked();
  }
  Apply(e);
}

void SimAgent::HeartbeatTick(int64_t connection) {
  const absl::Time now = absl::Now();
  Effects e;
  {
    absl::MutexLock lock(&mu_);
    if (connection != connection_ || stream_ == nullptr || !welcomed_ ||
        silent_ || stopping_) {
      return;
    }
    if (now - last_contact_ > std::max(3 * interval_, kMinSilence)) {
      // A stream that hears nothing is dead even if TCP has not noticed.
      cancel_ = true;
    } else {
      api::AgentMessage hb;
      hb.mutable_heartbeat()->set_seq(++seq_);
      in_flight_[seq_] = now;
      if (in_flight_.size() > 100) in_flight_.erase(in_flight_.begin());
      SendLocked(std::move(hb));
      // Every interval, give or take 5%, so that agents drift apart as
      // real hosts' ticks do.
      fleet_->timers().At(now + interval_ * (0.95 + 0.1 * Jitter()),
                          [this, connection] { HeartbeatTick(connection); });
    }
    e = TakeEffectsLocked();
  }
  Apply(e);
}

void SimAgent::WelcomeDeadline(int64_t connection) {
  Effects e;
  {
    absl::MutexLock lock(&mu_);
    if (connection == connection_ && stream_ != nullptr && !welcomed_)
      cancel_ = true;
    e = TakeEffectsLocked();
  }
  Apply(e);
}

void SimAgent::OnStreamDone(AgentStream* stream, const grpc::Status& status) {
  std::shared_ptr<AgentStream> done;  // let go of after the lock
  absl::MutexLock lock(&mu_);
  if (stream != stream_.get()) return;
  done = std::move(stream_);
  write_ = cancel_ = false;
  mixer_.Clear();
  const bool was_welcomed = std::exchange(welcomed_, false);
  if (was_welcomed) --fleet_->welcomed_;
  if (!stopping_) fleet_->recorder().StreamEnded(status, was_welcomed);
  if (stopping_ || silent_) return;
  // As SchedulerStream::ConnectLoop: after a welcomed stream from the
  // shortest backoff, else doubling up to the longest.
  const absl::Duration wait = backoff_;
  backoff_ = std::min(backoff_ * 2, fleet_->options().max_backoff);
  fleet_->connects().At(absl::Now() + wait, [this] { Connect(); });
}

}  // namespace jobset::testing::fleet
