#ifndef JOBSET_AGENT_AGENT_H_
#define JOBSET_AGENT_AGENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/lease.h"
#include "agent/log_server.h"
#include "agent/metrics.h"
#include "agent/pod_reporter.h"
#include "agent/pod_set.h"
#include "agent/progress_watcher.h"
#include "agent/runtime/runtime.h"
#include "agent/scheduler_stream.h"
#include "common/clock.h"
#include "grpcpp/grpcpp.h"
#include "proto/agent.pb.h"

namespace jobset::agent {

// The agent's side of the protocol (proto/agent.proto): keeps one stream to
// jobsetd open, says hello with every pod the runtime knows, makes the
// runtime match the desired set it is sent, and reports every status change.
// Its parts, as kubelet's:
//
//   SchedulerStream  the connection: hello/welcome, leader epochs, replicas,
//                    heartbeats, reconnects with back-off, revocation
//   PodSet           the desired pod set: start, stop, release, GPUs, and
//                    the in-place restart barrier (RestartBarrier)
//   PodReporter      what jobsetd was told: status reports, launch timings
//   ProgressWatcher  pods' progress heartbeats, read and reported
//   SchedulerLease   pods stop once jobsetd is not heard from (--lease)
//   ReadLogChunk     log serving; LogSweeper, released pods' log retention
//
// - A scheduler outage is not a failure: pods keep running, their exits stay
//   in the runtime (on disk, with the shim runtime) and are reported on
//   reconnect. Reconnects back off from min_backoff to max_backoff.
// - A revoked certificate ends connecting: on_revoked is called once.
// Thread-safe.
class Agent {
 public:
  struct Options {
    // HOST:PORT, or every replica's, comma-separated: the agent follows a
    // follower's redirect to the leader and moves on from one it cannot
    // reach (common/replicas.h).
    std::string scheduler;
    api::NodeRegistration registration;
    std::string state_dir;  // "" keeps the device ledger in memory only
    absl::Duration lease = absl::ZeroDuration();  // zero: off
    absl::Duration tick = absl::Milliseconds(100);
    absl::Duration min_backoff = absl::Milliseconds(100);
    absl::Duration max_backoff = absl::Seconds(1);
    AgentMetrics* metrics = nullptr;  // Null: none.
    // Released pods' logs: how long they are kept and how much room all
    // logs may take (Runtime::PruneLogs, every log_sweep by the clock).
    LogRetention log_retention;
    absl::Duration log_sweep = absl::Minutes(1);
    // The channel's credentials, asked for at every connection attempt, so
    // that a renewed node certificate is used from the next one (an error
    // counts as a failed attempt). Null: plaintext (jobsetd --insecure).
    std::function<absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>()>
        credentials;
    // The name the server's certificate is verified under (with
    // credentials); empty: the host of `scheduler`.
    std::string server_name;
    // Called once, on the connecting thread, when jobsetd says this node's
    // certificate was revoked (its message); the agent stops connecting
    // (pods keep running). Null: none.
    std::function<void(const std::string& message)> on_revoked;
    // Pods' progress heartbeats (progress_watcher.h): the least time between
    // two reads, and reports, of one pod's progress
    // (--progress_report_interval); and the clock their rates and ages are
    // measured by (jobset-agent: a monotonic one; null: the agent's).
    absl::Duration progress_report_interval = absl::Seconds(1);
    Clock* progress_clock = nullptr;
  };

  // Reads the time from `clock` (RealClock::Get() in jobset-agent); the
  // runtime and the clock must outlive the agent.
  Agent(Options options, Runtime* runtime, Clock* clock);
  ~Agent();  // Shutdown

  // Starts connecting.
  void Start();
  // Closes the stream and stops the threads; pods keep running.
  void Shutdown();

  bool welcomed();
  int64_t connects();
  // Whether jobsetd revoked this node's certificate.
  bool revoked();
  // Wait (real time, at most `timeout`) until welcomed() is `want`, or
  // until revoked(); return whether it is so.
  bool AwaitWelcomed(bool want, absl::Duration timeout);
  bool AwaitRevoked(absl::Duration timeout);

 private:
  // fuzz/agent_fuzzer.cc hands it messages without a stream.
  friend class AgentFuzzPeer;

  // A message read from the stream (SchedulerStream::Dispatch).
  void Handle(const api::SchedulerMessage& msg);
  // A message from the leader.
  void OnMessage(const api::SchedulerMessage& msg);
  void TickLoop();
  void Tick();
  // The runtime's `pods` as the progress watcher needs them.
  std::vector<ProgressWatcher::Pod> ProgressPods(
      const std::vector<PodState>& pods);

  const Options options_;
  Runtime* const runtime_;
  Clock* const clock_;
  Clock* const progress_clock_;
  PodReporter reporter_;
  ProgressWatcher progress_;
  SchedulerLease lease_;
  PodSet pods_;
  LogSweeper logs_;  // used only from the tick thread
  SchedulerStream stream_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread tick_thread_;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_AGENT_H_
