#include "store/fault_file_system.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace jobset::store {
namespace {

using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;

// Files kept aside (deleted or renamed over, their directory not yet synced)
// are named so in their own directory, and left out of listings.
constexpr char kKeptPrefix[] = ".faultfs-";

// One spelling per path: RocksDB joins "dir/" + name, and a test's directory
// may end in a slash.
std::string Normalize(absl::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  if (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

// The directory and the name of `path` (normalized).
std::pair<std::string, std::string> Split(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  if (slash == 0) return {"/", path.substr(1)};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? absl::StrCat("/", name) : absl::StrCat(dir, "/", name);
}

bool IsKept(absl::string_view name) {
  return absl::StartsWith(name, kKeptPrefix);
}

// RocksDB's POSIX file system does not truncate by name.
IOStatus TruncateFile(const std::string& path, uint64_t size) {
  if (::truncate(path.c_str(), static_cast<off_t>(size)) == 0) {
    return IOStatus::OK();
  }
  return IOStatus::IOError(
      absl::StrCat("truncate of ", path, ": ", std::strerror(errno)));
}

}  // namespace

// A file opened for writing: reports what it wrote and synced.
class FaultFileSystem::File : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  File(FaultFileSystem* fs, std::string path, uint64_t size,
       std::unique_ptr<rocksdb::FSWritableFile> target)
      : FSWritableFileOwnerWrapper(std::move(target)),
        fs_(fs),
        path_(std::move(path)),
        size_(size) {}

  IOStatus Append(const Slice& data, const IOOptions& options,
                  IODebugContext* dbg) override {
    IOStatus s = fs_->Admit(OpKind::kWrite, "write to", path_);
    if (s.ok()) s = target()->Append(data, options, dbg);
    if (s.ok()) Grew(size_ + data.size());
    return s;
  }
  IOStatus Append(const Slice& data, const IOOptions& options,
                  const rocksdb::DataVerificationInfo& info,
                  IODebugContext* dbg) override {
    IOStatus s = fs_->Admit(OpKind::kWrite, "write to", path_);
    if (s.ok()) s = target()->Append(data, options, info, dbg);
    if (s.ok()) Grew(size_ + data.size());
    return s;
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset,
                            const IOOptions& options,
                            IODebugContext* dbg) override {
    IOStatus s = fs_->Admit(OpKind::kWrite, "write to", path_);
    if (s.ok()) s = target()->PositionedAppend(data, offset, options, dbg);
    if (s.ok()) Grew(std::max<uint64_t>(size_, offset + data.size()));
    return s;
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset,
                            const IOOptions& options,
                            const rocksdb::DataVerificationInfo& info,
                            IODebugContext* dbg) override {
    IOStatus s = fs_->Admit(OpKind::kWrite, "write to", path_);
    if (s.ok()) {
      s = target()->PositionedAppend(data, offset, options, info, dbg);
    }
    if (s.ok()) Grew(std::max<uint64_t>(size_, offset + data.size()));
    return s;
  }
  IOStatus Truncate(uint64_t size, const IOOptions& options,
                    IODebugContext* dbg) override {
    IOStatus s = fs_->Admit(OpKind::kOther, "truncate of", path_);
    if (s.ok()) s = target()->Truncate(size, options, dbg);
    if (s.ok()) {
      size_ = size;
      fs_->Truncated(path_, size);
    }
    return s;
  }
  IOStatus Sync(const IOOptions& options, IODebugContext* dbg) override {
    // What was written before the sync began is what it makes durable.
    const uint64_t size = size_;
    IOStatus s = fs_->Admit(OpKind::kSync, "sync of", path_);
    if (s.ok()) s = target()->Sync(options, dbg);
    if (s.ok()) fs_->Synced(path_, size);
    return s;
  }
  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
    const uint64_t size = size_;
    IOStatus s = fs_->Admit(OpKind::kSync, "sync of", path_);
    if (s.ok()) s = target()->Fsync(options, dbg);
    if (s.ok()) fs_->Synced(path_, size);
    return s;
  }
  // sync_file_range makes nothing durable (no metadata, no device cache):
  // the range stays unsynced.
  IOStatus RangeSync(uint64_t offset, uint64_t nbytes, const IOOptions& options,
                     IODebugContext* dbg) override {
    IOStatus s = fs_->Admit(OpKind::kOther, "range sync of", path_);
    if (s.ok()) s = target()->RangeSync(offset, nbytes, options, dbg);
    return s;
  }
  IOStatus Flush(const IOOptions& options, IODebugContext* dbg) override {
    IOStatus s = fs_->Powered("flush of", path_);
    if (s.ok()) s = target()->Flush(options, dbg);
    return s;
  }
  // Closes the file whatever the power (its descriptor must not leak), and
  // says so when it is cut.
  IOStatus Close(const IOOptions& options, IODebugContext* dbg) override {
    IOStatus s = target()->Close(options, dbg);
    IOStatus powered = fs_->Powered("close of", path_);
    return powered.ok() ? s : powered;
  }

 private:
  void Grew(uint64_t size) {
    size_ = size;
    fs_->Wrote(path_, size);
  }

  FaultFileSystem* const fs_;
  const std::string path_;
  // RocksDB may sync a file from another thread than the one writing it.
  std::atomic<uint64_t> size_;
};

// A directory: its Fsync makes the names changed in it durable.
class FaultFileSystem::Directory : public rocksdb::FSDirectoryWrapper {
 public:
  Directory(FaultFileSystem* fs, std::string path,
            std::unique_ptr<rocksdb::FSDirectory> target)
      : FSDirectoryWrapper(std::move(target)),
        fs_(fs),
        path_(std::move(path)) {}

  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
    const int64_t covered = fs_->DirectorySyncStarts();
    IOStatus s = fs_->Admit(OpKind::kSync, "fsync of directory", path_);
    if (s.ok()) s = FSDirectoryWrapper::Fsync(options, dbg);
    if (s.ok()) fs_->DirectorySynced(path_, covered);
    return s;
  }
  IOStatus FsyncWithDirOptions(
      const IOOptions& options, IODebugContext* dbg,
      const rocksdb::DirFsyncOptions& dir_options) override {
    const int64_t covered = fs_->DirectorySyncStarts();
    IOStatus s = fs_->Admit(OpKind::kSync, "fsync of directory", path_);
    if (s.ok()) {
      s = FSDirectoryWrapper::FsyncWithDirOptions(options, dbg, dir_options);
    }
    if (s.ok()) fs_->DirectorySynced(path_, covered);
    return s;
  }

 private:
  FaultFileSystem* const fs_;
  const std::string path_;
};

FaultFileSystem::FaultFileSystem(std::shared_ptr<rocksdb::FileSystem> base)
    : FileSystemWrapper(std::move(base)) {}

void FaultFileSystem::InjectFault(const Fault& fault) {
  absl::MutexLock lock(&mu_);
  fault_ = fault;
  fault_seen_ = 0;
  fired_.reset();
}

void FaultFileSystem::ClearFault() {
  absl::MutexLock lock(&mu_);
  fault_.reset();
  fault_seen_ = 0;
  fired_.reset();
}

std::optional<std::string> FaultFileSystem::FaultFired() {
  absl::MutexLock lock(&mu_);
  return fired_;
}

void FaultFileSystem::CutPower() {
  absl::MutexLock lock(&mu_);
  power_cut_ = true;
}

void FaultFileSystem::CutPowerAt(int64_t n) {
  absl::MutexLock lock(&mu_);
  cut_at_ = operations_ + std::max<int64_t>(n, 1);
}

bool FaultFileSystem::PowerIsCut() {
  absl::MutexLock lock(&mu_);
  return power_cut_;
}

int64_t FaultFileSystem::Operations() {
  absl::MutexLock lock(&mu_);
  return operations_;
}

IOStatus FaultFileSystem::Admit(OpKind kind, const char* verb,
                                const std::string& path) {
  absl::MutexLock lock(&mu_);
  if (power_cut_) {
    return IOStatus::IOError(absl::StrCat("power cut: ", verb, " ", path));
  }
  ++operations_;
  if (cut_at_ != 0 && operations_ >= cut_at_) {
    power_cut_ = true;
    cut_at_ = 0;
    return IOStatus::IOError(absl::StrCat("power cut: ", verb, " ", path));
  }
  if (!fault_.has_value()) return IOStatus::OK();
  bool fail = fired_.has_value() && fault_->sticky;
  if (!fired_.has_value() &&
      ((kind == OpKind::kWrite && fault_->op == Fault::Op::kWrite) ||
       (kind == OpKind::kSync && fault_->op == Fault::Op::kSync)) &&
      ++fault_seen_ == fault_->nth) {
    fired_ = absl::StrCat(verb, " ", path);
    fail = true;
  }
  if (!fail) return IOStatus::OK();
  const std::string message = absl::StrCat("injected fault: ", verb, " ", path);
  return fault_->error == Error::kNoSpace ? IOStatus::NoSpace(message)
                                          : IOStatus::IOError(message);
}

IOStatus FaultFileSystem::Powered(const char* verb, const std::string& path) {
  absl::MutexLock lock(&mu_);
  if (!power_cut_) return IOStatus::OK();
  return IOStatus::IOError(absl::StrCat("power cut: ", verb, " ", path));
}

void FaultFileSystem::Wrote(const std::string& path, uint64_t size) {
  absl::MutexLock lock(&mu_);
  // A file renamed while open is no longer kept under its old name.
  auto it = written_.find(path);
  if (it != written_.end()) it->second.size = size;
}

void FaultFileSystem::Truncated(const std::string& path, uint64_t size) {
  absl::MutexLock lock(&mu_);
  auto it = written_.find(path);
  if (it == written_.end()) return;
  it->second.size = size;
  it->second.synced = std::min(it->second.synced, size);
}

void FaultFileSystem::Synced(const std::string& path, uint64_t size) {
  absl::MutexLock lock(&mu_);
  auto it = written_.find(path);
  if (it != written_.end()) {
    it->second.synced = std::max(it->second.synced, size);
  }
}

int64_t FaultFileSystem::DirectorySyncStarts() {
  absl::MutexLock lock(&mu_);
  return changes_;
}

void FaultFileSystem::DirectorySynced(const std::string& dir, int64_t covered) {
  absl::MutexLock lock(&mu_);
  auto names = pending_.find(dir);
  if (names == pending_.end()) return;
  // A name changed again while the sync ran keeps what it held at the sync
  // before (more than a real disk could lose, never less).
  for (auto it = names->second.begin(); it != names->second.end();) {
    if (it->second.changed > covered) {
      ++it;
      continue;
    }
    if (it->second.existed) {
      target()
          ->DeleteFile(it->second.kept, IOOptions(), nullptr)
          .PermitUncheckedError();
    }
    names->second.erase(it++);
  }
  if (names->second.empty()) pending_.erase(names);
}

bool FaultFileSystem::Exists(const std::string& path) {
  return target()->FileExists(path, IOOptions(), nullptr).ok();
}

FaultFileSystem::Undo* FaultFileSystem::FindUndo(const std::string& path) {
  auto [dir, name] = Split(path);
  auto names = pending_.find(dir);
  if (names == pending_.end()) return nullptr;
  auto it = names->second.find(name);
  return it == names->second.end() ? nullptr : &it->second;
}

void FaultFileSystem::NameChanged(const std::string& path) {
  auto [dir, name] = Split(path);
  // A name not yet recorded held nothing at the last sync.
  pending_[dir][name].changed = ++changes_;
}

uint64_t FaultFileSystem::DurableLength(const std::string& path) {
  auto it = written_.find(path);
  if (it != written_.end()) return it->second.synced;
  // Not written since the last power cut: all of it is durable.
  uint64_t size = 0;
  target()
      ->GetFileSize(path, IOOptions(), &size, nullptr)
      .PermitUncheckedError();
  return size;
}

void FaultFileSystem::Opened(const std::string& path, bool created,
                             uint64_t size, uint64_t durable) {
  written_[path] = {.size = size, .synced = durable};
  if (created) NameChanged(path);
}

IOStatus FaultFileSystem::KeepAside(const std::string& path, bool move) {
  if (Undo* undo = FindUndo(path); undo != nullptr) {
    // Changed since the last sync already: what it held then is recorded.
    undo->changed = ++changes_;
    if (move) return target()->DeleteFile(path, IOOptions(), nullptr);
    return IOStatus::OK();
  }
  if (!Exists(path)) {
    NameChanged(path);
    return IOStatus::OK();
  }
  auto [dir, name] = Split(path);
  Undo undo;
  undo.existed = true;
  undo.kept = Join(dir, absl::StrCat(kKeptPrefix, ++kept_, "-", name));
  undo.length = DurableLength(path);
  IOStatus s = move
                   ? target()->RenameFile(path, undo.kept, IOOptions(), nullptr)
                   : target()->LinkFile(path, undo.kept, IOOptions(), nullptr);
  if (!s.ok()) return s;
  undo.changed = ++changes_;
  pending_[dir][name] = std::move(undo);
  return IOStatus::OK();
}

absl::StatusOr<FaultFileSystem::Dropped> FaultFileSystem::DropUnsyncedData() {
  absl::MutexLock lock(&mu_);
  Dropped dropped;
  auto fail = [](const IOStatus& s, absl::string_view what) {
    return absl::InternalError(
        absl::StrCat("fault file system: ", what, ": ", s.ToString()));
  };
  for (const auto& [dir, names] : pending_) {
    for (const auto& [name, undo] : names) {
      const std::string path = Join(dir, name);
      written_.erase(path);
      if (Exists(path)) {
        IOStatus s = target()->DeleteFile(path, IOOptions(), nullptr);
        if (!s.ok()) return fail(s, absl::StrCat("removing ", path));
      }
      if (!undo.existed) {
        ++dropped.names_removed;
        continue;
      }
      IOStatus s = target()->RenameFile(undo.kept, path, IOOptions(), nullptr);
      if (s.ok()) s = TruncateFile(path, undo.length);
      if (!s.ok()) return fail(s, absl::StrCat("restoring ", path));
      ++dropped.names_restored;
    }
  }
  pending_.clear();
  for (const auto& [path, file] : written_) {
    uint64_t size = 0;
    if (!target()->GetFileSize(path, IOOptions(), &size, nullptr).ok() ||
        size <= file.synced) {
      continue;
    }
    IOStatus s = TruncateFile(path, file.synced);
    if (!s.ok()) return fail(s, absl::StrCat("truncating ", path));
    ++dropped.files_truncated;
    dropped.bytes_dropped += static_cast<int64_t>(size - file.synced);
  }
  written_.clear();
  power_cut_ = false;
  cut_at_ = 0;
  return dropped;
}

IOStatus FaultFileSystem::NewSequentialFile(
    const std::string& fname, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSSequentialFile>* result, IODebugContext* dbg) {
  IOStatus s = Powered("open of", fname);
  if (!s.ok()) return s;
  return target()->NewSequentialFile(fname, options, result, dbg);
}

IOStatus FaultFileSystem::NewRandomAccessFile(
    const std::string& fname, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSRandomAccessFile>* result, IODebugContext* dbg) {
  IOStatus s = Powered("open of", fname);
  if (!s.ok()) return s;
  return target()->NewRandomAccessFile(fname, options, result, dbg);
}

IOStatus FaultFileSystem::NewWritableFile(
    const std::string& fname, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* result, IODebugContext* dbg) {
  const std::string path = Normalize(fname);
  IOStatus s = Admit(OpKind::kOther, "create of", path);
  if (!s.ok()) return s;
  absl::MutexLock lock(&mu_);
  // An existing file is truncated in place: its name does not change.
  const bool created = !Exists(path);
  std::unique_ptr<rocksdb::FSWritableFile> file;
  s = target()->NewWritableFile(fname, options, &file, dbg);
  if (!s.ok()) return s;
  Opened(path, created, 0, 0);
  *result = std::make_unique<File>(this, path, 0, std::move(file));
  return s;
}

IOStatus FaultFileSystem::ReopenWritableFile(
    const std::string& fname, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* result, IODebugContext* dbg) {
  const std::string path = Normalize(fname);
  IOStatus s = Admit(OpKind::kOther, "reopen of", path);
  if (!s.ok()) return s;
  absl::MutexLock lock(&mu_);
  const bool created = !Exists(path);
  const uint64_t durable = created ? 0 : DurableLength(path);
  std::unique_ptr<rocksdb::FSWritableFile> file;
  s = target()->ReopenWritableFile(fname, options, &file, dbg);
  if (!s.ok()) return s;
  uint64_t size = 0;
  target()
      ->GetFileSize(path, IOOptions(), &size, nullptr)
      .PermitUncheckedError();
  Opened(path, created, size, std::min(durable, size));
  *result = std::make_unique<File>(this, path, size, std::move(file));
  return s;
}

// Only WAL recycling (recycle_log_file_num) reuses files; a store does not.
IOStatus FaultFileSystem::ReuseWritableFile(
    const std::string& fname, const std::string& /*old_fname*/,
    const rocksdb::FileOptions& /*options*/,
    std::unique_ptr<rocksdb::FSWritableFile>* /*result*/,
    IODebugContext* /*dbg*/) {
  return IOStatus::NotSupported(absl::StrCat(
      "fault file system: reusing a file is not modelled: ", fname));
}

IOStatus FaultFileSystem::NewRandomRWFile(
    const std::string& fname, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSRandomRWFile>* result, IODebugContext* dbg) {
  IOStatus s = Admit(OpKind::kOther, "open for writing of", Normalize(fname));
  if (!s.ok()) return s;
  return target()->NewRandomRWFile(fname, options, result, dbg);
}

IOStatus FaultFileSystem::NewDirectory(
    const std::string& name, const IOOptions& options,
    std::unique_ptr<rocksdb::FSDirectory>* result, IODebugContext* dbg) {
  IOStatus s = Powered("open of directory", name);
  if (!s.ok()) return s;
  std::unique_ptr<rocksdb::FSDirectory> dir;
  s = target()->NewDirectory(name, options, &dir, dbg);
  if (!s.ok()) return s;
  *result = std::make_unique<Directory>(this, Normalize(name), std::move(dir));
  return s;
}

IOStatus FaultFileSystem::FileExists(const std::string& fname,
                                     const IOOptions& options,
                                     IODebugContext* dbg) {
  IOStatus s = Powered("stat of", fname);
  if (!s.ok()) return s;
  return target()->FileExists(fname, options, dbg);
}

IOStatus FaultFileSystem::GetChildren(const std::string& dir,
                                      const IOOptions& options,
                                      std::vector<std::string>* result,
                                      IODebugContext* dbg) {
  IOStatus s = Powered("listing of", dir);
  if (s.ok()) s = target()->GetChildren(dir, options, result, dbg);
  if (s.ok()) {
    result->erase(std::remove_if(result->begin(), result->end(), IsKept),
                  result->end());
  }
  return s;
}

IOStatus FaultFileSystem::GetChildrenFileAttributes(
    const std::string& dir, const IOOptions& options,
    std::vector<rocksdb::FileAttributes>* result, IODebugContext* dbg) {
  IOStatus s = Powered("listing of", dir);
  if (s.ok())
    s = target()->GetChildrenFileAttributes(dir, options, result, dbg);
  if (s.ok()) {
    result->erase(std::remove_if(result->begin(), result->end(),
                                 [](const rocksdb::FileAttributes& a) {
                                   return IsKept(a.name);
                                 }),
                  result->end());
  }
  return s;
}

IOStatus FaultFileSystem::DeleteFile(const std::string& fname,
                                     const IOOptions& options,
                                     IODebugContext* dbg) {
  const std::string path = Normalize(fname);
  IOStatus s = Admit(OpKind::kOther, "delete of", path);
  if (!s.ok()) return s;
  absl::MutexLock lock(&mu_);
  if (!Exists(path)) return target()->DeleteFile(fname, options, dbg);
  // A name new since the last sync just goes: nothing to bring back.
  if (Undo* undo = FindUndo(path); undo != nullptr && !undo->existed) {
    s = target()->DeleteFile(fname, options, dbg);
    if (s.ok()) {
      auto [dir, name] = Split(path);
      pending_[dir].erase(name);
      written_.erase(path);
    }
    return s;
  }
  s = KeepAside(path, /*move=*/true);
  if (s.ok()) written_.erase(path);
  return s;
}

IOStatus FaultFileSystem::Truncate(const std::string& fname, size_t size,
                                   const IOOptions& options,
                                   IODebugContext* dbg) {
  const std::string path = Normalize(fname);
  IOStatus s = Admit(OpKind::kOther, "truncate of", path);
  if (s.ok()) s = target()->Truncate(fname, size, options, dbg);
  if (s.ok()) Truncated(path, size);
  return s;
}

IOStatus FaultFileSystem::CreateDir(const std::string& dirname,
                                    const IOOptions& options,
                                    IODebugContext* dbg) {
  IOStatus s = Admit(OpKind::kOther, "create of directory", dirname);
  if (!s.ok()) return s;
  return target()->CreateDir(dirname, options, dbg);
}

IOStatus FaultFileSystem::CreateDirIfMissing(const std::string& dirname,
                                             const IOOptions& options,
                                             IODebugContext* dbg) {
  IOStatus s = Admit(OpKind::kOther, "create of directory", dirname);
  if (!s.ok()) return s;
  return target()->CreateDirIfMissing(dirname, options, dbg);
}

IOStatus FaultFileSystem::DeleteDir(const std::string& dirname,
                                    const IOOptions& options,
                                    IODebugContext* dbg) {
  IOStatus s = Admit(OpKind::kOther, "delete of directory", dirname);
  if (!s.ok()) return s;
  return target()->DeleteDir(dirname, options, dbg);
}

IOStatus FaultFileSystem::GetFileSize(const std::string& fname,
                                      const IOOptions& options, uint64_t* size,
                                      IODebugContext* dbg) {
  IOStatus s = Powered("stat of", fname);
  if (!s.ok()) return s;
  return target()->GetFileSize(fname, options, size, dbg);
}

IOStatus FaultFileSystem::RenameFile(const std::string& src,
                                     const std::string& dst,
                                     const IOOptions& options,
                                     IODebugContext* dbg) {
  const std::string from = Normalize(src);
  const std::string to = Normalize(dst);
  IOStatus s = Admit(OpKind::kOther, "rename of", from);
  if (!s.ok()) return s;
  absl::MutexLock lock(&mu_);
  if (!Exists(from)) return target()->RenameFile(src, dst, options, dbg);
  // What both names held at their directories' last syncs must survive a
  // cut: the target's file is linked aside, and so is the source's unless
  // the source is itself new since then (a cut removes it either way).
  s = KeepAside(to, /*move=*/false);
  if (!s.ok()) return s;
  Undo* from_undo = FindUndo(from);
  const bool from_new = from_undo != nullptr && !from_undo->existed;
  if (!from_new) {
    s = KeepAside(from, /*move=*/false);
    if (!s.ok()) return s;
  }
  s = target()->RenameFile(src, dst, options, dbg);
  if (!s.ok()) return s;
  if (from_new) {
    auto [dir, name] = Split(from);
    pending_[dir].erase(name);
  }
  auto file = written_.find(from);
  if (file != written_.end()) {
    written_[to] = file->second;
    written_.erase(from);
  } else {
    written_.erase(to);
  }
  return s;
}

IOStatus FaultFileSystem::LinkFile(const std::string& src,
                                   const std::string& dst,
                                   const IOOptions& options,
                                   IODebugContext* dbg) {
  const std::string to = Normalize(dst);
  IOStatus s = Admit(OpKind::kOther, "link to", to);
  if (!s.ok()) return s;
  absl::MutexLock lock(&mu_);
  s = target()->LinkFile(src, dst, options, dbg);
  if (s.ok() && FindUndo(to) == nullptr) NameChanged(to);
  return s;
}

IOStatus FaultFileSystem::LockFile(const std::string& fname,
                                   const IOOptions& options,
                                   rocksdb::FileLock** lock,
                                   IODebugContext* dbg) {
  IOStatus s = Powered("lock of", fname);
  if (!s.ok()) return s;
  return target()->LockFile(fname, options, lock, dbg);
}

IOStatus FaultFileSystem::NewLogger(const std::string& fname,
                                    const IOOptions& options,
                                    std::shared_ptr<rocksdb::Logger>* result,
                                    IODebugContext* dbg) {
  IOStatus s = Powered("open of", fname);
  if (!s.ok()) return s;
  return target()->NewLogger(fname, options, result, dbg);
}

}  // namespace jobset::store
