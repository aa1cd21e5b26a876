#ifndef JOBSET_SCHEDULER_CONTROLLER_PASS_JOURNAL_H_
#define JOBSET_SCHEDULER_CONTROLLER_PASS_JOURNAL_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/store.h"

namespace jobset::scheduler {

// Commits one JobSet's writes atomically when they do not fit one store
// transaction (a restart of a 1,000-Job JobSet on etcd), by a redo journal
// under keys::kJournal:
//
//  1. each part (the writes of one later transaction, to keys only the
//     controller writes: Jobs, pods, events) is stored at
//     "journal/<id>/<n>", one transaction each;
//  2. one transaction writes the JobSet's own operations (its object, with
//     its compare-and-swap, or its deletion) and the mark "journal/<id>":
//     from here on the commit has happened;
//  3. each part is applied, in a transaction that also deletes it;
//  4. the mark is deleted.
//
// A crash, a store error or a lost leadership between any two of these
// leaves either no mark (Recover deletes the parts: the commit did not
// happen, as if the controller had died before it) or a mark (Recover
// applies the parts not yet applied: the commit happened whole). Applying
// a part deletes it in the same transaction, so none is applied twice;
// parts are plain puts and deletes of keys no one else writes, so applying
// one late writes what it would have written on time. Used only from the
// controller thread, and Recover only before the controller loads.
class PassJournal {
 public:
  explicit PassJournal(store::Store* store) : store_(store) {}

  // Commits `batch`, whose conditioned operations and JobSet keys must fit
  // one transaction (kInvalidArgument naming the key otherwise), and
  // returns the revision of step 2. kAborted when a condition failed
  // (nothing happened). Any other error may come after step 2: the commit
  // then happened, and Recover completes it.
  absl::StatusOr<int64_t> Commit(const store::Batch& batch);

  // Completes every journaled commit whose mark is in the store and deletes
  // the parts of every other. A part that does not decode, or that writes a
  // key outside the controller's children, is logged and deleted unapplied
  // (the JobSet layer rebuilds what a JobSet lacks from its status).
  // Returns how many commits it completed.
  absl::StatusOr<int> Recover();

 private:
  // Applies the parts under `id` still stored, then deletes its mark.
  absl::Status Complete(const std::string& id);

  store::Store* const store_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_PASS_JOURNAL_H_
