// describe's account of how Kueue holds a JobSet or a Workload: describe
// jobset's "Kueue:" section and describe workload's position lines, from
// what cli/cmd/kueue_lookup.cc read.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/describe.h"

namespace jobset::cli {
namespace {

// The column the section's values start at, as describe jobset's.
constexpr size_t kValueColumn = 17;

const api::Condition* FindCondition(const api::Workload& workload,
                                    absl::string_view type) {
  for (const api::Condition& c : workload.status().conditions()) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

bool IsTrue(const api::Condition* condition) {
  return condition != nullptr && condition->status() == "True";
}

// What describe calls the Workload's state, and the condition behind it
// (null when it has none yet: a Workload before its first cycle).
struct State {
  std::string name;
  const api::Condition* why;
};

// Kueue's conditions, the one that ends or interrupts the others first: a
// Workload being evicted is still Admitted until its pods stop.
State StateOf(const api::Workload& workload) {
  const api::Condition* finished = FindCondition(workload, "Finished");
  if (IsTrue(finished)) return {"Finished", finished};
  const api::Condition* evicted = FindCondition(workload, "Evicted");
  if (IsTrue(evicted)) {
    const std::string why = evicted->reason().empty()
                                ? ""
                                : absl::StrCat(" (", evicted->reason(), ")");
    // Its quota given back, it waits again: why it waits is the news.
    const api::Condition* reserved = FindCondition(workload, "QuotaReserved");
    if (!workload.status().has_admission() && reserved != nullptr &&
        !reserved->message().empty()) {
      return {absl::StrCat("Pending after eviction", why), reserved};
    }
    return {absl::StrCat("Evicted", why), evicted};
  }
  const api::Condition* admitted = FindCondition(workload, "Admitted");
  if (IsTrue(admitted)) return {"Admitted", admitted};
  const api::Condition* reserved = FindCondition(workload, "QuotaReserved");
  if (IsTrue(reserved)) return {"QuotaReserved", reserved};
  return {"Pending", reserved};
}

// "reason: message", or whichever of the two is set; "" for neither.
std::string ReasonText(absl::string_view reason, absl::string_view message) {
  std::vector<absl::string_view> parts;
  if (!reason.empty()) parts.push_back(reason);
  if (!message.empty()) parts.push_back(message);
  return absl::StrJoin(parts, ": ");
}

// Why a part could not be read, as a value: "<unknown> (could not ...)".
std::string Unreadable(absl::string_view what, const absl::Status& error) {
  return absl::StrCat("<unknown> (could not ", what, ": ",
                      absl::StatusCodeToString(error.code()), ": ",
                      error.message(), ")");
}

// The value describe gives a Workload's position when it has no entry:
// why it could not be read, or that it is not listed. `queue`: its
// LocalQueue.
std::string MissingPosition(const PendingPosition& position,
                            absl::string_view queue) {
  if (!position.error.ok()) {
    return Unreadable("list the pending Workloads", position.error);
  }
  return absl::StrCat("<none> (not among LocalQueue ", queue,
                      "'s pending Workloads)");
}

void Line(absl::string_view label, absl::string_view value, std::string* out) {
  const std::string head = absl::StrCat("  ", label, ":");
  absl::StrAppend(
      out, head,
      std::string(head.size() < kValueColumn ? kValueColumn - head.size() : 1,
                  ' '),
      value, "\n");
}

}  // namespace

bool WaitsForQuota(const api::Workload& workload) {
  return !IsTrue(FindCondition(workload, "Finished")) &&
         !IsTrue(FindCondition(workload, "QuotaReserved"));
}

std::string DescribeKueueSection(const KueueLookup& lookup) {
  if (lookup.queue_name.empty() && !lookup.workload.has_value()) return "";
  std::string out = "Kueue:\n";
  if (!lookup.workload.has_value()) {
    Line("Workload",
         lookup.workload_error.ok()
             ? "<none> (not created yet)"
             : Unreadable("list Workloads", lookup.workload_error),
         &out);
    Line("Queue", lookup.queue_name, &out);
    return out;
  }
  const api::Workload& workload = *lookup.workload;
  const PendingPosition& position = lookup.position;
  Line("Workload", workload.metadata().name(), &out);
  const std::string& queue = workload.spec().queue_name().empty()
                                 ? lookup.queue_name
                                 : workload.spec().queue_name();
  std::string cluster_queue = workload.status().admission().cluster_queue();
  if (cluster_queue.empty() && position.entry.has_value()) {
    cluster_queue = position.entry->cluster_queue();
  }
  Line("Queue",
       cluster_queue.empty()
           ? queue
           : absl::StrCat(queue, " (ClusterQueue ", cluster_queue, ")"),
       &out);
  const State state = StateOf(workload);
  std::string state_text = state.name;
  if (position.entry.has_value()) {
    absl::StrAppend(&state_text, ", position ",
                    position.entry->position_in_cluster_queue(),
                    cluster_queue.empty()
                        ? " in its ClusterQueue"
                        : absl::StrCat(" in ClusterQueue ", cluster_queue),
                    ", ", position.entry->position_in_local_queue(),
                    " in LocalQueue ", position.entry->local_queue_name());
  }
  Line("State", state_text, &out);
  std::string reason;
  if (state.why != nullptr) {
    reason = ReasonText(state.why->reason(), state.why->message());
  } else if (position.entry.has_value()) {
    // Before the Workload's own condition is written, the list may say it.
    reason = ReasonText(position.entry->reason(), position.entry->message());
  }
  if (!reason.empty()) Line("Reason", reason, &out);
  if (position.looked_up && !position.entry.has_value()) {
    Line("Position", MissingPosition(position, queue), &out);
  }
  return out;
}

std::vector<std::string> PendingPositionLines(const api::Workload& workload,
                                              const PendingPosition& position) {
  if (!position.looked_up) return {};
  if (!position.entry.has_value()) {
    return {
        absl::StrCat("Position:\t",
                     MissingPosition(position, workload.spec().queue_name()))};
  }
  return {absl::StrCat("Position In Cluster Queue:\t",
                       position.entry->position_in_cluster_queue()),
          absl::StrCat("Position In Local Queue:\t",
                       position.entry->position_in_local_queue())};
}

}  // namespace jobset::cli
