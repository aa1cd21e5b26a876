#ifndef JOBSET_STORE_STORE_H_
#define JOBSET_STORE_STORE_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace jobset::store {

// A key with its value and the revisions that created and last modified it.
struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
};

// One change in the store's history. A delete carries the value the key held
// just before it was deleted, so that watchers can report what went away.
struct Event {
  enum class Type { kPut, kDelete };
  Type type = Type::kPut;
  KeyValue kv;  // For kDelete, the last value; mod_revision is the delete's.
};

// Returns the Kubernetes watch event type of `event`: "DELETED", "ADDED"
// (the key's first revision) or "MODIFIED".
inline const char* WatchEventType(const Event& event) {
  if (event.type == Event::Type::kDelete) return "DELETED";
  return event.kv.create_revision == event.kv.mod_revision ? "ADDED"
                                                           : "MODIFIED";
}

// A set of puts and deletes applied atomically by Store::Commit. Each
// operation may carry a compare-and-swap condition on the key's current
// mod_revision. Thread-compatible.
class Batch {
 public:
  // The condition an operation places on the key's current state.
  enum class Expect {
    kAny,       // No condition.
    kAbsent,    // The key must not exist.
    kRevision,  // The key must exist with exactly `revision`.
  };
  struct Op {
    std::string key;
    std::optional<std::string> value;  // nullopt: delete.
    Expect expect = Expect::kAny;
    int64_t revision = 0;
  };

  // Writes `value` at `key` unconditionally.
  Batch& Put(absl::string_view key, absl::string_view value);
  // Writes `value` at `key`, which must not exist yet.
  Batch& Create(absl::string_view key, absl::string_view value);
  // Writes `value` at `key`, which must currently have `mod_revision`.
  Batch& Update(absl::string_view key, absl::string_view value,
                int64_t mod_revision);
  // Deletes `key` if it exists.
  Batch& Delete(absl::string_view key);
  // Deletes `key`, which must currently have `mod_revision`.
  Batch& DeleteAt(absl::string_view key, int64_t mod_revision);

  // Appends `op` as it is (its condition included).
  Batch& Add(Op op) {
    ops_.push_back(std::move(op));
    return *this;
  }

  const std::vector<Op>& ops() const { return ops_; }
  bool empty() const { return ops_.empty(); }

 private:
  std::vector<Op> ops_;
};

// The largest batch one Commit of a store accepts (etcd refuses a Txn of
// more than --max-txn-ops operations or --max-request-bytes bytes). Callers
// that may write more split their batches to fit (the controller does:
// scheduler/controller/commit_split.h). Unlimited for RocksDB and, unless a
// test sets them, for MemoryStore.
struct CommitLimits {
  size_t max_ops = std::numeric_limits<size_t>::max();
  size_t max_bytes = std::numeric_limits<size_t>::max();
  // What the store's framing adds to each operation, in bytes.
  size_t op_overhead = 0;

  bool unlimited() const {
    return max_ops == std::numeric_limits<size_t>::max() &&
           max_bytes == std::numeric_limits<size_t>::max();
  }
  // The bytes `op` counts for against max_bytes: its key and value, the key
  // twice more when it is conditioned (a compare, and the read that names
  // the key when the compare fails), and op_overhead: an upper bound of what
  // the store sends for it.
  size_t Cost(absl::string_view key, const std::optional<std::string>& value,
              bool conditioned) const;
};

// One page of a prefix scan, read at a single revision.
struct ScanResult {
  std::vector<KeyValue> kvs;
  bool more = false;     // True when keys beyond the last one returned remain.
  int64_t revision = 0;  // The store revision the page was read at.
};

// A transactional, revisioned key-value store: the memory of jobsetd.
//
// Every Commit that changes anything gets the next revision (a store-wide
// counter that never goes backwards, also across restarts). Commits are atomic
// and, for durable implementations, on disk before Commit returns. A bounded
// history of recent events lets watchers resume from a revision; resuming from
// a revision older than the history gives kOutOfRange ("compacted, list
// again").
//
// Keys are arbitrary non-empty byte strings of at most kMaxKeyBytes; their
// layout is defined in keys.h. Implementations are thread-safe.
class Store {
 public:
  static constexpr size_t kMaxKeyBytes = 1024;
  // Larger values are refused with kInvalidArgument.
  static constexpr size_t kMaxValueBytes = 3 << 20;

  virtual ~Store() = default;

  // Returns the value at `key`, or nullopt if there is none. kDataLoss if the
  // stored value is corrupt.
  virtual absl::StatusOr<std::optional<KeyValue>> Get(
      absl::string_view key) = 0;

  // Returns up to `limit` keys that start with `prefix` and sort after
  // `start_after` (all of them when it is empty), in key order.
  virtual absl::StatusOr<ScanResult> Scan(absl::string_view prefix,
                                          absl::string_view start_after,
                                          size_t limit) = 0;

  // Reads every key that starts with `prefix`, in key order, all as of ONE
  // revision (a consistent read, unlike a series of Scan pages, which are
  // each read at their own): calls `begin` with that revision, then `fn`
  // with each key. Returns the revision. An implementation that must start
  // over (etcd compacted the revision during the read) calls `begin` again
  // with the new revision, a bounded number of times; a caller that cannot
  // start over returns an error from `begin`. The first error `begin` or
  // `fn` returns ends the read and is returned. Concurrent commits may go
  // on; none of them is seen.
  virtual absl::StatusOr<int64_t> ReadAll(
      absl::string_view prefix,
      const std::function<absl::Status(int64_t revision)>& begin,
      const std::function<absl::Status(const KeyValue&)>& fn) = 0;

  // Applies every operation of `batch` atomically and returns the new
  // revision. If any condition fails, nothing is applied and the result is
  // kAborted naming the key. An empty batch returns the current revision.
  virtual absl::StatusOr<int64_t> Commit(const Batch& batch) = 0;

  // Returns the revision of the last commit (0 for a new store).
  virtual int64_t CurrentRevision() = 0;

  // The largest batch Commit accepts; a larger one is refused with
  // kInvalidArgument.
  virtual CommitLimits Limits() const { return {}; }

  // Returns the events after `after_revision` for keys starting with `prefix`,
  // in revision order: about `max_events` of them (more only to keep a
  // commit's events together, since a watcher resumes after a revision). Waits
  // until `deadline` for one to arrive; returns an empty list if none did.
  // kOutOfRange if `after_revision` is older than the retained history.
  absl::StatusOr<std::vector<Event>> WaitForEvents(absl::string_view prefix,
                                                   int64_t after_revision,
                                                   absl::Time deadline,
                                                   size_t max_events) {
    return WaitForEvents(prefix, after_revision, deadline, max_events, nullptr);
  }
  // The same, and sets `*looked_at` (when not null) to the revision up to
  // which every event was looked at: at least the last one returned, and as
  // far as the history went when none was. A watcher of a quiet prefix
  // resumes from there, rather than looking at every other prefix's events
  // again.
  virtual absl::StatusOr<std::vector<Event>> WaitForEvents(
      absl::string_view prefix, int64_t after_revision, absl::Time deadline,
      size_t max_events, int64_t* looked_at) = 0;
};

// For implementations of Store.

// Checks what a Commit checks before looking at the store's contents: keys are
// non-empty and at most Store::kMaxKeyBytes, values at most
// Store::kMaxValueBytes, no key appears twice. kInvalidArgument otherwise.
absl::Status ValidateBatch(const Batch& batch);

// Checks that `batch` fits `limits`: kInvalidArgument naming the limit, and
// the batch's operations and bytes, otherwise.
absl::Status CheckLimits(const Batch& batch, const CommitLimits& limits);

// Checks `op`'s condition against the key's current state (nullopt when the
// key is absent). kAborted naming the key when it does not hold.
absl::Status CheckCondition(const Batch::Op& op,
                            const std::optional<KeyValue>& current);

// Returns the event that applying `op` at `revision` makes, given the key's
// `current` state: a put keeps the key's create_revision; deleting an absent
// key makes none.
std::optional<Event> EventFor(const Batch::Op& op,
                              std::optional<KeyValue> current,
                              int64_t revision);

}  // namespace jobset::store

#endif  // JOBSET_STORE_STORE_H_
