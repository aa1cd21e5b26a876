#ifndef JOBSET_SCHEDULER_CONTROLLER_JOB_PODS_H_
#define JOBSET_SCHEDULER_CONTROLLER_JOB_PODS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/cluster.pb.h"
#include "store/store.h"

namespace jobset::scheduler {

// A Job's pod records as the store holds them: one JobPods value per Job
// (proto/cluster.proto). Pods still exactly as NewPodRecord created them and
// BindPod bound them, at the same two times, go into its BoundPods columns
// without what follows from their Job (name, phase, condition), and every
// other pod as its whole PodRecord: a restart writes a new attempt's 15,000
// pods in a third of the bytes.

// Serializes `pods` (by name) of Job `job_name` as a JobPods message.
std::string EncodeJobPods(absl::string_view job_name,
                          const std::map<std::string, api::PodRecord>& pods);

// The records stored at `kv` (key "pods/<ns>/<jobset>/<job>"), by name.
// DATA_LOSS naming the key if its value is not a JobPods, or if its columns
// disagree (lengths, a uid not 16 bytes, an index below -1).
absl::StatusOr<std::vector<api::PodRecord>> DecodeJobPods(
    const store::KeyValue& kv);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_JOB_PODS_H_
