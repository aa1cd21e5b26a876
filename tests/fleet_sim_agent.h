#ifndef JOBSET_TESTS_FLEET_SIM_AGENT_H_
#define JOBSET_TESTS_FLEET_SIM_AGENT_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "auth/tokens.h"
#include "grpcpp/grpcpp.h"
#include "proto/agent.grpc.pb.h"
#include "tests/fleet_sim_mixer.h"
#include "tests/fleet_sim_support.h"

namespace jobset::testing::fleet {

class AgentStream;
class Fleet;

// One simulated jobset-agent: a node certificate of its own (joined with
// the join token), one AgentService.Connect stream on gRPC's callback API
// (no thread of its own), and the message sequence of agent/agent.cc over a
// runtime that runs nothing (agent/fake_runtime.h's pod states):
//
// - Each attempt dials a fresh channel and says Hello with the node's
//   registration and every pod it knows; a Welcome's desired set is
//   reconciled (pods not in it go, pods marked stop are stopped, the rest
//   start); heartbeats every Welcome.heartbeat_interval_ms; a stream that
//   hears nothing for 3 intervals (at least 2 s), or is not welcomed in
//   10 s, is dropped; reconnects back off from 100 ms to 1 s.
// - A Run is reported Running at once (with its launch timings), then
//   Succeeded or Failed after the pod's workload (WorkloadOf); a Stop ends a
//   running pod as killed (Failed, reason Stopped, exit 137 of SIGKILL); a
//   Release forgets the pod; a LogRequest is answered that there are no
//   logs.
// - Silence() makes the agent a partitioned host: it sends nothing more,
//   obeys nothing, and does not reconnect.
// - With Fleet::Options::mix, its pod reports pass through a ReportMixer
//   (duplicated, reordered); copies and windows belong to the stream they
//   were made on and are dropped with it.
//
// Every order is stamped on arrival in the fleet's FleetRecorder.
// Thread-safe.
class SimAgent {
 public:
  // A pod as the agent holds it.
  struct PodView {
    std::string uid;
    std::string jobset;  // "namespace/name"
    int attempt = 0;
    int job = -1;  // its Job's index in its ReplicatedJob
    bool running = false;
  };

  SimAgent(Fleet* fleet, int index);
  ~SimAgent();
  SimAgent(const SimAgent&) = delete;
  SimAgent& operator=(const SimAgent&) = delete;

  int index() const { return index_; }
  const std::string& name() const { return name_; }

  // Sets the node's TLS identity (its key and certificate from JoinNode).
  // Call before Start.
  void SetIdentity(const std::string& key_pem, const std::string& cert_pem,
                   const std::string& ca_pem);
  // Opens the first stream (on the fleet's connector thread).
  void Start();
  // Stops reconnecting and cancels the stream, without waiting.
  void BeginShutdown();
  // BeginShutdown, then waits (at most 5 s) for the stream to end.
  void Shutdown();
  // From now on the agent sends nothing, obeys nothing and does not
  // reconnect (a partitioned host); its stream stays open until jobsetd
  // ends it.
  void Silence();
  // Cuts the stream; the agent reconnects and says what it runs, as an
  // agent restarted on its node does (no-op while silent or stopping).
  void Reconnect();
  // Ends a Silence(): the agent reconnects (and its Welcome decides what
  // it keeps).
  void Resume();

  bool welcomed();
  bool silent();
  std::vector<PodView> Pods();
  int pod_count();
  ReportMixer::Counts mixed();
  // Ends running pod `uid` with `exit_code` (as its workload would) and
  // reports it; the time the report was handed to the stream, or nullopt
  // when the pod is not running here or the stream is gone.
  std::optional<absl::Time> EndPod(const std::string& uid, int exit_code);

 private:
  friend class AgentStream;

  struct SimPod {
    std::string jobset;
    int attempt = 0;
    int job = -1;
    std::string phase;
    int exit_code = 0;
    int signal = 0;
    std::string reason;   // the pod's (Stopped) or the workload's
    std::string message;  // the pod's
    std::vector<std::string> containers;
    absl::Time started;
    // Bumped whenever the pod is (re)created: an exit timer of an earlier
    // incarnation changes nothing.
    int64_t generation = 0;
  };

  // What a locked section leaves to do on the stream once the lock is
  // released: gRPC may run a reaction (which takes the lock) inline in
  // StartWrite, StartCall or TryCancel.
  struct Effects {
    std::shared_ptr<AgentStream> stream;
    bool write = false;
    bool cancel = false;
  };
  Effects TakeEffectsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void Apply(const Effects& effects);

  // Dials and opens a new stream (from Start or a reconnect timer).
  void Connect();
  // Called by the stream on each message, and once when it is done.
  void OnMessage(AgentStream* stream, const api::SchedulerMessage& msg);
  void OnStreamDone(AgentStream* stream, const grpc::Status& status);
  // Timers (TimerQueue), each for connection `connection` only.
  void HeartbeatTick(int64_t connection);
  void WelcomeDeadline(int64_t connection);
  void WorkloadExit(const std::string& uid, int64_t generation, int exit_code);

  api::AgentMessage HelloLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void HandleLocked(const api::SchedulerMessage& msg, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // FakeRuntime's status of `pod`.
  static api::PodStatus StatusOf(const SimPod& pod);
  void WelcomeLocked(const api::Welcome& welcome, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A Run (or a Welcome's pod not here): starts it and reports Running.
  void StartPodLocked(const api::PodAssignment& a, bool from_welcome,
                      absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StopPodLocked(const std::string& uid, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EndPodLocked(SimPod& pod, int exit_code)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reports pod `uid` as it is now (launch: its received-to-reported).
  bool ReportLocked(const std::string& uid, const SimPod& pod,
                    std::optional<absl::Duration> launch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A pod that could not start: Failed with `reason`, as PodSet does.
  bool ReportFailureLocked(const api::PodAssignment& a,
                           const std::string& reason,
                           const std::string& message)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool SendLocked(api::AgentMessage msg) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes what the mixer gave and sets the timers it asked for.
  void MixedLocked(ReportMixer::Out out) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Timers of the mixer, each for connection `connection` only.
  void ReportCopy(int64_t connection, api::AgentMessage msg);
  void FlushReports(int64_t connection, int64_t window);

  Fleet* const fleet_;
  const int index_;
  const std::string name_;

  absl::Mutex mu_;
  std::shared_ptr<grpc::ChannelCredentials> credentials_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<AgentStream> stream_ ABSL_GUARDED_BY(mu_);
  // Effects of the current locked section (TakeEffectsLocked).
  bool write_ ABSL_GUARDED_BY(mu_) = false;
  bool cancel_ ABSL_GUARDED_BY(mu_) = false;
  // Counts streams opened; timers name the one they are for.
  int64_t connection_ ABSL_GUARDED_BY(mu_) = 0;
  bool welcomed_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool silent_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration backoff_ ABSL_GUARDED_BY(mu_);
  absl::Duration interval_ ABSL_GUARDED_BY(mu_) = absl::Seconds(1);
  absl::Time last_contact_ ABSL_GUARDED_BY(mu_);
  int64_t seq_ ABSL_GUARDED_BY(mu_) = 0;
  // Heartbeats sent and not acknowledged: seq -> sent.
  std::map<int64_t, absl::Time> in_flight_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, SimPod> pods_ ABSL_GUARDED_BY(mu_);
  int64_t next_generation_ ABSL_GUARDED_BY(mu_) = 0;
  ReportMixer mixer_ ABSL_GUARDED_BY(mu_);
};

// The simulated fleet: N SimAgents in this process, the timers that drive
// them and what they saw. Thread-safe.
class Fleet {
 public:
  struct Options {
    std::string address;  // jobsetd's HOST:PORT
    std::string ca_pem;
    std::string join_token;
    int agents = 0;
    // Joins in flight at once (each: a P-256 key, a CSR, JoinNode).
    int join_concurrency = 32;
    NodeShape shape;
    absl::Duration min_backoff = absl::Milliseconds(100);
    absl::Duration max_backoff = absl::Seconds(1);
    // What happens to every agent's pod reports on the way (none: off).
    ReportMixer::Options mix;
  };

  explicit Fleet(Options options);
  ~Fleet();  // Shutdown
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  // Joins every agent (bounded concurrency) and starts its stream as soon
  // as it has joined; gives up on joins at `deadline`. Returns how many
  // joined; the errors are counted in recorder().
  int JoinAndStart(absl::Time deadline);
  // Stops every agent and the timers.
  void Shutdown();

  // Waits (polling) until at least `count` agents are welcomed or
  // `deadline`; returns whether they are.
  bool AwaitWelcomed(int count, absl::Time deadline);
  int welcomed() const { return welcomed_.load(); }
  int size() const { return static_cast<int>(agents_.size()); }
  SimAgent& agent(int i) { return *agents_[i]; }
  // Pods the agents hold, all together.
  int64_t pods();
  // The agents' mixers' counts, all together.
  ReportMixer::Counts mixed();

  const Options& options() const { return options_; }
  FleetRecorder& recorder() { return recorder_; }
  // The entries of `a`'s host table: `hosts`, or hosts_table decoded (as an
  // agent does; once per distinct table here, since every pod of an
  // attempt carries the same bytes). -1: a table that does not decode.
  int HostEntries(const api::PodAssignment& a);
  // Heartbeats, deadlines, workloads' exits.
  TimerQueue& timers() { return timers_; }
  // Reconnects: each builds a TLS channel, which must not hold up the
  // heartbeats of the agents still connected during a reconnect storm.
  TimerQueue& connects() { return connects_; }

 private:
  friend class SimAgent;
  absl::Status Join(
      int i, const auth::JoinToken& token,
      const std::shared_ptr<grpc::ChannelCredentials>& credentials);
  // gRPC 1.51 (with this poller) runs every callback on one process-wide
  // completion queue with threads of its own, torn down when the last
  // channel that used it goes: a stream's channel dropped in its OnDone, on
  // one of those threads, would tear it down under itself. This channel,
  // given one call, holds it for the fleet's life.
  void HoldCallbackQueue();

  const Options options_;
  FleetRecorder recorder_;
  TimerQueue timers_;
  TimerQueue connects_;
  std::shared_ptr<grpc::Channel> keeper_;
  std::vector<std::unique_ptr<SimAgent>> agents_;
  std::atomic<int> welcomed_ = 0;
  absl::Mutex tables_mu_;
  // HostEntries' decoded tables, by their bytes (a few at most).
  std::map<std::string, int> tables_ ABSL_GUARDED_BY(tables_mu_);
};

}  // namespace jobset::testing::fleet

#endif  // JOBSET_TESTS_FLEET_SIM_AGENT_H_
