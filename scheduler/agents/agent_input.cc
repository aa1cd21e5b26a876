#include "scheduler/agents/agent_input.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/names.h"
#include "api/quantity.h"

namespace jobset::scheduler {
namespace {

// Cuts the message in place.
void CutMessage(std::string* message) {
  if (message->size() <= kMaxReportMessageBytes) return;
  message->resize(CutUtf8(*message, kMaxReportMessageBytes).size());
}

std::optional<Refusal> CheckReason(absl::string_view field,
                                   const std::string& reason) {
  if (reason.size() <= kMaxReportReasonBytes) return std::nullopt;
  return Refusal{"reason_too_long", absl::StrCat(field, ": ", reason.size(),
                                                 " bytes exceed the limit of ",
                                                 kMaxReportReasonBytes)};
}

// Checks `statuses` against the containers `spec` declares; cuts messages.
std::optional<Refusal> CheckContainers(
    absl::string_view field,
    const google::protobuf::RepeatedPtrField<api::Container>& spec,
    google::protobuf::RepeatedPtrField<api::ContainerStatus>* statuses) {
  std::set<absl::string_view> declared;
  for (const api::Container& c : spec) declared.insert(c.name());
  std::set<absl::string_view> seen;
  for (int i = 0; i < statuses->size(); ++i) {
    api::ContainerStatus& c = *statuses->Mutable(i);
    const std::string path = absl::StrCat(field, "[", i, "]");
    if (!declared.contains(c.name())) {
      return Refusal{"unknown_container",
                     absl::StrCat(path, ".name: \"", CutUtf8(c.name(), 64),
                                  "\" is not a container of the pod's spec")};
    }
    if (!seen.insert(c.name()).second) {
      return Refusal{
          "duplicate_container",
          absl::StrCat(path, ".name: \"", c.name(), "\" is reported twice")};
    }
    if (auto r = CheckReason(absl::StrCat(path, ".reason"), c.reason()))
      return r;
    CutMessage(c.mutable_message());
  }
  return std::nullopt;
}

// Checks the report's events; cuts their messages.
std::optional<Refusal> CheckEvents(
    google::protobuf::RepeatedPtrField<api::PodEvent>* events) {
  if (events->size() > kMaxReportEvents) {
    return Refusal{"too_many_events",
                   absl::StrCat("events: ", events->size(),
                                " exceed the limit of ", kMaxReportEvents)};
  }
  for (int i = 0; i < events->size(); ++i) {
    api::PodEvent& e = *events->Mutable(i);
    if (e.type() != "Normal" && e.type() != "Warning") {
      return Refusal{
          "event_type",
          absl::StrCat("events[", i, "].type: unsupported value \"",
                       CutUtf8(e.type(), 64), "\" (Normal or Warning)")};
    }
    const bool alnum =
        std::all_of(e.reason().begin(), e.reason().end(),
                    [](char c) { return absl::ascii_isalnum(c); });
    if (e.reason().empty() || e.reason().size() > kMaxEventReasonBytes ||
        !alnum) {
      return Refusal{"event_reason",
                     absl::StrCat("events[", i, "].reason: \"",
                                  absl::CHexEscape(CutUtf8(e.reason(), 64)),
                                  "\" is not 1 to ", kMaxEventReasonBytes,
                                  " letters and digits")};
    }
    if (e.message().size() > kMaxEventMessageBytes)
      e.set_message(std::string(CutUtf8(e.message(), kMaxEventMessageBytes)));
  }
  return std::nullopt;
}

absl::Status TooMany(absl::string_view field, int n, int max) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": ", n, " entries exceed the limit of ", max));
}

absl::Status CheckLength(absl::string_view field, absl::string_view value) {
  if (value.size() <= kMaxRegistrationStringBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", value.size(),
                                                 " bytes exceed the limit of ",
                                                 kMaxRegistrationStringBytes));
}

absl::Status Invalid(absl::string_view field, absl::string_view value,
                     const std::vector<std::string>& errors) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": invalid value \"", CutUtf8(value, 256),
                   "\": ", absl::StrJoin(errors, "; ")));
}

// Checks one of a report's launch timings: a valid, non-negative Duration
// of at most kMaxLaunchDuration.
std::optional<Refusal> CheckLaunchDuration(
    absl::string_view path, const google::protobuf::Duration& d) {
  const int64_t max_seconds = absl::ToInt64Seconds(kMaxLaunchDuration);
  if (d.seconds() < 0 || d.nanos() < 0 || d.nanos() > 999'999'999 ||
      d.seconds() > max_seconds ||
      (d.seconds() == max_seconds && d.nanos() > 0)) {
    return Refusal{"launch_timings",
                   absl::StrCat(path, ": ", d.seconds(), " s ", d.nanos(),
                                " ns (0 to ", max_seconds, " s allowed)")};
  }
  return std::nullopt;
}

std::optional<Refusal> CheckLaunch(const api::LaunchTimings& launch) {
  if (auto r = CheckLaunchDuration("launch.receivedToReported",
                                   launch.received_to_reported())) {
    return r;
  }
  if (auto r = CheckLaunchDuration("launch.receivedToStarted",
                                   launch.received_to_started())) {
    return r;
  }
  if (launch.has_received_to_started() && !launch.has_received_to_reported()) {
    return Refusal{"launch_timings",
                   "launch.receivedToStarted: set without receivedToReported"};
  }
  auto nanos = [](const google::protobuf::Duration& d) {
    return d.seconds() * 1'000'000'000 + d.nanos();
  };
  if (nanos(launch.received_to_started()) >
      nanos(launch.received_to_reported())) {
    return Refusal{"launch_timings",
                   "launch.receivedToStarted: longer than receivedToReported"};
  }
  return std::nullopt;
}

bool IsAccelerator(absl::string_view name) {
  const size_t slash = name.find('/');
  if (slash == absl::string_view::npos) return false;
  const absl::string_view domain = name.substr(0, slash);
  const absl::string_view device = name.substr(slash + 1);
  return device == "gpu" || device == "tpu" || name == "habana.ai/gaudi" ||
         (domain == "aws.amazon.com" && absl::StartsWith(device, "neuron")) ||
         absl::StartsWith(domain, "gpu.");
}

}  // namespace

int64_t MaxNodeResource(absl::string_view name) {
  if (name == "cpu") return kMaxNodeCpuCores;
  if (name == "memory" || absl::StartsWith(name, "hugepages-"))
    return kMaxNodeMemoryBytes;
  if (name == "ephemeral-storage") return kMaxNodeResourceValue;
  if (IsAccelerator(name)) return kMaxNodeAccelerators;
  return kMaxNodeExtendedResource;
}

bool IsRestrictedNodeLabel(absl::string_view key) {
  return absl::StartsWith(key, kNodeRestrictionLabelPrefix) ||
         absl::StartsWith(key, kJobsetdLabelPrefix);
}

std::vector<std::string> DropRestrictedLabels(api::NodeRegistration& node) {
  std::vector<std::string> dropped;
  auto& labels = *node.mutable_labels();
  for (auto it = labels.begin(); it != labels.end();) {
    if (IsRestrictedNodeLabel(it->first)) {
      dropped.push_back(it->first);
      it = labels.erase(it);
    } else {
      ++it;
    }
  }
  std::sort(dropped.begin(), dropped.end());
  return dropped;
}

absl::string_view CutUtf8(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  // Back off continuation bytes (10xxxxxx) so that the cut falls before the
  // lead byte of a sequence, never inside it.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80)
    --end;
  return text.substr(0, end);
}

std::optional<Refusal> CheckPodReport(const api::PodSpec& spec,
                                      api::PodReport& report) {
  const size_t bytes = report.ByteSizeLong();
  if (bytes > kMaxPodReportBytes) {
    return Refusal{"too_large", absl::StrCat("pod report of ", bytes,
                                             " bytes exceeds the limit of ",
                                             kMaxPodReportBytes)};
  }
  api::PodStatus& status = *report.mutable_status();
  static const std::set<absl::string_view>* const kPhases =
      new std::set<absl::string_view>(
          {"", "Pending", "Running", "Succeeded", "Failed", "Unknown"});
  if (!kPhases->contains(status.phase())) {
    return Refusal{"phase", absl::StrCat("status.phase: unsupported value \"",
                                         CutUtf8(status.phase(), 64), "\"")};
  }
  if (auto r = CheckReason("status.reason", status.reason())) return r;
  CutMessage(status.mutable_message());
  if (status.conditions_size() > kMaxReportConditions) {
    return Refusal{"too_many_conditions",
                   absl::StrCat("status.conditions: ", status.conditions_size(),
                                " exceed the limit of ", kMaxReportConditions)};
  }
  for (int i = 0; i < status.conditions_size(); ++i) {
    api::Condition& c = *status.mutable_conditions(i);
    const std::string path = absl::StrCat("status.conditions[", i, "]");
    if (c.type().empty() || c.type().size() > kMaxConditionTypeBytes) {
      return Refusal{
          "condition_type",
          absl::StrCat(path, ".type: ", c.type().size(), " bytes (1 to ",
                       kMaxConditionTypeBytes, " allowed)")};
    }
    if (auto r = CheckReason(absl::StrCat(path, ".reason"), c.reason()))
      return r;
    CutMessage(c.mutable_message());
  }
  if (auto r = CheckContainers("status.containerStatuses", spec.containers(),
                               status.mutable_container_statuses())) {
    return r;
  }
  if (auto r = CheckEvents(report.mutable_events())) return r;
  if (auto r = CheckLaunch(report.launch())) return r;
  return CheckContainers("status.initContainerStatuses", spec.init_containers(),
                         status.mutable_init_container_statuses());
}

std::optional<Refusal> CheckPodProgress(const api::PodProgress& p) {
  if (p.has_step() && (p.step() < 0 || p.step() > kMaxProgressStep)) {
    return Refusal{"progress_step",
                   absl::StrCat("progress.step: ", p.step(), " (0 to ",
                                kMaxProgressStep, " allowed)")};
  }
  const int64_t step = p.has_step() ? p.step() : 0;
  if (p.checkpoint_step() < 0 || p.checkpoint_step() > step) {
    return Refusal{
        "progress_checkpoint",
        absl::StrCat("progress.checkpointStep: ", p.checkpoint_step(),
                     " (0 to the step, ", step, ", allowed)")};
  }
  const double rate = p.steps_per_second();
  if (!std::isfinite(rate) || rate < 0 || rate > kMaxProgressStepsPerSecond) {
    return Refusal{"progress_rate",
                   absl::StrCat("progress.stepsPerSecond: ", rate, " (0 to ",
                                kMaxProgressStepsPerSecond, " allowed)")};
  }
  const google::protobuf::Duration& d = p.since_last_advance();
  const int64_t max_seconds = absl::ToInt64Seconds(kMaxProgressAge);
  if (d.seconds() < 0 || d.nanos() < 0 || d.nanos() > 999'999'999 ||
      d.seconds() > max_seconds ||
      (d.seconds() == max_seconds && d.nanos() > 0)) {
    return Refusal{
        "progress_age",
        absl::StrCat("progress.sinceLastAdvance: ", d.seconds(), " s ",
                     d.nanos(), " ns (0 to ", max_seconds, " s allowed)")};
  }
  if (p.rejected_lines() < 0) {
    return Refusal{"progress_rejected_lines",
                   absl::StrCat("progress.rejectedLines: ", p.rejected_lines(),
                                " (not negative)")};
  }
  return std::nullopt;
}

absl::Status ValidateRegistration(const api::NodeRegistration& r) {
  if (std::vector<std::string> errors = api::IsDns1123Subdomain(r.name());
      !errors.empty()) {
    return Invalid("hello.node.name", r.name(), errors);
  }
  if (r.address().empty()) {
    return absl::InvalidArgumentError(
        "hello.node.address: required (what pods' hostnames resolve to)");
  }
  if (!api::IsIpLiteral(r.address())) {
    return Invalid("hello.node.address", r.address(),
                   {"must be an IPv4 or IPv6 address literal"});
  }
  if (r.labels_size() > kMaxNodeLabels)
    return TooMany("hello.node.labels", r.labels_size(), kMaxNodeLabels);
  for (const auto& [key, value] : r.labels()) {
    const std::string field = absl::StrCat("hello.node.labels[", key, "]");
    if (std::vector<std::string> errors = api::IsQualifiedName(key);
        !errors.empty()) {
      return Invalid(absl::StrCat("hello.node.labels[", CutUtf8(key, 256), "]"),
                     key, errors);
    }
    if (std::vector<std::string> errors = api::IsValidLabelValue(value);
        !errors.empty()) {
      return Invalid(field, value, errors);
    }
  }
  if (r.taints_size() > kMaxNodeTaints)
    return TooMany("hello.node.taints", r.taints_size(), kMaxNodeTaints);
  for (int i = 0; i < r.taints_size(); ++i) {
    const api::Taint& t = r.taints(i);
    const std::string field = absl::StrCat("hello.node.taints[", i, "]");
    if (std::vector<std::string> errors = api::IsQualifiedName(t.key());
        !errors.empty()) {
      return Invalid(absl::StrCat(field, ".key"), t.key(), errors);
    }
    if (std::vector<std::string> errors = api::IsValidLabelValue(t.value());
        !errors.empty()) {
      return Invalid(absl::StrCat(field, ".value"), t.value(), errors);
    }
    if (t.effect() != "NoSchedule" && t.effect() != "PreferNoSchedule" &&
        t.effect() != "NoExecute") {
      return Invalid(absl::StrCat(field, ".effect"), t.effect(),
                     {"supported values: \"NoSchedule\", "
                      "\"PreferNoSchedule\", \"NoExecute\""});
    }
  }
  if (r.capacity_size() > kMaxNodeResources)
    return TooMany("hello.node.capacity", r.capacity_size(), kMaxNodeResources);
  for (const auto& [name, text] : r.capacity()) {
    const std::string field =
        absl::StrCat("hello.node.capacity[", CutUtf8(name, 256), "]");
    if (std::vector<std::string> errors = api::IsQualifiedName(name);
        !errors.empty()) {
      return Invalid(field, name, errors);
    }
    absl::StatusOr<api::Quantity> q = api::ParseQuantity(text);
    if (!q.ok()) {
      return Invalid(field, text, {std::string(q.status().message())});
    }
    if (q->MilliValue() < 0 || q->Value() > kMaxNodeResourceValue) {
      return Invalid(
          field, text,
          {absl::StrCat("must be between 0 and ", kMaxNodeResourceValue)});
    }
    // NodeRestriction: a node declares only what one host can have.
    if (const int64_t limit = MaxNodeResource(name); q->Value() > limit) {
      return Invalid(field, text,
                     {absl::StrCat("exceeds the limit of ", limit, " for ",
                                   name, " on one node")});
    }
  }
  if (r.accelerators_size() > kMaxNodeAcceleratorNames) {
    return TooMany("hello.node.accelerators", r.accelerators_size(),
                   kMaxNodeAcceleratorNames);
  }
  for (int i = 0; i < r.accelerators_size(); ++i) {
    if (absl::Status s =
            CheckLength(absl::StrCat("hello.node.accelerators[", i, "]"),
                        r.accelerators(i));
        !s.ok()) {
      return s;
    }
  }
  return CheckLength("hello.node.agentVersion", r.agent_version());
}

}  // namespace jobset::scheduler
