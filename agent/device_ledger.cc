#include "agent/device_ledger.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/host.h"

namespace jobset::agent {

absl::StatusOr<std::vector<int>> DeviceLedger::Allocate(
    const std::string& uid, int count, int total,
    const std::set<std::string>& finished) {
  if (by_pod_.contains(uid)) {
    return absl::AlreadyExistsError(
        absl::StrCat("pod ", uid, " holds devices already"));
  }
  std::set<int> used;
  for (const auto& [other, ids] : by_pod_) {
    if (!finished.contains(other)) used.insert(ids.begin(), ids.end());
  }
  absl::StatusOr<std::vector<int>> picked = PickDevices(count, total, used);
  if (picked.ok()) by_pod_[uid] = *picked;
  return picked;
}

bool DeviceLedger::Contains(const std::string& uid) const {
  return by_pod_.contains(uid);
}

std::vector<int> DeviceLedger::Of(const std::string& uid) const {
  auto it = by_pod_.find(uid);
  return it == by_pod_.end() ? std::vector<int>{} : it->second;
}

bool DeviceLedger::Contested(const std::string& uid,
                             const std::set<std::string>& finished) const {
  auto mine = by_pod_.find(uid);
  if (mine == by_pod_.end()) return false;
  const std::set<int> ids(mine->second.begin(), mine->second.end());
  for (const auto& [other, held] : by_pod_) {
    if (other == uid || finished.contains(other)) continue;
    for (int id : held) {
      if (ids.contains(id)) return true;
    }
  }
  return false;
}

bool DeviceLedger::Erase(const std::string& uid) {
  return by_pod_.erase(uid) > 0;
}

std::string DeviceLedger::Serialize() const {
  std::string out;
  for (const auto& [uid, ids] : by_pod_) {
    absl::StrAppend(&out, uid, " ", ids.empty() ? "-" : absl::StrJoin(ids, ","),
                    "\n");
  }
  return out;
}

DeviceLedger DeviceLedger::Parse(absl::string_view text,
                                 const std::set<std::string>& live) {
  DeviceLedger ledger;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() != 2 || !live.contains(std::string(fields[0]))) continue;
    // A damaged index is skipped, never the pod: it still holds the rest.
    std::vector<int>& ids = ledger.by_pod_[std::string(fields[0])];
    for (absl::string_view id : absl::StrSplit(fields[1], ',')) {
      int i = 0;
      if (absl::SimpleAtoi(id, &i) && i >= 0) ids.push_back(i);
    }
  }
  return ledger;
}

}  // namespace jobset::agent
