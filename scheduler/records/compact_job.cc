#include <string>

#include "google/protobuf/map.h"
#include "scheduler/records/constants.h"
#include "scheduler/records/records.h"

namespace jobset::scheduler {
namespace {

using StringMap = google::protobuf::Map<std::string, std::string>;

// Upstream's constructJob puts these on the Job as labels and as
// annotations, and on its pod template as both.
constexpr const char* kJobSetKeys[] = {
    kJobSetNameKey,        kJobSetUidKey,
    kReplicatedJobNameKey, kReplicatedJobReplicasKey,
    kGlobalReplicasKey,    kJobIndexKey,
    kJobGlobalIndexKey,    kJobKey,
    kRestartAttemptKey,    kJobRestartAttemptKey,
    kGroupNameKey,         kGroupReplicasKey,
    kJobGroupIndexKey,     kCoordinatorKey};
// And these as annotations on both.
constexpr const char* kPlacementKeys[] = {kExclusiveTopologyKey,
                                          kNodeSelectorStrategyKey};

// Adds (key, from[key]) to `to` for each of `keys` that `from` has and `to`
// lacks.
template <size_t N>
void AddMissing(const StringMap& from, const char* const (&keys)[N],
                StringMap* to) {
  for (const char* key : keys) {
    auto it = from.find(key);
    if (it != from.end() && !to->contains(it->first))
      (*to)[it->first] = it->second;
  }
}

// Erases from `map` each of `keys` whose value there equals `from`'s.
template <size_t N>
void EraseSame(const StringMap& from, const char* const (&keys)[N],
               StringMap* map) {
  for (const char* key : keys) {
    auto it = map->find(key);
    if (it == map->end()) continue;
    auto same = from.find(it->first);
    if (same != from.end() && same->second == it->second) map->erase(it);
  }
}

}  // namespace

void CompactJob(api::Job* job) {
  api::ObjectMeta* meta = job->mutable_metadata();
  api::ObjectMeta* pod =
      job->mutable_spec()->mutable_template_()->mutable_metadata();
  EraseSame(meta->labels(), kJobSetKeys, meta->mutable_annotations());
  EraseSame(meta->labels(), kJobSetKeys, pod->mutable_labels());
  EraseSame(meta->labels(), kJobSetKeys, pod->mutable_annotations());
  EraseSame(meta->annotations(), kPlacementKeys, pod->mutable_annotations());
}

void AddJobSetMetadata(const api::ObjectMeta& job, api::ObjectMeta* pod) {
  AddMissing(job.labels(), kJobSetKeys, pod->mutable_labels());
  AddMissing(job.labels(), kJobSetKeys, pod->mutable_annotations());
  AddMissing(job.annotations(), kPlacementKeys, pod->mutable_annotations());
}

void ExpandJob(api::Job* job) {
  api::ObjectMeta* meta = job->mutable_metadata();
  AddMissing(meta->labels(), kJobSetKeys, meta->mutable_annotations());
  AddJobSetMetadata(
      *meta, job->mutable_spec()->mutable_template_()->mutable_metadata());
}

}  // namespace jobset::scheduler
