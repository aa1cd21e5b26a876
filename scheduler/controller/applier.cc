#include "scheduler/controller/applier.h"

#include <set>
#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/parallel.h"
#include "common/status_macros.h"
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
  // The store names the key it refused, C-escaped, in double quotes.
  const absl::string_view message = error.message();
  const size_t open = message.find('"');
  const size_t close =
      open == absl::string_view::npos ? open : message.find('"', open + 1);
  std::string key;
  if (close != absl::string_view::npos &&
      absl::CUnescape(message.substr(open + 1, close - open - 1), &key) &&
      !key.empty()) {
    keys.push_back(std::move(key));
  }
  return keys;
}

absl::Status Applier::Apply(
    PassWrites& writes, ControllerState& state,
    const std::function<std::vector<Assignment>()>& orders,
    std::vector<std::string>* refused) {
  std::vector<Assignment> launch;
  bool built = false;
  bool committed = false;
  for (int attempt = 0; attempt < kMaxCommitAttempts && !committed; ++attempt) {
    const store::Batch batch = writes.ToBatch(state);
    if (batch.empty()) {
      committed = true;
      break;
    }
    absl::StatusOr<int64_t> revision;
    if (!built && !writes.launched().empty()) {
      // The orders are built while the store writes the batch (a conflict
      // changes only JobSet objects, never pods, so they stay right), and
      // handed out once it is durable.
      ParallelFor(2, 2, [&](size_t i) {
        if (i == 0) {
          revision = store_->Commit(batch);
        } else {
          launch = orders();
        }
      });
      built = true;
    } else {
      revision = store_->Commit(batch);
    }
    if (revision.ok()) {
      for (const std::string& key : writes.jobsets()) {
        if (TrackedJobSet* t = state.Find(key); t != nullptr)
          t->revision = *revision;
      }
      committed = true;
      break;
    }
    if (revision.status().code() == absl::StatusCode::kInvalidArgument &&
        refused != nullptr) {
      std::vector<std::string> keys = RefusedKeys(batch, revision.status());
      refused->insert(refused->end(), keys.begin(), keys.end());
    }
    if (revision.status().code() != absl::StatusCode::kAborted)
      return revision.status();
    JOBSET_RETURN_IF_ERROR(Rebase(writes, state));
  }
  if (!committed) {
    return absl::AbortedError(
        absl::StrCat("the controller's commit conflicted with API writes ",
                     kMaxCommitAttempts, " times in a row"));
  }
  // Tell the agents, now that it is durable.
  for (const PodRef& pod : writes.stops()) fleet_->Stop(pod.node, pod.uid);
  if (!built) launch = orders();
  for (Assignment& order : launch) fleet_->Run(std::move(order));
  for (const PodRef& pod : writes.releases())
    fleet_->Release(pod.node, pod.uid);
  return absl::OkStatus();
}

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
