#include "scheduler/controller/commit_split.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "store/keys.h"

namespace jobset::scheduler {
namespace {

size_t CostOf(const store::Batch::Op& op, const store::CommitLimits& limits) {
  return limits.Cost(op.key, op.value, op.expect != store::Batch::Expect::kAny);
}

}  // namespace

std::string OwnerOf(absl::string_view key) {
  for (absl::string_view prefix :
       {store::keys::kJobSets, store::keys::kJobs, store::keys::kPods,
        store::keys::kEvents, store::keys::kAttempts,
        store::keys::kAttemptPods}) {
    if (!absl::ConsumePrefix(&key, prefix)) continue;
    const size_t ns_end = key.find('/');
    if (ns_end == absl::string_view::npos || ns_end == 0) return "";
    const size_t name_end = key.find('/', ns_end + 1);
    const absl::string_view name =
        key.substr(ns_end + 1, name_end == absl::string_view::npos
                                   ? absl::string_view::npos
                                   : name_end - ns_end - 1);
    if (name.empty()) return "";
    return absl::StrCat(key.substr(0, ns_end), "/", name);
  }
  return "";
}

std::vector<PlannedTxn> SplitByJobSet(store::Batch pass,
                                      const store::CommitLimits& limits) {
  std::vector<PlannedTxn> txns;
  if (pass.empty()) return txns;
  auto fits = [&](size_t ops, size_t bytes) {
    return ops <= limits.max_ops && bytes <= limits.max_bytes;
  };
  std::set<std::string> owners;
  size_t total_bytes = 0;
  for (const store::Batch::Op& op : pass.ops()) {
    owners.insert(OwnerOf(op.key));
    if (!limits.unlimited()) total_bytes += CostOf(op, limits);
  }
  if (limits.unlimited() || fits(pass.ops().size(), total_bytes)) {
    txns.push_back(
        PlannedTxn{std::move(pass), {owners.begin(), owners.end()}, false});
    return txns;
  }
  struct Group {
    store::Batch batch;
    size_t bytes = 0;
  };
  std::map<std::string, Group> groups;
  for (const store::Batch::Op& op : pass.ops()) {
    Group& g = groups[OwnerOf(op.key)];
    g.batch.Add(op);
    g.bytes += CostOf(op, limits);
  }
  PlannedTxn open;
  size_t open_bytes = 0;
  auto close = [&] {
    if (open.owners.empty()) return;
    txns.push_back(std::exchange(open, PlannedTxn()));
    open_bytes = 0;
  };
  for (auto& [owner, g] : groups) {
    const size_t ops = g.batch.ops().size();
    if (!fits(ops, g.bytes)) {
      txns.push_back(PlannedTxn{std::move(g.batch), {owner}, true});
      continue;
    }
    if (!fits(open.batch.ops().size() + ops, open_bytes + g.bytes)) close();
    for (const store::Batch::Op& op : g.batch.ops()) open.batch.Add(op);
    open.owners.push_back(owner);
    open_bytes += g.bytes;
  }
  close();
  return txns;
}

}  // namespace jobset::scheduler
