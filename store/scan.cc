#include "store/scan.h"

#include <string>

#include "common/status_macros.h"

namespace jobset::store {

absl::Status ScanAll(Store& store, absl::string_view prefix,
                     const std::function<absl::Status(const KeyValue&)>& fn,
                     size_t page_size) {
  std::string after;
  for (bool more = true; more;) {
    JOBSET_ASSIGN_OR_RETURN(ScanResult page,
                            store.Scan(prefix, after, page_size));
    for (const KeyValue& kv : page.kvs) {
      JOBSET_RETURN_IF_ERROR(fn(kv));
      after = kv.key;
    }
    more = page.more && !page.kvs.empty();
  }
  return absl::OkStatus();
}

}  // namespace jobset::store
