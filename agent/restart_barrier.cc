#include "agent/restart_barrier.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/pod_phase.h"

namespace jobset::agent {

absl::StatusOr<std::optional<int32_t>> InPlaceAttemptOf(const api::Pod& pod) {
  auto it = pod.metadata().annotations().find(kInPlaceRestartAttemptKey);
  if (it == pod.metadata().annotations().end()) return std::nullopt;
  int32_t attempt = 0;
  if (!absl::SimpleAtoi(it->second, &attempt) || attempt < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "metadata.annotations[", kInPlaceRestartAttemptKey, "]: \"",
        it->second.substr(0, 32), "\" is not a non-negative 32-bit integer"));
  }
  return attempt;
}

bool PodFinished(const api::PodStatus& s) {
  return s.phase() == api::kPodSucceeded || s.phase() == api::kPodFailed;
}

int32_t RestartBarrier::Running(const std::string& uid) const {
  auto it = attempts_.find(uid);
  return it == attempts_.end() ? 0 : it->second;
}

void RestartBarrier::SetRunning(const std::string& uid, int32_t attempt) {
  attempts_[uid] = attempt;
}

bool RestartBarrier::IsLater(const std::string& uid, int32_t attempt) const {
  return attempt > Running(uid);
}

void RestartBarrier::Hold(const api::PodAssignment& order) {
  restarts_[order.pod().metadata().uid()] = order;
}

std::optional<api::PodAssignment> RestartBarrier::Take(const std::string& uid) {
  auto it = restarts_.find(uid);
  if (it == restarts_.end()) return std::nullopt;
  api::PodAssignment order = std::move(it->second);
  restarts_.erase(it);
  return order;
}

std::vector<std::string> RestartBarrier::Ready(
    const std::vector<PodState>& pods) const {
  std::vector<std::string> ready;
  if (restarts_.empty()) return ready;
  for (const PodState& pod : pods) {
    if (restarts_.contains(pod.uid) && PodFinished(pod.status))
      ready.push_back(pod.uid);
  }
  return ready;
}

std::set<std::string> RestartBarrier::Unrestarted(
    std::set<std::string> finished) const {
  for (const auto& [uid, order] : restarts_) finished.erase(uid);
  return finished;
}

bool RestartBarrier::Erase(const std::string& uid) {
  restarts_.erase(uid);
  return attempts_.erase(uid) > 0;
}

std::string RestartBarrier::Serialize() const {
  std::string text;
  for (const auto& [uid, attempt] : attempts_)
    absl::StrAppend(&text, uid, " ", attempt, "\n");
  return text;
}

RestartBarrier RestartBarrier::Parse(absl::string_view text,
                                     const std::set<std::string>& live) {
  RestartBarrier barrier;
  // Whitespace-separated pairs, as an istream reads them.
  std::vector<absl::string_view> words =
      absl::StrSplit(text, absl::ByAnyChar(" \t\r\n"), absl::SkipEmpty());
  for (size_t i = 0; i + 1 < words.size(); i += 2) {
    int32_t n = 0;
    const std::string uid(words[i]);
    if (live.contains(uid) && absl::SimpleAtoi(words[i + 1], &n) && n >= 0)
      barrier.attempts_[uid] = n;
  }
  return barrier;
}

}  // namespace jobset::agent
