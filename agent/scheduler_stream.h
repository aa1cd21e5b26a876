#ifndef JOBSET_AGENT_SCHEDULER_STREAM_H_
#define JOBSET_AGENT_SCHEDULER_STREAM_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/metrics.h"
#include "common/clock.h"
#include "common/replicas.h"
#include "grpcpp/grpcpp.h"
#include "proto/agent.grpc.pb.h"

namespace jobset::agent {

// Whether `status` (how jobsetd ended a stream) says this node's
// certificate was revoked: UNAUTHENTICATED "certificate has been revoked"
// (scheduler/auth/request_auth.cc), after a node was deleted. No retry with
// the same certificate can succeed.
bool IsRevokedCertificate(const grpc::Status& status);

// The agent's one stream to jobsetd (proto/agent.proto, AgentService.Connect),
// as kubelet's node status loop keeps its connection:
//
// - Each attempt dials a fresh channel, says Hello (handler.hello) and hands
//   every message from the leader to handler.handle, on the stream's thread.
// - Redirects from a follower are followed at once; a replica that cannot
//   be reached is left for the next (common/replicas.h).
// - A Welcome that names an older leader epoch than one seen before comes
//   from a deposed leader: nothing it says is handed on, and the stream is
//   dropped for the next replica.
// - Heartbeats go every Welcome.heartbeat_interval_ms (Tick); a stream that
//   hears nothing for 3 intervals (at least 2 s), or is not welcomed within
//   10 s, is dropped, so that a silently dead connection is noticed.
// - A scheduler outage is not a failure: reconnects back off from
//   min_backoff to max_backoff, one log line per outage.
// - A revoked certificate is: it is said once, handler.revoked is called and
//   no further attempt is made (the node must join again).
//
// Thread-safe.
class SchedulerStream {
 public:
  struct Options {
    // HOST:PORT, or every replica's, comma-separated.
    std::string scheduler;
    absl::Duration min_backoff = absl::Milliseconds(100);
    absl::Duration max_backoff = absl::Seconds(1);
    // The channel's credentials, asked for at every attempt (an error
    // counts as a failed attempt). Null: plaintext.
    std::function<absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>()>
        credentials;
    // The name the server's certificate is verified under (with
    // credentials); empty: the host of `scheduler`.
    std::string server_name;
    AgentMetrics* metrics = nullptr;  // Null: none.
  };
  // What the stream hands on; each is called on the stream's thread (or
  // Dispatch's caller). All must be set but `revoked`.
  struct Handler {
    // Builds the Hello of a new stream.
    std::function<api::AgentMessage()> hello;
    // The Hello was sent.
    std::function<void(const api::AgentMessage& hello)> hello_sent;
    // A message was read at `now` (before it is handled).
    std::function<void(absl::Time now)> heard;
    // A message from the leader for the node (Welcome, Run, Stop, Release,
    // LogRequest); the stream counts as welcomed once a Welcome returns.
    std::function<void(const api::SchedulerMessage& msg)> handle;
    // jobsetd said this node's certificate is revoked (its message).
    std::function<void(const std::string& message)> revoked;
  };

  // `clock` must outlive the stream.
  SchedulerStream(Options options, Handler handler, Clock* clock);
  ~SchedulerStream();  // Shutdown

  // Starts connecting, on a thread of its own.
  void Start();
  // Closes the stream and stops connecting.
  void Shutdown();

  // Sends on the open stream; false when there is none.
  bool Send(const api::AgentMessage& msg);
  // What the reader does with a message read at `now`: one read after the
  // stream was silent longer than the silence rule (this agent was stopped,
  // SIGSTOP, or starved; meanwhile jobsetd may have declared the node lost
  // and placed its pods elsewhere) may be stale: it is not obeyed, the stream
  // is dropped, and false is returned; the next Welcome says what to run.
  // Otherwise handler.heard, then Dispatch.
  bool Receive(const api::SchedulerMessage& msg, absl::Time now);
  // What a read message goes through: the leader epoch check, heartbeat
  // acknowledgements, then handler.handle.
  void Dispatch(const api::SchedulerMessage& msg);
  // At `now`: drops a silent or unwelcomed stream, and sends a heartbeat
  // when one is due. Returns whether the stream is welcomed.
  bool Tick(absl::Time now);

  bool welcomed();
  int64_t connects();
  // Whether jobsetd revoked this node's certificate (connecting stopped).
  bool revoked();
  // Waits (real time, at most `timeout`) until welcomed() is `want`;
  // returns whether it is.
  bool AwaitWelcomed(bool want, absl::Duration timeout);
  // Waits (real time, at most `timeout`) until revoked(); returns it.
  bool AwaitRevoked(absl::Duration timeout);

 private:
  // The stream and the scheduler's last word.
  struct Connection {
    bool stopping = false;
    grpc::ClientContext* context = nullptr;
    bool welcomed = false;
    // A failed attempt was logged; the next are not, until welcomed.
    bool quiet = false;
    absl::Time opened;
    absl::Time last_contact;
    int64_t connects = 0;
    // The highest leader epoch a Welcome named (in memory: a restarted
    // agent accepts the leader it finds).
    int64_t epoch = 0;
    // This stream's scheduler named an older epoch (a deposed leader): its
    // messages are ignored and the stream is cancelled.
    bool deposed = false;
    bool revoked = false;
  };
  struct Heartbeats {
    absl::Time last_sent = absl::InfinitePast();
    absl::Duration interval = absl::Seconds(1);
    int64_t seq = 0;
    // Sent and not yet acknowledged, for the RTT metric: seq -> sent.
    std::map<int64_t, absl::Time> in_flight;
  };

  void ConnectLoop();
  // One connection, from dialling to its end; true when it ended in a
  // redirect to follow at once.
  bool Session();
  // Whether the scheduler that sent a Welcome of `epoch` still leads as far
  // as this agent knows; if not, marks the stream deposed and cancels it.
  bool AcceptLeader(int64_t epoch);
  void Welcomed(const api::Welcome& welcome);
  // How long a welcomed stream may hear nothing: 3 heartbeat intervals, at
  // least 2 s.
  absl::Duration Silence() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Acknowledged(int64_t seq);

  const Options options_;
  const Handler handler_;
  Clock* const clock_;
  // Where Session dials; only the connect thread uses it. An error
  // (options_.scheduler is not a list of HOST:PORT) is reported per attempt.
  absl::StatusOr<Replicas> replicas_;

  absl::Mutex write_mu_ ABSL_ACQUIRED_AFTER(mu_);
  grpc::ClientReaderWriter<api::AgentMessage, api::SchedulerMessage>* stream_
      ABSL_GUARDED_BY(write_mu_) = nullptr;

  absl::Mutex mu_;
  Connection conn_ ABSL_GUARDED_BY(mu_);
  Heartbeats heartbeats_ ABSL_GUARDED_BY(mu_);

  std::thread thread_;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_SCHEDULER_STREAM_H_
