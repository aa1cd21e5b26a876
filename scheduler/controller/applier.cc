#include "scheduler/controller/applier.h"

#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/failpoint.h"
#include "common/parallel.h"
#include "common/quote.h"
#include "common/status_macros.h"
#include "scheduler/controller/commit_split.h"
#include "store/decode.h"
#include "store/keys.h"

namespace jobset::scheduler {

std::vector<std::string> RefusedKeys(const store::Batch& batch,
                                     const absl::Status& error) {
  std::vector<std::string> keys;
  for (const store::Batch::Op& op : batch.ops()) {
    if (op.key.size() > store::Store::kMaxKeyBytes ||
        (op.value.has_value() &&
         op.value->size() > store::Store::kMaxValueBytes)) {
      keys.push_back(op.key);
    }
  }
  if (!keys.empty()) return keys;
  // The store names the key it refused, quoted by Quote (common/quote.h).
  absl::string_view message = error.message();
  const size_t open = message.find('"');
  std::string key;
  if (open != absl::string_view::npos) {
    message.remove_prefix(open);
    if (ConsumeQuoted(&message, &key) && !key.empty()) {
      keys.push_back(std::move(key));
    }
  }
  return keys;
}

absl::Status Applier::Apply(
    PassWrites& writes, ControllerState& state,
    const std::function<std::vector<Assignment>()>& orders,
    std::vector<std::string>* refused) {
  const store::CommitLimits limits = store_->Limits();
  std::vector<Assignment> launch;
  bool built = false;
  // JobSets (by KeyOf) whose writes are durable: a conflict, or an error,
  // in a later transaction of the pass leaves them so.
  std::set<std::string> landed;
  for (int attempt = 0; attempt < kMaxCommitAttempts; ++attempt) {
    store::Batch batch = writes.ToBatch(state);
    if (!landed.empty()) {
      store::Batch rest;
      for (const store::Batch::Op& op : batch.ops()) {
        if (!landed.contains(OwnerOf(op.key))) rest.Add(op);
      }
      batch = std::move(rest);
    }
    std::vector<PlannedTxn> txns = SplitByJobSet(std::move(batch), limits);
    absl::Status failed;
    const store::Batch* failed_batch = nullptr;
    auto commit = [&] {
      for (const PlannedTxn& txn : txns) {
        absl::StatusOr<int64_t> revision = txn.journaled
                                               ? journal_.Commit(txn.batch)
                                               : store_->Commit(txn.batch);
        if (!revision.ok()) {
          failed = revision.status();
          failed_batch = &txn.batch;
          return;
        }
        for (const std::string& owner : txn.owners) {
          landed.insert(owner);
          TrackedJobSet* t = state.Find(owner);
          if (t != nullptr && writes.jobsets().contains(owner))
            t->revision = *revision;
        }
      }
    };
    if (!built && !writes.launched().empty() && !txns.empty()) {
      // The orders are built while the store writes the batch (a conflict
      // changes only JobSet objects, never pods, so they stay right), and
      // handed out once it is durable.
      ParallelFor(2, 2, [&](size_t i) {
        if (i == 0) {
          commit();
        } else {
          launch = orders();
        }
      });
      built = true;
    } else {
      commit();
    }
    if (failed.ok()) {
      // Durable, and no agent knows yet (docs/failpoints.md).
      if (writes.restart_decided())
        JOBSET_FAILPOINT("controller.restart.after_commit");
      if (!writes.launched().empty())
        JOBSET_FAILPOINT("controller.placement.after_commit");
      // Tell the agents, now that it is durable. Releases go before runs:
      // a pod placed on what finished pods held is admitted on a node that
      // has freed their devices (kubelet frees them before it admits).
      for (const PodRef& pod : writes.stops()) fleet_->Stop(pod.node, pod.uid);
      for (const PodRef& pod : writes.releases())
        fleet_->Release(pod.node, pod.uid);
      if (!built) launch = orders();
      for (Assignment& order : launch) fleet_->Run(std::move(order));
      return absl::OkStatus();
    }
    if (failed.code() == absl::StatusCode::kInvalidArgument &&
        refused != nullptr) {
      std::vector<std::string> keys = RefusedKeys(*failed_batch, failed);
      refused->insert(refused->end(), keys.begin(), keys.end());
    }
    if (failed.code() != absl::StatusCode::kAborted) return failed;
    JOBSET_RETURN_IF_ERROR(Rebase(writes, state));
  }
  return absl::AbortedError(
      absl::StrCat("the controller's commit conflicted with API writes ",
                   kMaxCommitAttempts, " times in a row"));
}

absl::StatusOr<int> Applier::Recover() { return journal_.Recover(); }

void Applier::Announce(std::vector<Assignment> orders,
                       const std::vector<PodRef>& stops) {
  for (Assignment& order : orders) fleet_->Run(std::move(order));
  for (const PodRef& pod : stops) fleet_->Stop(pod.node, pod.uid);
}

absl::Status Applier::Rebase(PassWrites& writes, ControllerState& state) {
  std::set<std::string> gone;
  for (const std::string& key : writes.jobsets()) {
    TrackedJobSet& t = *state.Find(key);
    JOBSET_ASSIGN_OR_RETURN(
        std::optional<store::KeyValue> kv,
        store_->Get(store::keys::JobSetKey(t.jobset.metadata().namespace_(),
                                           t.jobset.metadata().name())));
    if (!kv.has_value()) {
      gone.insert(key);
      continue;
    }
    if (kv->mod_revision == t.revision) continue;
    JOBSET_ASSIGN_OR_RETURN(api::JobSet stored,
                            store::DecodeValue<api::JobSet>(*kv));
    *stored.mutable_status() = t.jobset.status();
    t.jobset = std::move(stored);
    t.revision = kv->mod_revision;
    state.MarkDirty(key);
  }
  for (const std::string& key : gone) {
    writes.DropJobSet(key);
    state.Find(key)->deleted = true;
    state.MarkDirty(key);
  }
  return absl::OkStatus();
}

}  // namespace jobset::scheduler
