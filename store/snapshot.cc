#include "store/snapshot.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <limits>
#include <memory>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/failpoint.h"
#include "common/log.h"
#include "common/status_macros.h"
#include "store/keys.h"

namespace jobset::store {
namespace {

constexpr char kRecordTag = 0x01;
constexpr char kTrailerTag = 0x02;
constexpr size_t kDigestBytes = 32;

void AppendU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
void AppendU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t LoadLe(const char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  }
  return v;
}

// A SHA-256 over everything read or written.
class Digest {
 public:
  Digest() : ctx_(EVP_MD_CTX_new()) {
    JOBSET_CHECK(ctx_ != nullptr &&
                 EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) == 1);
  }
  void Update(absl::string_view bytes) {
    JOBSET_CHECK(EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()) == 1);
  }
  std::string Final() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> out;
    unsigned int n = 0;
    JOBSET_CHECK(EVP_DigestFinal_ex(ctx_.get(), out.data(), &n) == 1 &&
                 n == kDigestBytes);
    return std::string(reinterpret_cast<const char*>(out.data()), n);
  }

 private:
  struct Free {
    void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> ctx_;
};

// Reads exactly what it is asked for, or says where the file ended.
class Reader {
 public:
  explicit Reader(std::istream& in) : in_(in) {}

  // Reads `n` bytes into `out` (resized to n only as they arrive, in pieces,
  // so a length that lies costs no more memory than the file has).
  absl::Status Read(size_t n, std::string* out, absl::string_view what,
                    uint64_t record) {
    out->clear();
    constexpr size_t kPiece = 64 << 10;
    while (out->size() < n) {
      const size_t want = std::min(kPiece, n - out->size());
      const size_t have = out->size();
      out->resize(have + want);
      in_.read(out->data() + have, static_cast<std::streamsize>(want));
      const size_t got = static_cast<size_t>(in_.gcount());
      out->resize(have + got);
      offset_ += got;
      if (got < want) {
        return absl::DataLossError(
            absl::StrCat("snapshot truncated at offset ", offset_, " in ", what,
                         " of record ", record, ": ", n - out->size(),
                         " more bytes needed"));
      }
    }
    digest_.Update(*out);
    return absl::OkStatus();
  }
  absl::StatusOr<uint64_t> ReadInt(int bytes, absl::string_view what,
                                   uint64_t record) {
    std::string raw;
    JOBSET_RETURN_IF_ERROR(Read(bytes, &raw, what, record));
    return LoadLe(raw.data(), bytes);
  }
  // The digest of everything read so far.
  std::string Checksum() { return digest_.Final(); }
  bool AtEnd() { return in_.peek() == std::char_traits<char>::eof(); }
  uint64_t offset() const { return offset_; }

 private:
  std::istream& in_;
  uint64_t offset_ = 0;
  Digest digest_;
};

}  // namespace

SnapshotWriter::SnapshotWriter(Sink sink)
    : sink_(std::move(sink)), sha_(EVP_MD_CTX_new()) {
  JOBSET_CHECK(sha_ != nullptr &&
               EVP_DigestInit_ex(sha_.get(), EVP_sha256(), nullptr) == 1);
}

absl::Status SnapshotWriter::Write(absl::string_view bytes) {
  JOBSET_CHECK(EVP_DigestUpdate(sha_.get(), bytes.data(), bytes.size()) == 1);
  info_.bytes += bytes.size();
  return sink_(bytes);
}

absl::Status SnapshotWriter::Begin(int64_t revision) {
  JOBSET_CHECK(!begun_) << "SnapshotWriter::Begin called twice";
  begun_ = true;
  info_.revision = revision;
  std::string header(kSnapshotMagic.data(), kSnapshotMagic.size());
  AppendU32(&header, kSnapshotVersion);
  AppendU64(&header, static_cast<uint64_t>(revision));
  return Write(header);
}

absl::Status SnapshotWriter::Add(absl::string_view key,
                                 absl::string_view value) {
  JOBSET_CHECK(begun_) << "SnapshotWriter::Add before Begin";
  // A snapshot cut short, at any key (docs/failpoints.md).
  JOBSET_FAILPOINT("store.snapshot.add");
  if (key.empty() || key.size() > Store::kMaxKeyBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "snapshot key \"", absl::CHexEscape(key.substr(0, 64)), "\": length ",
        key.size(), " is not 1..", Store::kMaxKeyBytes));
  }
  if (value.size() > Store::kMaxValueBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "snapshot value of key \"", absl::CHexEscape(key), "\": length ",
        value.size(), " exceeds ", Store::kMaxValueBytes));
  }
  std::string head(1, kRecordTag);
  AppendU32(&head, static_cast<uint32_t>(key.size()));
  head.append(key.data(), key.size());
  AppendU32(&head, static_cast<uint32_t>(value.size()));
  JOBSET_RETURN_IF_ERROR(Write(head));
  JOBSET_RETURN_IF_ERROR(Write(value));
  ++info_.keys;
  return absl::OkStatus();
}

absl::StatusOr<SnapshotInfo> SnapshotWriter::Finish() {
  JOBSET_CHECK(begun_) << "SnapshotWriter::Finish before Begin";
  std::string trailer(1, kTrailerTag);
  AppendU64(&trailer, info_.keys);
  JOBSET_RETURN_IF_ERROR(Write(trailer));
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest;
  unsigned int n = 0;
  JOBSET_CHECK(EVP_DigestFinal_ex(sha_.get(), digest.data(), &n) == 1 &&
               n == kDigestBytes);
  info_.bytes += n;
  JOBSET_RETURN_IF_ERROR(sink_(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), n)));
  return info_;
}

absl::StatusOr<SnapshotInfo> ReadSnapshot(
    std::istream& in, const std::function<absl::Status(const KeyValue&)>& fn) {
  Reader reader(in);
  SnapshotInfo info;
  std::string magic;
  JOBSET_RETURN_IF_ERROR(
      reader.Read(kSnapshotMagic.size(), &magic, "the magic", 0));
  if (magic != kSnapshotMagic) {
    return absl::DataLossError(absl::StrCat(
        "not a jobsetd snapshot: offset 0 holds \"", absl::CHexEscape(magic),
        "\", not \"", kSnapshotMagic, "\""));
  }
  JOBSET_ASSIGN_OR_RETURN(const uint64_t version,
                          reader.ReadInt(4, "the version", 0));
  if (version != kSnapshotVersion) {
    return absl::InvalidArgumentError(absl::StrCat("snapshot version ", version,
                                                   " at offset 10: this "
                                                   "jobsetd reads version ",
                                                   kSnapshotVersion));
  }
  JOBSET_ASSIGN_OR_RETURN(const uint64_t revision,
                          reader.ReadInt(8, "the revision", 0));
  if (revision > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::DataLossError(absl::StrCat("snapshot revision ", revision,
                                            " at offset 14 is not "
                                            "a revision"));
  }
  info.revision = static_cast<int64_t>(revision);
  std::string previous_key;
  KeyValue kv;
  for (uint64_t record = 1;; ++record) {
    const uint64_t at = reader.offset();
    std::string tag;
    JOBSET_RETURN_IF_ERROR(reader.Read(1, &tag, "the tag", record));
    if (tag[0] == kTrailerTag) break;
    if (tag[0] != kRecordTag) {
      return absl::DataLossError(
          absl::StrCat("snapshot record ", record, " at offset ", at, ": tag ",
                       static_cast<int>(static_cast<unsigned char>(tag[0])),
                       " is neither a record (1) nor the trailer (2)"));
    }
    JOBSET_ASSIGN_OR_RETURN(const uint64_t key_len,
                            reader.ReadInt(4, "the key length", record));
    if (key_len == 0 || key_len > Store::kMaxKeyBytes) {
      return absl::DataLossError(absl::StrCat(
          "snapshot record ", record, " at offset ", at, ": key length ",
          key_len, " is not 1..", Store::kMaxKeyBytes));
    }
    JOBSET_RETURN_IF_ERROR(reader.Read(key_len, &kv.key, "the key", record));
    if (record > 1 && kv.key <= previous_key) {
      return absl::DataLossError(absl::StrCat(
          "snapshot record ", record, " at offset ", at, ": key \"",
          absl::CHexEscape(kv.key), "\" is not after the previous one"));
    }
    JOBSET_ASSIGN_OR_RETURN(const uint64_t value_len,
                            reader.ReadInt(4, "the value length", record));
    if (value_len > Store::kMaxValueBytes) {
      return absl::DataLossError(absl::StrCat(
          "snapshot record ", record, " at offset ", at, " (key \"",
          absl::CHexEscape(kv.key), "\"): value length ", value_len,
          " exceeds ", Store::kMaxValueBytes));
    }
    JOBSET_RETURN_IF_ERROR(
        reader.Read(value_len, &kv.value, "the value", record));
    JOBSET_RETURN_IF_ERROR(fn(kv));
    previous_key = kv.key;
    ++info.keys;
  }
  const uint64_t trailer_at = reader.offset() - 1;
  JOBSET_ASSIGN_OR_RETURN(const uint64_t count,
                          reader.ReadInt(8, "the count", info.keys + 1));
  if (count != info.keys) {
    return absl::DataLossError(
        absl::StrCat("snapshot trailer at offset ", trailer_at, ": count ",
                     count, " but ", info.keys, " records precede it"));
  }
  const std::string expected = reader.Checksum();
  std::string digest;
  {
    // The digest itself is not part of what it covers; read it raw.
    Reader raw(in);
    JOBSET_RETURN_IF_ERROR(
        raw.Read(kDigestBytes, &digest, "the checksum", info.keys + 1));
  }
  if (digest != expected) {
    return absl::DataLossError(
        absl::StrCat("snapshot checksum at offset ", reader.offset(),
                     " does not match its contents (SHA-256 ",
                     absl::BytesToHexString(expected), " computed, ",
                     absl::BytesToHexString(digest), " stored)"));
  }
  const uint64_t end = reader.offset() + kDigestBytes;
  if (!reader.AtEnd()) {
    return absl::DataLossError(
        absl::StrCat("snapshot has bytes after its trailer, at offset ", end));
  }
  info.bytes = end;
  return info;
}

absl::StatusOr<SnapshotInfo> ReadSnapshotFile(
    const std::string& path,
    const std::function<absl::Status(const KeyValue&)>& fn) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("snapshot ", path, ": cannot be opened"));
  }
  absl::StatusOr<SnapshotInfo> info = ReadSnapshot(in, fn);
  if (!info.ok()) {
    return absl::Status(
        info.status().code(),
        absl::StrCat("snapshot ", path, ": ", info.status().message()));
  }
  return info;
}

absl::StatusOr<SnapshotInfo> RestoreSnapshot(const std::string& path,
                                             Store* store,
                                             absl::string_view store_name) {
  JOBSET_ASSIGN_OR_RETURN(const ScanResult any, store->Scan("", "", 1));
  if (!any.kvs.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--restore_from=", path, ": ", store_name, " is not empty (it holds \"",
        absl::CHexEscape(any.kvs[0].key), "\" at revision ", any.revision,
        "); a snapshot is restored only into an empty store: use a fresh "
        "--data_dir (or a fresh --etcd_prefix)"));
  }
  // First pass: verify everything, write nothing.
  JOBSET_ASSIGN_OR_RETURN(
      const SnapshotInfo verified,
      ReadSnapshotFile(path, [](const KeyValue&) { return absl::OkStatus(); }));
  const CommitLimits limits = store->Limits();
  Batch batch;
  size_t batch_bytes = 0;
  auto flush = [&]() -> absl::Status {
    if (batch.empty()) return absl::OkStatus();
    absl::StatusOr<int64_t> committed = store->Commit(batch);
    if (!committed.ok()) {
      return absl::Status(
          committed.status().code(),
          absl::StrCat("--restore_from=", path, ": writing ",
                       batch.ops().size(), " keys into ", store_name,
                       " (from \"", absl::CHexEscape(batch.ops().front().key),
                       "\"): ", committed.status().message()));
    }
    batch = Batch();
    batch_bytes = 0;
    return absl::OkStatus();
  };
  JOBSET_ASSIGN_OR_RETURN(
      const SnapshotInfo written,
      ReadSnapshotFile(path, [&](const KeyValue& kv) -> absl::Status {
        if (absl::StartsWith(kv.key, keys::kLeader)) return absl::OkStatus();
        const size_t cost = limits.Cost(kv.key, kv.value, /*conditioned=*/true);
        if (!batch.empty() && (batch.ops().size() + 1 > limits.max_ops ||
                               batch_bytes + cost > limits.max_bytes)) {
          JOBSET_RETURN_IF_ERROR(flush());
        }
        batch.Create(kv.key, kv.value);
        batch_bytes += cost;
        return absl::OkStatus();
      }));
  JOBSET_RETURN_IF_ERROR(flush());
  if (written.keys != verified.keys || written.revision != verified.revision) {
    return absl::DataLossError(absl::StrCat(
        "--restore_from=", path, ": the file changed while it was restored"));
  }
  return written;
}

}  // namespace jobset::store
