#ifndef JOBSET_SCHEDULER_AGENTS_AGENT_HUB_H_
#define JOBSET_SCHEDULER_AGENTS_AGENT_HUB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "proto/agent.pb.h"
#include "scheduler/agents/desired_sets.h"
#include "scheduler/agents/launch_stages.h"
#include "scheduler/agents/liveness.h"
#include "scheduler/agents/log_requests.h"
#include "scheduler/agents/node_notifier.h"
#include "scheduler/agents/node_registry.h"
#include "scheduler/agents/pod_progress_table.h"
#include "scheduler/agents/refusals.h"
#include "scheduler/agents/session.h"
#include "scheduler/controller/agent_fleet.h"
#include "scheduler/controller/node_sink.h"
#include "store/store.h"

namespace jobset::scheduler {

struct SchedulerMetrics;  // scheduler/metrics.h

// The node registry and the scheduler's end of the agents' streams; a
// facade over its parts (README.md: the parts and the lock order).
//
// - As the controller's AgentFleet it keeps, per node, the desired set
//   (desired_sets.h) and forwards each change to the node's stream
//   (session.h). The assignment an agent gets is built only when it is sent,
//   by the stream's pump (agent_stream.h), not on the caller's thread.
// - Agents Connect with a Hello (registration and every pod they know), get
//   a Welcome with the node's whole desired set, then send heartbeats and pod
//   updates. Reports are fenced: only pods in the node's desired set reach
//   the controller (an agent speaks only for its own node); the rest are
//   counted and released.
// - A node silent for node_lost_timeout is lost (liveness.h): its stream is
//   ended and its pods fail (NodeSink::LoseNode). After jobsetd starts (or
//   leads), a node known before has restart_grace to reconnect; a node that
//   connected since is under the timeout.
// - Registrations and cordons are stored (nodes/<name>); liveness is not.
// - What the controller is told (NodeSink) is queued under the hub's lock
//   and delivered after it is released, in order (node_notifier.h): the
//   sink is never called with a lock of the hub held.
// Thread-safe.
class AgentHub final : public AgentFleet {
 public:
  using Session = AgentSession;

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
    // The controller, when it exists before the hub (tests, fuzzers):
    // attached at once, as by Attach. Must outlive the hub.
    NodeSink* sink = nullptr;
    // False: no liveness thread; the owner calls CheckLiveness (tests with
    // a FakeClock).
    bool liveness_thread = true;
  };

  // Returns a hub with the stored nodes read (each Ready within the restart
  // grace), attached to options.sink if set.
  static absl::StatusOr<std::unique_ptr<AgentHub>> Create(store::Store* store,
                                                          Options options);
  ~AgentHub() override;

  // Starts telling `sink` (the controller) about nodes and reports: every
  // stored node is announced, and the liveness monitor starts. Call once,
  // unless options.sink was set. Separate from Create because the
  // controller is created with the hub (its AgentFleet) and only then can
  // be the hub's sink. `sink` must outlive the hub.
  void Attach(NodeSink* sink);

  // AgentFleet, called by the controller thread.
  void Run(Assignment order) override;
  void Stop(const std::string& node, const std::string& pod_uid) override;
  void Release(const std::string& node, const std::string& pod_uid) override;
  // Taints the node jobsetd.io/quarantined:NoSchedule through TaintNode (its
  // record, stored); logs the evidence.
  void Quarantine(const std::string& node,
                  const std::string& evidence) override;

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
  // (jobsetd shutting down): once it returns the sink is not called.
  void CloseAll();

  // Declares lost every node silent for too long; returns their names. The
  // monitor thread calls it; tests call it with a FakeClock.
  std::vector<std::string> CheckLiveness();

  // NodeService. Nodes are returned as Kubernetes v1 Nodes (node_object.h).
  std::vector<api::Node> ListNodes();
  absl::StatusOr<api::Node> GetNode(const std::string& name);
  absl::StatusOr<api::Node> SetCordoned(const std::string& name, bool cordoned);
  // jobsetctl label|taint node: applies the admin's edit (node_admin.h
  // ApplyLabels, ApplyTaints) to the node's record, stores it and tells the
  // controller; no Hello of the node undoes it. kNotFound if unknown.
  absl::StatusOr<api::Node> LabelNode(const api::LabelNodeRequest& request);
  absl::StatusOr<api::Node> TaintNode(const api::TaintNodeRequest& request);
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

  // The latest progress of each current pod (pod_progress_table.h): what
  // the agents report of their pods' training steps, for the controller's
  // hang and straggler detection. Lives as long as the hub.
  const PodProgressTable& progress() const { return progress_; }

  // Reports about pods not assigned to the reporting node.
  int64_t fenced_reports();
  // Reports and registrations refused (agent_input.h: over a limit, or
  // malformed).
  int64_t refused();

 private:
  AgentHub(store::Store* store, Options options, NodeRegistry registry);

  // Checks `report` of `desired`, a pod of `node` (CheckPodReport), and
  // queues it for the sink, or refuses it. Its progress, checked apart
  // (CheckPodProgress), goes to the progress table; a report of progress
  // alone (no status) goes nowhere else.
  void Forward(const std::string& node, const Assignment& desired,
               const api::PodReport& report) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Refused(absl::string_view reason, absl::string_view detail)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues SetNode of `entry` as it is now (its readiness, its cordon).
  void Announce(const NodeEntry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  api::Node DescribeLocked(const NodeEntry& entry) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdateNodeGauge() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies `edit` to node `name`'s record, stores and announces it.
  absl::StatusOr<api::Node> EditNode(
      const std::string& name,
      const std::function<absl::Status(api::NodeRecord&)>& edit)
      ABSL_LOCKS_EXCLUDED(mu_);

  store::Store* const store_;
  const Options options_;
  const LivenessRules liveness_;
  // Thread-safe parts, each with its own lock, taken after mu_ (or alone):
  LaunchStages stages_;
  LogRequests log_requests_;
  PodProgressTable progress_;
  NodeNotifier notifier_;  // Delivers with no lock of the hub's held.

  // Guards the registry, the desired sets and the counts. Taken after the
  // notifier's delivery lock (a sink may call the AgentFleet methods) and
  // before every other lock of the hub's parts; see README.md.
  absl::Mutex mu_ ABSL_ACQUIRED_AFTER(notifier_.deliver_mu_)
      ABSL_ACQUIRED_BEFORE(notifier_.mu_, log_requests_.mu_, stages_.mu_,
                           progress_.mu_);
  NodeRegistry registry_ ABSL_GUARDED_BY(mu_);
  DesiredSets desired_ ABSL_GUARDED_BY(mu_);
  Refusals refusals_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;  // CloseAll was called

  LivenessMonitor monitor_;  // Last: stopped before the rest goes.
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_AGENTS_AGENT_HUB_H_
