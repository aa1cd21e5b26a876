#include "scheduler/placement/requirements.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/quantity.h"
#include "common/quote.h"

namespace jobset::scheduler::placement {
namespace {

// Requests and limits of one container, as amounts in placement units.
using AmountMap = std::map<std::string, int64_t, std::less<>>;

// Converts one quantity to the unit of its resource: millicores for cpu,
// whole units for everything else. Extended resources must be whole numbers.
absl::StatusOr<int64_t> ToAmount(absl::string_view resource,
                                 absl::string_view text,
                                 absl::string_view path) {
  absl::StatusOr<api::Quantity> quantity = api::ParseQuantity(text);
  if (!quantity.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", quantity.status().message()));
  }
  if (quantity->MilliValue() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": must be greater than or equal to 0"));
  }
  if (resource == kCpu) return quantity->MilliValue();
  if (resource != kMemory && quantity->MilliValue() % 1000 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": must be a whole number for resource ", resource));
  }
  return quantity->Value();
}

// Returns the effective requests of one container: each request, else the
// limit of the same resource (Kubernetes defaults requests to limits).
absl::StatusOr<AmountMap> ContainerRequests(const api::Container& container,
                                            absl::string_view path) {
  AmountMap amounts;
  const api::ResourceRequirements& resources = container.resources();
  // Sorted iteration keeps the first error deterministic.
  const std::map<std::string, std::string> requests(
      resources.requests().begin(), resources.requests().end());
  const std::map<std::string, std::string> limits(resources.limits().begin(),
                                                  resources.limits().end());
  for (const auto& [name, text] : requests) {
    absl::StatusOr<int64_t> amount = ToAmount(
        name, text, absl::StrCat(path, ".resources.requests[", name, "]"));
    if (!amount.ok()) return amount.status();
    amounts[name] = *amount;
  }
  for (const auto& [name, text] : limits) {
    absl::StatusOr<int64_t> amount = ToAmount(
        name, text, absl::StrCat(path, ".resources.limits[", name, "]"));
    if (!amount.ok()) return amount.status();
    amounts.try_emplace(name, *amount);
  }
  return amounts;
}

absl::Status AddChecked(int64_t amount, absl::string_view resource,
                        int64_t* total) {
  if (__builtin_add_overflow(*total, amount, total)) {
    return absl::OutOfRangeError(absl::StrCat("containers: total requests of ",
                                              resource, " overflow 64 bits"));
  }
  return absl::OkStatus();
}

Resources ToResources(const AmountMap& amounts) {
  Resources resources;
  for (const auto& [name, amount] : amounts) {
    if (name == kCpu) {
      resources.cpu_millis = amount;
    } else if (name == kMemory) {
      resources.memory_bytes = amount;
    } else if (amount > 0) {
      resources.extended[name] = amount;
    }
  }
  return resources;
}

absl::StatusOr<TaintEffect> ParseEffect(absl::string_view text,
                                        absl::string_view path) {
  if (text == "NoSchedule") return TaintEffect::kNoSchedule;
  if (text == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (text == "NoExecute") return TaintEffect::kNoExecute;
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": Unsupported value: ", Quote(text),
                   ": supported values: \"NoExecute\", \"NoSchedule\", "
                   "\"PreferNoSchedule\""));
}

absl::StatusOr<NodeSelectorRequirement> ConvertRequirement(
    const api::NodeSelectorRequirement& in, absl::string_view path) {
  using Op = NodeSelectorRequirement::Operator;
  NodeSelectorRequirement out;
  out.key = in.key();
  const std::string& op = in.operator_();
  if (op == "In" || op == "NotIn") {
    out.op = op == "In" ? Op::kIn : Op::kNotIn;
    if (in.values().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path,
                       ".values: Required value: must be specified "
                       "when `operator` is 'In' or 'NotIn'"));
    }
    out.values.assign(in.values().begin(), in.values().end());
  } else if (op == "Exists" || op == "DoesNotExist") {
    out.op = op == "Exists" ? Op::kExists : Op::kDoesNotExist;
  } else if (op == "Gt" || op == "Lt") {
    out.op = op == "Gt" ? Op::kGt : Op::kLt;
    if (in.values_size() != 1 || !absl::SimpleAtoi(in.values(0), &out.number)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path,
                       ".values: must be a single integer when "
                       "`operator` is 'Lt' or 'Gt'"));
    }
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ".operator: Invalid value: ", Quote(op),
                     ": not a valid selector operator"));
  }
  return out;
}

absl::StatusOr<Toleration> ConvertToleration(const api::Toleration& in,
                                             absl::string_view path) {
  Toleration out;
  out.key = in.key();
  out.value = in.value();
  if (in.operator_() == "Exists") {
    out.exists = true;
    if (!in.value().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ".operator: value must be empty when `operator` is 'Exists'"));
    }
  } else if (!in.operator_().empty() && in.operator_() != "Equal") {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ".operator: Unsupported value: ", Quote(in.operator_()),
        ": supported values: \"Equal\", \"Exists\""));
  }
  if (out.key.empty() && !out.exists) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ".operator: operator must be Exists when `key` is empty"));
  }
  if (!in.effect().empty()) {
    absl::StatusOr<TaintEffect> effect =
        ParseEffect(in.effect(), absl::StrCat(path, ".effect"));
    if (!effect.ok()) return effect.status();
    out.effect = *effect;
  }
  return out;
}

absl::StatusOr<HostPort::Protocol> ParseProtocol(absl::string_view text,
                                                 absl::string_view path) {
  if (text.empty() || text == "TCP") return HostPort::Protocol::kTcp;
  if (text == "UDP") return HostPort::Protocol::kUdp;
  if (text == "SCTP") return HostPort::Protocol::kSctp;
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": Unsupported value: ", Quote(text),
                   ": supported values: \"SCTP\", \"TCP\", \"UDP\""));
}

// Collects the host ports the pod's containers claim. Kubernetes' NodePorts
// filter looks at app containers only.
absl::StatusOr<std::vector<HostPort>> HostPorts(const api::PodSpec& spec) {
  std::vector<HostPort> ports;
  for (int i = 0; i < spec.containers_size(); ++i) {
    const auto& container_ports = spec.containers(i).ports();
    for (int j = 0; j < container_ports.size(); ++j) {
      const api::ContainerPort& port = container_ports[j];
      const int32_t number = spec.host_network() && port.host_port() == 0
                                 ? port.container_port()
                                 : port.host_port();
      if (number == 0) continue;
      const std::string path =
          absl::StrCat("containers[", i, "].ports[", j, "]");
      if (number < 0 || number > 65535) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ".hostPort: Invalid value: ", number,
                         ": must be between 1 and 65535, inclusive"));
      }
      absl::StatusOr<HostPort::Protocol> protocol =
          ParseProtocol(port.protocol(), absl::StrCat(path, ".protocol"));
      if (!protocol.ok()) return protocol.status();
      ports.push_back(HostPort{*protocol, number});
    }
  }
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  return ports;
}

}  // namespace

absl::StatusOr<PodRequirements> RequirementsFromPodSpec(
    const api::PodSpec& spec) {
  PodRequirements out;

  // Resources: sum over containers, then max with each init container.
  AmountMap total;
  for (int i = 0; i < spec.containers_size(); ++i) {
    absl::StatusOr<AmountMap> amounts = ContainerRequests(
        spec.containers(i), absl::StrCat("containers[", i, "]"));
    if (!amounts.ok()) return amounts.status();
    for (const auto& [name, amount] : *amounts) {
      absl::Status status = AddChecked(amount, name, &total[name]);
      if (!status.ok()) return status;
    }
  }
  for (int i = 0; i < spec.init_containers_size(); ++i) {
    absl::StatusOr<AmountMap> amounts = ContainerRequests(
        spec.init_containers(i), absl::StrCat("initContainers[", i, "]"));
    if (!amounts.ok()) return amounts.status();
    for (const auto& [name, amount] : *amounts) {
      int64_t& slot = total[name];
      slot = std::max(slot, amount);
    }
  }
  out.resources = ToResources(total);

  out.node_selector.insert(spec.node_selector().begin(),
                           spec.node_selector().end());

  const api::NodeAffinity& affinity = spec.affinity().node_affinity();
  if (affinity.has_required_during_scheduling_ignored_during_execution()) {
    const std::string terms_path =
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms";
    std::vector<NodeSelectorTerm> terms;
    const auto& in_terms =
        affinity.required_during_scheduling_ignored_during_execution()
            .node_selector_terms();
    for (int i = 0; i < in_terms.size(); ++i) {
      NodeSelectorTerm term;
      for (int j = 0; j < in_terms[i].match_expressions_size(); ++j) {
        absl::StatusOr<NodeSelectorRequirement> requirement =
            ConvertRequirement(in_terms[i].match_expressions(j),
                               absl::StrCat(terms_path, "[", i,
                                            "].matchExpressions[", j, "]"));
        if (!requirement.ok()) return requirement.status();
        term.match_expressions.push_back(*std::move(requirement));
      }
      terms.push_back(std::move(term));
    }
    out.required_node_affinity = std::move(terms);
  }

  for (int i = 0; i < spec.tolerations_size(); ++i) {
    absl::StatusOr<Toleration> toleration = ConvertToleration(
        spec.tolerations(i), absl::StrCat("tolerations[", i, "]"));
    if (!toleration.ok()) return toleration.status();
    out.tolerations.push_back(*std::move(toleration));
  }

  absl::StatusOr<std::vector<HostPort>> ports = HostPorts(spec);
  if (!ports.ok()) return ports.status();
  out.host_ports = *std::move(ports);
  return out;
}

}  // namespace jobset::scheduler::placement
