#ifndef JOBSET_STORE_ROCKSDB_STORE_H_
#define JOBSET_STORE_ROCKSDB_STORE_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "store/history.h"
#include "store/store.h"

namespace rocksdb {
class DB;
class Env;
class FileSystem;
}  // namespace rocksdb

namespace jobset::store {

class CommitStop;
class RocksDbInfoLog;

// The durable Store: an embedded RocksDB database in one directory.
//
// Commit returns only after its batch is in RocksDB's write-ahead log and,
// with `sync` (the default), fsync'd. Concurrent commits are grouped (the
// LevelDB writer-queue pattern): the first waiting writer checks every queued
// batch's conditions in order and writes all of them with one synced RocksDB
// write, so many writers share one fsync. The on-disk layout (store/README.md)
// carries a schema version checked at Open, and every value carries a
// checksum checked on every read.
//
// After a write fails, or RocksDB reports a background error (a flush or
// compaction that could not write), the store acknowledges no commit until
// it is reopened: every later Commit is kUnavailable naming the first
// error. Reads go on (they serve what was written before). Open refuses a
// store whose write-ahead log does not follow on from its table files
// (rocksdb_recovery.h), and logs the revision it recovered to and what
// RocksDB dropped to reach it (recovery()). Thread-safe.
class RocksDbStore final : public Store {
 public:
  // The on-disk layout version this build reads and writes.
  static constexpr int kSchemaVersion = 2;

  // The defaults of Options' memory bounds.
  static constexpr size_t kDefaultMemtableBytes = 4 << 20;
  static constexpr size_t kDefaultBlockCacheBytes = 8 << 20;

  struct Options {
    std::string path;  // The database directory; created if missing.
    // fsync every commit before acknowledging it. Only benchmarks turn this
    // off: without it a power loss can drop acknowledged writes (a process
    // crash cannot).
    bool sync = true;
    size_t history_events = 10'000;  // Events kept for resuming watches,
    size_t history_bytes = History::kDefaultMaxBytes;  // and their bytes.
    // Bytes of writes RocksDB gathers in memory (its memtable) before it
    // writes them to a table file. RocksDB's default, 64 MiB, made the
    // memtable the part of jobsetd's heap that grew with every write until
    // it held 64 MiB (docs/benchmarks.md, "What holds jobsetd's memory").
    size_t memtable_bytes = kDefaultMemtableBytes;
    // RocksDB's cache of table blocks read back (its own default is 8 MiB
    // as well; set here so that the bound is ours).
    size_t block_cache_bytes = kDefaultBlockCacheBytes;
    // For tests: the file system under the store's own (which makes its
    // files private), e.g. store/fault_file_system.h's; null: the machine's.
    std::shared_ptr<rocksdb::FileSystem> file_system = nullptr;
  };

  // What Open found.
  struct Recovery {
    int64_t revision = 0;  // The revision of the last commit recovered.
    size_t keys = 0;       // The keys stored at it.
    // RocksDB's warnings while it recovered, in its words: above all the
    // write-ahead log records it dropped to reach a consistent state ("...
    // dropping N bytes; Corruption: ..."). A torn record at the end of a log
    // is a commit that was never acknowledged (it was not synced); a damaged
    // one anywhere else also loses every commit after it. Empty after a
    // clean shutdown or a power cut that tore nothing.
    std::vector<std::string> warnings;
  };

  // Opens (or creates) the store. kFailedPrecondition if the directory holds
  // another schema version or something that is not a jobsetd store;
  // kDataLoss, naming the damaged file, if it is corrupt; kUnavailable if
  // another process has it open.
  static absl::StatusOr<std::unique_ptr<RocksDbStore>> Open(
      const Options& options);

  ~RocksDbStore() override;

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
  using Store::WaitForEvents;
  absl::StatusOr<std::vector<Event>> WaitForEvents(absl::string_view prefix,
                                                   int64_t after_revision,
                                                   absl::Time deadline,
                                                   size_t max_events,
                                                   int64_t* looked_at) override;

  // How many synced RocksDB writes the commits so far took (commits minus
  // this is what group commit saved).
  int64_t WriteCount();

  // What Open recovered.
  const Recovery& recovery() const { return recovery_; }

  // Returns the error that stopped commits (kUnavailable), or OK while
  // they go on.
  absl::Status WriteFailure();

 private:
  struct Writer;

  RocksDbStore(const Options& options, std::unique_ptr<rocksdb::Env> env,
               std::shared_ptr<RocksDbInfoLog> info_log,
               std::shared_ptr<CommitStop> stop,
               std::unique_ptr<rocksdb::DB> db, int64_t revision);

  // Fills revisions_ and corrupt_keys_ from every stored key (Open).
  absl::Status IndexRevisions();
  // Reads and decodes the data key `key` (without the data prefix).
  absl::StatusOr<std::optional<KeyValue>> Read(absl::string_view key);
  // As the group's leader: checks and writes the batches of `group`, which
  // start after `revision`, and fills in their results.
  // Returns the last revision it committed (`revision` when none).
  int64_t CommitGroup(const std::vector<Writer*>& group, int64_t revision);

  const Options options_;
  // Outlive db_: the Env of a store given a file system, RocksDB's info log,
  // and the error that stopped commits (set by a failed write or by
  // RocksDB's report of a background error).
  const std::unique_ptr<rocksdb::Env> env_;
  const std::shared_ptr<RocksDbInfoLog> info_log_;
  const std::shared_ptr<CommitStop> stop_;
  const std::unique_ptr<rocksdb::DB> db_;
  History history_;
  Recovery recovery_;

  // Every live key's revisions, so that a put needs no read (a delete still
  // reads the old value, which its event carries). Keys whose value did not
  // decode at Open are in corrupt_keys_ instead, and are read, and refused,
  // as before. Used only by Open and by the commit leader (one at a time).
  struct Revisions {
    int64_t create = 0;
    int64_t mod = 0;
  };
  absl::flat_hash_map<std::string, Revisions> revisions_;
  absl::flat_hash_set<std::string> corrupt_keys_;

  absl::Mutex mu_;
  std::deque<Writer*> writers_ ABSL_GUARDED_BY(mu_);  // Front leads.
  int64_t revision_ ABSL_GUARDED_BY(mu_);
  int64_t writes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace jobset::store

#endif  // JOBSET_STORE_ROCKSDB_STORE_H_
