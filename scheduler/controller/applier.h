#ifndef JOBSET_SCHEDULER_CONTROLLER_APPLIER_H_
#define JOBSET_SCHEDULER_CONTROLLER_APPLIER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "scheduler/controller/agent_fleet.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/pass_journal.h"
#include "scheduler/controller/pass_writes.h"
#include "store/store.h"

namespace jobset::scheduler {

// Returns the keys of `batch` that the store refuses as kInvalidArgument
// (empty, or a key or value over the store's limits); when none is, the key
// `error` names, if any.
std::vector<std::string> RefusedKeys(const store::Batch& batch,
                                     const absl::Status& error);

// Commits a pass's writes and then, and only then, tells the fleet: stop
// orders, assignments, releases. Nothing reaches an agent before the writes
// that decided it are durable. The writes go in one store transaction when
// they fit the store's limits; otherwise in several, each JobSet's whole in
// one (commit_split.h) or, when a JobSet's alone do not fit, through the
// journal (pass_journal.h). Used only from the controller thread.
class Applier {
 public:
  // How many times a commit is tried when the API changed a JobSet of the
  // batch meanwhile (ABORTED).
  static constexpr int kMaxCommitAttempts = 5;

  Applier(store::Store* store, AgentFleet* fleet)
      : store_(store), fleet_(fleet), journal_(store) {}

  // Commits `writes`. A JobSet the API changed since it was read keeps its
  // new spec and metadata, gets the pass's status, and the commit is tried
  // again (as Kubernetes controllers do); one the API deleted is marked
  // deleted and left out. `orders` builds the assignments of
  // writes.launched() (it only reads the state, and runs alongside the
  // store's write). Returns the store's error, or kAborted after
  // kMaxCommitAttempts conflicts; then nothing was told to the fleet and
  // memory is ahead of the store (some JobSets' writes may have landed,
  // never part of one's): the caller must rebuild from the store.
  // When the store refuses the batch as kInvalidArgument (a value or key
  // over its limits), the keys it refused are appended to `refused` (if not
  // null), so that the caller can reject what wrote them.
  absl::Status Apply(PassWrites& writes, ControllerState& state,
                     const std::function<std::vector<Assignment>()>& orders,
                     std::vector<std::string>* refused = nullptr);

  // Completes, or discards, what a commit interrupted by a crash or a store
  // error left in the journal; before the state is loaded. Returns how many
  // journaled commits it completed.
  absl::StatusOr<int> Recover();

  // Tells the fleet what is durable already (after a Load): `orders`, then
  // `stops`.
  void Announce(std::vector<Assignment> orders,
                const std::vector<PodRef>& stops);

 private:
  // Takes the API's changes to `writes`' JobSets after a conflict.
  absl::Status Rebase(PassWrites& writes, ControllerState& state);

  store::Store* const store_;
  AgentFleet* const fleet_;
  PassJournal journal_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_APPLIER_H_
