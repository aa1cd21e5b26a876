#ifndef JOBSET_STORE_FAULT_WORKLOAD_H_
#define JOBSET_STORE_FAULT_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "store/store.h"

namespace jobset::store {

// The load of the durability tests (rocksdb_power_test.cc,
// rocksdb_disk_fault_test.cc): writers that commit through the Store
// interface, and a ledger of what each commit returned, against which a
// reopened store is checked.
//
// Writer w's i-th commit (i from 1) is one batch: Create of
// "items/<w>/<i>" with Value(seed, w, i) (16 to 1,215 bytes of any value),
// and "counter/<w>" set to i, conditioned on the counter's mod_revision (a
// Create for the first). A writer stops at its first error: it can no longer
// tell its counter's revision. Thread-compatible (Run starts and joins its
// own threads).
class FaultWorkload {
 public:
  // What one Run saw.
  struct RunResult {
    int64_t acknowledged = 0;  // Commits that returned a revision.
    std::vector<absl::Status> errors;
    // Acknowledgements of commits that began after some commit had already
    // returned an error, described; the store must give none.
    std::vector<std::string> acknowledged_after_error;
  };

  FaultWorkload(int writers, uint64_t seed);

  // The bytes writer `writer`'s `index`-th commit stores.
  static std::string Value(uint64_t seed, int writer, int64_t index);

  // Runs every writer against `store` until each has had an error or
  // `max_commits` commits in all were acknowledged.
  RunResult Run(Store& store, int64_t max_commits);

  // Checks that `store`, reopened after a Run, holds every acknowledged
  // commit byte for byte at the revision it was acknowledged with, that a
  // writer's commit that returned an error is either wholly there or wholly
  // absent, that nothing else is there, and that the store's revision is no
  // lower than the last one acknowledged. A failed commit found there counts
  // as acknowledged from now on. Returns what differs.
  absl::Status Verify(Store& store);

  // The highest revision acknowledged so far (0 before any).
  int64_t LastAcknowledgedRevision() const;
  int64_t Acknowledged() const;

 private:
  struct Writer {
    // Every acknowledged commit: index i at revisions[i - 1].
    std::vector<int64_t> revisions;
    // The revision of the writer's counter (0: not created yet).
    int64_t counter_revision = 0;
    // The index of the commit that returned an error, if one did.
    std::optional<int64_t> failed;
  };

  absl::Status VerifyWriter(Store& store, int w);

  const uint64_t seed_;
  std::vector<Writer> writers_;
};

}  // namespace jobset::store

#endif  // JOBSET_STORE_FAULT_WORKLOAD_H_
