#ifndef JOBSET_STORE_FORWARDING_STORE_H_
#define JOBSET_STORE_FORWARDING_STORE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "store/store.h"

namespace jobset::store {

// A Store that passes every call to another. Wrappers that watch or change a
// few calls (metering, fault injection, timing) derive from it and override
// only those. Thread-safe when `inner` is; `inner` must outlive it.
class ForwardingStore : public Store {
 public:
  explicit ForwardingStore(Store* inner) : inner_(inner) {}

  absl::StatusOr<std::optional<KeyValue>> Get(absl::string_view key) override {
    return inner_->Get(key);
  }
  absl::StatusOr<ScanResult> Scan(absl::string_view prefix,
                                  absl::string_view start_after,
                                  size_t limit) override {
    return inner_->Scan(prefix, start_after, limit);
  }
  absl::StatusOr<int64_t> ReadAll(
      absl::string_view prefix,
      const std::function<absl::Status(int64_t revision)>& begin,
      const std::function<absl::Status(const KeyValue&)>& fn) override {
    return inner_->ReadAll(prefix, begin, fn);
  }
  absl::StatusOr<int64_t> Commit(const Batch& batch) override {
    return inner_->Commit(batch);
  }
  int64_t CurrentRevision() override { return inner_->CurrentRevision(); }
  CommitLimits Limits() const override { return inner_->Limits(); }
  using Store::WaitForEvents;
  absl::StatusOr<std::vector<Event>> WaitForEvents(
      absl::string_view prefix, int64_t after_revision, absl::Time deadline,
      size_t max_events, int64_t* looked_at) override {
    return inner_->WaitForEvents(prefix, after_revision, deadline, max_events,
                                 looked_at);
  }

 protected:
  Store* inner() const { return inner_; }

 private:
  Store* const inner_;
};

}  // namespace jobset::store

#endif  // JOBSET_STORE_FORWARDING_STORE_H_
