#ifndef JOBSET_STORE_SNAPSHOT_H_
#define JOBSET_STORE_SNAPSHOT_H_

#include <openssl/evp.h>

#include <cstdint>
#include <functional>
#include <istream>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "store/store.h"

namespace jobset::store {

// jobsetd's logical snapshot of a store: every key and value at one revision,
// in a format of our own that any Store can be restored from (README.md,
// "Snapshots"). All integers little-endian:
//
//   "JOBSETSNAP" (10 bytes)  version u32 (1)  revision u64
//   records: 0x01  key_len u32  key  value_len u32  value   (key order)
//   trailer: 0x02  count u64  sha256 (32 bytes, of every byte before it)
//
// and nothing after. key_len is 1..Store::kMaxKeyBytes and value_len at most
// Store::kMaxValueBytes, so a reader never allocates more than those.
inline constexpr absl::string_view kSnapshotMagic = "JOBSETSNAP";
inline constexpr uint32_t kSnapshotVersion = 1;

// What a snapshot holds, besides its records.
struct SnapshotInfo {
  int64_t revision = 0;
  uint64_t keys = 0;
  uint64_t bytes = 0;  // The whole file's.
};

// Writes a snapshot, record by record, to `sink` (called with consecutive
// pieces of the file). Thread-compatible.
class SnapshotWriter {
 public:
  using Sink = std::function<absl::Status(absl::string_view bytes)>;
  explicit SnapshotWriter(Sink sink);

  // Writes the header. Call once, first.
  absl::Status Begin(int64_t revision);
  // Writes one record; kInvalidArgument for a key or value past the limits.
  absl::Status Add(absl::string_view key, absl::string_view value);
  // Writes the trailer; returns what was written.
  absl::StatusOr<SnapshotInfo> Finish();

 private:
  absl::Status Write(absl::string_view bytes);

  struct FreeDigest {
    void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
  };
  Sink sink_;
  std::unique_ptr<EVP_MD_CTX, FreeDigest> sha_;
  SnapshotInfo info_;
  bool begun_ = false;
};

// Reads a snapshot from `in`, checking everything: magic, version, each
// record's tag and lengths (bounded), key order, the count and the checksum,
// and that nothing follows. Calls `fn` with each record as it is read (so a
// caller that must not act on an unverified file calls it twice: once with
// a `fn` that does nothing). Errors are kDataLoss naming the byte offset and
// the record number (kInvalidArgument for a version it cannot read); the
// first error `fn` returns is returned as it is.
absl::StatusOr<SnapshotInfo> ReadSnapshot(
    std::istream& in, const std::function<absl::Status(const KeyValue&)>& fn);

// Reads the snapshot file at `path` as ReadSnapshot does; errors name it.
absl::StatusOr<SnapshotInfo> ReadSnapshotFile(
    const std::string& path,
    const std::function<absl::Status(const KeyValue&)>& fn);

// Restores the snapshot file at `path` into `store`, which must be empty (no
// key at all; kFailedPrecondition naming `store_name` otherwise). Reads the
// whole file once to verify it before writing anything, then again to
// write it: Creates (so nothing existing is overwritten) in batches that
// fit store->Limits(). Keys under keys::kLeader are skipped. The file must
// not change meanwhile (a second read that disagrees stops with kDataLoss,
// leaving what was written: start again on a fresh store).
absl::StatusOr<SnapshotInfo> RestoreSnapshot(const std::string& path,
                                             Store* store,
                                             absl::string_view store_name);

}  // namespace jobset::store

#endif  // JOBSET_STORE_SNAPSHOT_H_
