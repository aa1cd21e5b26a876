#include "store/memory_store.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "common/status_macros.h"

namespace jobset::store {

MemoryStore::MemoryStore(size_t history_events, size_t history_bytes)
    : history_(0, history_events, history_bytes) {}

absl::StatusOr<std::optional<KeyValue>> MemoryStore::Get(
    absl::string_view key) {
  absl::MutexLock lock(&mu_);
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<ScanResult> MemoryStore::Scan(absl::string_view prefix,
                                             absl::string_view start_after,
                                             size_t limit) {
  absl::MutexLock lock(&mu_);
  ScanResult result;
  result.revision = revision_;
  auto it = start_after.empty() ? data_.lower_bound(prefix)
                                : data_.upper_bound(start_after);
  for (; it != data_.end() && absl::StartsWith(it->first, prefix); ++it) {
    if (result.kvs.size() >= limit) {
      result.more = true;
      break;
    }
    result.kvs.push_back(it->second);
  }
  return result;
}

absl::StatusOr<int64_t> MemoryStore::ReadAll(
    absl::string_view prefix,
    const std::function<absl::Status(int64_t revision)>& begin,
    const std::function<absl::Status(const KeyValue&)>& fn) {
  // A copy taken under the lock, so that the callbacks (which may block on
  // a client) never run under it.
  std::vector<KeyValue> kvs;
  int64_t revision;
  {
    absl::MutexLock lock(&mu_);
    revision = revision_;
    for (auto it = data_.lower_bound(prefix);
         it != data_.end() && absl::StartsWith(it->first, prefix); ++it) {
      kvs.push_back(it->second);
    }
  }
  JOBSET_RETURN_IF_ERROR(begin(revision));
  for (const KeyValue& kv : kvs) JOBSET_RETURN_IF_ERROR(fn(kv));
  return revision;
}

CommitLimits MemoryStore::Limits() const {
  absl::MutexLock lock(&limits_mu_);
  return limits_;
}

void MemoryStore::SetLimits(const CommitLimits& limits) {
  absl::MutexLock lock(&limits_mu_);
  limits_ = limits;
}

absl::StatusOr<int64_t> MemoryStore::Commit(const Batch& batch) {
  JOBSET_RETURN_IF_ERROR(ValidateBatch(batch));
  JOBSET_RETURN_IF_ERROR(CheckLimits(batch, Limits()));
  absl::MutexLock lock(&mu_);
  if (batch.empty()) return revision_;
  for (const Batch::Op& op : batch.ops()) {
    auto it = data_.find(op.key);
    std::optional<KeyValue> current;
    if (it != data_.end()) current = it->second;
    JOBSET_RETURN_IF_ERROR(CheckCondition(op, current));
  }
  const int64_t revision = revision_ + 1;
  std::vector<Event> events;
  for (const Batch::Op& op : batch.ops()) {
    auto it = data_.find(op.key);
    std::optional<Event> event = EventFor(
        op, it == data_.end() ? std::nullopt : std::optional(it->second),
        revision);
    if (!event.has_value()) continue;
    if (event->type == Event::Type::kPut) {
      data_[op.key] = event->kv;
    } else {
      data_.erase(it);
    }
    events.push_back(*std::move(event));
  }
  revision_ = revision;
  history_.Append(revision, std::move(events));
  return revision;
}

int64_t MemoryStore::CurrentRevision() {
  absl::MutexLock lock(&mu_);
  return revision_;
}

absl::StatusOr<std::vector<Event>> MemoryStore::WaitForEvents(
    absl::string_view prefix, int64_t after_revision, absl::Time deadline,
    size_t max_events, int64_t* looked_at) {
  return history_.Wait(prefix, after_revision, deadline, max_events, looked_at);
}

}  // namespace jobset::store
