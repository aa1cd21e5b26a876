#include "scheduler/server/jobset_counter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "store/keys.h"

namespace jobset::scheduler {
namespace {

constexpr size_t kScanPage = 1000;
constexpr size_t kEventBatch = 10'000;
constexpr int kMaxRescans = 3;

// Returns the namespace of JobSet key "jobsets/<ns>/<name>".
absl::string_view NamespaceOf(absl::string_view key) {
  key.remove_prefix(store::keys::kJobSets.size());
  return key.substr(0, key.find('/'));
}

}  // namespace

JobSetCounter::JobSetCounter(store::Store* store, int64_t max_per_namespace,
                             int64_t max_total)
    : store_(store),
      max_per_namespace_(max_per_namespace),
      max_total_(max_total) {}

absl::Status JobSetCounter::Rescan() {
  counts_.clear();
  total_ = 0;
  pages_.clear();
  std::string after;
  for (bool more = true; more;) {
    JOBSET_ASSIGN_OR_RETURN(
        store::ScanResult page,
        store_->Scan(store::keys::kJobSets, after, kScanPage));
    if (pages_.empty()) revision_ = page.revision;
    more = page.more;
    for (const store::KeyValue& kv : page.kvs) {
      ++counts_[std::string(NamespaceOf(kv.key))];
      ++total_;
    }
    if (!page.kvs.empty()) after = page.kvs.back().key;
    pages_.emplace_back(more ? after : std::string(), page.revision);
  }
  return absl::OkStatus();
}

void JobSetCounter::Apply(const store::Event& event) {
  const std::string& key = event.kv.key;
  if (!pages_.empty()) {
    // The first page whose range holds `key`; the last one holds the rest.
    auto page = std::find_if(pages_.begin(), pages_.end() - 1,
                             [&](const auto& p) { return key <= p.first; });
    if (event.kv.mod_revision <= page->second) return;  // Already seen.
  }
  const absl::string_view ns = NamespaceOf(key);
  if (event.type == store::Event::Type::kDelete) {
    auto it = counts_.find(ns);
    if (it != counts_.end() && --it->second <= 0) counts_.erase(it);
    --total_;
  } else if (event.kv.create_revision == event.kv.mod_revision) {
    ++counts_[std::string(ns)];
    ++total_;
  }
}

absl::Status JobSetCounter::CatchUp() {
  for (int rescans = 0; rescans <= kMaxRescans;) {
    if (revision_ < 0) {
      JOBSET_RETURN_IF_ERROR(Rescan());
      ++rescans;
    }
    // Read first: once no event follows revision_, none up to it exists.
    const int64_t current = store_->CurrentRevision();
    absl::StatusOr<std::vector<store::Event>> events = store_->WaitForEvents(
        store::keys::kJobSets, revision_, absl::InfinitePast(), kEventBatch);
    if (events.status().code() == absl::StatusCode::kOutOfRange) {
      revision_ = -1;  // The history moved on: count again.
      continue;
    }
    if (!events.ok()) return events.status();
    if (events->empty()) {
      // Every page of the last scan was read at or before `current`.
      revision_ = std::max(revision_, current);
      pages_.clear();
      return absl::OkStatus();
    }
    for (const store::Event& event : *events) {
      Apply(event);
      revision_ = event.kv.mod_revision;
    }
  }
  return absl::UnavailableError(
      "the JobSets kept changing while jobsetd counted them; try again");
}

int64_t JobSetCounter::InNamespace(absl::string_view ns) const {
  auto count = counts_.find(ns);
  auto pending = pending_.find(ns);
  return (count == counts_.end() ? 0 : count->second) +
         (pending == pending_.end() ? 0 : pending->second);
}

absl::Status JobSetCounter::Reserve(absl::string_view ns) {
  absl::MutexLock lock(&mu_);
  // Only JobSetApi::Create makes a JobSet, one per commit: since the counts
  // were current at revision_, at most CurrentRevision() - revision_ more
  // were stored (deletes only lower the counts). When even that many more
  // leave room under both limits, reading the history can wait; otherwise
  // (near a limit, or many revisions later) the counts catch up first. A
  // history read per Create under this lock cost 16 concurrent creators
  // about 12% of their rate (docs/benchmarks.md).
  const int64_t unseen =
      revision_ < 0 ? -1 : store_->CurrentRevision() - revision_;
  if (unseen < 0 || InNamespace(ns) + unseen >= max_per_namespace_ ||
      total_ + pending_total_ + unseen >= max_total_) {
    JOBSET_RETURN_IF_ERROR(CatchUp());
  }
  const int64_t in_ns = InNamespace(ns);
  if (in_ns >= max_per_namespace_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "namespace \"", ns, "\" has ", in_ns, " JobSets; the limit is ",
        max_per_namespace_,
        " per namespace (jobsetd --max_jobsets_per_namespace): delete some "
        "first"));
  }
  if (total_ + pending_total_ >= max_total_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "jobsetd holds ", total_ + pending_total_, " JobSets; the limit is ",
        max_total_, " in all (jobsetd --max_jobsets): delete some first"));
  }
  ++pending_[std::string(ns)];
  ++pending_total_;
  return absl::OkStatus();
}

void JobSetCounter::Release(absl::string_view ns) {
  absl::MutexLock lock(&mu_);
  auto it = pending_.find(ns);
  if (it != pending_.end() && --it->second <= 0) pending_.erase(it);
  --pending_total_;
}

absl::StatusOr<int64_t> JobSetCounter::Count(absl::string_view ns) {
  absl::MutexLock lock(&mu_);
  JOBSET_RETURN_IF_ERROR(CatchUp());
  if (ns.empty()) return total_;
  auto it = counts_.find(ns);
  return it == counts_.end() ? 0 : it->second;
}

}  // namespace jobset::scheduler
