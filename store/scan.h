#ifndef JOBSET_STORE_SCAN_H_
#define JOBSET_STORE_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "store/store.h"

namespace jobset::store {

// How many keys ScanAll reads per Scan call.
inline constexpr size_t kScanPageSize = 1000;

// Calls `fn` with every key under `prefix`, in key order, reading the store
// one page at a time (so a large prefix is never held whole). Stops at, and
// returns, the first error of the store or of `fn`. Pages are read at
// different revisions: a key written meanwhile may or may not be seen.
absl::Status ScanAll(Store& store, absl::string_view prefix,
                     const std::function<absl::Status(const KeyValue&)>& fn,
                     size_t page_size = kScanPageSize);

// Like ScanAll, and returns the revision the first page was read at: the
// oldest of the pages' revisions, so a watch that starts from it misses no
// change to the keys visited (it may replay one). A list response's
// resourceVersion.
absl::StatusOr<int64_t> ScanAllWithRevision(
    Store& store, absl::string_view prefix,
    const std::function<absl::Status(const KeyValue&)>& fn,
    size_t page_size = kScanPageSize);

}  // namespace jobset::store

#endif  // JOBSET_STORE_SCAN_H_
