#include "scheduler/placement/filters.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace jobset::scheduler::placement {

bool Tolerates(const Toleration& toleration, const Taint& taint) {
  if (toleration.effect.has_value() && *toleration.effect != taint.effect) {
    return false;
  }
  if (toleration.key.empty()) return toleration.exists;
  if (toleration.key != taint.key) return false;
  return toleration.exists || toleration.value == taint.value;
}

const Taint* FirstUntoleratedTaint(absl::Span<const Taint> taints,
                                   absl::Span<const Toleration> tolerations) {
  for (const Taint& taint : taints) {
    if (taint.effect == TaintEffect::kPreferNoSchedule) continue;
    const bool tolerated =
        std::any_of(tolerations.begin(), tolerations.end(),
                    [&](const Toleration& t) { return Tolerates(t, taint); });
    if (!tolerated) return &taint;
  }
  return nullptr;
}

bool MatchesRequirement(const NodeSelectorRequirement& requirement,
                        const Labels& labels) {
  using Op = NodeSelectorRequirement::Operator;
  auto it = labels.find(requirement.key);
  const bool present = it != labels.end();
  switch (requirement.op) {
    case Op::kIn:
    case Op::kNotIn: {
      const bool listed =
          present &&
          std::find(requirement.values.begin(), requirement.values.end(),
                    it->second) != requirement.values.end();
      return requirement.op == Op::kIn ? listed : !listed;
    }
    case Op::kExists:
      return present;
    case Op::kDoesNotExist:
      return !present;
    case Op::kGt:
    case Op::kLt: {
      int64_t value = 0;
      if (!present || !absl::SimpleAtoi(it->second, &value)) return false;
      return requirement.op == Op::kGt ? value > requirement.number
                                       : value < requirement.number;
    }
  }
  return false;
}

bool MatchesNodeSelector(
    const std::map<std::string, std::string, std::less<>>& selector,
    const Labels& labels) {
  for (const auto& [key, value] : selector) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return true;
}

bool MatchesNodeAffinity(
    const std::optional<std::vector<NodeSelectorTerm>>& affinity,
    const Labels& labels) {
  if (!affinity.has_value()) return true;
  for (const NodeSelectorTerm& term : *affinity) {
    if (term.match_expressions.empty()) continue;
    const bool all = std::all_of(term.match_expressions.begin(),
                                 term.match_expressions.end(),
                                 [&](const NodeSelectorRequirement& r) {
                                   return MatchesRequirement(r, labels);
                                 });
    if (all) return true;
  }
  return false;
}

bool HostPortsFree(absl::Span<const HostPort> wanted,
                   absl::Span<const HostPort> used) {
  // Both sorted: one merge pass.
  auto w = wanted.begin();
  auto u = used.begin();
  while (w != wanted.end() && u != used.end()) {
    if (*w == *u) return false;
    if (*w < *u) {
      ++w;
    } else {
      ++u;
    }
  }
  return true;
}

int64_t PodsThatFit(absl::Span<const int64_t> free,
                    absl::Span<const int64_t> request, int64_t limit) {
  int64_t fit = limit;
  for (size_t r = 0; r < request.size() && fit > 0; ++r) {
    if (request[r] <= 0) continue;
    fit = std::min(fit, free[r] <= 0 ? 0 : free[r] / request[r]);
  }
  return std::max<int64_t>(fit, 0);
}

NodeVerdict CheckNode(const NodeRecord& node,
                      const PodRequirements& requirements) {
  using Kind = NodeVerdict::Kind;
  if (node.cordoned) return {Kind::kUnschedulable};
  if (!node.ready) return {Kind::kNotReady};
  if (const Taint* taint =
          FirstUntoleratedTaint(node.taints, requirements.tolerations)) {
    return {Kind::kUntoleratedTaint, taint};
  }
  if (!MatchesNodeSelector(requirements.node_selector, node.labels) ||
      !MatchesNodeAffinity(requirements.required_node_affinity, node.labels)) {
    return {Kind::kNodeAffinity};
  }
  if (!HostPortsFree(requirements.host_ports, node.used_host_ports)) {
    return {Kind::kHostPorts};
  }
  return {Kind::kFits};
}

std::string VerdictReason(const NodeVerdict& verdict) {
  using Kind = NodeVerdict::Kind;
  switch (verdict.kind) {
    case Kind::kFits:
      return "";
    case Kind::kUnschedulable:
      return std::string(kUnschedulableReason);
    case Kind::kNotReady:
      return std::string(kNotReadyReason);
    case Kind::kUntoleratedTaint:
      return absl::StrCat("node(s) had untolerated taint {", verdict.taint->key,
                          ": ", verdict.taint->value, "}");
    case Kind::kNodeAffinity:
      return std::string(kAffinityReason);
    case Kind::kHostPorts:
      return std::string(kHostPortsReason);
  }
  return "";
}

std::string InsufficientReason(absl::string_view resource) {
  if (resource == kPods) return "Too many pods";
  return absl::StrCat("Insufficient ", resource);
}

}  // namespace jobset::scheduler::placement
