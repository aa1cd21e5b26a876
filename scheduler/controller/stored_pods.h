#ifndef JOBSET_SCHEDULER_CONTROLLER_STORED_PODS_H_
#define JOBSET_SCHEDULER_CONTROLLER_STORED_PODS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/cluster.pb.h"
#include "store/store.h"

namespace jobset::scheduler {

// Full pods read back from the store, for clients (the API's pod listing,
// logs): the controller stores one JobPods record per Job
// ("pods/<ns>/<jobset>/<job>"), and each pod is built from its Job
// ("jobs/<ns>/<jobset>/<job>") and its record with ExpandPod.
struct StoredPods {
  std::vector<api::Pod> pods;  // By Job key, then as the Job lists them.
  int64_t revision = 0;        // The store revision of the first page read.
};

// Reads every pod under `prefix` ("pods/<ns>/" or "pods/<ns>/<jobset>/").
// A record whose Job is gone (deleted between the two reads) is skipped;
// a value that does not decode is DATA_LOSS naming the key; a prefix outside
// "pods/" is INVALID_ARGUMENT.
absl::StatusOr<StoredPods> ReadStoredPods(store::Store* store,
                                          absl::string_view prefix);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_STORED_PODS_H_
