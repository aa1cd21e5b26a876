#include "scheduler/agents/agent_hub.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/pod_phase.h"
#include "api/quantity.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "google/protobuf/util/message_differencer.h"
#include "scheduler/agents/agent_input.h"
#include "scheduler/agents/node_object.h"
#include "scheduler/placement/requirements.h"
#include "store/decode.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {
namespace {

// Refusals are logged at most this often.
constexpr absl::Duration kWarningInterval = absl::Seconds(10);

absl::StatusOr<placement::TaintEffect> ParseEffect(const std::string& effect) {
  if (effect == "NoSchedule") return placement::TaintEffect::kNoSchedule;
  if (effect == "PreferNoSchedule")
    return placement::TaintEffect::kPreferNoSchedule;
  if (effect == "NoExecute") return placement::TaintEffect::kNoExecute;
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported value \"", effect,
                   "\": supported values: \"NoSchedule\", "
                   "\"PreferNoSchedule\", \"NoExecute\""));
}

std::map<std::string, std::string> FormatResources(
    const placement::Resources& r) {
  std::map<std::string, std::string> out;
  if (r.cpu_millis > 0) {
    out["cpu"] = r.cpu_millis % 1000 == 0 ? absl::StrCat(r.cpu_millis / 1000)
                                          : absl::StrCat(r.cpu_millis, "m");
  }
  if (r.memory_bytes > 0) out["memory"] = absl::StrCat(r.memory_bytes);
  for (const auto& [name, n] : r.extended) out[name] = absl::StrCat(n);
  return out;
}

// Builds what the agent gets for `desired`: the full pod (its environment
// with its Secrets' and ConfigMaps' values), its attempt's host table, its
// secret and configMap volumes' files and its registry credentials. Never
// logged.
api::PodAssignment ToAssignment(const Assignment& desired) {
  api::PodAssignment a;
  *a.mutable_pod() = desired.Pod();
  if (desired.hosts != nullptr) {
    a.mutable_hosts()->Reserve(desired.hosts->size());
    for (const HostEntry& h : *desired.hosts) {
      api::HostEntry* e = a.add_hosts();
      e->set_address(h.address);
      for (const std::string& n : h.names) e->add_names(n);
    }
  }
  a.set_stop(desired.stop);
  if (desired.config != nullptr) {
    for (const api::ConfigVolume& v : desired.config->volumes)
      *a.add_config_volumes() = v;
    for (const api::RegistryCredential& c : desired.config->pull_credentials)
      *a.add_pull_credentials() = c;
  }
  return a;
}

}  // namespace

bool AgentHub::Session::Pop(api::SchedulerMessage* msg, absl::Duration wait,
                            bool* timed_out) {
  Outgoing next;
  {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return closed_ || !out_.empty();
    };
    const bool woke = mu_.AwaitWithTimeout(absl::Condition(&ready), wait);
    if (timed_out != nullptr) *timed_out = !woke;
    if (closed_ || out_.empty()) return false;
    next = std::move(out_.front());
    out_.pop_front();
  }
  // Built outside the lock, so the hub (and the controller thread behind it)
  // never waits for a pod or a whole desired set to be built. One thread
  // pops a session, so messages keep their order.
  *msg = std::move(next.message);
  if (next.run.has_value()) {
    *msg->mutable_run() = ToAssignment(*next.run);
    if (stages_ != nullptr)
      stages_->Sent(next.run->uid(), next.run->bound, clock_->Now());
  }
  if (!next.pods.empty()) {
    api::Welcome* welcome = msg->mutable_welcome();
    welcome->mutable_pods()->Reserve(next.pods.size());
    for (const Assignment& pod : next.pods)
      *welcome->add_pods() = ToAssignment(pod);
  }
  return true;
}

void AgentHub::Session::Push(api::SchedulerMessage msg) {
  absl::MutexLock lock(&mu_);
  if (!closed_) out_.push_back(Outgoing{std::move(msg), std::nullopt, {}});
}

void AgentHub::Session::PushRun(Assignment pod) {
  absl::MutexLock lock(&mu_);
  if (!closed_) out_.push_back(Outgoing{{}, std::move(pod), {}});
}

void AgentHub::Session::PushWelcome(api::SchedulerMessage welcome,
                                    std::vector<Assignment> pods) {
  absl::MutexLock lock(&mu_);
  if (!closed_) {
    out_.push_back(Outgoing{std::move(welcome), std::nullopt, std::move(pods)});
  }
}

void AgentHub::Session::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  out_.clear();
  if (cancel_) std::exchange(cancel_, nullptr)();
}

void AgentHub::Session::Detach() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
  out_.clear();
  cancel_ = nullptr;
}

AgentHub::AgentHub(store::Store* store, Options options)
    : store_(store),
      options_(options),
      started_(options.clock->Now()),
      stages_(options.metrics) {}

AgentHub::~AgentHub() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (monitor_.joinable()) monitor_.join();
  CloseAll();
}

absl::Status AgentHub::Load() {
  auto add_node = [&](const store::KeyValue& kv) -> absl::Status {
    absl::StatusOr<api::NodeRecord> decoded =
        store::DecodeValue<api::NodeRecord>(kv);
    if (!decoded.ok()) {
      // Set aside, left in the store: the node registers again when its
      // agent says hello.
      JOBSET_LOG(ERROR) << "agent hub: skipping a stored node that does not "
                           "decode: "
                        << decoded.status();
      if (options_.metrics != nullptr) {
        options_.metrics->rejected.Add({{"reason", "undecodable_record"}})
            .Increment();
      }
      return absl::OkStatus();
    }
    api::NodeRecord node = *std::move(decoded);
    absl::MutexLock lock(&mu_);
    NodeEntry& entry = nodes_[node.registration().name()];
    entry.node = std::move(node);
    // Within the restart grace the node counts as Ready: its pods keep
    // running while its agent reconnects.
    entry.ready = true;
    entry.transition = started_;
    return absl::OkStatus();
  };
  return store::ScanAll(*store_, store::keys::kNodes, add_node);
}

void AgentHub::Attach(NodeSink* sink) {
  std::vector<NodeInfo> known;
  {
    absl::MutexLock lock(&mu_);
    sink_ = sink;
    for (const auto& [name, entry] : nodes_) {
      absl::StatusOr<NodeInfo> info = ToNodeInfo(entry.node);
      if (info.ok()) known.push_back(*std::move(info));
    }
    for (NodeInfo& info : known) sink_->SetNode(std::move(info));
    UpdateNodeGauge();
  }
  monitor_ = std::thread([this] { MonitorLoop(); });
}

absl::StatusOr<NodeInfo> AgentHub::ToNodeInfo(
    const api::NodeRecord& node) const {
  const api::NodeRegistration& r = node.registration();
  NodeInfo info;
  info.name = r.name();
  info.address = r.address();
  info.labels.insert(r.labels().begin(), r.labels().end());
  for (int i = 0; i < r.taints_size(); ++i) {
    const api::Taint& t = r.taints(i);
    absl::StatusOr<placement::TaintEffect> effect = ParseEffect(t.effect());
    if (!effect.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hello.node.taints[", i, "].effect: ", effect.status().message()));
    }
    info.taints.push_back({t.key(), t.value(), *effect});
  }
  for (const auto& [name, text] : r.capacity()) {
    absl::StatusOr<api::Quantity> q = api::ParseQuantity(text);
    if (!q.ok() || q->MilliValue() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "hello.node.capacity[", name, "]: invalid quantity \"", text, "\""));
    }
    if (name == "cpu") {
      info.allocatable.cpu_millis = q->MilliValue();
    } else if (name == "memory") {
      info.allocatable.memory_bytes = q->Value();
    } else {
      info.allocatable.extended[name] = q->Value();
    }
  }
  info.ready = true;
  info.cordoned = node.cordoned();
  return info;
}

absl::Status AgentHub::Persist(const api::NodeRecord& node) {
  return store_
      ->Commit(
          store::Batch().Put(store::keys::NodeKey(node.registration().name()),
                             node.SerializeAsString()))
      .status();
}

absl::Status AgentHub::CheckOwnPod(const std::string& node,
                                   const std::string& pod_uid) const {
  auto bound = pod_nodes_.find(pod_uid);
  if (bound == pod_nodes_.end() || bound->second == node) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(
      absl::StrCat("node \"", node, "\" may only report pods bound to it (pod ",
                   pod_uid, " is not)"));
}

void AgentHub::Run(Assignment order) {
  absl::MutexLock lock(&mu_);
  pod_nodes_[order.uid()] = order.node();
  Assignment& desired = desired_[order.node()][order.uid()];
  desired = std::move(order);
  desired.stop = false;
  auto entry = nodes_.find(desired.node());
  if (entry != nodes_.end() && entry->second.session) {
    entry->second.session->PushRun(desired);
  }
}

void AgentHub::Stop(const std::string& node, const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  auto pods = desired_.find(node);
  if (pods == desired_.end()) return;
  auto pod = pods->second.find(pod_uid);
  if (pod == pods->second.end()) return;
  pod->second.stop = true;
  auto entry = nodes_.find(node);
  if (entry != nodes_.end() && entry->second.session) {
    api::SchedulerMessage msg;
    msg.mutable_stop()->set_pod_uid(pod_uid);
    entry->second.session->Push(std::move(msg));
  }
}

void AgentHub::Release(const std::string& node, const std::string& pod_uid) {
  stages_.Forget(pod_uid);
  absl::MutexLock lock(&mu_);
  auto pods = desired_.find(node);
  if (pods != desired_.end()) {
    pods->second.erase(pod_uid);
    if (pods->second.empty()) desired_.erase(pods);
  }
  if (auto bound = pod_nodes_.find(pod_uid);
      bound != pod_nodes_.end() && bound->second == node) {
    pod_nodes_.erase(bound);
  }
  auto entry = nodes_.find(node);
  if (entry != nodes_.end() && entry->second.session) {
    api::SchedulerMessage msg;
    msg.mutable_release()->set_pod_uid(pod_uid);
    entry->second.session->Push(std::move(msg));
  }
}

absl::StatusOr<std::shared_ptr<AgentHub::Session>> AgentHub::Connect(
    const api::Hello& hello, std::function<void()> cancel) {
  const api::NodeRegistration& r = hello.node();
  if (absl::Status valid = ValidateRegistration(r); !valid.ok()) {
    absl::MutexLock lock(&mu_);
    Refused("registration", valid.message());
    return valid;
  }
  api::NodeRecord candidate;
  *candidate.mutable_registration() = r;
  JOBSET_ASSIGN_OR_RETURN(NodeInfo info, ToNodeInfo(candidate));

  auto session = std::make_shared<Session>(r.name(), std::move(cancel),
                                           &stages_, options_.clock);
  std::shared_ptr<Session> replaced;
  bool persist = false;
  api::NodeRecord to_store;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::UnavailableError("jobsetd is shutting down");
    for (const api::PodReport& report : hello.pods()) {
      if (absl::Status own = CheckOwnPod(r.name(), report.pod_uid());
          !own.ok()) {
        Refused("foreign_pod", own.message());
        return own;
      }
    }
    NodeEntry& entry = nodes_[r.name()];
    replaced = std::exchange(entry.session, session);
    info.cordoned = entry.node.cordoned();
    persist = !google::protobuf::util::MessageDifferencer::Equals(
        entry.node.registration(), r);
    *entry.node.mutable_registration() = r;
    const absl::Time now = options_.clock->Now();
    if (!entry.node.has_creation_timestamp()) {
      entry.node.mutable_creation_timestamp()->set_seconds(
          absl::ToUnixSeconds(now));
      persist = true;
    }
    to_store = entry.node;
    entry.last_seen = now;
    if (!entry.ready) entry.transition = now;
    entry.ready = true;
    if (sink_ != nullptr) sink_->SetNode(info);

    api::SchedulerMessage welcome;
    welcome.mutable_welcome()->set_heartbeat_interval_ms(
        absl::ToInt64Milliseconds(options_.heartbeat_interval));
    welcome.mutable_welcome()->set_leader_epoch(options_.leader_epoch);
    // The set as it is now; its pods are built when the Welcome is sent.
    std::vector<Assignment> welcome_pods;
    auto pods = desired_.find(r.name());
    if (pods != desired_.end()) {
      welcome_pods.reserve(pods->second.size());
      for (const auto& [uid, desired] : pods->second)
        welcome_pods.push_back(desired);
    }
    session->PushWelcome(std::move(welcome), std::move(welcome_pods));
    UpdateNodeGauge();
    // What the agent knows: reports of its own desired pods count (exits
    // that happened while it was away); it stops the rest itself.
    for (const api::PodReport& report : hello.pods()) {
      auto pod = pods == desired_.end() ? decltype(pods->second)::iterator()
                                        : pods->second.find(report.pod_uid());
      if (pods == desired_.end() || pod == pods->second.end()) {
        Fenced();
        continue;
      }
      Forward(r.name(), pod->second, report);
    }
  }
  if (replaced) replaced->Close();
  if (persist) {
    absl::Status stored = Persist(to_store);
    if (!stored.ok()) return stored;
  }
  return session;
}

void AgentHub::Forward(const std::string& node, const Assignment& desired,
                       const api::PodReport& report) {
  api::PodReport checked = report;
  if (std::optional<Refusal> refusal =
          CheckPodReport(desired.job->spec().template_().spec(), checked)) {
    Refused(refusal->reason,
            absl::StrCat("node ", node, ", pod ", desired.uid(), ": ",
                         refusal->detail));
    return;
  }
  if (sink_ == nullptr) return;
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
  sink_->ReportPod(std::move(forwarded));
}

void AgentHub::Refused(absl::string_view reason, absl::string_view detail) {
  ++refused_;
  if (options_.metrics != nullptr) {
    options_.metrics->refused_reports.Add({{"reason", std::string(reason)}})
        .Increment();
  }
  // At most one line per kWarningInterval: a flood of bad reports must not
  // become a flood of log lines.
  const absl::Time now = options_.clock->Now();
  if (now - last_refusal_warning_ < kWarningInterval) {
    ++refusals_unlogged_;
    return;
  }
  last_refusal_warning_ = now;
  JOBSET_LOG(WARNING) << "agent hub: refused (" << reason
                      << "): " << CutUtf8(detail, 1024)
                      << (refusals_unlogged_ > 0
                              ? absl::StrCat(" (and ", refusals_unlogged_,
                                             " more since the last line)")
                              : "");
  refusals_unlogged_ = 0;
}

absl::Status AgentHub::OnMessage(Session* session,
                                 const api::AgentMessage& msg) {
  absl::MutexLock lock(&mu_);
  auto entry = nodes_.find(session->node());
  if (entry == nodes_.end() || entry->second.session.get() != session) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node ", session->node(),
        ": this stream was replaced or the node was declared lost; "
        "reconnect and say hello again"));
  }
  entry->second.last_seen = options_.clock->Now();
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
        Refused("pod_uid",
                absl::StrCat("node ", session->node(), ": pod_uid of ",
                             report.pod_uid().size(), " bytes"));
        return absl::OkStatus();
      }
      auto pods = desired_.find(session->node());
      auto pod = pods == desired_.end() ? decltype(pods->second)::iterator()
                                        : pods->second.find(report.pod_uid());
      if (pods == desired_.end() || pod == pods->second.end()) {
        if (absl::Status own = CheckOwnPod(session->node(), report.pod_uid());
            !own.ok()) {
          Refused("foreign_pod", own.message());
          return own;  // Ends the stream.
        }
        // Not this node's (any more): fenced, and the agent may forget it.
        Fenced();
        api::SchedulerMessage release;
        release.mutable_release()->set_pod_uid(report.pod_uid());
        session->Push(std::move(release));
        return absl::OkStatus();
      }
      // A refused report is dropped; the stream stays up.
      Forward(session->node(), pod->second, report);
      return absl::OkStatus();
    }
    case api::AgentMessage::kLogChunk: {
      auto wait = log_waits_.find(msg.log_chunk().request_id());
      if (wait == log_waits_.end()) return absl::OkStatus();  // Too late.
      // Only the node asked may answer.
      if (wait->second.node != session->node()) {
        Refused("foreign_log", absl::StrCat("node ", session->node(),
                                            " answered a log request for node ",
                                            wait->second.node));
        return absl::PermissionDeniedError(
            absl::StrCat("node \"", session->node(),
                         "\" may only answer log requests sent to it"));
      }
      wait->second.chunk = msg.log_chunk();
      return absl::OkStatus();
    }
    case api::AgentMessage::kHello:
      return absl::InvalidArgumentError(
          "hello: only the first message of a stream may be a hello");
    default:
      return absl::InvalidArgumentError("empty agent message");
  }
}

void AgentHub::Disconnect(Session* session) {
  std::shared_ptr<Session> closing;
  {
    absl::MutexLock lock(&mu_);
    auto entry = nodes_.find(session->node());
    if (entry != nodes_.end() && entry->second.session.get() == session) {
      closing = std::move(entry->second.session);
    }
  }
  session->Detach();
}

void AgentHub::CloseAll() {
  std::vector<std::shared_ptr<Session>> sessions;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    sink_ = nullptr;  // The controller may be going away.
    for (auto& [name, entry] : nodes_) {
      if (entry.session) sessions.push_back(std::move(entry.session));
    }
  }
  for (auto& s : sessions) s->Close();
}

std::vector<std::string> AgentHub::CheckLiveness() {
  const absl::Time now = options_.clock->Now();
  std::vector<std::string> lost;
  std::vector<std::shared_ptr<Session>> closing;
  {
    absl::MutexLock lock(&mu_);
    const bool in_grace = now < started_ + options_.restart_grace;
    for (auto& [name, entry] : nodes_) {
      if (!entry.ready) continue;
      // The grace is for the nodes known before this jobsetd started (a
      // restart, a failover) to reconnect; a node that has connected to
      // this one is under the normal timeout at once.
      const bool connected_here = entry.last_seen != absl::InfinitePast();
      if (!connected_here && in_grace) continue;
      const absl::Time seen = connected_here ? entry.last_seen : started_;
      if (now - seen < options_.node_lost_timeout) continue;
      entry.ready = false;
      entry.transition = now;
      if (entry.session) closing.push_back(std::move(entry.session));
      lost.push_back(name);
      if (options_.metrics != nullptr) options_.metrics->nodes_lost.Increment();
      if (sink_ != nullptr) {
        sink_->LoseNode(
            name, "NodeLost",
            absl::StrCat("node ", name, " sent no heartbeat for ",
                         absl::FormatDuration(now - seen), " (timeout ",
                         absl::FormatDuration(options_.node_lost_timeout),
                         ")"));
      }
    }
  }
  if (!lost.empty()) {
    absl::MutexLock lock(&mu_);
    UpdateNodeGauge();
  }
  for (auto& s : closing) s->Close();
  return lost;
}

void AgentHub::MonitorLoop() {
  const absl::Duration tick =
      std::clamp(options_.node_lost_timeout / 10, absl::Milliseconds(20),
                 absl::Milliseconds(500));
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_;
      };
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping), tick)) return;
    }
    CheckLiveness();
  }
}

api::Node AgentHub::Describe(const NodeEntry& entry) const {
  NodeLiveness liveness;
  liveness.ready = entry.ready;
  liveness.connected = entry.session != nullptr;
  liveness.last_heartbeat = entry.last_seen;
  liveness.last_transition = entry.transition;
  placement::Resources allocated;
  auto desired = desired_.find(entry.node.registration().name());
  if (desired != desired_.end()) {
    for (const auto& [uid, d] : desired->second) {
      if (d.stop) continue;
      ++liveness.pods;
      // What a pod requests is its Job's template's.
      absl::StatusOr<placement::PodRequirements> req =
          placement::RequirementsFromPodSpec(d.job->spec().template_().spec());
      if (!req.ok()) continue;
      allocated.cpu_millis += req->resources.cpu_millis;
      allocated.memory_bytes += req->resources.memory_bytes;
      for (const auto& [name, n] : req->resources.extended)
        allocated.extended[name] += n;
    }
  }
  liveness.allocated = FormatResources(allocated);
  return ToNodeObject(entry.node, liveness);
}

std::vector<api::Node> AgentHub::ListNodes() {
  absl::MutexLock lock(&mu_);
  std::vector<api::Node> out;
  for (const auto& [name, entry] : nodes_) out.push_back(Describe(entry));
  return out;
}

absl::StatusOr<api::Node> AgentHub::GetNode(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) {
    return absl::NotFoundError(absl::StrCat("node \"", name, "\" not found"));
  }
  return Describe(it->second);
}

absl::StatusOr<api::Node> AgentHub::SetCordoned(const std::string& name,
                                                bool cordoned) {
  api::NodeRecord to_store;
  {
    absl::MutexLock lock(&mu_);
    auto it = nodes_.find(name);
    if (it == nodes_.end()) {
      return absl::NotFoundError(absl::StrCat("node \"", name, "\" not found"));
    }
    to_store = it->second.node;
  }
  to_store.set_cordoned(cordoned);
  JOBSET_RETURN_IF_ERROR(Persist(to_store));
  absl::MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) {
    return absl::NotFoundError(absl::StrCat("node \"", name, "\" not found"));
  }
  it->second.node.set_cordoned(cordoned);
  UpdateNodeGauge();
  if (sink_ != nullptr) {
    absl::StatusOr<NodeInfo> info = ToNodeInfo(it->second.node);
    if (info.ok()) {
      info->ready = it->second.ready;
      sink_->SetNode(*std::move(info));
    }
  }
  return Describe(it->second);
}

absl::StatusOr<api::Node> AgentHub::Drain(const std::string& name) {
  JOBSET_ASSIGN_OR_RETURN(api::Node node, SetCordoned(name, true));
  absl::MutexLock lock(&mu_);
  if (sink_ != nullptr) {
    sink_->LoseNode(name, "EvictionByEvictionAPI",
                    absl::StrCat("node ", name, " was drained"));
    // Draining stops the pods, it does not take the node away.
    auto it = nodes_.find(name);
    if (it != nodes_.end() && it->second.ready) {
      absl::StatusOr<NodeInfo> info = ToNodeInfo(it->second.node);
      if (info.ok()) sink_->SetNode(*std::move(info));
    }
  }
  return node;
}

absl::StatusOr<api::Node> AgentHub::Remove(const std::string& name) {
  std::shared_ptr<Session> session;
  api::Node node;
  {
    absl::MutexLock lock(&mu_);
    auto it = nodes_.find(name);
    if (it == nodes_.end()) {
      return absl::NotFoundError(
          absl::StrCat("nodes \"", name, "\" not found"));
    }
    JOBSET_RETURN_IF_ERROR(
        store_->Commit(store::Batch().Delete(store::keys::NodeKey(name)))
            .status());
    node = Describe(it->second);
    session = std::move(it->second.session);
    nodes_.erase(it);
    if (sink_ != nullptr) {
      sink_->LoseNode(name, "DeletionByPodGC",
                      absl::StrCat("node ", name, " was deleted"));
    }
    UpdateNodeGauge();
  }
  if (session != nullptr) session->Close();
  return node;
}

absl::StatusOr<api::LogChunk> AgentHub::ReadLog(const std::string& node,
                                                const std::string& pod_uid,
                                                const std::string& container,
                                                int64_t offset,
                                                int32_t max_bytes,
                                                absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto entry = nodes_.find(node);
  if (entry == nodes_.end() || entry->second.session == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "the agent of node ", node, " is not connected; try again later"));
  }
  const int64_t id = next_log_request_++;
  log_waits_[id].node = node;
  api::SchedulerMessage msg;
  api::LogRequest* r = msg.mutable_log_request();
  r->set_request_id(id);
  r->set_pod_uid(pod_uid);
  r->set_container(container);
  r->set_offset(offset);
  r->set_max_bytes(max_bytes);
  entry->second.session->Push(std::move(msg));
  auto answered = [this, id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return log_waits_.at(id).chunk.has_value();
  };
  mu_.AwaitWithTimeout(absl::Condition(&answered), timeout);
  std::optional<api::LogChunk> chunk = std::move(log_waits_.at(id).chunk);
  log_waits_.erase(id);
  if (!chunk.has_value()) {
    return absl::UnavailableError(absl::StrCat("the agent of node ", node,
                                               " did not answer within ",
                                               absl::FormatDuration(timeout)));
  }
  return *std::move(chunk);
}

void AgentHub::Fenced() {
  ++fenced_;
  if (options_.metrics != nullptr) options_.metrics->fenced_reports.Increment();
}

void AgentHub::UpdateNodeGauge() {
  if (options_.metrics == nullptr) return;
  double ready = 0, not_ready = 0, cordoned = 0;
  for (const auto& [name, entry] : nodes_) {
    (entry.ready ? ready : not_ready) += 1;
    if (entry.node.cordoned()) cordoned += 1;
  }
  options_.metrics->nodes.Add({{"state", "Ready"}}).Set(ready);
  options_.metrics->nodes.Add({{"state", "NotReady"}}).Set(not_ready);
  options_.metrics->nodes.Add({{"state", "Cordoned"}}).Set(cordoned);
}

int64_t AgentHub::fenced_reports() {
  absl::MutexLock lock(&mu_);
  return fenced_;
}

}  // namespace jobset::scheduler
