#include "scheduler/resilience/node_fault.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/quote.h"

namespace jobset::scheduler::resilience {
namespace {

constexpr absl::string_view kOomKilled = "OOMKilled";

bool Contains(const std::vector<int32_t>& values, int32_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// "container main: exit code 1 (Error)"; the reason comes from the agent
// and is quoted.
std::string DescribeExit(const ContainerExit& exit) {
  std::string out = absl::StrCat("container ", Quote(exit.container), ": ");
  if (exit.signal != 0) {
    absl::StrAppend(&out, "signal ", exit.signal);
  } else {
    absl::StrAppend(&out, "exit code ", exit.exit_code);
  }
  if (!exit.reason.empty())
    absl::StrAppend(&out, " (", Quote(exit.reason), ")");
  return out;
}

bool Failed(const ContainerExit& exit) {
  return exit.exit_code != 0 || exit.signal != 0;
}

}  // namespace

absl::string_view FaultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kNodeLost:
      return "NodeLost";
    case FaultKind::kDeviceError:
      return "DeviceError";
    case FaultKind::kLoneFailure:
      return "LoneFailure";
    case FaultKind::kStraggler:
      return "Straggler";
  }
  return "";
}

std::optional<FaultKind> ParseFaultKind(absl::string_view name) {
  for (FaultKind kind : {FaultKind::kNodeLost, FaultKind::kDeviceError,
                         FaultKind::kLoneFailure, FaultKind::kStraggler}) {
    if (FaultKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

bool IsNodeFault(FaultKind kind) {
  return kind == FaultKind::kNodeLost || kind == FaultKind::kDeviceError;
}

std::optional<Attribution> AttributeFailure(const PodFailure& failure,
                                            const DeviceErrorPolicy& policy) {
  if (failure.disruption_reason == kNodeLostDisruption) {
    return Attribution{FaultKind::kNodeLost, "node lost"};
  }
  for (const ContainerExit& exit : failure.exits) {
    const bool listed = exit.signal != 0
                            ? Contains(policy.signals, exit.signal)
                            : exit.exit_code != 0 &&
                                  Contains(policy.exit_codes, exit.exit_code);
    if (listed) return Attribution{FaultKind::kDeviceError, DescribeExit(exit)};
  }
  // Another disruption (a drain, a preemption) is no failure of the node.
  if (!failure.disruption_reason.empty()) return std::nullopt;
  if (failure.gang_size < 2 || failure.others_failed > 0) return std::nullopt;
  const ContainerExit* first = nullptr;
  for (const ContainerExit& exit : failure.exits) {
    if (exit.reason == kOomKilled) return std::nullopt;
    if (first == nullptr && Failed(exit)) first = &exit;
  }
  if (first == nullptr) return std::nullopt;
  return Attribution{
      FaultKind::kLoneFailure,
      absl::StrCat(DescribeExit(*first), ", the only failure of ",
                   failure.gang_size, " pods")};
}

bool IsNodeFault(const PodFailure& failure, const DeviceErrorPolicy& policy) {
  std::optional<Attribution> attribution = AttributeFailure(failure, policy);
  return attribution.has_value() && IsNodeFault(attribution->kind);
}

}  // namespace jobset::scheduler::resilience
