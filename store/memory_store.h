#ifndef JOBSET_STORE_MEMORY_STORE_H_
#define JOBSET_STORE_MEMORY_STORE_H_

#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "store/history.h"
#include "store/store.h"

namespace jobset::store {

// A Store held in memory, for tests: the same contract as RocksDbStore
// (store_contract_test.cc holds both to it), nothing survives the object.
// Thread-safe.
class MemoryStore final : public Store {
 public:
  // Keeps `history_events` events and `history_bytes` bytes of history
  // (history.h).
  explicit MemoryStore(size_t history_events = 10'000,
                       size_t history_bytes = History::kDefaultMaxBytes);

  absl::StatusOr<std::optional<KeyValue>> Get(absl::string_view key) override;
  absl::StatusOr<int64_t> ReadAll(
      absl::string_view prefix,
      const std::function<absl::Status(int64_t revision)>& begin,
      const std::function<absl::Status(const KeyValue&)>& fn) override;
  absl::StatusOr<ScanResult> Scan(absl::string_view prefix,
                                  absl::string_view start_after,
                                  size_t limit) override;
  absl::StatusOr<int64_t> Commit(const Batch& batch) override;
  int64_t CurrentRevision() override;
  CommitLimits Limits() const override;
  // Makes Commit refuse batches over `limits`, as etcd does (tests of the
  // callers that split their batches).
  void SetLimits(const CommitLimits& limits);
  using Store::WaitForEvents;
  absl::StatusOr<std::vector<Event>> WaitForEvents(absl::string_view prefix,
                                                   int64_t after_revision,
                                                   absl::Time deadline,
                                                   size_t max_events,
                                                   int64_t* looked_at) override;

 private:
  absl::Mutex mu_;
  std::map<std::string, KeyValue, std::less<>> data_ ABSL_GUARDED_BY(mu_);
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
  mutable absl::Mutex limits_mu_;
  CommitLimits limits_ ABSL_GUARDED_BY(limits_mu_);
  History history_;
};

}  // namespace jobset::store

#endif  // JOBSET_STORE_MEMORY_STORE_H_
