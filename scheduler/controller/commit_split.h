#ifndef JOBSET_SCHEDULER_CONTROLLER_COMMIT_SPLIT_H_
#define JOBSET_SCHEDULER_CONTROLLER_COMMIT_SPLIT_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "store/store.h"

namespace jobset::scheduler {

// How a pass's writes become store transactions that fit the store's limits
// (etcd: 128 operations, 1.5 MiB). The unit is one JobSet: its object, Jobs,
// pods and events commit together or not at all. JobSets are independent of
// each other (README: "Commits that fit the store"), so a pass may land one
// JobSet at a time.

// The JobSet a key the controller writes belongs to, as
// ControllerState::KeyOf names it ("<namespace>/<name>"), for jobsets/,
// jobs/, pods/, events/, attempts/ and attemptpods/ keys; "" for any other
// key.
std::string OwnerOf(absl::string_view key);

// One store transaction of a pass.
struct PlannedTxn {
  store::Batch batch;
  std::vector<std::string> owners;  // The JobSets it writes, by KeyOf.
  // One JobSet's writes, too many for one transaction: PassJournal commits
  // it.
  bool journaled = false;
};

// Splits `pass` into transactions that fit `limits`: one when it fits
// whole (always, for an unlimited store); otherwise each JobSet's
// operations together, whole JobSets packed in key order as many to a
// transaction as fit, and a JobSet whose operations alone do not fit in a
// journaled transaction of its own.
std::vector<PlannedTxn> SplitByJobSet(store::Batch pass,
                                      const store::CommitLimits& limits);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_COMMIT_SPLIT_H_
