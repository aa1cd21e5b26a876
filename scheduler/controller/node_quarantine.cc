#include "scheduler/controller/node_quarantine.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "proto/resilience.pb.h"
#include "scheduler/resilience/node_fault.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {
namespace {

// Failures out of the window are dropped at most this often (the ledger
// walks every node).
constexpr absl::Duration kPruneEvery = absl::Minutes(1);

bool CarriesTaint(const NodeInfo& node) {
  return std::any_of(node.taints.begin(), node.taints.end(),
                     [](const placement::Taint& t) {
                       return t.key == resilience::kQuarantineTaintKey;
                     });
}

}  // namespace

absl::StatusOr<NodeQuarantine> NodeQuarantine::Create(
    const resilience::QuarantineConfig& config,
    resilience::DeviceErrorPolicy devices) {
  absl::StatusOr<resilience::QuarantineLedger> ledger =
      resilience::QuarantineLedger::Create(config);
  if (!ledger.ok()) return ledger.status();
  return NodeQuarantine(
      config, QuarantineState{*std::move(ledger), std::move(devices), {}});
}

absl::Status NodeQuarantine::Load(store::Store& store) {
  api::QuarantineLedgerState state;
  absl::Status scanned = store::ScanAll(
      store, store::keys::kQuarantine, [&](const store::KeyValue& kv) {
        api::NodeFaultRecord record;
        const std::string node = kv.key.substr(store::keys::kQuarantine.size());
        api::QuarantineLedgerState one;
        absl::Status checked = absl::OkStatus();
        if (!record.ParseFromString(kv.value)) {
          checked = absl::DataLossError("does not decode");
        } else if (record.node() != node) {
          checked = absl::InvalidArgumentError(absl::StrCat(
              "node: \"", record.node(), "\" under the key of \"", node, "\""));
        } else {
          *one.add_nodes() = record;
          checked =
              resilience::QuarantineLedger::FromProto(config_, one).status();
        }
        if (!checked.ok()) {
          JOBSET_LOG(ERROR)
              << "quarantine: stored record " << kv.key
              << " left out (the node starts from zero): " << checked;
          return absl::OkStatus();
        }
        *state.add_nodes() = std::move(record);
        return absl::OkStatus();
      });
  if (!scanned.ok()) return scanned;
  absl::StatusOr<resilience::QuarantineLedger> ledger =
      resilience::QuarantineLedger::FromProto(config_, state);
  // Each record was checked alone; together they cannot fail but for a
  // node listed twice, which distinct keys rule out.
  if (!ledger.ok()) return ledger.status();
  state_.ledger = *std::move(ledger);
  state_.decided.clear();
  tainted_.clear();
  retaint_.clear();
  staged_.clear();
  return absl::OkStatus();
}

void NodeQuarantine::ObserveNode(const NodeInfo& node) {
  if (CarriesTaint(node)) {
    tainted_.insert(node.name);
    retaint_.erase(node.name);
    return;
  }
  if (!state_.ledger.IsQuarantined(node.name)) return;
  if (tainted_.erase(node.name) > 0) {
    JOBSET_LOG(INFO) << "quarantine of node " << node.name
                     << " lifted (its taint was removed): its failures "
                        "count from zero";
    state_.ledger.Release(node.name);
  } else {
    retaint_.insert(node.name);
  }
}

bool NodeQuarantine::TaintDecided(ControllerState& state) {
  bool changed = false;
  for (const resilience::QuarantineDecision& d : state_.decided) {
    auto it = state.nodes().find(d.node);
    if (it == state.nodes().end() || CarriesTaint(it->second)) continue;
    NodeInfo node = it->second;
    node.taints.push_back({std::string(resilience::kQuarantineTaintKey), "",
                           placement::TaintEffect::kNoSchedule});
    state.SetNode(std::move(node));
    changed = true;
  }
  return changed;
}

void NodeQuarantine::Stage(absl::Time now, PassWrites& writes) {
  if (now - last_prune_ >= kPruneEvery) {
    state_.ledger.Prune(now);
    last_prune_ = now;
  }
  std::set<std::string> changed = state_.ledger.TakeChanged();
  for (const std::string& node : changed) {
    std::optional<api::NodeFaultRecord> record = state_.ledger.NodeRecord(node);
    if (record.has_value()) {
      writes.Put(store::keys::QuarantineKey(node), record->SerializeAsString());
    } else {
      writes.Delete(store::keys::QuarantineKey(node));
    }
  }
  staged_.insert(changed.begin(), changed.end());
}

void NodeQuarantine::Committed(bool durable, AgentFleet& fleet) {
  if (!durable) {
    // The records are written again, as they are then, by the next pass;
    // the decisions wait for it.
    state_.ledger.MarkChanged(std::exchange(staged_, {}));
    return;
  }
  staged_.clear();
  for (const resilience::QuarantineDecision& d : state_.decided)
    fleet.Quarantine(d.node, d.message);
  state_.decided.clear();
  for (const std::string& node : std::exchange(retaint_, {})) {
    if (!state_.ledger.IsQuarantined(node)) continue;
    fleet.Quarantine(node,
                     "quarantined before jobsetd restarted; the taint is put "
                     "back (remove it to release the node)");
  }
}

}  // namespace jobset::scheduler
