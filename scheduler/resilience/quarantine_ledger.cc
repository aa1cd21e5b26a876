#include "scheduler/resilience/quarantine_ledger.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/quote.h"
#include "scheduler/resilience/proto_time.h"

namespace jobset::scheduler::resilience {
namespace {

// Whether `a` and `b` come from the same restart attempt of the same JobSet.
bool SameAttempt(const Evidence& a, const Evidence& b) {
  return std::tie(a.jobset_namespace, a.jobset_name, a.jobset_uid, a.attempt) ==
         std::tie(b.jobset_namespace, b.jobset_name, b.jobset_uid, b.attempt);
}

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%SZ", t, absl::UTCTimeZone());
}

api::FaultEvidence EvidenceToProto(const Evidence& e) {
  api::FaultEvidence out;
  *out.mutable_time() = ToProtoTime(e.time);
  out.set_kind(std::string(FaultKindName(e.kind)));
  out.set_jobset_namespace(e.jobset_namespace);
  out.set_jobset_name(e.jobset_name);
  out.set_jobset_uid(e.jobset_uid);
  out.set_attempt(e.attempt);
  out.set_pod(e.pod);
  out.set_detail(e.detail);
  return out;
}

absl::StatusOr<Evidence> EvidenceFromProto(const api::FaultEvidence& in,
                                           absl::string_view path) {
  std::optional<absl::Time> time;
  if (in.has_time()) time = FromProtoTime(in.time());
  if (!time.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ".time: missing or out of range"));
  }
  std::optional<FaultKind> kind = ParseFaultKind(in.kind());
  if (!kind.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ".kind: unknown kind ", Quote(in.kind())));
  }
  return Evidence{*time,
                  *kind,
                  in.jobset_namespace(),
                  in.jobset_name(),
                  in.jobset_uid(),
                  in.attempt(),
                  in.pod(),
                  in.detail()};
}

}  // namespace

absl::Status ValidateQuarantineConfig(const QuarantineConfig& config) {
  if (config.max_evidence_per_node < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("quarantine evidence per node must be at least 1, not ",
                     config.max_evidence_per_node));
  }
  if (config.threshold < 1 || config.threshold > config.max_evidence_per_node) {
    return absl::InvalidArgumentError(
        absl::StrCat("quarantine_after must be from 1 to ",
                     config.max_evidence_per_node, ", not ", config.threshold));
  }
  if (config.window <= absl::ZeroDuration() ||
      config.window == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("quarantine_window must be positive and finite, not ",
                     absl::FormatDuration(config.window)));
  }
  if (config.max_nodes < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "quarantine nodes tracked must be at least 1, not ", config.max_nodes));
  }
  return absl::OkStatus();
}

absl::StatusOr<QuarantineLedger> QuarantineLedger::Create(
    const QuarantineConfig& config) {
  if (absl::Status s = ValidateQuarantineConfig(config); !s.ok()) return s;
  return QuarantineLedger(config);
}

absl::StatusOr<QuarantineLedger> QuarantineLedger::FromProto(
    const QuarantineConfig& config, const api::QuarantineLedgerState& state) {
  absl::StatusOr<QuarantineLedger> ledger = Create(config);
  if (!ledger.ok()) return ledger.status();
  if (state.has_latest()) {
    std::optional<absl::Time> latest = FromProtoTime(state.latest());
    if (!latest.has_value()) {
      return absl::InvalidArgumentError("latest: out of range");
    }
    ledger->latest_ = *latest;
  }
  for (int i = 0; i < state.nodes_size(); ++i) {
    const api::NodeFaultRecord& record = state.nodes(i);
    const std::string path = absl::StrCat("nodes[", i, "]");
    if (record.node().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".node: empty"));
    }
    auto [it, inserted] = ledger->nodes_.try_emplace(record.node());
    if (!inserted) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".node: ", Quote(record.node()), " listed twice"));
    }
    Node& node = it->second;
    node.quarantined = record.quarantined();
    for (int j = 0; j < record.evidence_size(); ++j) {
      absl::StatusOr<Evidence> e = EvidenceFromProto(
          record.evidence(j), absl::StrCat(path, ".evidence[", j, "]"));
      if (!e.ok()) return e.status();
      ledger->latest_ = std::max(ledger->latest_, e->time);
      node.evidence.push_back(*std::move(e));
    }
    std::stable_sort(
        node.evidence.begin(), node.evidence.end(),
        [](const Evidence& a, const Evidence& b) { return a.time < b.time; });
    const size_t cap = static_cast<size_t>(config.max_evidence_per_node);
    if (node.evidence.size() > cap) {
      node.evidence.erase(node.evidence.begin(),
                          node.evidence.end() - static_cast<ptrdiff_t>(cap));
    }
    if (!node.evidence.empty()) node.last = node.evidence.back().time;
    ledger->eviction_order_.insert(KeyOf(it->first, node));
  }
  while (ledger->nodes_.size() > static_cast<size_t>(config.max_nodes)) {
    ledger->Erase(
        ledger->nodes_.find(std::get<2>(*ledger->eviction_order_.begin())));
  }
  return ledger;
}

bool QuarantineLedger::InWindow(const Evidence& e, absl::Time now) const {
  return now - e.time < config_.window;
}

void QuarantineLedger::PruneNode(Node& node, absl::Time now) const {
  // Oldest first: the expired ones are a prefix.
  auto first_kept =
      std::find_if(node.evidence.begin(), node.evidence.end(),
                   [&](const Evidence& e) { return InWindow(e, now); });
  node.evidence.erase(node.evidence.begin(), first_kept);
}

void QuarantineLedger::Erase(std::map<std::string, Node>::iterator it) {
  changed_.insert(it->first);
  eviction_order_.erase(KeyOf(it->first, it->second));
  nodes_.erase(it);
}

std::optional<QuarantineDecision> QuarantineLedger::Record(
    const std::string& node_name, Evidence evidence) {
  if (evidence.time == absl::InfinitePast() ||
      evidence.time == absl::InfiniteFuture()) {
    return std::nullopt;
  }
  latest_ = std::max(latest_, evidence.time);
  if (!InWindow(evidence, latest_)) return std::nullopt;
  auto it = nodes_.find(node_name);
  if (it == nodes_.end()) {
    // The node whose last failure is oldest makes room (an expired one,
    // if any: it is older than every node still in the window).
    if (nodes_.size() >= static_cast<size_t>(config_.max_nodes)) {
      Erase(nodes_.find(std::get<2>(*eviction_order_.begin())));
    }
    it = nodes_.try_emplace(node_name).first;
    eviction_order_.insert(KeyOf(it->first, it->second));
  }
  Node& node = it->second;
  PruneNode(node, latest_);
  for (const Evidence& e : node.evidence) {
    if (SameAttempt(e, evidence)) return std::nullopt;
  }
  // Re-keyed below, once `last` and `quarantined` are final.
  eviction_order_.erase(KeyOf(node_name, node));
  node.last = std::max(node.last, evidence.time);
  auto at = std::upper_bound(
      node.evidence.begin(), node.evidence.end(), evidence.time,
      [](absl::Time t, const Evidence& e) { return t < e.time; });
  node.evidence.insert(at, std::move(evidence));
  changed_.insert(node_name);
  if (node.evidence.size() >
      static_cast<size_t>(config_.max_evidence_per_node)) {
    node.evidence.erase(node.evidence.begin());
  }
  const bool decide =
      !node.quarantined &&
      node.evidence.size() >= static_cast<size_t>(config_.threshold);
  if (decide) node.quarantined = true;
  eviction_order_.insert(KeyOf(node_name, node));
  if (!decide) return std::nullopt;
  return Decide(node_name, node);
}

QuarantineDecision QuarantineLedger::Decide(const std::string& name,
                                            const Node& node) const {
  QuarantineDecision decision{name, node.evidence, ""};
  std::vector<std::string> lines;
  for (const Evidence& e : node.evidence) {
    lines.push_back(absl::StrCat(Rfc3339(e.time), " ", FaultKindName(e.kind),
                                 " ", e.jobset_namespace, "/", e.jobset_name,
                                 " attempt ", e.attempt, " pod ", e.pod, " (",
                                 e.detail, ")"));
  }
  decision.message =
      absl::StrCat(node.evidence.size(), " failures in ",
                   absl::FormatDuration(config_.window), " (quarantine after ",
                   config_.threshold, "): ", absl::StrJoin(lines, "; "));
  return decision;
}

int QuarantineLedger::Count(const std::string& node, absl::Time now) const {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return 0;
  now = std::max(now, latest_);
  return static_cast<int>(
      std::count_if(it->second.evidence.begin(), it->second.evidence.end(),
                    [&](const Evidence& e) { return InWindow(e, now); }));
}

bool QuarantineLedger::IsQuarantined(const std::string& node) const {
  auto it = nodes_.find(node);
  return it != nodes_.end() && it->second.quarantined;
}

void QuarantineLedger::Release(const std::string& node) {
  auto it = nodes_.find(node);
  if (it != nodes_.end()) Erase(it);
}

void QuarantineLedger::Prune(absl::Time now) {
  latest_ = std::max(latest_, now);
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    const size_t had = it->second.evidence.size();
    PruneNode(it->second, latest_);
    if (it->second.evidence.size() != had) changed_.insert(it->first);
    if (it->second.evidence.empty() && !it->second.quarantined) {
      Erase(it++);
    } else {
      ++it;
    }
  }
}

api::QuarantineLedgerState QuarantineLedger::ToProto() const {
  api::QuarantineLedgerState state;
  if (latest_ != absl::InfinitePast())
    *state.mutable_latest() = ToProtoTime(latest_);
  for (const auto& [name, node] : nodes_) {
    *state.add_nodes() = *NodeRecord(name);
  }
  return state;
}

std::optional<api::NodeFaultRecord> QuarantineLedger::NodeRecord(
    const std::string& name) const {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return std::nullopt;
  api::NodeFaultRecord record;
  record.set_node(name);
  record.set_quarantined(it->second.quarantined);
  for (const Evidence& e : it->second.evidence) {
    *record.add_evidence() = EvidenceToProto(e);
  }
  return record;
}

}  // namespace jobset::scheduler::resilience
