#ifndef JOBSET_SCHEDULER_SERVER_JOBSET_COUNTER_H_
#define JOBSET_SCHEDULER_SERVER_JOBSET_COUNTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "store/store.h"

namespace jobset::scheduler {

// Enforces the limits on stored JobSets (per namespace and in all) for
// JobSetApi::Create. It counts the JobSets once by a paged scan and then
// keeps the count current from the store's history (Store::WaitForEvents,
// never waiting), so a Create costs at most the changes since the last one,
// not a scan, and nothing while the store's revision says no limit can be
// near (see Reserve); when the history no longer reaches back it counts
// again. Creates in
// flight hold a reservation, so concurrent Creates cannot overshoot a limit
// together. Thread-safe.
class JobSetCounter {
 public:
  JobSetCounter(store::Store* store, int64_t max_per_namespace,
                int64_t max_total);

  // Reserves room for one more JobSet in `ns`, or returns kResourceExhausted
  // naming the limit and the count. Call Release once the Create's commit
  // has returned, whatever its result.
  absl::Status Reserve(absl::string_view ns);
  void Release(absl::string_view ns);

  // Returns the JobSets stored in `ns` (in all when empty), for tests.
  absl::StatusOr<int64_t> Count(absl::string_view ns);

 private:
  // Brings the counts up to the store's history; counts again by a scan
  // when they are unknown or the history has moved past them.
  absl::Status CatchUp() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status Rescan() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies `event` unless the scan's page holding its key was read after it.
  void Apply(const store::Event& event) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // JobSets counted and reserved in `ns`.
  int64_t InNamespace(absl::string_view ns) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  store::Store* const store_;
  const int64_t max_per_namespace_;
  const int64_t max_total_;
  absl::Mutex mu_;
  std::map<std::string, int64_t, std::less<>> counts_ ABSL_GUARDED_BY(mu_);
  int64_t total_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int64_t, std::less<>> pending_ ABSL_GUARDED_BY(mu_);
  int64_t pending_total_ ABSL_GUARDED_BY(mu_) = 0;
  // The counts hold every event up to here; -1 before the first scan.
  int64_t revision_ ABSL_GUARDED_BY(mu_) = -1;
  // The last scan's pages (last key, revision read at) while events older
  // than the last page's revision remain to be applied.
  std::vector<std::pair<std::string, int64_t>> pages_ ABSL_GUARDED_BY(mu_);
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_SERVER_JOBSET_COUNTER_H_
