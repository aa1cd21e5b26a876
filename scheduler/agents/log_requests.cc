#include "scheduler/agents/log_requests.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace jobset::scheduler {

int64_t LogRequests::Start(const std::string& node) {
  absl::MutexLock lock(&mu_);
  const int64_t id = next_id_++;
  pending_[id].node = node;
  return id;
}

absl::Status LogRequests::Answer(const std::string& node,
                                 const api::LogChunk& chunk) {
  absl::MutexLock lock(&mu_);
  auto pending = pending_.find(chunk.request_id());
  if (pending == pending_.end()) return absl::OkStatus();  // Too late.
  if (pending->second.node != node) {
    return absl::PermissionDeniedError(absl::StrCat(
        "node \"", node, "\" may only answer log requests sent to it"));
  }
  pending->second.chunk = chunk;
  return absl::OkStatus();
}

absl::StatusOr<api::LogChunk> LogRequests::Wait(int64_t id,
                                                absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto answered = [this, id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return pending_.at(id).chunk.has_value();
  };
  mu_.AwaitWithTimeout(absl::Condition(&answered), timeout);
  auto pending = pending_.find(id);
  std::optional<api::LogChunk> chunk = std::move(pending->second.chunk);
  const std::string node = std::move(pending->second.node);
  pending_.erase(pending);
  if (!chunk.has_value()) {
    return absl::UnavailableError(absl::StrCat("the agent of node ", node,
                                               " did not answer within ",
                                               absl::FormatDuration(timeout)));
  }
  return *std::move(chunk);
}

}  // namespace jobset::scheduler
