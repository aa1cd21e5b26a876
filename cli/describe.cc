#include "cli/describe.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/output.h"

namespace jobset::cli {
namespace {

constexpr absl::string_view kReplicatedJobLabel =
    "jobset.sigs.k8s.io/replicatedjob-name";

std::string Pairs(const google::protobuf::Map<std::string, std::string>& map) {
  if (map.empty()) return "<none>";
  std::vector<std::pair<std::string, std::string>> sorted(map.begin(),
                                                          map.end());
  std::sort(sorted.begin(), sorted.end());
  return absl::StrJoin(sorted, "\n                ", absl::PairFormatter("="));
}

void Field(absl::string_view name, absl::string_view value, std::string* out) {
  const std::string label = absl::StrCat(name, ":");
  absl::StrAppend(out, label,
                  std::string(label.size() < 16 ? 16 - label.size() : 1, ' '),
                  value, "\n");
}

// Appends `rows` as a table indented by two spaces, or "  <none>".
void Section(absl::string_view title, const std::vector<Row>& rows,
             std::string* out) {
  absl::StrAppend(out, title, ":\n");
  if (rows.size() <= 1) {
    absl::StrAppend(out, "  <none>\n");
    return;
  }
  for (absl::string_view line :
       absl::StrSplit(FormatTable(rows), '\n', absl::SkipEmpty())) {
    absl::StrAppend(out, "  ", line, "\n");
  }
}

std::string Timestamp(const google::protobuf::Timestamp& t) {
  const absl::Time at = ToTime(t);
  if (at == absl::InfinitePast()) return "<unknown>";
  // RFC 1123 with a numeric zone, as kubectl describe prints times.
  return absl::FormatTime("%a, %d %b %Y %H:%M:%S %z", at, absl::UTCTimeZone());
}

// Appends `map` as kubectl's indented "  name:  value" lines.
void Resources(absl::string_view title,
               const google::protobuf::Map<std::string, std::string>& map,
               std::string* out) {
  absl::StrAppend(out, title, ":\n");
  std::vector<std::pair<std::string, std::string>> sorted(map.begin(),
                                                          map.end());
  std::sort(sorted.begin(), sorted.end());
  if (sorted.empty()) absl::StrAppend(out, "  <none>\n");
  for (const auto& [name, value] : sorted) {
    absl::StrAppend(out, "  ", name, ":",
                    std::string(name.size() < 24 ? 24 - name.size() : 1, ' '),
                    value, "\n");
  }
}

// Appends each key of `map` with its value's size, keys sorted and the
// sizes aligned as kubectl's tabwriter aligns them (two spaces after the
// longest "key:").
template <typename V>
void Sizes(const google::protobuf::Map<std::string, V>& map, std::string* out) {
  std::vector<std::string> keys;
  size_t width = 0;
  for (const auto& [k, v] : map) {
    keys.push_back(k);
    width = std::max(width, k.size() + 1);
  }
  std::sort(keys.begin(), keys.end());
  for (const std::string& k : keys) {
    absl::StrAppend(out, k, ":", std::string(width - k.size() - 1 + 2, ' '),
                    map.at(k).size(), " bytes\n");
  }
}

void Metadata(const api::ObjectMeta& meta, std::string* out) {
  Field("Name", meta.name(), out);
  Field("Namespace", meta.namespace_(), out);
  Field("Labels", Pairs(meta.labels()), out);
  Field("Annotations", Pairs(meta.annotations()), out);
}

absl::Duration ToDuration(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

// jobsetd's goodput (docs/resilience.md; our addition): where the wall time
// went, and the restart attempts. The stored durations stop at phase_since:
// the current phase gets the time since.
void Goodput(const api::GoodputStatus& g, absl::Time now, std::string* out) {
  if (!g.has_submitted()) return;
  std::vector<std::pair<std::string, absl::Duration>> phases = {
      {"Queued", ToDuration(g.queued())},
      {"Starting", ToDuration(g.starting())},
      {"Productive", ToDuration(g.productive())},
      {"Stalled", ToDuration(g.stalled())},
      {"Restarting", ToDuration(g.restarting())}};
  const absl::Time since = ToTime(g.phase_since());
  absl::Duration wall = absl::ZeroDuration();
  for (auto& [name, took] : phases) {
    if (name == g.phase() && since != absl::InfinitePast() && now > since) {
      took += now - since;
    }
    wall += took;
  }
  std::vector<std::string> parts;
  for (const auto& [name, took] : phases) {
    parts.push_back(absl::StrCat(absl::AsciiStrToLower(name), " ",
                                 FormatAge(now - took, now)));
  }
  const double ratio = wall > absl::ZeroDuration()
                           ? absl::FDivDuration(phases[2].second, wall)
                           : 0;
  Field("Goodput",
        absl::StrCat(absl::StrFormat("%.1f%%", 100 * ratio), " of ",
                     FormatAge(now - wall, now), " (", g.phase(), "; ",
                     absl::StrJoin(parts, ", "), "); ", g.lost_steps(),
                     " steps redone"),
        out);
  std::vector<Row> rows = {{"ATTEMPT", "STARTED", "ENDED", "REASON",
                            "FIRST FAILED", "NODE", "EXIT CODES", "LAST STEP"}};
  for (const api::AttemptRecord& a : g.attempts()) {
    rows.push_back(
        {absl::StrCat(a.index()),
         absl::StrCat(FormatAge(ToTime(a.start()), now), " ago"),
         a.has_end() ? absl::StrCat(FormatAge(ToTime(a.end()), now), " ago")
                     : "<running>",
         a.reason().empty() ? "<none>" : a.reason(),
         a.first_failed_pod().empty() ? "<none>" : a.first_failed_pod(),
         a.first_failed_node().empty() ? "<none>" : a.first_failed_node(),
         a.exit_codes().empty() ? "<none>" : absl::StrJoin(a.exit_codes(), ","),
         a.has_last_step() ? absl::StrCat(a.last_step()) : "<none>"});
  }
  Section("Attempts", rows, out);
}

}  // namespace

std::string DescribeSecret(const api::Secret& secret) {
  std::string out;
  Metadata(secret.metadata(), &out);
  absl::StrAppend(&out, "\nType:  ", secret.type(), "\n\nData\n====\n");
  Sizes(secret.data(), &out);
  return out;
}

std::string DescribeConfigMap(const api::ConfigMap& config_map) {
  std::string out;
  Metadata(config_map.metadata(), &out);
  absl::StrAppend(&out, "\nData\n====\n");
  std::vector<std::pair<std::string, std::string>> data(
      config_map.data().begin(), config_map.data().end());
  std::sort(data.begin(), data.end());
  for (const auto& [k, v] : data) {
    absl::StrAppend(&out, k, ":\n----\n", v, "\n\n");
  }
  absl::StrAppend(&out, "\nBinaryData\n====\n");
  Sizes(config_map.binary_data(), &out);
  return out;
}

std::string DescribeNode(const api::Node& node, absl::Time now) {
  const api::ObjectMeta& meta = node.metadata();
  std::string out;
  Field("Name", meta.name(), &out);
  Field("Roles", NodeRolesText(node), &out);
  Field("Labels", Pairs(meta.labels()), &out);
  Field("Annotations", Pairs(meta.annotations()), &out);
  const absl::Time created = ToTime(meta.creation_timestamp());
  Field("CreationTimestamp",
        created == absl::InfinitePast()
            ? "<unknown>"
            : absl::StrCat(Timestamp(meta.creation_timestamp()), " (",
                           FormatAge(created, now), " ago)"),
        &out);
  std::vector<std::string> taints;
  for (const api::Taint& t : node.spec().taints()) {
    taints.push_back(absl::StrCat(t.key(), t.value().empty() ? "" : "=",
                                  t.value(), ":", t.effect()));
  }
  Field("Taints",
        taints.empty() ? "<none>" : absl::StrJoin(taints, "\n                "),
        &out);
  Field("Unschedulable", node.spec().unschedulable() ? "true" : "false", &out);

  std::vector<Row> conditions = {{"TYPE", "STATUS", "LASTHEARTBEATTIME",
                                  "LASTTRANSITIONTIME", "REASON", "MESSAGE"}};
  for (const api::NodeCondition& c : node.status().conditions()) {
    conditions.push_back(
        {c.type(), c.status(), Timestamp(c.last_heartbeat_time()),
         Timestamp(c.last_transition_time()), c.reason(), c.message()});
  }
  Section("Conditions", conditions, &out);
  absl::StrAppend(&out, "Addresses:\n");
  if (node.status().addresses().empty()) absl::StrAppend(&out, "  <none>\n");
  for (const api::NodeAddress& a : node.status().addresses()) {
    absl::StrAppend(&out, "  ", a.type(), ":  ", a.address(), "\n");
  }
  Resources("Capacity", node.status().capacity(), &out);
  Resources("Allocatable", node.status().allocatable(), &out);
  const api::NodeSystemInfo& info = node.status().node_info();
  absl::StrAppend(&out, "System Info:\n");
  for (const auto& [name, value] :
       std::vector<std::pair<absl::string_view, absl::string_view>>{
           {"Kubelet Version", info.kubelet_version()},
           {"Operating System", info.operating_system()},
           {"Architecture", info.architecture()}}) {
    absl::StrAppend(&out, "  ", name, ":", std::string(20 - name.size(), ' '),
                    value.empty() ? "<unknown>" : value, "\n");
  }
  auto annotation = [&](absl::string_view key) -> std::string {
    auto it = meta.annotations().find(std::string(key));
    return it == meta.annotations().end() ? "" : it->second;
  };
  const std::string pods = annotation("jobsetd.x-k8s.io/pods");
  Field("Pods", pods.empty() ? "<unknown>" : pods, &out);
  const std::string allocated = annotation("jobsetd.x-k8s.io/allocated");
  absl::StrAppend(&out, "Allocated resources:\n");
  if (allocated.empty()) absl::StrAppend(&out, "  <none>\n");
  for (absl::string_view pair :
       absl::StrSplit(allocated, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    absl::StrAppend(
        &out, "  ", kv.first, ":",
        std::string(kv.first.size() < 24 ? 24 - kv.first.size() : 1, ' '),
        kv.second, "\n");
  }
  return out;
}

std::string DescribeJobSet(const api::JobSet& jobset,
                           const std::vector<api::Pod>& pods,
                           const std::vector<api::Event>& events,
                           absl::string_view kueue_section, absl::Time now,
                           int max_events) {
  const api::ObjectMeta& meta = jobset.metadata();
  const api::JobSetSpec& spec = jobset.spec();
  const api::JobSetStatus& status = jobset.status();
  std::string out;
  Field("Name", meta.name(), &out);
  Field("Namespace", meta.namespace_(), &out);
  Field("Labels", Pairs(meta.labels()), &out);
  Field("Annotations", Pairs(meta.annotations()), &out);
  Field("UID", meta.uid(), &out);
  const absl::Time created = ToTime(meta.creation_timestamp());
  Field("Created",
        created == absl::InfinitePast()
            ? "<unknown>"
            : absl::StrCat(absl::FormatTime(absl::RFC3339_sec, created,
                                            absl::UTCTimeZone()),
                           " (", FormatAge(created, now), " ago)"),
        &out);
  Field("Suspended", spec.suspend() ? "true" : "false", &out);
  Field("State",
        status.terminal_state().empty() ? "Active" : status.terminal_state(),
        &out);
  Field("Restarts",
        absl::StrCat(status.restarts(), " (",
                     status.restarts_count_towards_max(), " of maxRestarts ",
                     spec.failure_policy().max_restarts(), ")"),
        &out);
  Field("Failure Policy",
        absl::StrCat("maxRestarts=", spec.failure_policy().max_restarts(),
                     " restartStrategy=",
                     spec.failure_policy().restart_strategy().empty()
                         ? "Recreate"
                         : spec.failure_policy().restart_strategy(),
                     " rules=", spec.failure_policy().rules_size()),
        &out);
  Field("Success Policy",
        absl::StrCat(
            "operator=", spec.success_policy().operator_(), " targets=",
            spec.success_policy().target_replicated_jobs().empty()
                ? "<all>"
                : absl::StrJoin(spec.success_policy().target_replicated_jobs(),
                                ",")),
        &out);
  if (!spec.startup_policy().startup_policy_order().empty()) {
    Field("Startup Order", spec.startup_policy().startup_policy_order(), &out);
  }
  if (!spec.coordinator().replicated_job().empty()) {
    Field("Coordinator",
          absl::StrCat(spec.coordinator().replicated_job(), " job ",
                       spec.coordinator().job_index(), " pod ",
                       spec.coordinator().pod_index()),
          &out);
  }

  std::vector<Row> conditions = {
      {"TYPE", "STATUS", "REASON", "AGE", "MESSAGE"}};
  for (const api::Condition& c : status.conditions()) {
    conditions.push_back({c.type(), c.status(), c.reason(),
                          FormatAge(ToTime(c.last_transition_time()), now),
                          c.message()});
  }
  Section("Conditions", conditions, &out);

  std::vector<Row> rjobs = {{"NAME", "REPLICAS", "READY", "ACTIVE", "SUCCEEDED",
                             "FAILED", "SUSPENDED"}};
  for (const api::ReplicatedJob& rjob : spec.replicated_jobs()) {
    api::ReplicatedJobStatus counts;
    for (const api::ReplicatedJobStatus& s : status.replicated_jobs_status()) {
      if (s.name() == rjob.name()) counts = s;
    }
    rjobs.push_back(
        {rjob.name(), absl::StrCat(rjob.has_replicas() ? rjob.replicas() : 1),
         absl::StrCat(counts.ready()), absl::StrCat(counts.active()),
         absl::StrCat(counts.succeeded()), absl::StrCat(counts.failed()),
         absl::StrCat(counts.suspended())});
  }
  Section("Replicated Jobs", rjobs, &out);

  std::vector<Row> pod_rows = {
      {"NAME", "REPLICATED JOB", "STATUS", "RESTARTS", "NODE", "AGE"}};
  // Pending pods grouped by why they are not scheduled, in first-seen order.
  std::vector<std::pair<std::string, int>> pending;
  for (const api::Pod& pod : pods) {
    int restarts = 0;
    for (const api::ContainerStatus& c : pod.status().container_statuses()) {
      restarts += c.restart_count();
    }
    auto rjob = pod.metadata().labels().find(std::string(kReplicatedJobLabel));
    pod_rows.push_back(
        {pod.metadata().name(),
         rjob == pod.metadata().labels().end() ? "" : rjob->second,
         PodStatusText(pod), absl::StrCat(restarts),
         pod.spec().node_name().empty() ? "<none>" : pod.spec().node_name(),
         FormatAge(ToTime(pod.metadata().creation_timestamp()), now)});
    for (const api::Condition& c : pod.status().conditions()) {
      if (c.type() != "PodScheduled" || c.status() != "False") continue;
      const std::string why = absl::StrCat(
          c.reason().empty() ? "Unschedulable" : c.reason(), ": ", c.message());
      auto it = std::find_if(pending.begin(), pending.end(),
                             [&](const auto& p) { return p.first == why; });
      if (it == pending.end()) {
        pending.emplace_back(why, 1);
      } else {
        ++it->second;
      }
    }
  }
  Section("Pods", pod_rows, &out);
  if (!pending.empty()) {
    absl::StrAppend(&out, "Pending:\n");
    for (const auto& [why, count] : pending) {
      absl::StrAppend(&out, "  ", count, count == 1 ? " pod: " : " pods: ", why,
                      "\n");
    }
  }

  Goodput(status.goodput(), now, &out);
  absl::StrAppend(&out, kueue_section);

  std::vector<Row> event_rows = {{"TYPE", "REASON", "AGE", "FROM", "MESSAGE"}};
  const size_t first = events.size() > static_cast<size_t>(max_events)
                           ? events.size() - static_cast<size_t>(max_events)
                           : 0;
  for (size_t i = first; i < events.size(); ++i) {
    const api::Event& e = events[i];
    absl::Time at = ToTime(e.event_time());
    if (at == absl::InfinitePast()) {
      at = ToTime(e.metadata().creation_timestamp());
    }
    event_rows.push_back(
        {e.type(), e.reason(), FormatAge(at, now), e.regarding(), e.note()});
  }
  Section("Events", event_rows, &out);
  return out;
}

}  // namespace jobset::cli
