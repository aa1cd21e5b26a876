#ifndef JOBSET_AGENT_AGENT_H_
#define JOBSET_AGENT_AGENT_H_

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/device_ledger.h"
#include "agent/metrics.h"
#include "agent/runtime/runtime.h"
#include "common/clock.h"
#include "common/replicas.h"
#include "grpcpp/grpcpp.h"
#include "proto/agent.grpc.pb.h"

namespace jobset::agent {

// The largest LogChunk.data an agent sends (well below gRPC's 4 MiB message
// limit), and the most a negative LogRequest.offset may reach back.
inline constexpr int32_t kMaxLogChunkBytes = 1 << 20;
inline constexpr int64_t kMaxLogTailBytes = int64_t{64} << 20;

// Answers `request` from the log `runtime` keeps: at most kMaxLogChunkBytes
// from offset (a negative offset: that many bytes before the end, at most
// kMaxLogTailBytes). The uid and container name are checked before any path
// is built; an invalid or unknown one is an error naming it ("not found"),
// never a file read.
api::LogChunk ReadLogChunk(const Runtime& runtime,
                           const api::LogRequest& request);

// The agent's side of the protocol (proto/agent.proto): keeps one stream to
// jobsetd open, says hello with every pod the runtime knows, makes the
// runtime match the desired set it is sent, and reports every status change.
//
// - A scheduler outage is not a failure: pods keep running, their exits stay
//   in the runtime (on disk, with the shim runtime) and are reported on
//   reconnect. Reconnects back off from min_backoff to max_backoff.
// - A stream that hears nothing for 3 heartbeat intervals (at least 2 s) is
//   dropped and reopened, so a silently dead connection is noticed.
// - With a lease, pods are stopped once the scheduler has not been heard
//   from for that long (SIGTERM, then SIGKILL after at most 1 s): with
//   lease + 1 s below jobsetd's node-lost timeout, an old attempt never
//   overlaps the new one.
// - GPUs (nvidia.com/gpu) are handed out by device index and recorded in
//   state_dir, so a restarted agent does not give them out twice.
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

 private:
  // fuzz/agent_fuzzer.cc hands it messages without a stream.
  friend class AgentFuzzPeer;

  void ConnectLoop();
  // One connection, from dialling to its end; true when it ended in a
  // redirect to follow at once.
  bool Session();
  void Handle(const api::SchedulerMessage& msg);
  // Whether the scheduler that sent a Welcome of `epoch` still leads as far
  // as this agent knows; if not, marks the stream deposed and cancels it.
  bool AcceptLeader(int64_t epoch);
  void Reconcile(const api::Welcome& welcome);
  void StartPod(api::PodAssignment assignment);
  // Hands `assignment` to the runtime, on GPUs `gpus`, recording its restart
  // in place attempt.
  void Launch(api::PodAssignment assignment, const std::vector<int>& gpus);
  // The pods the runtime has that finished (every container gone).
  std::set<std::string> FinishedPods();
  // `finished` less the pods whose restart in place waits (they keep their
  // devices): the pods whose devices are free for admission.
  std::set<std::string> Unrestarted(std::set<std::string> finished)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The node's nvidia.com/gpu capacity, as registered (0 when none).
  int GpuCapacity() const;
  // restartStrategy InPlaceRestart: `assignment` is of a later attempt than
  // the pod here runs. Stops it if it still runs, then starts it again under
  // its uid (FinishRestart). Returns false when it is not such an order.
  bool RestartInPlace(const api::PodAssignment& assignment);
  // Restarts the pods whose restart waited for their old attempt to stop.
  void FinishRestarts(const std::vector<PodState>& pods);
  void FinishRestart(const std::string& uid);
  // The restart in place attempt the runtime's pod `uid` is of (0: none).
  int32_t AttemptRunning(const std::string& uid);
  void ReleasePod(const std::string& uid);
  api::LogChunk ReadLog(const api::LogRequest& request);
  void TickLoop();
  void Tick();
  // Sends on the open stream, if any.
  bool Send(const api::AgentMessage& msg);
  void ReportFailure(const api::PodAssignment& a, const std::string& reason,
                     const std::string& message);
  // The first report of pod `uid` past Pending (with `status`, at `now`)
  // ends its launch: when it is Running, the launch's timings go into
  // `report` (and the launch metric).
  void TakeLaunch(const std::string& uid, const api::PodStatus& status,
                  absl::Time now, api::PodReport* report);
  // Updates the metrics from the runtime's view (each tick).
  void RecordPods(const std::vector<PodState>& pods);
  // The ledger in state_dir: each pod's GPUs ("devices") and restart in
  // place attempt ("attempts"), so that a restarted agent neither gives a
  // GPU out twice nor mistakes which attempt a pod's state is of.
  void LoadLedger();
  void SaveLedger() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // The stream and the scheduler's last word.
  struct Connection {
    bool stopping = false;
    grpc::ClientContext* context = nullptr;
    bool welcomed = false;
    bool lease_fired = false;
    // A failed attempt was logged; the next are not, until welcomed.
    bool quiet = false;
    absl::Time opened;
    absl::Time last_contact;
    int64_t connects = 0;
    // The highest leader epoch a Welcome named (Welcome.leader_epoch; in
    // memory: a restarted agent accepts the leader it finds).
    int64_t epoch = 0;
    // This stream's scheduler named an older epoch (a deposed leader): its
    // messages are ignored and the stream is cancelled.
    bool deposed = false;
  };
  struct Heartbeats {
    absl::Time last_sent = absl::InfinitePast();
    absl::Duration interval = absl::Seconds(1);
    int64_t seq = 0;
    // Sent and not yet acknowledged, for the RTT metric: seq -> sent.
    std::map<int64_t, absl::Time> in_flight;
  };
  // What the agent keeps per pod uid.
  struct PodBook {
    // What was last reported (serialized status).
    std::map<std::string, std::string> sent;
    std::map<std::string, absl::Duration> grace;  // termination grace
    DeviceLedger devices;                         // GPU device indices
    // Pods ordered to run but not yet reported past Pending (uid ->
    // ordered: their launch timings), and pods whose exit was counted.
    std::map<std::string, absl::Time> launching;
    std::set<std::string> exited;
    // restartStrategy InPlaceRestart: the attempt each pod runs at, and the
    // restarts waiting for their pod's old attempt to stop.
    std::map<std::string, int32_t> attempts;
    std::map<std::string, api::PodAssignment> restarts;
  };

  const Options options_;
  // Where Session dials; only ConnectLoop's thread uses it. An error
  // (options_.scheduler is not a list of HOST:PORT) is reported per attempt.
  absl::StatusOr<Replicas> replicas_;
  Runtime* const runtime_;
  Clock* const clock_;

  absl::Mutex write_mu_ ABSL_ACQUIRED_AFTER(mu_);
  grpc::ClientReaderWriter<api::AgentMessage, api::SchedulerMessage>* stream_
      ABSL_GUARDED_BY(write_mu_) = nullptr;

  absl::Mutex mu_;
  Connection conn_ ABSL_GUARDED_BY(mu_);
  Heartbeats heartbeats_ ABSL_GUARDED_BY(mu_);
  PodBook pods_ ABSL_GUARDED_BY(mu_);

  // The last log retention sweep; used only from the tick thread.
  absl::Time last_log_sweep_ = absl::InfinitePast();

  std::thread connect_thread_;
  std::thread tick_thread_;
};

}  // namespace jobset::agent

#endif  // JOBSET_AGENT_AGENT_H_
