#ifndef JOBSET_STORE_ROCKSDB_RECOVERY_H_
#define JOBSET_STORE_ROCKSDB_RECOVERY_H_

// RocksDbStore's guards around RocksDB's own recovery and failures (part of
// rocksdb_store; docs/store.md, "Durability under faults"): what stops its
// commits after a failure, what reports RocksDB's warnings, and the check
// that a store's write-ahead log follows on from its table files.

#include <cstdarg>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/env.h"
#include "rocksdb/listener.h"
#include "rocksdb/options.h"

namespace jobset::store {

// The first error after which a store acknowledges no commit: a write that
// failed, or a background error RocksDB reported. Thread-safe.
class CommitStop {
 public:
  // Keeps `status` unless an earlier error is kept.
  void Set(absl::Status status);
  // OK while commits may go on.
  absl::Status Get();

 private:
  absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

// Stops a store's commits (`stop`) when RocksDB reports a background error,
// and turns RocksDB's own recovery from it off. RocksDB stops writes itself
// on most errors (hard ones) but not all (a compaction out of space is a
// soft one), and it resumes on its own after an out-of-space error once a
// flush succeeds. A store that resumed could hand a revision it gave a
// failed batch, which may yet be in the write-ahead log, to another; and a
// disk that failed once is not to be trusted until someone looks. Reopening
// the store recovers from the log. Thread-safe.
class StopOnBackgroundError : public rocksdb::EventListener {
 public:
  StopOnBackgroundError(std::string path, std::shared_ptr<CommitStop> stop)
      : path_(std::move(path)), stop_(std::move(stop)) {}

  void OnBackgroundError(rocksdb::BackgroundErrorReason reason,
                         rocksdb::Status* error) override;
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason reason,
                            rocksdb::Status error,
                            bool* auto_recovery) override;

 private:
  const std::string path_;
  const std::shared_ptr<CommitStop> stop_;
};

// RocksDB's info log: its LOG file as before (when there is one), and its
// warnings and errors also in jobsetd's log (common/log.h). Until
// StopKeeping() it also keeps them: what recovery dropped. Thread-safe.
class RocksDbInfoLog : public rocksdb::Logger {
 public:
  explicit RocksDbInfoLog(std::shared_ptr<rocksdb::Logger> file);
  ~RocksDbInfoLog() override;

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override;
  void Logv(const rocksdb::InfoLogLevel level, const char* format,
            va_list ap) override;
  void LogHeader(const char* format, va_list ap) override;
  void Flush() override;
  size_t GetLogFileSize() const override;

  // Returns the warnings kept so far and keeps no more.
  std::vector<std::string> StopKeeping();

 protected:
  rocksdb::Status CloseImpl() override;

 private:
  static constexpr size_t kMaxKept = 32;

  const std::shared_ptr<rocksdb::Logger> file_;
  absl::Mutex mu_;
  bool keeping_ ABSL_GUARDED_BY(mu_) = true;
  std::vector<std::string> kept_ ABSL_GUARDED_BY(mu_);
};

// The blob every write of a commit group carries in the write-ahead log
// (WriteBatch::PutLogData: in the log only): the revisions it commits.
std::string RevisionsLogData(int64_t first, int64_t last);

// Checks, before the store at `path` opens (RocksDB deletes table files its
// MANIFEST does not list when it opens), that its write-ahead log starts
// where its table files end: the first revision the log replays follows the
// revision the tables hold, and each write the next. A MANIFEST that lost
// its last records (a damaged length reads as a torn tail, which RocksDB
// skips without a word) lists too few table files: RocksDB would open the
// tables it lists, replay the log on top and serve a state that never was.
// kDataLoss naming the files then.
//
// Also adds to `unread` each log (its name, and a warning) that holds bytes
// after the last record RocksDB replays from it: a torn write at its end
// (RocksDB reports that itself), or a damaged record type, which reads as
// the end of the log (a record of an older one): RocksDB stops there without
// a word.
//
// Opens the database read-only with `options` (and its own WAL filter and
// log); skips the checks (OK) where that cannot be done, and leaves the
// errors to the real open.
absl::Status CheckLogFollowsTables(
    const rocksdb::Options& options, const std::string& path,
    absl::string_view revision_key,
    std::vector<std::pair<std::string, std::string>>* unread);

// Names each table file in `path` that does not read back whole (its
// footer, properties or any block fails to parse or its checksum), with
// RocksDB's reason, for an error from an open that failed: RocksDB's own
// message may name the MANIFEST for them.
std::string DamagedTables(const rocksdb::Options& options,
                          const std::string& path);

// The MANIFEST that the store at `path` lists its files in (what CURRENT
// names), or "" when it cannot be read.
std::string CurrentManifest(const std::string& path);

}  // namespace jobset::store

#endif  // JOBSET_STORE_ROCKSDB_RECOVERY_H_
