#ifndef JOBSET_STORE_ETCD_STORE_H_
#define JOBSET_STORE_ETCD_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "store/history.h"
#include "store/lease_store.h"
#include "store/store.h"

namespace grpc {
class ClientContext;
}  // namespace grpc

namespace jobset::store {

// A Store on an etcd v3 cluster (etcd's gRPC API, store/etcd/rpc.proto).
//
// Every key lives at `prefix` + key. Revisions are etcd's: a commit's revision
// is its Txn's header revision, a key's mod_revision and create_revision are
// etcd's. Commit is one Txn whose compares are the batch's conditions
// (kAbsent: CREATE == 0, kRevision: MOD == revision); its failure branch reads
// the conditioned keys so that kAborted can name the one that failed. A batch
// larger than etcd's limits (max_txn_ops, max_request_bytes) is refused with
// kInvalidArgument before it is sent: callers split their batches.
//
// One background Watch stream over the prefix (with prev_kv, so a delete
// carries the value it removed) feeds a History, which serves WaitForEvents
// as in the other stores; after a stream break it resumes from the last
// revision it holds. When etcd has compacted revisions the watch had not yet
// received, the history is truncated there: older watchers get kOutOfRange
// and list again. Requests go to one endpoint at a time and move to the next
// on kUnavailable. Thread-safe.
class EtcdStore final : public LeaseStore {
 public:
  struct Options {
    // "http://HOST:PORT" (plaintext) or "https://HOST:PORT" (TLS with
    // ca_file, and cert_file/key_file when the cluster wants client certs).
    std::vector<std::string> endpoints = {};
    std::string ca_file = "";
    std::string cert_file = "";
    std::string key_file = "";
    // Every key is stored under this prefix.
    std::string prefix = "/jobset/";
    // How long a connection to one endpoint may take, and one request.
    absl::Duration dial_timeout = absl::Seconds(2);
    absl::Duration request_timeout = absl::Seconds(5);
    // etcd's --max-txn-ops and --max-request-bytes (its defaults).
    size_t max_txn_ops = 128;
    size_t max_request_bytes = 1536 * 1024;
    size_t history_events = 10'000;  // Events kept for resuming watches,
    size_t history_bytes = History::kDefaultMaxBytes;  // and their bytes.
  };

  // Connects, reads the current revision and starts the watch.
  // kInvalidArgument for bad options (naming the field), kUnavailable when no
  // endpoint answers.
  static absl::StatusOr<std::unique_ptr<EtcdStore>> Open(
      const Options& options);

  // Stops the watch thread (bounded by the request timeout).
  ~EtcdStore() override;

  absl::StatusOr<std::optional<KeyValue>> Get(absl::string_view key) override;
  absl::StatusOr<int64_t> ReadAll(
      absl::string_view prefix,
      const std::function<absl::Status(int64_t revision)>& begin,
      const std::function<absl::Status(const KeyValue&)>& fn) override;
  absl::StatusOr<ScanResult> Scan(absl::string_view prefix,
                                  absl::string_view start_after,
                                  size_t limit) override;
  absl::StatusOr<int64_t> Commit(const Batch& batch) override;
  // The revision up to which this store has either committed or watched
  // everything under its prefix, without asking etcd (callers such as the
  // API's JobSet counter call it per request): every event up to it is, or
  // is about to be, in the history. Other prefixes' writes advance etcd's
  // revision without advancing this one until the watch reports progress.
  int64_t CurrentRevision() override;
  // etcd's limits less room for one more compare and read (the leader's
  // fence) and for the Txn's own framing.
  CommitLimits Limits() const override;
  using Store::WaitForEvents;
  absl::StatusOr<std::vector<Event>> WaitForEvents(absl::string_view prefix,
                                                   int64_t after_revision,
                                                   absl::Time deadline,
                                                   size_t max_events,
                                                   int64_t* looked_at) override;

  // Asks etcd to compact its history up to `revision` (tests, operators).
  absl::Status Compact(int64_t revision);

  // LeaseStore, on etcd's leases; each request goes to the endpoints as
  // every request does. KeepAliveLease's `timeout` bounds each member: a
  // renewal sent while etcd elects a new raft leader can hang in the member
  // it reached for seconds, and a leader's lease must not. The fence is a
  // compare in the same Txn as the commit.
  absl::StatusOr<int64_t> GrantLease(absl::Duration ttl) override;
  absl::StatusOr<absl::Duration> KeepAliveLease(
      int64_t id, absl::Duration timeout = absl::ZeroDuration()) override;
  absl::Status RevokeLease(int64_t id) override;
  absl::StatusOr<KeyValue> CreateWithLease(absl::string_view key,
                                           absl::string_view value,
                                           int64_t lease) override;
  void SetFence(std::string key, int64_t epoch,
                std::function<void(const absl::Status&)> on_lost) override;

  // How many times the watch stream was (re)started; for tests.
  int64_t WatchStarts();

 private:
  struct Connection;

  EtcdStore(const Options& options,
            std::vector<std::unique_ptr<Connection>> connections);

  // Runs `rpc(connection, context)` on one endpoint, moving on to the next
  // while it answers kUnavailable. With `resend` false a request that may
  // have reached an endpoint is not sent again: the answer is kUnavailable
  // and `*maybe_applied` is set.
  template <typename Rpc>
  absl::Status Call(absl::string_view what, Rpc rpc, bool resend = true,
                    bool* maybe_applied = nullptr);
  // The current revision, read from etcd.
  absl::StatusOr<int64_t> ReadRevision();
  // One Txn for `batch`; `*maybe_applied` as Call's.
  absl::StatusOr<int64_t> CommitOnce(const Batch& batch, bool* maybe_applied);
  // After an answer lost in transit: the revision `batch` was applied at, or
  // nullopt if it was not.
  absl::StatusOr<std::optional<int64_t>> AppliedRevision(const Batch& batch);
  // The body of the watch thread.
  void WatchLoop();
  // Runs one watch stream from `start` until it breaks or the store stops.
  // Returns how it ended.
  absl::Status WatchOnce(Connection& conn, int64_t start);
  // The answer to a commit whose fence failed; calls on_fence_lost_.
  absl::Status LostFence(absl::string_view key, int64_t epoch,
                         int64_t revision);
  // Records that every event up to `revision` has been watched.
  void Watched(int64_t revision);

  const Options options_;
  const std::string range_end_;  // The end of the key range under prefix.
  std::vector<std::unique_ptr<Connection>> connections_;

  absl::Mutex mu_;
  size_t current_ ABSL_GUARDED_BY(mu_) = 0;  // The endpoint tried first.
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* watch_context_ ABSL_GUARDED_BY(mu_) = nullptr;
  int64_t written_ ABSL_GUARDED_BY(mu_) = 0;  // Highest changing commit.
  int64_t watched_ ABSL_GUARDED_BY(mu_) = 0;  // Watch is complete to here.
  int64_t watch_starts_ ABSL_GUARDED_BY(mu_) = 0;
  // The leadership every commit is fenced on (empty key: none).
  std::string fence_key_ ABSL_GUARDED_BY(mu_);
  int64_t fence_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<void(const absl::Status&)> on_fence_lost_ ABSL_GUARDED_BY(mu_);

  std::unique_ptr<History> history_;
  std::thread watcher_;
};

}  // namespace jobset::store

#endif  // JOBSET_STORE_ETCD_STORE_H_
