#include "scheduler/agents/node_registry.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/quantity.h"
#include "common/log.h"
#include "scheduler/agents/node_admin.h"
#include "scheduler/agents/node_object.h"
#include "store/decode.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {
namespace {

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

}  // namespace

absl::StatusOr<NodeRegistry> NodeRegistry::Load(store::Store& store,
                                                absl::Time started,
                                                int* undecodable) {
  NodeRegistry registry;
  auto add_node = [&](const store::KeyValue& kv) -> absl::Status {
    absl::StatusOr<api::NodeRecord> decoded =
        store::DecodeValue<api::NodeRecord>(kv);
    if (!decoded.ok()) {
      JOBSET_LOG(ERROR) << "agent hub: skipping a stored node that does not "
                           "decode: "
                        << decoded.status();
      ++*undecodable;
      return absl::OkStatus();
    }
    api::NodeRecord node = *std::move(decoded);
    NodeEntry& entry = registry.nodes_[node.registration().name()];
    entry.node = std::move(node);
    entry.ready = true;
    entry.transition = started;
    return absl::OkStatus();
  };
  absl::Status scanned = store::ScanAll(store, store::keys::kNodes, add_node);
  if (!scanned.ok()) return scanned;
  return registry;
}

NodeEntry* NodeRegistry::Find(const std::string& name) {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

std::shared_ptr<AgentSession> NodeRegistry::Register(
    const api::NodeRegistration& registration,
    std::shared_ptr<AgentSession> session, absl::Time now,
    std::optional<api::NodeRecord>* to_store, bool* taints_ignored) {
  NodeEntry& entry = nodes_[registration.name()];
  std::shared_ptr<AgentSession> replaced =
      std::exchange(entry.session, std::move(session));
  bool ignored = false;
  bool changed = MergeHello(registration, entry.node, &ignored);
  if (taints_ignored != nullptr) *taints_ignored = ignored;
  if (!entry.node.has_creation_timestamp()) {
    entry.node.mutable_creation_timestamp()->set_seconds(
        absl::ToUnixSeconds(now));
    changed = true;
  }
  *to_store = changed ? std::optional(entry.node) : std::nullopt;
  entry.last_seen = now;
  if (!entry.ready) entry.transition = now;
  entry.ready = true;
  return replaced;
}

std::shared_ptr<AgentSession> NodeRegistry::MarkLost(NodeEntry& entry,
                                                     absl::Time now) {
  entry.ready = false;
  entry.transition = now;
  return std::move(entry.session);
}

std::shared_ptr<AgentSession> NodeRegistry::Erase(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return nullptr;
  std::shared_ptr<AgentSession> session = std::move(it->second.session);
  nodes_.erase(it);
  return session;
}

NodeRegistry::Counts NodeRegistry::Count() const {
  Counts counts;
  for (const auto& [name, entry] : nodes_) {
    ++(entry.ready ? counts.ready : counts.not_ready);
    if (entry.node.cordoned()) ++counts.cordoned;
  }
  return counts;
}

absl::StatusOr<NodeInfo> ToNodeInfo(const api::NodeRecord& node) {
  const api::NodeRegistration& r = node.registration();
  NodeInfo info;
  info.name = r.name();
  info.address = r.address();
  // What placement sees: the admin's taints and labels over the node's own
  // (node_admin.h), never a restricted label the node set itself.
  const std::map<std::string, std::string> labels = EffectiveLabels(node);
  info.labels.insert(labels.begin(), labels.end());
  const std::vector<api::Taint> taints = EffectiveTaints(node);
  for (size_t i = 0; i < taints.size(); ++i) {
    const api::Taint& t = taints[i];
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

api::Node Describe(const NodeEntry& entry, const NodeLoad& load) {
  NodeLiveness liveness;
  liveness.ready = entry.ready;
  liveness.connected = entry.session != nullptr;
  liveness.last_heartbeat = entry.last_seen;
  liveness.last_transition = entry.transition;
  liveness.pods = load.pods;
  liveness.allocated = FormatResources(load.allocated);
  return ToNodeObject(entry.node, liveness);
}

absl::Status StoreNode(store::Store& store, const api::NodeRecord& node) {
  return store
      .Commit(
          store::Batch().Put(store::keys::NodeKey(node.registration().name()),
                             node.SerializeAsString()))
      .status();
}

}  // namespace jobset::scheduler
