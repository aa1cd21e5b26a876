#ifndef JOBSET_STORE_SCAN_H_
#define JOBSET_STORE_SCAN_H_

#include <cstddef>
#include <functional>

#include "absl/status/status.h"
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

}  // namespace jobset::store

#endif  // JOBSET_STORE_SCAN_H_
