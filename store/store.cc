#include "store/store.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/quote.h"

namespace jobset::store {

Batch& Batch::Put(absl::string_view key, absl::string_view value) {
  ops_.push_back({std::string(key), std::string(value), Expect::kAny, 0});
  return *this;
}

Batch& Batch::Create(absl::string_view key, absl::string_view value) {
  ops_.push_back({std::string(key), std::string(value), Expect::kAbsent, 0});
  return *this;
}

Batch& Batch::Update(absl::string_view key, absl::string_view value,
                     int64_t mod_revision) {
  ops_.push_back(
      {std::string(key), std::string(value), Expect::kRevision, mod_revision});
  return *this;
}

Batch& Batch::Delete(absl::string_view key) {
  ops_.push_back({std::string(key), std::nullopt, Expect::kAny, 0});
  return *this;
}

Batch& Batch::DeleteAt(absl::string_view key, int64_t mod_revision) {
  ops_.push_back(
      {std::string(key), std::nullopt, Expect::kRevision, mod_revision});
  return *this;
}

absl::Status ValidateBatch(const Batch& batch) {
  absl::flat_hash_set<absl::string_view> seen;
  for (const Batch::Op& op : batch.ops()) {
    if (op.key.empty()) return absl::InvalidArgumentError("store: empty key");
    if (op.key.size() > Store::kMaxKeyBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("store: key of ", op.key.size(),
                       " bytes exceeds the limit of ", Store::kMaxKeyBytes));
    }
    if (op.value.has_value() && op.value->size() > Store::kMaxValueBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "store: value of ", op.value->size(), " bytes at ", Quote(op.key),
          " exceeds the limit of ", Store::kMaxValueBytes, " bytes"));
    }
    if (!seen.insert(op.key).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          "store: key ", Quote(op.key), " appears twice in a batch"));
    }
  }
  return absl::OkStatus();
}

size_t CommitLimits::Cost(absl::string_view key,
                          const std::optional<std::string>& value,
                          bool conditioned) const {
  return key.size() * (conditioned ? 3 : 1) +
         (value.has_value() ? value->size() : 0) + op_overhead;
}

absl::Status CheckLimits(const Batch& batch, const CommitLimits& limits) {
  if (limits.unlimited()) return absl::OkStatus();
  size_t bytes = 0;
  for (const Batch::Op& op : batch.ops()) {
    bytes += limits.Cost(op.key, op.value, op.expect != Batch::Expect::kAny);
  }
  if (batch.ops().size() > limits.max_ops || bytes > limits.max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "store: a batch of ", batch.ops().size(), " operations and ", bytes,
        " bytes exceeds the store's limits of ", limits.max_ops,
        " operations and ", limits.max_bytes,
        " bytes per commit; the caller must split it"));
  }
  return absl::OkStatus();
}

absl::Status CheckCondition(const Batch::Op& op,
                            const std::optional<KeyValue>& current) {
  switch (op.expect) {
    case Batch::Expect::kAny:
      return absl::OkStatus();
    case Batch::Expect::kAbsent:
      if (!current.has_value()) return absl::OkStatus();
      return absl::AbortedError(absl::StrCat("store: key ", Quote(op.key),
                                             " already exists (revision ",
                                             current->mod_revision, ")"));
    case Batch::Expect::kRevision:
      if (!current.has_value()) {
        return absl::AbortedError(absl::StrCat(
            "store: key ", Quote(op.key), " does not exist (expected revision ",
            op.revision, ")"));
      }
      if (current->mod_revision == op.revision) return absl::OkStatus();
      return absl::AbortedError(
          absl::StrCat("store: key ", Quote(op.key), " is at revision ",
                       current->mod_revision, ", not ", op.revision));
  }
  return absl::InternalError("store: unknown condition");
}

std::optional<Event> EventFor(const Batch::Op& op,
                              std::optional<KeyValue> current,
                              int64_t revision) {
  if (op.value.has_value()) {
    KeyValue kv{op.key, *op.value, revision, revision};
    if (current.has_value()) kv.create_revision = current->create_revision;
    return Event{Event::Type::kPut, std::move(kv)};
  }
  if (!current.has_value()) return std::nullopt;
  current->mod_revision = revision;
  return Event{Event::Type::kDelete, *std::move(current)};
}

}  // namespace jobset::store
