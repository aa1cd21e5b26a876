#include "agent/scheduler_stream.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "common/log.h"

namespace jobset::agent {
namespace {

constexpr absl::Duration kWelcomeTimeout = absl::Seconds(10);

}  // namespace

bool IsRevokedCertificate(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAUTHENTICATED &&
         absl::StrContains(status.error_message(), "revoked");
}

SchedulerStream::SchedulerStream(Options options, Handler handler, Clock* clock)
    : options_(std::move(options)),
      handler_(std::move(handler)),
      clock_(clock),
      replicas_(Replicas::Parse("--scheduler", options_.scheduler)) {
  absl::MutexLock lock(&mu_);
  conn_.last_contact = clock_->Now();
}

SchedulerStream::~SchedulerStream() { Shutdown(); }

void SchedulerStream::Start() {
  thread_ = std::thread([this] { ConnectLoop(); });
}

void SchedulerStream::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    conn_.stopping = true;
    if (conn_.context != nullptr) conn_.context->TryCancel();
  }
  if (thread_.joinable()) thread_.join();
}

bool SchedulerStream::welcomed() {
  absl::MutexLock lock(&mu_);
  return conn_.welcomed;
}

int64_t SchedulerStream::connects() {
  absl::MutexLock lock(&mu_);
  return conn_.connects;
}

bool SchedulerStream::revoked() {
  absl::MutexLock lock(&mu_);
  return conn_.revoked;
}

bool SchedulerStream::AwaitWelcomed(bool want, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto reached = [this, want]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return conn_.welcomed == want;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
}

bool SchedulerStream::AwaitRevoked(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto revoked = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return conn_.revoked;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&revoked), timeout);
}

void SchedulerStream::ConnectLoop() {
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
      // A revoked certificate: no retry with it can succeed.
      if (conn_.stopping || conn_.revoked) return;
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

bool SchedulerStream::Session() {
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
  const api::AgentMessage hello = handler_.hello();
  if (stream->Write(hello)) {
    handler_.hello_sent(hello);
    {
      absl::MutexLock lock(&mu_);
      ++conn_.connects;
    }
    {
      absl::MutexLock lock(&write_mu_);
      stream_ = stream.get();
    }
    api::SchedulerMessage msg;
    while (stream->Read(&msg) && Receive(msg, clock_->Now())) {
    }
    absl::MutexLock lock(&write_mu_);
    stream_ = nullptr;
  }
  {
    absl::MutexLock lock(&mu_);
    conn_.context = nullptr;
  }
  grpc::Status status = stream->Finish();
  if (IsRevokedCertificate(status)) {
    JOBSET_LOG(ERROR)
        << "jobsetd revoked this node's certificate (node deleted or "
           "certificate revoked); rejoin with a new join token (jobsetd at "
        << target << " said: " << status.error_message()
        << "; pods keep running; not retrying)";
    {
      absl::MutexLock lock(&mu_);
      conn_.revoked = true;
    }
    if (handler_.revoked) handler_.revoked(status.error_message());
    return false;
  }
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

bool SchedulerStream::Receive(const api::SchedulerMessage& msg,
                              absl::Time now) {
  absl::Duration gap;
  {
    absl::MutexLock lock(&mu_);
    gap = now - conn_.last_contact;
    if (!conn_.welcomed || gap <= Silence()) {
      conn_.last_contact = now;
      gap = absl::ZeroDuration();
    } else if (conn_.context != nullptr) {
      conn_.context->TryCancel();
    }
  }
  if (gap > absl::ZeroDuration()) {
    JOBSET_LOG(WARNING)
        << "read a message after " << absl::FormatDuration(gap)
        << " without one (this agent was stopped or starved): what the "
           "stream still holds may be stale, so it is not obeyed; "
           "reconnecting for a Welcome";
    return false;
  }
  handler_.heard(now);
  Dispatch(msg);
  return true;
}

absl::Duration SchedulerStream::Silence() const {
  return std::max(3 * heartbeats_.interval, absl::Seconds(2));
}

bool SchedulerStream::Send(const api::AgentMessage& msg) {
  absl::MutexLock lock(&write_mu_);
  return stream_ != nullptr && stream_->Write(msg);
}

bool SchedulerStream::AcceptLeader(int64_t epoch) {
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

void SchedulerStream::Dispatch(const api::SchedulerMessage& msg) {
  if (msg.has_welcome() && !AcceptLeader(msg.welcome().leader_epoch())) return;
  {
    absl::MutexLock lock(&mu_);
    if (conn_.deposed) return;  // Nothing from a deposed leader is obeyed.
  }
  if (msg.has_heartbeat_ack()) {
    Acknowledged(msg.heartbeat_ack().seq());
    return;
  }
  handler_.handle(msg);
  if (msg.has_welcome()) Welcomed(msg.welcome());
}

void SchedulerStream::Welcomed(const api::Welcome& welcome) {
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
}

void SchedulerStream::Acknowledged(int64_t seq) {
  absl::MutexLock lock(&mu_);
  auto sent = heartbeats_.in_flight.find(seq);
  if (sent == heartbeats_.in_flight.end()) return;
  if (options_.metrics != nullptr) {
    options_.metrics->heartbeat_rtt_seconds.Observe(
        absl::ToDoubleSeconds(clock_->Now() - sent->second));
  }
  heartbeats_.in_flight.erase(heartbeats_.in_flight.begin(), std::next(sent));
}

bool SchedulerStream::Tick(absl::Time now) {
  bool welcomed = false;
  std::optional<api::AgentMessage> heartbeat;
  {
    absl::MutexLock lock(&mu_);
    welcomed = conn_.welcomed;
    // A stream that hears nothing is dead even if TCP has not noticed.
    if (conn_.context != nullptr &&
        ((welcomed && now - conn_.last_contact > Silence()) ||
         (!welcomed && now - conn_.opened > kWelcomeTimeout))) {
      conn_.context->TryCancel();
    }
    if (welcomed && now - heartbeats_.last_sent >= heartbeats_.interval) {
      heartbeats_.last_sent = now;
      heartbeat.emplace();
      heartbeat->mutable_heartbeat()->set_seq(++heartbeats_.seq);
      heartbeats_.in_flight[heartbeats_.seq] = now;
      if (heartbeats_.in_flight.size() > 100)
        heartbeats_.in_flight.erase(heartbeats_.in_flight.begin());
    }
  }
  if (heartbeat.has_value()) Send(*heartbeat);
  return welcomed;
}

}  // namespace jobset::agent
