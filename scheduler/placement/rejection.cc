#include "scheduler/placement/rejection.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace jobset::scheduler::placement {

std::string FormatNodeReasons(int available, int total,
                              const std::map<std::string, int>& reasons) {
  std::vector<std::string> entries;
  entries.reserve(reasons.size());
  for (const auto& [reason, count] : reasons) {
    entries.push_back(absl::StrCat(count, " ", reason));
  }
  // kube-scheduler's sortReasonsHistogram sorts the formatted strings.
  std::sort(entries.begin(), entries.end());
  std::string message =
      absl::StrCat(available, "/", total, " nodes are available");
  if (!entries.empty()) {
    absl::StrAppend(&message, ": ", absl::StrJoin(entries, ", "));
  }
  absl::StrAppend(&message, ".");
  return message;
}

std::string FormatDomainReasons(absl::string_view topology_key, int64_t pods,
                                const DomainTally& tally) {
  std::vector<std::string> parts;
  if (tally.held > 0) {
    parts.push_back(absl::StrCat(tally.held, " held by other jobs"));
  }
  if (tally.taken > 0) {
    parts.push_back(
        absl::StrCat(tally.taken, " taken by other jobs of this JobSet"));
  }
  if (tally.busy > 0) {
    parts.push_back(absl::StrCat(tally.busy, " in use by pods of other jobs"));
  }
  if (tally.small > 0) {
    parts.push_back(absl::StrCat(tally.small, " with room for at most ",
                                 tally.max_small_room, " pods"));
  }
  std::string message =
      absl::StrCat("exclusive topology \"", topology_key,
                   "\": no free domain has room for the ", pods, " pods (",
                   tally.total, tally.total == 1 ? " domain" : " domains");
  if (!parts.empty())
    absl::StrAppend(&message, ": ", absl::StrJoin(parts, ", "));
  absl::StrAppend(&message, ")");
  return message;
}

}  // namespace jobset::scheduler::placement
