#include <optional>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/quote.h"
#include "common/status_macros.h"
#include "scheduler/records/records.h"
#include "store/decode.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {

absl::StatusOr<std::optional<StoredJobPods>> ReadJobPodsRecord(
    store::Store* store, const store::KeyValue& kv) {
  JOBSET_ASSIGN_OR_RETURN(std::vector<api::PodRecord> records,
                          DecodeJobPods(kv));
  const std::optional<JobPodsKeyParts> key = ParseJobPodsKey(kv.key);
  if (!key.has_value()) return std::nullopt;  // DecodeJobPods checked.
  // One Get per record (a Job's chunk), nothing cached: a listing holds one
  // Job at a time and sees each Job as it is now.
  JOBSET_ASSIGN_OR_RETURN(
      std::optional<store::KeyValue> job_kv,
      store->Get(store::keys::JobKey(key->ns, key->jobset, key->job)));
  if (!job_kv.has_value()) return std::nullopt;  // Deleted since.
  JOBSET_ASSIGN_OR_RETURN(api::Job job, store::DecodeValue<api::Job>(*job_kv));
  return StoredJobPods{.job = std::move(job), .records = std::move(records)};
}

absl::StatusOr<StoredPods> ReadStoredPods(store::Store* store,
                                          absl::string_view prefix) {
  if (!absl::StartsWith(prefix, store::keys::kPods)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Quote(prefix), " is not a pods prefix"));
  }
  StoredPods out;
  auto add_job_pods = [&](const store::KeyValue& kv) -> absl::Status {
    JOBSET_ASSIGN_OR_RETURN(std::optional<StoredJobPods> stored,
                            ReadJobPodsRecord(store, kv));
    if (!stored.has_value()) return absl::OkStatus();
    for (const api::PodRecord& record : stored->records) {
      out.pods.push_back(ClientPod(stored->job, record));
    }
    return absl::OkStatus();
  };
  JOBSET_ASSIGN_OR_RETURN(
      out.revision, store::ScanAllWithRevision(*store, prefix, add_job_pods));
  return out;
}

}  // namespace jobset::scheduler
