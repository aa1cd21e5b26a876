#ifndef JOBSET_STORE_LEASE_STORE_H_
#define JOBSET_STORE_LEASE_STORE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "store/store.h"

namespace jobset::store {

// A Store that also has leases and a fence on its commits: what a leader
// election needs (scheduler/ha/leader_election.h) and nothing of how a
// backend provides it. EtcdStore implements it with etcd's leases and Txn
// compares. Implementations are thread-safe.
class LeaseStore : public Store {
 public:
  // Returns a new lease's ID; the backend may raise a short `ttl` to its
  // minimum.
  virtual absl::StatusOr<int64_t> GrantLease(absl::Duration ttl) = 0;
  // Renews lease `id` once and returns the TTL granted again; kNotFound once
  // the lease has expired or was revoked. Each server asked gets `timeout`
  // (zero: the store's request timeout) to answer.
  virtual absl::StatusOr<absl::Duration> KeepAliveLease(
      int64_t id, absl::Duration timeout = absl::ZeroDuration()) = 0;
  // Ends lease `id` (its keys go with it).
  virtual absl::Status RevokeLease(int64_t id) = 0;

  // Writes `value` at `key`, attached to `lease` (the key goes when the
  // lease does), if `key` is absent; returns the key as it is now: ours, or
  // the one that was there.
  virtual absl::StatusOr<KeyValue> CreateWithLease(absl::string_view key,
                                                   absl::string_view value,
                                                   int64_t lease) = 0;
  // Fences every later Commit on `key` still existing with create_revision
  // `epoch`, in the same transaction: a Commit whose fence fails applies
  // nothing, returns kFailedPrecondition ("not the leader") and calls
  // `on_lost` (once, on the committing thread; it must not commit).
  virtual void SetFence(std::string key, int64_t epoch,
                        std::function<void(const absl::Status&)> on_lost) = 0;
};

}  // namespace jobset::store

#endif  // JOBSET_STORE_LEASE_STORE_H_
