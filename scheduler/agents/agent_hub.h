#ifndef JOBSET_SCHEDULER_AGENTS_AGENT_HUB_H_
#define JOBSET_SCHEDULER_AGENTS_AGENT_HUB_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "proto/agent.pb.h"
#include "scheduler/agents/launch_stages.h"
#include "scheduler/controller/agent_fleet.h"
#include "scheduler/controller/node_sink.h"
#include "scheduler/metrics.h"
#include "store/store.h"

namespace jobset::scheduler {

// The node registry and the scheduler's end of the agents' streams.
//
// - As the controller's AgentFleet it keeps, per node, the desired set: every
//   pod the controller placed there and has not released, as its launch
//   order (with a stop mark once stopped), and forwards each change to the
//   node's stream. The assignment an agent gets (the full pod and its host
//   table) is built only when it is sent, on the stream's writer thread, so
//   the pods of an attempt share their Jobs and host table instead of each
//   holding a copy (a 15,000-pod attempt would otherwise be quadratic).
// - Agents Connect with a Hello (registration and every pod they know), get
//   a Welcome with the node's whole desired set, then send heartbeats and pod
//   updates. Reports are fenced: only pods in the node's desired set reach
//   the controller (an agent speaks only for its own node); the rest are
//   counted and released.
// - A node silent for node_lost_timeout is lost: its stream is ended and its
//   pods fail (NodeSink::LoseNode). After jobsetd starts (or leads), a node
//   known before has restart_grace to reconnect, so a scheduler outage is
//   not a node failure; a node that connected since is under the timeout.
// - Registrations and cordons are stored (nodes/<name>); liveness is not.
// Thread-safe.
class AgentHub final : public AgentFleet {
 public:
  struct Options {
    absl::Duration node_lost_timeout = absl::Seconds(10);
    // How often agents are asked to heartbeat.
    absl::Duration heartbeat_interval = absl::Seconds(1);
    // After start, how long the nodes known before have to reconnect.
    absl::Duration restart_grace = absl::Seconds(30);
    Clock* clock = RealClock::Get();
    SchedulerMetrics* metrics = nullptr;  // Null: none.
    // Sent in every Welcome (scheduler/ha/: the leader's epoch; 0 alone).
    int64_t leader_epoch = 0;
  };

  // One agent's stream. The gRPC adapter writes what Pop returns.
  class Session {
   public:
    // Launch orders it sends are timed by `stages` (null: not timed) with
    // `clock`.
    Session(std::string node, std::function<void()> cancel,
            LaunchStages* stages = nullptr, Clock* clock = RealClock::Get())
        : node_(std::move(node)),
          stages_(stages),
          clock_(clock),
          cancel_(std::move(cancel)) {}
    const std::string& node() const { return node_; }
    // Waits up to `wait` for the next message to send; false once the
    // session is closed (nothing more to send) or on timeout with `*msg`
    // untouched and timed_out set. Run and Welcome messages are built here,
    // on the caller's thread, from the assignments queued for them.
    bool Pop(api::SchedulerMessage* msg, absl::Duration wait,
             bool* timed_out = nullptr);

   private:
    friend class AgentHub;
    // A queued message: `message` as is, or, for a run or a welcome, what
    // Pop completes it with.
    struct Outgoing {
      api::SchedulerMessage message;
      std::optional<Assignment> run;  // Becomes message.run.
      std::vector<Assignment> pods;   // Become message.welcome.pods.
    };
    void Push(api::SchedulerMessage msg);
    // Queues a run message of `pod`.
    void PushRun(Assignment pod);
    // Queues `welcome` (a Welcome without its pods) with `pods`.
    void PushWelcome(api::SchedulerMessage welcome,
                     std::vector<Assignment> pods);
    // Ends the stream: Pop returns false and the gRPC call, if still
    // running, is cancelled.
    void Close();
    // The gRPC call is over (its context is about to go): closes the
    // session, and a later Close cancels nothing.
    void Detach();

    const std::string node_;
    LaunchStages* const stages_;
    Clock* const clock_;
    absl::Mutex mu_;
    // Called under mu_, so that it never races Detach.
    std::function<void()> cancel_ ABSL_GUARDED_BY(mu_);
    std::deque<Outgoing> out_ ABSL_GUARDED_BY(mu_);
    bool closed_ ABSL_GUARDED_BY(mu_) = false;
  };

  AgentHub(store::Store* store, Options options);
  ~AgentHub() override;

  // Reads the stored nodes. Call once, before Attach.
  absl::Status Load();

  // Starts telling `sink` (the controller) about nodes and reports: every
  // stored node is announced (ready, within the restart grace), and the
  // liveness monitor starts. `sink` must outlive the hub.
  void Attach(NodeSink* sink);

  // AgentFleet, called by the controller thread.
  void Run(Assignment order) override;
  void Stop(const std::string& node, const std::string& pod_uid) override;
  void Release(const std::string& node, const std::string& pod_uid) override;

  // An agent's stream opened with `hello`. `cancel` ends the gRPC call. An
  // earlier session of the same node is closed. kInvalidArgument names the
  // field of a bad registration.
  absl::StatusOr<std::shared_ptr<Session>> Connect(
      const api::Hello& hello, std::function<void()> cancel);
  // A message after the Hello. An error ends the stream (FAILED_PRECONDITION:
  // the session was replaced or the node declared lost; reconnect).
  absl::Status OnMessage(Session* session, const api::AgentMessage& msg);
  // The stream ended. The node stays Ready until it times out.
  void Disconnect(Session* session);
  // Closes every stream, refuses new ones and stops talking to the sink
  // (jobsetd shutting down).
  void CloseAll();

  // Declares lost every node silent for too long; returns their names. The
  // monitor thread calls it; tests call it with a FakeClock.
  std::vector<std::string> CheckLiveness();

  // NodeService. Nodes are returned as Kubernetes v1 Nodes (node_object.h).
  std::vector<api::Node> ListNodes();
  absl::StatusOr<api::Node> GetNode(const std::string& name);
  absl::StatusOr<api::Node> SetCordoned(const std::string& name, bool cordoned);
  // Cordons the node and fails its pods (reason EvictionByEvictionAPI), as
  // an eviction would; their JobSets' policies decide.
  absl::StatusOr<api::Node> Drain(const std::string& name);
  // Forgets the node: its unfinished pods fail (reason DeletionByPodGC), its
  // record is deleted, and its stream is ended; returns the node as it was.
  // kNotFound if unknown.
  absl::StatusOr<api::Node> Remove(const std::string& name);

  // Reads up to `max_bytes` of container `container`'s log of pod `pod_uid`
  // from `node`'s agent, from `offset` (negative: that many bytes before the
  // end). kUnavailable when the agent is not connected or does not answer
  // within `timeout`.
  absl::StatusOr<api::LogChunk> ReadLog(const std::string& node,
                                        const std::string& pod_uid,
                                        const std::string& container,
                                        int64_t offset, int32_t max_bytes,
                                        absl::Duration timeout);

  // Reports about pods not assigned to the reporting node.
  int64_t fenced_reports();
  // Reports and registrations refused (agent_input.h: over a limit, or
  // malformed).
  int64_t refused() {
    absl::MutexLock lock(&mu_);
    return refused_;
  }

 private:
  struct NodeEntry {
    api::NodeRecord node;  // What is stored.
    std::shared_ptr<Session> session;
    absl::Time last_seen = absl::InfinitePast();
    bool ready = false;
    // When `ready` last changed, or the hub started.
    absl::Time transition = absl::InfinitePast();
  };

  absl::StatusOr<NodeInfo> ToNodeInfo(const api::NodeRecord& node) const;
  // Returns the node as a Kubernetes v1 Node (node_object.h).
  api::Node Describe(const NodeEntry& entry) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Persist(const api::NodeRecord& node);
  // Counts a fenced report; refreshes the nodes gauge.
  void Fenced() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Checks `report` of `desired`, a pod of `node` (CheckPodReport), and
  // hands it to the sink, or refuses it.
  void Forward(const std::string& node, const Assignment& desired,
               const api::PodReport& report) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Counts a refusal by `reason` and logs it, rate-limited.
  void Refused(absl::string_view reason, absl::string_view detail)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdateNodeGauge() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void MonitorLoop();

  store::Store* const store_;
  const Options options_;
  const absl::Time started_;

  absl::Mutex mu_;
  NodeSink* sink_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::map<std::string, NodeEntry> nodes_ ABSL_GUARDED_BY(mu_);
  // node -> pod uid -> its order and stop mark.
  std::map<std::string, std::map<std::string, Assignment>> desired_
      ABSL_GUARDED_BY(mu_);
  // The node each pod of desired_ is bound to, by uid: a node that speaks of
  // another node's pod is refused (PERMISSION_DENIED), not merely fenced.
  absl::flat_hash_map<std::string, std::string> pod_nodes_ ABSL_GUARDED_BY(mu_);
  // kPermissionDenied if `pod_uid` is bound to a node other than `node`.
  absl::Status CheckOwnPod(const std::string& node,
                           const std::string& pod_uid) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  LaunchStages stages_;
  int64_t fenced_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t refused_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_refusal_warning_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t refusals_unlogged_ ABSL_GUARDED_BY(mu_) = 0;
  // Log reads in flight: request id -> (node asked, its answer once there).
  struct LogWait {
    std::string node;
    std::optional<api::LogChunk> chunk;
  };
  std::map<int64_t, LogWait> log_waits_ ABSL_GUARDED_BY(mu_);
  int64_t next_log_request_ ABSL_GUARDED_BY(mu_) = 1;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;  // CloseAll was called
  std::thread monitor_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_AGENT_HUB_H_
