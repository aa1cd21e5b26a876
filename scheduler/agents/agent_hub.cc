#include "scheduler/agents/agent_hub.h"

#include <optional>
#include <utility>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/pod_phase.h"
#include "common/failpoint.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "scheduler/agents/agent_input.h"
#include "scheduler/agents/node_admin.h"
#include "scheduler/metrics.h"
#include "store/keys.h"

namespace jobset::scheduler {

absl::StatusOr<std::unique_ptr<AgentHub>> AgentHub::Create(store::Store* store,
                                                           Options options) {
  const absl::Time started = options.clock->Now();
  int undecodable = 0;
  JOBSET_ASSIGN_OR_RETURN(NodeRegistry registry,
                          NodeRegistry::Load(*store, started, &undecodable));
  if (undecodable > 0 && options.metrics != nullptr) {
    options.metrics->rejected.Add({{"reason", "undecodable_record"}})
        .Increment(undecodable);
  }
  auto hub =
      absl::WrapUnique(new AgentHub(store, options, std::move(registry)));
  if (options.sink != nullptr) hub->Attach(options.sink);
  return hub;
}

AgentHub::AgentHub(store::Store* store, Options options, NodeRegistry registry)
    : store_(store),
      options_(options),
      liveness_{.node_lost_timeout = options.node_lost_timeout,
                .restart_grace = options.restart_grace,
                .started = options.clock->Now()},
      stages_(options.metrics),
      registry_(std::move(registry)),
      refusals_(options.metrics) {}

AgentHub::~AgentHub() {
  monitor_.Stop();
  CloseAll();
}

void AgentHub::Attach(NodeSink* sink) {
  notifier_.Attach(sink);
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, entry] : registry_.nodes()) Announce(entry);
    UpdateNodeGauge();
  }
  notifier_.Deliver();
  if (options_.liveness_thread) {
    monitor_.Start(LivenessTick(options_.node_lost_timeout),
                   [this] { CheckLiveness(); });
  }
}

void AgentHub::Announce(const NodeEntry& entry) {
  absl::StatusOr<NodeInfo> info = ToNodeInfo(entry.node);
  if (!info.ok()) return;  // Stored before its registration was checked.
  info->ready = entry.ready;
  notifier_.SetNode(*std::move(info));
}

void AgentHub::Run(Assignment order) {
  absl::MutexLock lock(&mu_);
  const Assignment& desired = desired_.Run(std::move(order));
  NodeEntry* entry = registry_.Find(desired.node());
  if (entry != nullptr && entry->session) entry->session->PushRun(desired);
}

void AgentHub::Stop(const std::string& node, const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  if (!desired_.Stop(node, pod_uid)) return;
  NodeEntry* entry = registry_.Find(node);
  if (entry != nullptr && entry->session) {
    api::SchedulerMessage msg;
    msg.mutable_stop()->set_pod_uid(pod_uid);
    entry->session->Push(std::move(msg));
  }
}

void AgentHub::Release(const std::string& node, const std::string& pod_uid) {
  stages_.Forget(pod_uid);
  absl::MutexLock lock(&mu_);
  desired_.Release(node, pod_uid);
  // Under the lock, with the desired set: no report of it is taken after.
  progress_.Forget(pod_uid);
  NodeEntry* entry = registry_.Find(node);
  if (entry != nullptr && entry->session) {
    api::SchedulerMessage msg;
    msg.mutable_release()->set_pod_uid(pod_uid);
    entry->session->Push(std::move(msg));
  }
}

absl::StatusOr<std::shared_ptr<AgentHub::Session>> AgentHub::Connect(
    const api::Hello& hello, std::function<void()> cancel) {
  if (absl::Status valid = ValidateRegistration(hello.node()); !valid.ok()) {
    absl::MutexLock lock(&mu_);
    Refused("registration", valid.message());
    return valid;
  }
  // NodeRestriction: labels a node may not set are dropped, logged and
  // counted, not refused: Kubernetes refuses the kubelet's update, but a
  // refused Hello would strand the node (its pods lost after the timeout)
  // for a label it had set before the rule, while dropping gives an attacker
  // nothing either.
  api::NodeRegistration r = hello.node();
  const std::vector<std::string> dropped = DropRestrictedLabels(r);
  api::NodeRecord candidate;
  *candidate.mutable_registration() = r;
  JOBSET_RETURN_IF_ERROR(ToNodeInfo(candidate).status());

  auto session = std::make_shared<Session>(r.name(), std::move(cancel),
                                           &stages_, options_.clock);
  std::shared_ptr<Session> replaced;
  std::optional<api::NodeRecord> to_store;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::UnavailableError("jobsetd is shutting down");
    for (const api::PodReport& report : hello.pods()) {
      if (absl::Status own = desired_.ForeignPod(r.name(), report.pod_uid());
          !own.ok()) {
        Refused("foreign_pod", own.message());
        return own;
      }
    }
    bool taints_ignored = false;
    replaced = registry_.Register(r, session, options_.clock->Now(), &to_store,
                                  &taints_ignored);
    if (!dropped.empty()) {
      Refused("restricted_label",
              absl::StrCat("node ", r.name(), ": hello.node.labels: dropped ",
                           absl::StrJoin(dropped, ", "),
                           ": only an admin sets labels under ",
                           kNodeRestrictionLabelPrefix, " and ",
                           kJobsetdLabelPrefix, " (jobsetctl label node)"));
    }
    if (taints_ignored) {
      // A kubelet registers with its taints once and never changes them.
      Refused("node_taints",
              absl::StrCat("node ", r.name(),
                           ": hello.node.taints ignored: a node's taints are "
                           "set at its first registration and then only by an "
                           "admin (jobsetctl taint node)"));
    }
    // The merged record (the admin's taints and labels), not the Hello.
    Announce(*registry_.Find(r.name()));

    api::SchedulerMessage welcome;
    welcome.mutable_welcome()->set_heartbeat_interval_ms(
        absl::ToInt64Milliseconds(options_.heartbeat_interval));
    welcome.mutable_welcome()->set_leader_epoch(options_.leader_epoch);
    // The set as it is now; its pods are built when the Welcome is sent.
    session->PushWelcome(std::move(welcome), desired_.Of(r.name()));
    UpdateNodeGauge();
    // What the agent knows: reports of its own desired pods count (exits
    // that happened while it was away); it stops the rest itself.
    for (const api::PodReport& report : hello.pods()) {
      const Assignment* desired = desired_.Find(r.name(), report.pod_uid());
      if (desired == nullptr) {
        refusals_.Fenced();
        continue;
      }
      Forward(r.name(), *desired, report);
    }
  }
  notifier_.Deliver();
  if (replaced) replaced->Close();
  if (to_store.has_value())
    JOBSET_RETURN_IF_ERROR(StoreNode(*store_, *to_store));
  return session;
}

void AgentHub::Forward(const std::string& node, const Assignment& desired,
                       const api::PodReport& report) {
  // Before CheckPodReport, which sets the status it checks.
  const bool has_status = report.has_status();
  api::PodReport checked = report;
  if (std::optional<Refusal> refusal =
          CheckPodReport(desired.job->spec().template_().spec(), checked)) {
    Refused(refusal->reason,
            absl::StrCat("node ", node, ", pod ", desired.uid(), ": ",
                         refusal->detail));
    return;
  }
  if (checked.has_progress()) {
    // A bad progress is dropped alone; the status still counts.
    if (std::optional<Refusal> refusal = CheckPodProgress(checked.progress())) {
      Refused(refusal->reason,
              absl::StrCat("node ", node, ", pod ", desired.uid(), ": ",
                           refusal->detail));
    } else {
      progress_.Update(node, desired.uid(), checked.in_place_restart_attempt(),
                       checked.progress(), options_.clock->Now());
    }
  }
  // Progress alone is not the controller's: it would make a pass of every
  // report, every second per pod.
  if (!has_status) return;
  PodReport forwarded{node,
                      std::move(*checked.mutable_pod_uid()),
                      checked.status(),
                      checked.in_place_restart_attempt(),
                      {checked.events().begin(), checked.events().end()}};
  if (checked.has_launch() && checked.status().phase() == api::kPodRunning) {
    const absl::Time now = options_.clock->Now();
    if (stages_.Reported(forwarded.pod_uid, checked.launch(), now))
      forwarded.launch_reported = now;
  }
  if (checked.status().phase() == api::kPodSucceeded ||
      checked.status().phase() == api::kPodFailed) {
    // Received, checked; the controller has not seen it (docs/failpoints.md).
    JOBSET_FAILPOINT_VOID("agents.exit_report.before_persist");
  }
  notifier_.ReportPod(std::move(forwarded));
}

void AgentHub::Refused(absl::string_view reason, absl::string_view detail) {
  refusals_.Refused(reason, detail, options_.clock->Now());
}

absl::Status AgentHub::OnMessage(Session* session,
                                 const api::AgentMessage& msg) {
  const std::string& node = session->node();
  {
    absl::MutexLock lock(&mu_);
    NodeEntry* entry = registry_.Find(node);
    if (entry == nullptr || entry->session.get() != session) {
      return absl::FailedPreconditionError(absl::StrCat(
          "node ", node,
          ": this stream was replaced or the node was declared lost; "
          "reconnect and say hello again"));
    }
    entry->last_seen = options_.clock->Now();
    switch (msg.kind_case()) {
      case api::AgentMessage::kHeartbeat: {
        api::SchedulerMessage ack;
        ack.mutable_heartbeat_ack()->set_seq(msg.heartbeat().seq());
        session->Push(std::move(ack));
        return absl::OkStatus();
      }
      case api::AgentMessage::kPodUpdate: {
        const api::PodReport& report = msg.pod_update();
        if (report.pod_uid().size() > kMaxPodUidBytes) {
          // No pod has such a uid; not worth echoing in a release.
          Refused("pod_uid", absl::StrCat("node ", node, ": pod_uid of ",
                                          report.pod_uid().size(), " bytes"));
          return absl::OkStatus();
        }
        const Assignment* desired = desired_.Find(node, report.pod_uid());
        if (desired == nullptr) {
          if (absl::Status own = desired_.ForeignPod(node, report.pod_uid());
              !own.ok()) {
            Refused("foreign_pod", own.message());
            return own;  // Ends the stream.
          }
          // Not this node's (any more): fenced, and the agent may forget it.
          refusals_.Fenced();
          api::SchedulerMessage release;
          release.mutable_release()->set_pod_uid(report.pod_uid());
          session->Push(std::move(release));
          return absl::OkStatus();
        }
        // A refused report is dropped; the stream stays up.
        Forward(node, *desired, report);
        break;  // Delivered below, outside the lock.
      }
      case api::AgentMessage::kLogChunk: {
        // Only the node asked may answer.
        absl::Status answered = log_requests_.Answer(node, msg.log_chunk());
        if (!answered.ok()) Refused("foreign_log", answered.message());
        return answered;
      }
      case api::AgentMessage::kHello:
        return absl::InvalidArgumentError(
            "hello: only the first message of a stream may be a hello");
      default:
        return absl::InvalidArgumentError("empty agent message");
    }
  }
  notifier_.Deliver();
  return absl::OkStatus();
}

void AgentHub::Disconnect(Session* session) {
  std::shared_ptr<Session> closing;
  {
    absl::MutexLock lock(&mu_);
    NodeEntry* entry = registry_.Find(session->node());
    if (entry != nullptr && entry->session.get() == session) {
      closing = std::move(entry->session);
      // Its agent says it again after its next Hello.
      progress_.ForgetNode(session->node());
    }
  }
  session->Detach();
}

void AgentHub::CloseAll() {
  std::vector<std::shared_ptr<Session>> sessions;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    for (auto& [name, entry] : registry_.nodes()) {
      if (entry.session) sessions.push_back(std::move(entry.session));
    }
  }
  notifier_.Detach();  // The controller may be going away.
  for (auto& s : sessions) s->Close();
}

std::vector<std::string> AgentHub::CheckLiveness() {
  const absl::Time now = options_.clock->Now();
  std::vector<std::string> lost;
  std::vector<std::shared_ptr<Session>> closing;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [name, entry] : registry_.nodes()) {
      const std::optional<absl::Duration> silent =
          SilentTooLong(liveness_, entry.ready, entry.last_seen, now);
      if (!silent.has_value()) continue;
      if (auto s = NodeRegistry::MarkLost(entry, now)) {
        closing.push_back(std::move(s));
      }
      lost.push_back(name);
      progress_.ForgetNode(name);
      if (options_.metrics != nullptr) options_.metrics->nodes_lost.Increment();
      notifier_.LoseNode(
          name, "NodeLost",
          NodeLostMessage(name, *silent, options_.node_lost_timeout));
    }
    if (!lost.empty()) UpdateNodeGauge();
  }
  notifier_.Deliver();
  for (auto& s : closing) s->Close();
  return lost;
}

api::Node AgentHub::DescribeLocked(const NodeEntry& entry) const {
  return Describe(entry, desired_.Load(entry.node.registration().name()));
}

std::vector<api::Node> AgentHub::ListNodes() {
  absl::MutexLock lock(&mu_);
  std::vector<api::Node> out;
  for (const auto& [name, entry] : registry_.nodes())
    out.push_back(DescribeLocked(entry));
  return out;
}

absl::StatusOr<api::Node> AgentHub::GetNode(const std::string& name) {
  absl::MutexLock lock(&mu_);
  NodeEntry* entry = registry_.Find(name);
  if (entry == nullptr) {
    return absl::NotFoundError(absl::StrCat("node \"", name, "\" not found"));
  }
  return DescribeLocked(*entry);
}

absl::StatusOr<api::Node> AgentHub::SetCordoned(const std::string& name,
                                                bool cordoned) {
  api::NodeRecord to_store;
  {
    absl::MutexLock lock(&mu_);
    NodeEntry* entry = registry_.Find(name);
    if (entry == nullptr) {
      return absl::NotFoundError(absl::StrCat("node \"", name, "\" not found"));
    }
    to_store = entry->node;
  }
  to_store.set_cordoned(cordoned);
  JOBSET_RETURN_IF_ERROR(StoreNode(*store_, to_store));
  api::Node node;
  {
    absl::MutexLock lock(&mu_);
    NodeEntry* entry = registry_.Find(name);
    if (entry == nullptr) {
      return absl::NotFoundError(absl::StrCat("node \"", name, "\" not found"));
    }
    entry->node.set_cordoned(cordoned);
    UpdateNodeGauge();
    Announce(*entry);
    node = DescribeLocked(*entry);
  }
  notifier_.Deliver();
  return node;
}

absl::StatusOr<api::Node> AgentHub::EditNode(
    const std::string& name,
    const std::function<absl::Status(api::NodeRecord&)>& edit) {
  api::Node node;
  {
    absl::MutexLock lock(&mu_);
    NodeEntry* entry = registry_.Find(name);
    if (entry == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("nodes \"", name, "\" not found"));
    }
    api::NodeRecord edited = entry->node;
    JOBSET_RETURN_IF_ERROR(edit(edited));
    // Under the lock, as Remove: a Hello must not store the record in
    // between, and the edit is durable before it is answered.
    JOBSET_RETURN_IF_ERROR(StoreNode(*store_, edited));
    entry->node = std::move(edited);
    Announce(*entry);
    node = DescribeLocked(*entry);
  }
  notifier_.Deliver();
  return node;
}

absl::StatusOr<api::Node> AgentHub::LabelNode(
    const api::LabelNodeRequest& request) {
  return EditNode(request.name(), [&](api::NodeRecord& record) {
    return ApplyLabels(request, record);
  });
}

absl::StatusOr<api::Node> AgentHub::TaintNode(
    const api::TaintNodeRequest& request) {
  return EditNode(request.name(), [&](api::NodeRecord& record) {
    return ApplyTaints(request, record);
  });
}

void AgentHub::Quarantine(const std::string& node,
                          const std::string& evidence) {
  api::TaintNodeRequest request;
  request.set_name(node);
  request.set_overwrite(true);
  api::Taint* taint = request.add_add();
  taint->set_key("jobsetd.io/quarantined");
  taint->set_effect("NoSchedule");
  absl::StatusOr<api::Node> tainted = TaintNode(request);
  if (!tainted.ok()) {
    JOBSET_LOG(ERROR) << "quarantining node " << node << ": "
                      << tainted.status();
    return;
  }
  JOBSET_LOG(WARNING) << "node " << node << " quarantined: " << evidence;
}

absl::StatusOr<api::Node> AgentHub::Drain(const std::string& name) {
  JOBSET_ASSIGN_OR_RETURN(api::Node node, SetCordoned(name, true));
  {
    absl::MutexLock lock(&mu_);
    notifier_.LoseNode(name, "EvictionByEvictionAPI",
                       absl::StrCat("node ", name, " was drained"));
    // Draining stops the pods, it does not take the node away.
    NodeEntry* entry = registry_.Find(name);
    if (entry != nullptr && entry->ready) Announce(*entry);
  }
  notifier_.Deliver();
  return node;
}

absl::StatusOr<api::Node> AgentHub::Remove(const std::string& name) {
  std::shared_ptr<Session> session;
  api::Node node;
  {
    absl::MutexLock lock(&mu_);
    NodeEntry* entry = registry_.Find(name);
    if (entry == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("nodes \"", name, "\" not found"));
    }
    // Under the lock: the node must not register again in between.
    JOBSET_RETURN_IF_ERROR(
        store_->Commit(store::Batch().Delete(store::keys::NodeKey(name)))
            .status());
    node = DescribeLocked(*entry);
    session = registry_.Erase(name);
    progress_.ForgetNode(name);
    notifier_.LoseNode(name, "DeletionByPodGC",
                       absl::StrCat("node ", name, " was deleted"));
    UpdateNodeGauge();
  }
  notifier_.Deliver();
  if (session != nullptr) session->Close();
  return node;
}

absl::StatusOr<api::LogChunk> AgentHub::ReadLog(const std::string& node,
                                                const std::string& pod_uid,
                                                const std::string& container,
                                                int64_t offset,
                                                int32_t max_bytes,
                                                absl::Duration timeout) {
  std::shared_ptr<Session> session;
  {
    absl::MutexLock lock(&mu_);
    NodeEntry* entry = registry_.Find(node);
    if (entry != nullptr) session = entry->session;
  }
  if (session == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "the agent of node ", node, " is not connected; try again later"));
  }
  // Waited for without the hub's lock: a slow agent holds up only its
  // reader.
  const int64_t id = log_requests_.Start(node);
  api::SchedulerMessage msg;
  api::LogRequest* r = msg.mutable_log_request();
  r->set_request_id(id);
  r->set_pod_uid(pod_uid);
  r->set_container(container);
  r->set_offset(offset);
  r->set_max_bytes(max_bytes);
  session->Push(std::move(msg));
  return log_requests_.Wait(id, timeout);
}

void AgentHub::UpdateNodeGauge() {
  if (options_.metrics == nullptr) return;
  const NodeRegistry::Counts counts = registry_.Count();
  options_.metrics->nodes.Add({{"state", "Ready"}}).Set(counts.ready);
  options_.metrics->nodes.Add({{"state", "NotReady"}}).Set(counts.not_ready);
  options_.metrics->nodes.Add({{"state", "Cordoned"}}).Set(counts.cordoned);
}

int64_t AgentHub::fenced_reports() {
  absl::MutexLock lock(&mu_);
  return refusals_.fenced();
}

int64_t AgentHub::refused() {
  absl::MutexLock lock(&mu_);
  return refusals_.refused();
}

}  // namespace jobset::scheduler
