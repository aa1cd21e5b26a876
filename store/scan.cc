#include "store/scan.h"

#include <string>

#include "common/status_macros.h"

namespace jobset::store {

absl::Status ScanAll(Store& store, absl::string_view prefix,
                     const std::function<absl::Status(const KeyValue&)>& fn,
                     size_t page_size) {
  return ScanAllWithRevision(store, prefix, fn, page_size).status();
}

absl::StatusOr<int64_t> ScanAllWithRevision(
    Store& store, absl::string_view prefix,
    const std::function<absl::Status(const KeyValue&)>& fn, size_t page_size) {
  int64_t first_revision = -1;
  std::string after;
  for (bool more = true; more;) {
    JOBSET_ASSIGN_OR_RETURN(ScanResult page,
                            store.Scan(prefix, after, page_size));
    if (first_revision < 0) first_revision = page.revision;
    for (const KeyValue& kv : page.kvs) {
      JOBSET_RETURN_IF_ERROR(fn(kv));
      after = kv.key;
    }
    more = page.more && !page.kvs.empty();
  }
  return first_revision;
}

}  // namespace jobset::store
