// ReadSnapshot on arbitrary bytes (a snapshot file is operator input, and
// may be damaged or hostile): never crashes, never allocates past the
// format's bounds, and a file it accepts is exactly what SnapshotWriter
// writes for the same records (so nothing it accepts is read two ways).
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "store/snapshot.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();  // A property failed: libFuzzer saves the input.
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::istringstream in(bytes);
  std::string rewritten;
  jobset::store::SnapshotWriter writer([&](absl::string_view piece) {
    rewritten.append(piece.data(), piece.size());
    return absl::OkStatus();
  });
  absl::StatusOr<jobset::store::SnapshotInfo> info =
      jobset::store::ReadSnapshot(
          in, [](const jobset::store::KeyValue&) { return absl::OkStatus(); });
  if (!info.ok()) return 0;
  // Accepted: write the same records again and compare byte for byte.
  Check(info->bytes == size);
  Check(writer.Begin(info->revision).ok());
  std::istringstream again(bytes);
  absl::StatusOr<jobset::store::SnapshotInfo> second =
      jobset::store::ReadSnapshot(again,
                                  [&](const jobset::store::KeyValue& kv) {
                                    return writer.Add(kv.key, kv.value);
                                  });
  Check(second.ok() && second->keys == info->keys);
  absl::StatusOr<jobset::store::SnapshotInfo> written = writer.Finish();
  Check(written.ok() && rewritten == bytes);
  return 0;
}
