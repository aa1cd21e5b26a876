#include "store/rocksdb_store.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log.h"
#include "common/quote.h"
#include "common/status_macros.h"
#include "rocksdb/cache.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/file_system.h"
#include "rocksdb/options.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/table.h"
#include "rocksdb/write_batch.h"
#include "store/rocksdb_recovery.h"

namespace jobset::store {
namespace {

// The physical layout (store/README.md): user keys live under kDataPrefix,
// the store's own bookkeeping under kMetaPrefix.
constexpr char kDataPrefix[] = "d";
constexpr char kSchemaKey[] = "m/schema";
constexpr char kRevisionKey[] = "m/revision";

// A value on disk: format byte, create and mod revisions, a CRC-32 over all
// of it (with the checksum field zeroed), then the user's bytes.
constexpr char kValueFormat = 1;
constexpr size_t kHeaderBytes = 1 + 8 + 8 + 4;
constexpr size_t kChecksumOffset = 17;
// Commits a leader takes into one write.
constexpr size_t kMaxGroupWriters = 512;
constexpr size_t kMaxGroupBytes = 16 << 20;

void PutFixed(char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<char>(v >> (8 * i));
}

uint64_t GetFixed(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return v;
}

// The header of `kv`'s value on disk, the user's bytes to follow it.
std::array<char, kHeaderBytes> EncodeHeader(const KeyValue& kv) {
  std::array<char, kHeaderBytes> header{};
  header[0] = kValueFormat;
  PutFixed(&header[1], kv.create_revision, 8);
  PutFixed(&header[9], kv.mod_revision, 8);
  // Over the header with the checksum field zeroed, then the value.
  uLong crc =
      crc32(0, reinterpret_cast<const Bytef*>(header.data()), header.size());
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(kv.value.data()),
                kv.value.size());
  PutFixed(&header[kChecksumOffset], crc, 4);
  return header;
}

// Decodes `raw`, checking its checksum; the value is copied only when
// `with_value` (a caller that needs only the revisions skips it).
absl::StatusOr<KeyValue> Decode(absl::string_view key, absl::string_view raw,
                                absl::string_view path,
                                bool with_value = true) {
  auto corrupt = [&](absl::string_view why) {
    return absl::DataLossError(absl::StrCat(
        "store: corrupt value at key ", Quote(key), " in ", path, ": ", why));
  };
  if (raw.size() < kHeaderBytes) {
    return corrupt(absl::StrCat(raw.size(), " bytes, shorter than the ",
                                kHeaderBytes, "-byte header"));
  }
  if (raw[0] != kValueFormat) {
    return corrupt(
        absl::StrCat("unknown value format ",
                     static_cast<int>(static_cast<unsigned char>(raw[0]))));
  }
  // The checksum of `raw` with its checksum field zeroed, without a copy.
  constexpr Bytef kZeros[4] = {0, 0, 0, 0};
  const auto* bytes = reinterpret_cast<const Bytef*>(raw.data());
  uLong crc = crc32(0, bytes, kChecksumOffset);
  crc = crc32(crc, kZeros, sizeof(kZeros));
  crc = crc32(crc, bytes + kHeaderBytes, raw.size() - kHeaderBytes);
  const uint32_t want = GetFixed(raw.data() + kChecksumOffset, 4);
  if (static_cast<uint32_t>(crc) != want) return corrupt("checksum mismatch");
  KeyValue kv;
  kv.key = std::string(key);
  kv.create_revision = static_cast<int64_t>(GetFixed(raw.data() + 1, 8));
  kv.mod_revision = static_cast<int64_t>(GetFixed(raw.data() + 9, 8));
  if (with_value) kv.value = std::string(raw.substr(kHeaderBytes));
  return kv;
}

// `detail` follows RocksDB's message.
absl::Status FromRocksDb(const rocksdb::Status& s, absl::string_view what,
                         absl::string_view path,
                         absl::string_view detail = "") {
  if (s.ok()) return absl::OkStatus();
  const std::string message =
      absl::StrCat("store: ", what, " in ", path, ": ", s.ToString(), detail);
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsIOError() && absl::StrContains(s.ToString(), "lock")) {
    return absl::UnavailableError(absl::StrCat(
        message, " (is another jobsetd using this data directory?)"));
  }
  if (s.IsInvalidArgument() || s.IsNotSupported()) {
    return absl::FailedPreconditionError(message);
  }
  return absl::UnavailableError(message);
}

absl::StatusOr<int64_t> ParseCounter(absl::string_view raw,
                                     absl::string_view key,
                                     absl::string_view path) {
  int64_t v;
  if (!absl::SimpleAtoi(raw, &v) || v < 0) {
    return absl::DataLossError(absl::StrCat("store: key ", Quote(key), " in ",
                                            path, " holds ", Quote(raw),
                                            ", not a non-negative integer"));
  }
  return v;
}

// The store holds Secrets in plaintext, and RocksDB has no option for the
// modes of its files: they would take the umask's (0644). This file system
// makes every file RocksDB creates 0600 and every directory 0700 at once
// after creating it (inside a 0700 directory, so never readable by others
// in between), whatever the umask, for the life of the database (tables,
// logs and manifests come and go after Open).
class PrivateFileSystem : public rocksdb::FileSystemWrapper {
 public:
  using rocksdb::FileSystemWrapper::FileSystemWrapper;

  static constexpr mode_t kFileMode = 0600;
  static constexpr mode_t kDirMode = 0700;

  const char* Name() const override { return "JobsetPrivateFileSystem"; }

  rocksdb::IOStatus NewWritableFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    return Private(fname, kFileMode,
                   target()->NewWritableFile(fname, options, result, dbg));
  }
  rocksdb::IOStatus ReopenWritableFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    return Private(fname, kFileMode,
                   target()->ReopenWritableFile(fname, options, result, dbg));
  }
  rocksdb::IOStatus ReuseWritableFile(
      const std::string& fname, const std::string& old_fname,
      const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override {
    return Private(
        fname, kFileMode,
        target()->ReuseWritableFile(fname, old_fname, options, result, dbg));
  }
  rocksdb::IOStatus NewRandomRWFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSRandomRWFile>* result,
      rocksdb::IODebugContext* dbg) override {
    return Private(fname, kFileMode,
                   target()->NewRandomRWFile(fname, options, result, dbg));
  }
  rocksdb::IOStatus NewLogger(const std::string& fname,
                              const rocksdb::IOOptions& options,
                              std::shared_ptr<rocksdb::Logger>* result,
                              rocksdb::IODebugContext* dbg) override {
    return Private(fname, kFileMode,
                   target()->NewLogger(fname, options, result, dbg));
  }
  rocksdb::IOStatus LockFile(const std::string& fname,
                             const rocksdb::IOOptions& options,
                             rocksdb::FileLock** lock,
                             rocksdb::IODebugContext* dbg) override {
    return Private(fname, kFileMode,
                   target()->LockFile(fname, options, lock, dbg));
  }
  rocksdb::IOStatus CreateDir(const std::string& dirname,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override {
    return Private(dirname, kDirMode,
                   target()->CreateDir(dirname, options, dbg));
  }
  rocksdb::IOStatus CreateDirIfMissing(const std::string& dirname,
                                       const rocksdb::IOOptions& options,
                                       rocksdb::IODebugContext* dbg) override {
    return Private(dirname, kDirMode,
                   target()->CreateDirIfMissing(dirname, options, dbg));
  }

 private:
  static rocksdb::IOStatus Private(const std::string& path, mode_t mode,
                                   rocksdb::IOStatus created) {
    if (!created.ok()) return created;
    if (::chmod(path.c_str(), mode) != 0) {
      return rocksdb::IOStatus::IOError(
          absl::StrCat("cannot chmod ", absl::StrFormat("%o", mode), " ", path,
                       ": ", strerror(errno)));
    }
    return created;
  }
};

// The Env of every RocksDbStore: the default one over PrivateFileSystem.
// Never destroyed (a database keeps a pointer to it until it closes).
rocksdb::Env* PrivateEnv() {
  static rocksdb::Env* const env =
      rocksdb::NewCompositeEnv(
          std::make_shared<PrivateFileSystem>(rocksdb::FileSystem::Default()))
          .release();
  return env;
}

// Makes `dir` 0700 and every file directly in it 0600: a directory made by
// an older jobsetd (or by hand) under a looser umask is tightened.
absl::Status TightenModes(const std::string& dir) {
  if (::chmod(dir.c_str(), PrivateFileSystem::kDirMode) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("store: cannot chmod 700 ", dir, ": ", strerror(errno)));
  }
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    struct stat st;
    if (::lstat(entry.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        (st.st_mode & 077) == 0) {
      continue;
    }
    if (::chmod(entry.path().c_str(), PrivateFileSystem::kFileMode) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("store: cannot chmod 600 ", entry.path().string(), ": ",
                       strerror(errno)));
    }
  }
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("store: cannot list ", dir, ": ", error.message()));
  }
  return absl::OkStatus();
}

}  // namespace

// A Commit waiting in the queue; the leader fills in `result`.
struct RocksDbStore::Writer {
  const Batch* batch;
  absl::StatusOr<int64_t> result = absl::UnknownError("not committed");
  std::vector<Event> events;
  bool done = false;
};

absl::StatusOr<std::unique_ptr<RocksDbStore>> RocksDbStore::Open(
    const Options& options) {
  std::error_code error;
  std::filesystem::create_directories(options.path, error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("store: cannot create data directory ", options.path, ": ",
                     error.message()));
  }
  JOBSET_RETURN_IF_ERROR(TightenModes(options.path));
  // Declared before the database, so destroyed after it.
  std::unique_ptr<rocksdb::Env> env;
  if (options.file_system != nullptr) {
    env = rocksdb::NewCompositeEnv(
        std::make_shared<PrivateFileSystem>(options.file_system));
  }
  rocksdb::Options db_options;
  db_options.env = env != nullptr ? env.get() : PrivateEnv();
  db_options.create_if_missing = true;
  // RocksDB's aggressive consistency checks, and a failed write stops its
  // writes. Recovery replays the write-ahead log up to its first record
  // that does not read back whole (kPointInTimeRecovery, the default): a
  // torn tail after a crash, or damage; what it drops is reported
  // (RocksDbInfoLog, Recovery). The MANIFEST lists every closed log with its
  // synced size: one missing or cut short is an error, not a silent loss.
  db_options.paranoid_checks = true;
  db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  db_options.track_and_verify_wals_in_manifest = true;
  auto stop = std::make_shared<CommitStop>();
  db_options.listeners.push_back(
      std::make_shared<StopOnBackgroundError>(options.path, stop));
  // No LOG file: RocksDB's warnings go to jobsetd's log. A LOG file's writer
  // that failed once (a full disk) trips an assertion when the store closes
  // (WritableFileWriter, `sync_without_flush_called_`; Debian's librocksdb
  // keeps its assertions): tools/soak's disk_full saw jobsetd abort so.
  auto info_log = std::make_shared<RocksDbInfoLog>(nullptr);
  db_options.info_log = info_log;
  // A commit's keys come sorted and share prefixes ("djobs/<ns>/..."): with
  // a hint per prefix, each memtable insert starts where the last one ended.
  db_options.memtable_insert_with_hint_prefix_extractor.reset(
      rocksdb::NewCappedPrefixTransform(6));
  // The memtable is heap that grows with every write until it is flushed:
  // keep it small (jobsetd's own memory is its state, not recent writes).
  db_options.write_buffer_size = options.memtable_bytes;
  rocksdb::BlockBasedTableOptions table_options;
  table_options.block_cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  db_options.table_factory.reset(
      rocksdb::NewBlockBasedTableFactory(table_options));
  std::vector<std::pair<std::string, std::string>> unread;
  JOBSET_RETURN_IF_ERROR(
      CheckLogFollowsTables(db_options, options.path, kRevisionKey, &unread));
  rocksdb::DB* raw = nullptr;
  rocksdb::Status opened = rocksdb::DB::Open(db_options, options.path, &raw);
  if (!opened.ok()) {
    // RocksDB's message may not name the file it could not read (a damaged
    // MANIFEST: "Missing WAL", "checksum mismatch"); its warnings while it
    // tried, and the MANIFEST it read, do.
    std::string detail;
    for (const std::string& line : info_log->StopKeeping()) {
      absl::StrAppend(&detail, "; rocksdb: ", line);
    }
    if (opened.IsCorruption()) {
      // RocksDB may blame the MANIFEST for a table file it could not read.
      const std::string tables = DamagedTables(db_options, options.path);
      absl::StrAppend(&detail, " (RocksDB lists the store's files in ",
                      CurrentManifest(options.path),
                      tables.empty() ? "" : "; damaged table files: ", tables,
                      ")");
    }
    return FromRocksDb(opened, "open", options.path, detail);
  }
  std::unique_ptr<rocksdb::DB> db(raw);

  std::string value;
  rocksdb::Status s = db->Get(rocksdb::ReadOptions(), kSchemaKey, &value);
  if (s.IsNotFound()) {
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(rocksdb::ReadOptions()));
    it->SeekToFirst();
    if (it->Valid()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "store: ", options.path,
          " holds a database without a jobsetd schema key; it is not a "
          "jobsetd data directory"));
    }
    JOBSET_RETURN_IF_ERROR(FromRocksDb(it->status(), "scan", options.path));
    rocksdb::WriteBatch init;
    init.Put(kSchemaKey, absl::StrCat(kSchemaVersion));
    init.Put(kRevisionKey, "0");
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    JOBSET_RETURN_IF_ERROR(FromRocksDb(db->Write(write_options, &init),
                                       "initialize", options.path));
    value = absl::StrCat(kSchemaVersion);
  } else {
    JOBSET_RETURN_IF_ERROR(FromRocksDb(s, "read schema", options.path));
  }
  JOBSET_ASSIGN_OR_RETURN(int64_t schema,
                          ParseCounter(value, kSchemaKey, options.path));
  if (schema != kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "store: ", options.path, " has schema version ", schema,
        "; this jobsetd reads and writes version ", kSchemaVersion,
        (schema > kSchemaVersion ? " (was it written by a newer jobsetd?)"
                                 : "")));
  }
  JOBSET_RETURN_IF_ERROR(
      FromRocksDb(db->Get(rocksdb::ReadOptions(), kRevisionKey, &value),
                  "read revision", options.path));
  JOBSET_ASSIGN_OR_RETURN(int64_t revision,
                          ParseCounter(value, kRevisionKey, options.path));
  auto store = absl::WrapUnique(new RocksDbStore(options, std::move(env),
                                                 info_log, std::move(stop),
                                                 std::move(db), revision));
  JOBSET_RETURN_IF_ERROR(store->IndexRevisions());
  // How far it recovered, for the operator: after a crash, the last commit
  // that reached the disk; after damage, the last one before it.
  Recovery& recovery = store->recovery_;
  recovery.revision = revision;
  recovery.keys = store->revisions_.size() + store->corrupt_keys_.size();
  recovery.warnings = info_log->StopKeeping();
  for (auto& [name, warning] : unread) {
    // Unless RocksDB said so itself (clang 14 captures no structured
    // binding: a copy).
    const std::string file = name;
    if (std::none_of(
            recovery.warnings.begin(), recovery.warnings.end(),
            [&](const std::string& w) { return absl::StrContains(w, file); })) {
      JOBSET_LOG(WARNING) << "store: " << options.path << ": " << warning;
      recovery.warnings.push_back(std::move(warning));
    }
  }

  JOBSET_LOG(INFO) << "store: opened " << options.path << " at revision "
                   << revision << " (" << recovery.keys << " keys)";
  if (!recovery.warnings.empty()) {
    JOBSET_LOG(WARNING)
        << "store: " << options.path << " recovered to revision " << revision
        << " after RocksDB dropped what it could not read back (its "
           "warnings above): a torn record at the end of a write-ahead log "
           "was never acknowledged, damage anywhere else also lost the "
           "commits after it";
  }
  return store;
}

RocksDbStore::RocksDbStore(const Options& options,
                           std::unique_ptr<rocksdb::Env> env,
                           std::shared_ptr<RocksDbInfoLog> info_log,
                           std::shared_ptr<CommitStop> stop,
                           std::unique_ptr<rocksdb::DB> db, int64_t revision)
    : options_(options),
      env_(std::move(env)),
      info_log_(std::move(info_log)),
      stop_(std::move(stop)),
      db_(std::move(db)),
      history_(revision, options.history_events, options.history_bytes),
      revision_(revision) {}

RocksDbStore::~RocksDbStore() {
  // Commits hold no references past their return, so closing is safe here.
  db_->Close().PermitUncheckedError();
}

absl::Status RocksDbStore::IndexRevisions() {
  std::unique_ptr<rocksdb::Iterator> it(
      db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(kDataPrefix); it->Valid() && it->key().starts_with(kDataPrefix);
       it->Next()) {
    absl::string_view key(it->key().data(), it->key().size());
    key.remove_prefix(sizeof(kDataPrefix) - 1);
    absl::StatusOr<KeyValue> kv =
        Decode(key, absl::string_view(it->value().data(), it->value().size()),
               options_.path, /*with_value=*/false);
    if (kv.ok()) {
      revisions_[key] = {kv->create_revision, kv->mod_revision};
    } else {
      corrupt_keys_.emplace(key);
    }
  }
  return FromRocksDb(it->status(), "scan", options_.path);
}

absl::StatusOr<std::optional<KeyValue>> RocksDbStore::Read(
    absl::string_view key) {
  rocksdb::PinnableSlice raw;
  rocksdb::Status s =
      db_->Get(rocksdb::ReadOptions(), db_->DefaultColumnFamily(),
               absl::StrCat(kDataPrefix, key), &raw);
  if (s.IsNotFound()) return std::nullopt;
  JOBSET_RETURN_IF_ERROR(FromRocksDb(s, "read", options_.path));
  JOBSET_ASSIGN_OR_RETURN(
      KeyValue kv,
      Decode(key, absl::string_view(raw.data(), raw.size()), options_.path));
  return kv;
}

absl::StatusOr<std::optional<KeyValue>> RocksDbStore::Get(
    absl::string_view key) {
  return Read(key);
}

absl::StatusOr<ScanResult> RocksDbStore::Scan(absl::string_view prefix,
                                              absl::string_view start_after,
                                              size_t limit) {
  rocksdb::ReadOptions read_options;
  const rocksdb::Snapshot* snapshot = db_->GetSnapshot();
  absl::Cleanup release = [&] { db_->ReleaseSnapshot(snapshot); };
  read_options.snapshot = snapshot;

  ScanResult result;
  std::string value;
  JOBSET_RETURN_IF_ERROR(
      FromRocksDb(db_->Get(read_options, kRevisionKey, &value), "read revision",
                  options_.path));
  JOBSET_ASSIGN_OR_RETURN(result.revision,
                          ParseCounter(value, kRevisionKey, options_.path));

  const std::string data_prefix = absl::StrCat(kDataPrefix, prefix);
  const std::string after = absl::StrCat(kDataPrefix, start_after);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options));
  it->Seek(std::max(data_prefix, after));
  if (!start_after.empty() && it->Valid() && it->key() == after) it->Next();
  for (; it->Valid() && it->key().starts_with(data_prefix); it->Next()) {
    if (result.kvs.size() >= limit) {
      result.more = true;
      break;
    }
    absl::string_view key(it->key().data(), it->key().size());
    key.remove_prefix(sizeof(kDataPrefix) - 1);
    JOBSET_ASSIGN_OR_RETURN(
        KeyValue kv,
        Decode(key, absl::string_view(it->value().data(), it->value().size()),
               options_.path));
    result.kvs.push_back(std::move(kv));
  }
  JOBSET_RETURN_IF_ERROR(FromRocksDb(it->status(), "scan", options_.path));
  return result;
}

absl::StatusOr<int64_t> RocksDbStore::ReadAll(
    absl::string_view prefix,
    const std::function<absl::Status(int64_t revision)>& begin,
    const std::function<absl::Status(const KeyValue&)>& fn) {
  // One RocksDB snapshot for the revision and every key: m/revision is
  // written in the same batch as the data, so they agree.
  rocksdb::ReadOptions read_options;
  const rocksdb::Snapshot* snapshot = db_->GetSnapshot();
  absl::Cleanup release = [&] { db_->ReleaseSnapshot(snapshot); };
  read_options.snapshot = snapshot;
  std::string value;
  JOBSET_RETURN_IF_ERROR(
      FromRocksDb(db_->Get(read_options, kRevisionKey, &value), "read revision",
                  options_.path));
  JOBSET_ASSIGN_OR_RETURN(const int64_t revision,
                          ParseCounter(value, kRevisionKey, options_.path));
  JOBSET_RETURN_IF_ERROR(begin(revision));
  const std::string data_prefix = absl::StrCat(kDataPrefix, prefix);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(read_options));
  for (it->Seek(data_prefix); it->Valid() && it->key().starts_with(data_prefix);
       it->Next()) {
    absl::string_view key(it->key().data(), it->key().size());
    key.remove_prefix(sizeof(kDataPrefix) - 1);
    JOBSET_ASSIGN_OR_RETURN(
        KeyValue kv,
        Decode(key, absl::string_view(it->value().data(), it->value().size()),
               options_.path));
    JOBSET_RETURN_IF_ERROR(fn(kv));
  }
  JOBSET_RETURN_IF_ERROR(FromRocksDb(it->status(), "scan", options_.path));
  return revision;
}

absl::StatusOr<int64_t> RocksDbStore::Commit(const Batch& batch) {
  JOBSET_RETURN_IF_ERROR(ValidateBatch(batch));
  if (!batch.empty()) JOBSET_RETURN_IF_ERROR(stop_->Get());
  Writer self{.batch = &batch, .events = {}};
  mu_.Lock();
  if (batch.empty()) {
    const int64_t revision = revision_;
    mu_.Unlock();
    return revision;
  }
  writers_.push_back(&self);
  auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return self.done || writers_.front() == &self;
  };
  mu_.Await(absl::Condition(&ready));
  if (self.done) {
    mu_.Unlock();
    return std::move(self.result);
  }

  // This writer leads: it takes the queue's head as one group. Later arrivals
  // wait for the next leader, so the group is touched below without the lock.
  std::vector<Writer*> group;
  size_t bytes = 0;
  for (Writer* w : writers_) {
    if (group.size() >= kMaxGroupWriters || bytes >= kMaxGroupBytes) break;
    group.push_back(w);
    for (const Batch::Op& op : w->batch->ops()) {
      bytes += op.key.size() + (op.value ? op.value->size() : 0);
    }
  }
  const int64_t start = revision_;
  mu_.Unlock();
  const int64_t end = CommitGroup(group, start);
  mu_.Lock();
  for (Writer* w : group) {
    if (w->result.ok()) history_.Append(*w->result, std::move(w->events));
    w->done = true;
    writers_.pop_front();
  }
  if (end > start) ++writes_;
  revision_ = end;
  mu_.Unlock();
  return std::move(self.result);
}

int64_t RocksDbStore::CommitGroup(const std::vector<Writer*>& group,
                                  int64_t revision) {
  // The group's own writes, so that later batches see earlier ones (a batch
  // names each key once, so a group of one needs none).
  const bool use_overlay = group.size() > 1;
  absl::flat_hash_map<std::string, std::optional<KeyValue>> overlay;
  // A put needs only the old revisions, which revisions_ has; a delete's
  // event carries the old value, and a corrupt key is read to be refused.
  auto lookup =
      [&](const Batch::Op& op) -> absl::StatusOr<std::optional<KeyValue>> {
    auto it = overlay.find(op.key);
    if (it != overlay.end()) return it->second;
    if (!op.value.has_value() || corrupt_keys_.contains(op.key)) {
      return Read(op.key);
    }
    auto known = revisions_.find(op.key);
    if (known == revisions_.end()) return std::nullopt;
    KeyValue kv;
    kv.key = op.key;
    kv.create_revision = known->second.create;
    kv.mod_revision = known->second.mod;
    return kv;
  };

  const int64_t start = revision;
  // Sized up front (per op: the data prefix, key and value, the value's
  // header, and at most 16 bytes of type and lengths): a restart's batch is
  // megabytes, and growing it by doubling would copy it again and again.
  size_t reserve = 64;
  for (const Writer* w : group) {
    for (const Batch::Op& op : w->batch->ops()) {
      reserve += 2 * sizeof(kDataPrefix) + op.key.size() + 16 + kHeaderBytes +
                 (op.value ? op.value->size() : 0);
    }
  }
  rocksdb::WriteBatch write(reserve);
  for (Writer* w : group) {
    std::vector<std::optional<KeyValue>> current;
    current.reserve(w->batch->ops().size());
    w->events.reserve(w->batch->ops().size());
    absl::Status status;
    for (const Batch::Op& op : w->batch->ops()) {
      absl::StatusOr<std::optional<KeyValue>> kv = lookup(op);
      status = kv.ok() ? CheckCondition(op, *kv) : kv.status();
      if (!status.ok()) break;
      current.push_back(*std::move(kv));
    }
    if (!status.ok()) {
      w->result = status;
      continue;
    }
    ++revision;
    for (size_t i = 0; i < current.size(); ++i) {
      const Batch::Op& op = w->batch->ops()[i];
      std::optional<Event> event =
          EventFor(op, std::move(current[i]), revision);
      if (!event.has_value()) continue;
      // The key and value on disk, written into the batch in parts.
      const rocksdb::Slice key_parts[] = {rocksdb::Slice(kDataPrefix),
                                          rocksdb::Slice(op.key)};
      const rocksdb::SliceParts disk_key(key_parts, 2);
      if (event->type == Event::Type::kPut) {
        const std::array<char, kHeaderBytes> header = EncodeHeader(event->kv);
        const rocksdb::Slice value_parts[] = {
            rocksdb::Slice(header.data(), header.size()),
            rocksdb::Slice(event->kv.value)};
        write.Put(disk_key, rocksdb::SliceParts(value_parts, 2));
        if (use_overlay) overlay[op.key] = event->kv;
      } else {
        write.Delete(disk_key);
        if (use_overlay) overlay[op.key] = std::nullopt;
      }
      w->events.push_back(*std::move(event));
    }
    w->result = revision;
  }
  if (revision == start) return start;

  write.Put(kRevisionKey, absl::StrCat(revision));
  // In the log only: which revisions this write commits, so that the next
  // Open can check that the log follows on from the table files.
  write.PutLogData(RevisionsLogData(start + 1, revision));
  rocksdb::WriteOptions write_options;
  write_options.sync = options_.sync;
  // A commit queued before the store stopped is refused too.
  absl::Status status = stop_->Get();
  if (status.ok()) {
    const rocksdb::Status written = db_->Write(write_options, &write);
    status = FromRocksDb(written, "write", options_.path);
    if (!written.ok()) {
      // The batch may be in the log yet (written, not synced): no later
      // batch may take its revisions, so none is written at all.
      stop_->Set(absl::UnavailableError(absl::StrCat(
          "store: ", options_.path,
          " accepts no commits since a write failed: ", written.ToString(),
          "; reopen the store (restart jobsetd)")));
    }
  }
  if (status.ok()) {
    for (Writer* w : group) {
      if (!w->result.ok()) continue;
      for (const Event& e : w->events) {
        corrupt_keys_.erase(e.kv.key);
        if (e.type == Event::Type::kPut) {
          revisions_[e.kv.key] = {e.kv.create_revision, e.kv.mod_revision};
        } else {
          revisions_.erase(e.kv.key);
        }
      }
    }
    return revision;
  }
  for (Writer* w : group) {
    if (w->result.ok()) {
      w->result = status;
      w->events.clear();
    }
  }
  return start;
}

int64_t RocksDbStore::CurrentRevision() {
  absl::MutexLock lock(&mu_);
  return revision_;
}

absl::Status RocksDbStore::WriteFailure() { return stop_->Get(); }

int64_t RocksDbStore::WriteCount() {
  absl::MutexLock lock(&mu_);
  return writes_;
}

absl::StatusOr<std::vector<Event>> RocksDbStore::WaitForEvents(
    absl::string_view prefix, int64_t after_revision, absl::Time deadline,
    size_t max_events, int64_t* looked_at) {
  return history_.Wait(prefix, after_revision, deadline, max_events, looked_at);
}

}  // namespace jobset::store
