#include "scheduler/controller/pass_journal.h"

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/quote.h"
#include "common/status_macros.h"
#include "proto/cluster.pb.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {
namespace {

// Protobuf's framing of one JournalPart.Write: tags and lengths.
constexpr size_t kWriteFraming = 16;

std::string MarkKey(absl::string_view id) {
  return absl::StrCat(store::keys::kJournal, id);
}

std::string PartKey(absl::string_view id, size_t part) {
  return absl::StrCat(store::keys::kJournal, id, "/",
                      absl::Dec(part, absl::kZeroPad6));
}

// Keys a part may write: the children of a JobSet, which only the
// controller writes.
bool IsChildKey(absl::string_view key) {
  return absl::StartsWith(key, store::keys::kJobs) ||
         absl::StartsWith(key, store::keys::kPods) ||
         absl::StartsWith(key, store::keys::kEvents);
}

// What an operation of `batch` goes with: the mark's transaction (a
// condition, a JobSet object, any key not a child) or a part.
bool GoesWithTheMark(const store::Batch::Op& op) {
  return op.expect != store::Batch::Expect::kAny || !IsChildKey(op.key);
}

absl::Status TooLarge(const std::string& key, size_t bytes,
                      const store::CommitLimits& limits) {
  return absl::InvalidArgumentError(
      absl::StrCat("store: the write of ", Quote(key), " (", bytes,
                   " bytes) does not fit one transaction of at most ",
                   limits.max_bytes, " bytes, even alone"));
}

// Deletes `keys`, as many to a transaction as fit `limits`.
absl::Status DeleteAll(store::Store& store,
                       const std::vector<std::string>& keys,
                       const store::CommitLimits& limits) {
  store::Batch batch;
  size_t bytes = 0;
  for (const std::string& key : keys) {
    const size_t cost = limits.Cost(key, std::nullopt, false);
    if (!batch.empty() && (batch.ops().size() + 1 > limits.max_ops ||
                           bytes + cost > limits.max_bytes)) {
      JOBSET_RETURN_IF_ERROR(store.Commit(batch).status());
      batch = store::Batch();
      bytes = 0;
    }
    batch.Delete(key);
    bytes += cost;
  }
  if (!batch.empty()) JOBSET_RETURN_IF_ERROR(store.Commit(batch).status());
  return absl::OkStatus();
}

// The transaction that applies `part` and deletes it.
store::Batch ApplyBatch(const api::JournalPart& part,
                        const std::string& part_key) {
  store::Batch batch;
  for (const api::JournalPart::Write& w : part.writes()) {
    if (w.remove()) {
      batch.Delete(w.key());
    } else {
      batch.Put(w.key(), w.value());
    }
  }
  batch.Delete(part_key);
  return batch;
}

}  // namespace

absl::StatusOr<int64_t> PassJournal::Commit(const store::Batch& batch) {
  const store::CommitLimits limits = store_->Limits();
  std::string id;
  {
    absl::BitGen gen;
    id =
        absl::StrCat(absl::Hex(absl::Uniform<uint64_t>(gen), absl::kZeroPad16));
  }
  const std::string mark_key = MarkKey(id);
  // Room every part keeps: its record's key (created, so conditioned) in
  // the transaction that stores it, and its delete in the one applying it.
  const size_t part_key_bytes = PartKey(id, 0).size();
  const size_t record_reserve =
      limits.Cost(std::string(part_key_bytes, 'k'), std::string(), true);
  const size_t apply_reserve =
      limits.Cost(std::string(part_key_bytes, 'k'), std::nullopt, false);
  const size_t max_part_ops = limits.max_ops > 1 ? limits.max_ops - 1 : 1;

  store::Batch with_mark;
  std::vector<api::JournalPart> parts(1);
  size_t apply_bytes = apply_reserve;
  size_t record_bytes = record_reserve;
  for (const store::Batch::Op& op : batch.ops()) {
    if (GoesWithTheMark(op)) {
      with_mark.Add(op);
      continue;
    }
    const size_t cost = limits.Cost(op.key, op.value, false);
    const size_t record_cost =
        op.key.size() + (op.value ? op.value->size() : 0) + kWriteFraming;
    if (apply_reserve + cost > limits.max_bytes ||
        record_reserve + record_cost > limits.max_bytes) {
      return TooLarge(op.key, cost, limits);
    }
    if (parts.back().writes_size() > 0 &&
        (static_cast<size_t>(parts.back().writes_size()) + 1 > max_part_ops ||
         apply_bytes + cost > limits.max_bytes ||
         record_bytes + record_cost > limits.max_bytes)) {
      parts.emplace_back();
      apply_bytes = apply_reserve;
      record_bytes = record_reserve;
    }
    api::JournalPart::Write* w = parts.back().add_writes();
    w->set_key(op.key);
    if (op.value.has_value()) {
      w->set_value(*op.value);
    } else {
      w->set_remove(true);
    }
    apply_bytes += cost;
    record_bytes += record_cost;
  }
  if (parts.back().writes_size() == 0) parts.pop_back();
  api::JournalCommit mark;
  mark.set_parts(static_cast<int32_t>(parts.size()));
  with_mark.Create(mark_key, mark.SerializeAsString());
  if (absl::Status fits = store::CheckLimits(with_mark, limits); !fits.ok()) {
    const std::string& key = with_mark.ops().front().key;
    return absl::InvalidArgumentError(
        absl::StrCat("store: the JobSet writes of ", Quote(key),
                     " do not fit one transaction: ", fits.message()));
  }

  // 1. The parts.
  std::vector<std::string> stored;
  auto abandon = [&](absl::Status error) {
    // Best effort: what is left, Recover deletes (there is no mark).
    if (absl::Status s = DeleteAll(*store_, stored, limits); !s.ok()) {
      JOBSET_LOG(WARNING) << "controller: journal " << id
                          << ": deleting the parts of an abandoned commit "
                             "failed (the next load deletes them): "
                          << s;
    }
    return error;
  };
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string key = PartKey(id, i);
    absl::Status s =
        store_->Commit(store::Batch().Create(key, parts[i].SerializeAsString()))
            .status();
    stored.push_back(std::move(key));
    if (!s.ok()) return abandon(s);
  }
  // 2. The mark, with the JobSet's own writes: the commit happens here.
  absl::StatusOr<int64_t> revision = store_->Commit(with_mark);
  if (revision.status().code() == absl::StatusCode::kAborted ||
      revision.status().code() == absl::StatusCode::kInvalidArgument) {
    return abandon(revision.status());
  }
  if (!revision.ok()) return revision.status();
  // 3, 4. Applied from memory; a failure here is completed by Recover.
  for (size_t i = 0; i < parts.size(); ++i) {
    absl::Status s = store_->Commit(ApplyBatch(parts[i], stored[i])).status();
    if (!s.ok()) {
      return absl::Status(
          s.code(),
          absl::StrCat(s.message(), " (journal ", id, " committed at revision ",
                       *revision, "; its part ", i,
                       " and later are applied at the next load)"));
    }
  }
  JOBSET_RETURN_IF_ERROR(
      store_->Commit(store::Batch().Delete(mark_key)).status());
  return *revision;
}

absl::Status PassJournal::Complete(const std::string& id) {
  std::vector<store::KeyValue> parts;
  JOBSET_RETURN_IF_ERROR(store::ScanAll(*store_, absl::StrCat(MarkKey(id), "/"),
                                        [&](const store::KeyValue& kv) {
                                          parts.push_back(kv);
                                          return absl::OkStatus();
                                        }));
  for (const store::KeyValue& kv : parts) {
    api::JournalPart part;
    bool usable = part.ParseFromString(kv.value);
    for (const api::JournalPart::Write& w : part.writes()) {
      if (!IsChildKey(w.key())) usable = false;
    }
    if (usable) {
      absl::Status s = store_->Commit(ApplyBatch(part, kv.key)).status();
      if (s.ok()) continue;
      if (s.code() != absl::StatusCode::kInvalidArgument) return s;
      usable = false;
    }
    JOBSET_LOG(ERROR) << "controller: journal part " << kv.key
                      << " is not a valid part; deleted unapplied";
    JOBSET_RETURN_IF_ERROR(
        store_->Commit(store::Batch().Delete(kv.key)).status());
  }
  return store_->Commit(store::Batch().Delete(MarkKey(id))).status();
}

absl::StatusOr<int> PassJournal::Recover() {
  std::set<std::string> marked;
  std::map<std::string, std::vector<std::string>> parts;  // By id.
  JOBSET_RETURN_IF_ERROR(store::ScanAll(
      *store_, store::keys::kJournal, [&](const store::KeyValue& kv) {
        absl::string_view rest = kv.key;
        rest.remove_prefix(store::keys::kJournal.size());
        const size_t slash = rest.find('/');
        if (slash == absl::string_view::npos) {
          marked.insert(std::string(rest));
        } else {
          parts[std::string(rest.substr(0, slash))].push_back(kv.key);
        }
        return absl::OkStatus();
      }));
  const store::CommitLimits limits = store_->Limits();
  for (auto& [id, keys] : parts) {
    if (marked.contains(id)) continue;
    JOBSET_LOG(INFO) << "controller: journal " << id
                     << " was never committed; deleting its " << keys.size()
                     << " part(s)";
    JOBSET_RETURN_IF_ERROR(DeleteAll(*store_, keys, limits));
  }
  for (const std::string& id : marked) {
    JOBSET_LOG(INFO) << "controller: completing journaled commit " << id;
    JOBSET_RETURN_IF_ERROR(Complete(id));
  }
  return static_cast<int>(marked.size());
}

}  // namespace jobset::scheduler
