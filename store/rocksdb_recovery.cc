#include "store/rocksdb_recovery.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/log.h"
#include "rocksdb/db.h"
#include "rocksdb/sst_file_reader.h"
#include "rocksdb/wal_filter.h"
#include "rocksdb/write_batch.h"

namespace jobset::store {
namespace {

constexpr char kRevisionsTag[] = "jobsetd-revisions ";

const char* ReasonName(rocksdb::BackgroundErrorReason reason) {
  switch (reason) {
    case rocksdb::BackgroundErrorReason::kFlush:
    case rocksdb::BackgroundErrorReason::kFlushNoWAL:
      return "a flush";
    case rocksdb::BackgroundErrorReason::kCompaction:
      return "a compaction";
    case rocksdb::BackgroundErrorReason::kWriteCallback:
      return "a write";
    case rocksdb::BackgroundErrorReason::kMemTable:
      return "a memtable insert";
    case rocksdb::BackgroundErrorReason::kManifestWrite:
    case rocksdb::BackgroundErrorReason::kManifestWriteNoWAL:
      return "a MANIFEST write";
  }
  return "background work";
}

std::string Format(const char* format, va_list ap) {
  char buffer[512];
  va_list copy;
  va_copy(copy, ap);
  const int n = std::vsnprintf(buffer, sizeof(buffer), format, copy);
  va_end(copy);
  if (n < 0) return format;
  std::string line;
  if (static_cast<size_t>(n) < sizeof(buffer)) {
    line.assign(buffer, n);
  } else {
    line.resize(n + 1);
    std::vsnprintf(line.data(), line.size(), format, ap);
    line.resize(n);
  }
  while (!line.empty() && line.back() == '\n') line.pop_back();
  return line;
}

// RocksDB's log format (db/log_format.h, documented in its wiki "Write Ahead
// Log File Format"): 32 KiB blocks; a record is cut into fragments, each
// behind a 7-byte header; a block's last 1 to 6 bytes, too few for a header,
// are zeros.
constexpr uint64_t kLogBlockBytes = 32768;
constexpr uint64_t kLogHeaderBytes = 7;

// Returns where a record of `bytes` that starts at `offset` ends.
uint64_t LogRecordEnd(uint64_t offset, uint64_t bytes) {
  bool first = true;
  while (first || bytes > 0) {
    first = false;
    uint64_t in_block = offset % kLogBlockBytes;
    if (kLogBlockBytes - in_block < kLogHeaderBytes) {
      offset += kLogBlockBytes - in_block;  // The zeros.
      in_block = 0;
    }
    const uint64_t fragment =
        std::min(bytes, kLogBlockBytes - in_block - kLogHeaderBytes);
    offset += kLogHeaderBytes + fragment;
    bytes -= fragment;
  }
  return offset;
}

// What one write in the log says of revisions: the range its commit group
// took (RevisionsLogData), or, for a write without (the store's first, or
// one by a jobsetd from before the tag), the revision it set.
struct LoggedWrite {
  std::string file;
  bool tagged = false;
  int64_t first = 0;
  int64_t last = 0;
};

class WriteReader : public rocksdb::WriteBatch::Handler {
 public:
  explicit WriteReader(absl::string_view revision_key)
      : revision_key_(revision_key) {}

  rocksdb::Status PutCF(uint32_t column_family, const rocksdb::Slice& key,
                        const rocksdb::Slice& value) override {
    int64_t revision;
    if (column_family == 0 &&
        absl::string_view(key.data(), key.size()) == revision_key_ &&
        absl::SimpleAtoi(absl::string_view(value.data(), value.size()),
                         &revision)) {
      revision_ = revision;
    }
    return rocksdb::Status::OK();
  }
  rocksdb::Status DeleteCF(uint32_t, const rocksdb::Slice&) override {
    return rocksdb::Status::OK();
  }
  void LogData(const rocksdb::Slice& blob) override {
    absl::string_view text(blob.data(), blob.size());
    if (!absl::ConsumePrefix(&text, kRevisionsTag)) return;
    std::pair<absl::string_view, absl::string_view> parts =
        absl::StrSplit(text, ' ');
    int64_t first, last;
    if (absl::SimpleAtoi(parts.first, &first) &&
        absl::SimpleAtoi(parts.second, &last)) {
      ranges_.emplace_back(first, last);
    }
  }

  // Appends what the write said to `writes`.
  void AppendTo(const std::string& file, std::vector<LoggedWrite>* writes) {
    for (const auto& [first, last] : ranges_) {
      writes->push_back({file, true, first, last});
    }
    if (ranges_.empty() && revision_.has_value()) {
      writes->push_back({file, false, *revision_, *revision_});
    }
  }

 private:
  const absl::string_view revision_key_;
  std::vector<std::pair<int64_t, int64_t>> ranges_;
  std::optional<int64_t> revision_;
};

// Sees every write the read-only open would replay, keeps what it says of
// revisions and drops it: the read-only database then holds what the table
// files hold.
class ReplayRecorder : public rocksdb::WalFilter {
 public:
  explicit ReplayRecorder(absl::string_view revision_key)
      : revision_key_(revision_key) {}

  WalProcessingOption LogRecordFound(unsigned long long /*log_number*/,
                                     const std::string& log_file_name,
                                     const rocksdb::WriteBatch& batch,
                                     rocksdb::WriteBatch* /*new_batch*/,
                                     bool* /*batch_changed*/) override {
    WriteReader reader(revision_key_);
    batch.Iterate(&reader).PermitUncheckedError();
    reader.AppendTo(log_file_name, &writes_);
    // Records are read in order from the start of each log.
    if (ends_.empty() || ends_.back().first != log_file_name) {
      ends_.emplace_back(log_file_name, 0);
    }
    ends_.back().second =
        LogRecordEnd(ends_.back().second, batch.GetDataSize());
    return WalProcessingOption::kIgnoreCurrentRecord;
  }
  const char* Name() const override { return "JobsetReplayRecorder"; }

  const std::vector<LoggedWrite>& writes() const { return writes_; }
  // Each log replayed, with where its last record replayed ends.
  const std::vector<std::pair<std::string, uint64_t>>& ends() const {
    return ends_;
  }

 private:
  const absl::string_view revision_key_;
  std::vector<LoggedWrite> writes_;
  std::vector<std::pair<std::string, uint64_t>> ends_;
};

// Returns how many bytes of `file` after `offset` are not zero (zeros are
// what a preallocated or block-padded log holds past its records), or 0 when
// it cannot be read.
uint64_t BytesAfter(const std::string& file, uint64_t offset) {
  std::ifstream in(file, std::ios::binary);
  if (!in || !in.seekg(static_cast<std::streamoff>(offset))) return 0;
  uint64_t last_nonzero = 0;
  uint64_t at = 0;
  char buffer[4096];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      ++at;
      if (buffer[i] != 0) last_nonzero = at;
    }
  }
  return last_nonzero;
}

// Says nothing: the read-only open's warnings come again from the real one.
class QuietLog : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char* /*format*/, va_list /*ap*/) override {}
};

}  // namespace

void CommitStop::Set(absl::Status status) {
  absl::MutexLock lock(&mu_);
  if (status_.ok()) status_ = std::move(status);
}

absl::Status CommitStop::Get() {
  absl::MutexLock lock(&mu_);
  return status_;
}

void StopOnBackgroundError::OnBackgroundError(
    rocksdb::BackgroundErrorReason reason, rocksdb::Status* error) {
  stop_->Set(absl::UnavailableError(absl::StrCat(
      "store: ", path_, " accepts no commits since RocksDB stopped on ",
      ReasonName(reason), " that failed: ", error->ToString(),
      "; reopen the store (restart jobsetd)")));
}

void StopOnBackgroundError::OnErrorRecoveryBegin(
    rocksdb::BackgroundErrorReason /*reason*/, rocksdb::Status /*error*/,
    bool* auto_recovery) {
  *auto_recovery = false;
}

RocksDbInfoLog::RocksDbInfoLog(std::shared_ptr<rocksdb::Logger> file)
    : Logger(file != nullptr ? file->GetInfoLogLevel()
                             : rocksdb::InfoLogLevel::INFO_LEVEL),
      file_(std::move(file)) {}

RocksDbInfoLog::~RocksDbInfoLog() { Close().PermitUncheckedError(); }

void RocksDbInfoLog::Logv(const char* format, va_list ap) {
  if (file_ != nullptr) file_->Logv(format, ap);
}

void RocksDbInfoLog::Logv(const rocksdb::InfoLogLevel level, const char* format,
                          va_list ap) {
  if (level >= rocksdb::InfoLogLevel::WARN_LEVEL &&
      level <= rocksdb::InfoLogLevel::FATAL_LEVEL) {
    va_list copy;
    va_copy(copy, ap);
    std::string line = Format(format, copy);
    va_end(copy);
    JOBSET_LOG(WARNING) << "store: rocksdb: " << line;
    absl::MutexLock lock(&mu_);
    if (keeping_ && kept_.size() < kMaxKept) kept_.push_back(std::move(line));
  }
  if (file_ != nullptr) file_->Logv(level, format, ap);
}

void RocksDbInfoLog::LogHeader(const char* format, va_list ap) {
  if (file_ != nullptr) file_->LogHeader(format, ap);
}

void RocksDbInfoLog::Flush() {
  if (file_ != nullptr) file_->Flush();
}

size_t RocksDbInfoLog::GetLogFileSize() const {
  return file_ != nullptr ? file_->GetLogFileSize()
                          : kDoNotSupportGetLogFileSize;
}

std::vector<std::string> RocksDbInfoLog::StopKeeping() {
  absl::MutexLock lock(&mu_);
  keeping_ = false;
  return std::move(kept_);
}

rocksdb::Status RocksDbInfoLog::CloseImpl() {
  return file_ != nullptr ? file_->Close() : rocksdb::Status::OK();
}

std::string RevisionsLogData(int64_t first, int64_t last) {
  return absl::StrCat(kRevisionsTag, first, " ", last);
}

std::string CurrentManifest(const std::string& path) {
  std::ifstream in(absl::StrCat(path, "/CURRENT"));
  std::string name;
  if (!in || !std::getline(in, name)) return "";
  return name;
}

absl::Status CheckLogFollowsTables(
    const rocksdb::Options& options, const std::string& path,
    absl::string_view revision_key,
    std::vector<std::pair<std::string, std::string>>* unread) {
  if (!std::filesystem::exists(absl::StrCat(path, "/CURRENT"))) {
    return absl::OkStatus();  // A new store.
  }
  // Not while another process has the store open (a read-only open beside
  // a writer reads whatever it finds): that one's open reports it.
  rocksdb::FileLock* lock = nullptr;
  if (!options.env->LockFile(absl::StrCat(path, "/LOCK"), &lock).ok()) {
    return absl::OkStatus();
  }
  absl::Cleanup unlock = [&] {
    options.env->UnlockFile(lock).PermitUncheckedError();
  };
  ReplayRecorder recorder(revision_key);
  rocksdb::Options read_only = options;
  read_only.create_if_missing = false;
  read_only.wal_filter = &recorder;
  read_only.info_log = std::make_shared<QuietLog>();
  read_only.listeners.clear();
  rocksdb::DB* raw = nullptr;
  if (!rocksdb::DB::OpenForReadOnly(read_only, path, &raw).ok()) {
    return absl::OkStatus();
  }
  std::unique_ptr<rocksdb::DB> db(raw);
  std::string value;
  rocksdb::Status s =
      db->Get(rocksdb::ReadOptions(),
              rocksdb::Slice(revision_key.data(), revision_key.size()), &value);
  int64_t revision = 0;  // A store's history starts at 0.
  if (s.ok()) {
    if (!absl::SimpleAtoi(value, &revision)) return absl::OkStatus();
  } else if (!s.IsNotFound()) {
    return absl::OkStatus();
  }
  auto base = [](const std::string& file) {
    return std::filesystem::path(file).filename().string();
  };
  std::string source = "its table files";  // Where `revision` came from.
  for (const LoggedWrite& write : recorder.writes()) {
    if (write.tagged && write.first != revision + 1) {
      const std::string manifest = CurrentManifest(path);
      return absl::DataLossError(absl::StrCat(
          "store: ", path, " cannot be opened as it is: ", source,
          " reach revision ", revision, " and its write-ahead log ",
          base(write.file), " goes on at revision ", write.first,
          ": what held the commits between is missing (the MANIFEST, ",
          manifest.empty() ? "unreadable" : manifest,
          ", lost table files from its list, or a log was damaged or "
          "removed). RocksDB would open it and serve a state that never was "
          "(and delete the table files its MANIFEST does not list); restore a "
          "snapshot or a copy of the directory"));
    }
    revision = write.last;
    source = absl::StrCat("the writes in ", base(write.file));
  }
  for (const auto& [file, end] : recorder.ends()) {
    const uint64_t after = BytesAfter(file, end);
    if (after == 0) continue;
    unread->emplace_back(
        base(file),
        absl::StrCat(
            "write-ahead log ", base(file), ": RocksDB replays its first ", end,
            " bytes and stops there, before ", after,
            " more that do not read back as records of this log (a write torn "
            "at the end, or damage; commits in them are lost)"));
  }
  return absl::OkStatus();
}

std::string DamagedTables(const rocksdb::Options& options,
                          const std::string& path) {
  std::string damaged;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
    if (entry.path().extension() != ".sst") continue;
    rocksdb::SstFileReader reader(options);
    rocksdb::Status s = reader.Open(entry.path().string());
    if (s.ok()) s = reader.VerifyChecksum();
    if (s.ok()) continue;
    absl::StrAppend(&damaged, damaged.empty() ? "" : ", ",
                    entry.path().filename().string(), " (", s.ToString(), ")");
  }
  return damaged;
}

}  // namespace jobset::store
