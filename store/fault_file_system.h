#ifndef JOBSET_STORE_FAULT_FILE_SYSTEM_H_
#define JOBSET_STORE_FAULT_FILE_SYSTEM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "rocksdb/file_system.h"

namespace jobset::store {

// A RocksDB file system for tests that plays a power cut and a failing disk
// under a store (docs/store.md, "Durability under faults"). Give it to
// RocksDbStore::Options::file_system. Thread-safe.
//
// Power. It keeps, for every file written through it since the last power
// cut, the length its last Sync or Fsync made durable, and, for every
// directory, the names created, renamed over or deleted since the
// directory's last Fsync, with what each name held at that Fsync. CutPower()
// (or the operation CutPowerAt() names) stops the disk: every operation that
// would change it, and every open, fails with IOError. Once the database is
// closed, DropUnsyncedData() leaves the files as the machine would find them
// on its next boot, by what POSIX promises and no more:
//   - a file keeps the bytes up to its last fsync or fdatasync and loses the
//     rest (sync_file_range, RocksDB's RangeSync, promises nothing);
//   - a name created, renamed or removed since its directory's last fsync is
//     put back as it was at that fsync: a new file disappears, a renamed-over
//     or deleted one comes back (with what its last sync made durable), a
//     renamed one's old name is gone if it was new, back if it was not.
// A deleted file is moved aside (a hidden ".faultfs-" name in its
// directory, left out of listings) until its directory is synced, and a file
// renamed over is kept by a hard link, so that a cut can bring either back.
// Not modelled: bytes torn or reordered inside what was written (unsynced
// bytes are dropped whole), the database directory's own entry in its
// parent, and files RocksDB opens for random read-write (it does not for a
// store) or its info LOG (not data).
//
// Faults. InjectFault() fails the n-th write (Append, PositionedAppend) or
// the n-th sync (Sync or Fsync of a file, Fsync of a directory) from the
// call on, with IOError or NoSpace; with `sticky`, every later operation that
// would change the disk fails the same way, as a dead or full disk does.
class FaultFileSystem : public rocksdb::FileSystemWrapper {
 public:
  enum class Error { kIOError, kNoSpace };
  struct Fault {
    enum class Op { kWrite, kSync };
    Op op = Op::kWrite;
    int64_t nth = 1;  // 1 is the next one.
    Error error = Error::kIOError;
    bool sticky = false;
  };
  // What DropUnsyncedData() undid.
  struct Dropped {
    int files_truncated = 0;
    int64_t bytes_dropped = 0;
    int names_removed = 0;   // Created since their directory's last sync.
    int names_restored = 0;  // Deleted or renamed over since then.
  };

  // Works over `base` (RocksDB's default file system by default).
  explicit FaultFileSystem(std::shared_ptr<rocksdb::FileSystem> base =
                               rocksdb::FileSystem::Default());

  const char* Name() const override { return "JobsetFaultFileSystem"; }

  // Arms `fault`, replacing any armed one; ClearFault() disarms it (and ends
  // a sticky fault's failures).
  void InjectFault(const Fault& fault);
  void ClearFault();
  // The operation the armed fault failed ("sync of /d/000004.log"), or
  // nullopt while it has not fired.
  std::optional<std::string> FaultFired();

  // Cuts the power now; from here every operation that changes the disk,
  // and every open, fails with IOError until DropUnsyncedData().
  void CutPower();
  // Cuts the power at the `n`-th operation that changes the disk from now on
  // (1: the next one), which fails.
  void CutPowerAt(int64_t n);
  bool PowerIsCut();

  // Once the database is closed: truncates every file to its synced length,
  // puts back every name whose change its directory's sync did not make
  // durable, forgets what it kept and turns the power back on.
  absl::StatusOr<Dropped> DropUnsyncedData();

  // How many operations that change the disk were attempted so far.
  int64_t Operations();

  rocksdb::IOStatus NewSequentialFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSSequentialFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewRandomAccessFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewWritableFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReuseWritableFile(
      const std::string& fname, const std::string& old_fname,
      const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewRandomRWFile(
      const std::string& fname, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSRandomRWFile>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewDirectory(const std::string& name,
                                 const rocksdb::IOOptions& options,
                                 std::unique_ptr<rocksdb::FSDirectory>* result,
                                 rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus FileExists(const std::string& fname,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus GetChildren(const std::string& dir,
                                const rocksdb::IOOptions& options,
                                std::vector<std::string>* result,
                                rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus GetChildrenFileAttributes(
      const std::string& dir, const rocksdb::IOOptions& options,
      std::vector<rocksdb::FileAttributes>* result,
      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteFile(const std::string& fname,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Truncate(const std::string& fname, size_t size,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus CreateDir(const std::string& dirname,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus CreateDirIfMissing(const std::string& dirname,
                                       const rocksdb::IOOptions& options,
                                       rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteDir(const std::string& dirname,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus GetFileSize(const std::string& fname,
                                const rocksdb::IOOptions& options,
                                uint64_t* size,
                                rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus RenameFile(const std::string& src, const std::string& dst,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus LinkFile(const std::string& src, const std::string& dst,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus LockFile(const std::string& fname,
                             const rocksdb::IOOptions& options,
                             rocksdb::FileLock** lock,
                             rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewLogger(const std::string& fname,
                              const rocksdb::IOOptions& options,
                              std::shared_ptr<rocksdb::Logger>* result,
                              rocksdb::IODebugContext* dbg) override;

 private:
  class File;
  class Directory;

  enum class OpKind { kWrite, kSync, kOther };
  // A file written since the last power cut.
  struct Written {
    uint64_t size = 0;    // Bytes written so far.
    uint64_t synced = 0;  // Of them, made durable by a sync.
  };
  // What a name held at its directory's last sync.
  struct Undo {
    bool existed = false;
    std::string kept;     // Where that file is kept meanwhile (existed).
    uint64_t length = 0;  // Its durable length (existed).
    int64_t changed = 0;  // When the name last changed (changes_).
  };

  // Decides whether an operation that changes the disk goes ahead: counts
  // it, and fails it when the power is cut (or this one cuts it) or a fault
  // fires. `verb` and `path` name it in the error.
  rocksdb::IOStatus Admit(OpKind kind, const char* verb,
                          const std::string& path) ABSL_LOCKS_EXCLUDED(mu_);
  // IOError while the power is cut (for operations that change nothing).
  rocksdb::IOStatus Powered(const char* verb, const std::string& path)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Bookkeeping that files and directories report.
  void Wrote(const std::string& path, uint64_t size) ABSL_LOCKS_EXCLUDED(mu_);
  void Truncated(const std::string& path, uint64_t size)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Synced(const std::string& path, uint64_t size) ABSL_LOCKS_EXCLUDED(mu_);
  // Returns the change count a directory sync starting now covers, and
  // forgets, once it succeeded, the changes up to it.
  int64_t DirectorySyncStarts() ABSL_LOCKS_EXCLUDED(mu_);
  void DirectorySynced(const std::string& dir, int64_t covered)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Starts keeping `path`, just opened for writing with `size` bytes of
  // which `durable` are; records its name as created when `created`.
  void Opened(const std::string& path, bool created, uint64_t size,
              uint64_t durable) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Records that `path` is about to lose what its directory's last sync left
  // there (a delete or a rename over it): keeps that file aside so that a
  // power cut can bring it back. Nothing when the name already changed since
  // that sync. With `move`, the file is moved aside (a delete); otherwise
  // it is linked (the rename replaces the name).
  rocksdb::IOStatus KeepAside(const std::string& path, bool move)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Records that the name `path` changed; it held nothing at its
  // directory's last sync unless already recorded.
  void NameChanged(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The durable length of an existing file at `path`.
  uint64_t DurableLength(const std::string& path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The record of `path`'s change since its directory's last sync, if any.
  Undo* FindUndo(const std::string& path) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Exists(const std::string& path);

  absl::Mutex mu_;
  bool power_cut_ ABSL_GUARDED_BY(mu_) = false;
  int64_t operations_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t cut_at_ ABSL_GUARDED_BY(mu_) = 0;  // An operation count; 0: none.
  std::optional<Fault> fault_ ABSL_GUARDED_BY(mu_);
  int64_t fault_seen_ ABSL_GUARDED_BY(mu_) = 0;  // Ops of its kind so far.
  std::optional<std::string> fired_ ABSL_GUARDED_BY(mu_);
  int64_t kept_ ABSL_GUARDED_BY(mu_) = 0;     // Names the files kept aside.
  int64_t changes_ ABSL_GUARDED_BY(mu_) = 0;  // Name changes so far.
  absl::flat_hash_map<std::string, Written> written_ ABSL_GUARDED_BY(mu_);
  // By directory, then name: every name changed since the directory's last
  // sync, with what it held then.
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, Undo>>
      pending_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::store

#endif  // JOBSET_STORE_FAULT_FILE_SYSTEM_H_
