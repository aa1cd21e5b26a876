#ifndef JOBSET_SCHEDULER_RECORDS_ATTEMPT_PODS_H_
#define JOBSET_SCHEDULER_RECORDS_ATTEMPT_PODS_H_

// Earlier attempts' pods: what the controller keeps of the pods it erased
// (a restart's previous attempt, pods a suspension stopped, what a finished
// JobSet tore down), so that their agents' logs can still be found after a
// restart gave the pods new names (`jobsetctl logs POD --attempt N`,
// `--previous`). Stored as proto/cluster.proto AttemptPods, one part per
// erasure, and AttemptHistory, which attempts are stored (keys:
// store/keys.h AttemptPodsKey, AttemptHistoryKey). The controller writes
// them (scheduler/controller/attempt_pods.h); the log service reads them.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/cluster.pb.h"
#include "store/store.h"

namespace jobset::scheduler {

// jobsetd --attempt_history: how many restart attempts of a JobSet, the
// current one included, its goodput lists and whose pods' logs stay
// readable.
inline constexpr int kDefaultAttemptHistory = 10;
inline constexpr int kMaxAttemptHistory = 100;

// The most bytes the parts of one attempt take together: far below etcd's
// 1.5 MiB transaction (and the store's 3 MiB value), so that a part commits
// with the rest of its JobSet's writes. Pods beyond are not kept, only
// counted (AttemptPods.pods_dropped): some 25,000 pods fit, each on its own
// node (more when nodes hold several). A part written when the attempt is
// full holds only that count (some 60 bytes over).
inline constexpr size_t kMaxAttemptPodsBytes = 1 << 20;
// The most parts one attempt has (an erasure each: suspensions, then the
// restart); the pods of later erasures are not kept.
inline constexpr int kMaxAttemptParts = 16;

// The attempts a JobSet keeps the pods of: [first, last].
struct AttemptRange {
  int32_t first = 0;
  int32_t last = 0;
  bool Contains(int32_t attempt) const {
    return attempt >= first && attempt <= last;
  }
};

// The last `history` attempts of a JobSet at status.restarts `restarts`,
// the current one included (as its goodput ledger's; `history` below 1
// counts as 1).
AttemptRange KeptAttempts(int32_t restarts, int history);

// Builds one AttemptPods part of at most `max_bytes` serialized: pods that
// would not fit, or whose uid is not a UUID (jobsetd makes none), are
// counted in pods_dropped instead. Thread-compatible.
class AttemptPodsBuilder {
 public:
  AttemptPodsBuilder(absl::string_view jobset_uid, int32_t attempt,
                     size_t max_bytes);

  // Adds `pod` (placed: it has a node) of Job `job` of ReplicatedJob
  // `replicated_job`. Returns whether it was kept.
  bool Add(absl::string_view job, absl::string_view replicated_job,
           const api::PodRecord& pod);

  // Pods kept so far.
  int64_t pods() const { return pods_; }
  // An upper bound of the part's serialized size.
  size_t bytes() const { return bytes_; }
  // Returns the part (the builder is left empty).
  api::AttemptPods Build();

 private:
  api::AttemptPods record_;
  size_t max_bytes_;
  size_t bytes_;
  int64_t pods_ = 0;
  // Views of the record's own strings (a repeated field's elements never
  // move): no copy per node.
  absl::flat_hash_map<absl::string_view, int32_t> node_index_;
  absl::flat_hash_map<absl::string_view, int> job_index_;
};

// One pod of an attempt, as stored.
struct AttemptPod {
  std::string name{};
  std::string uid{};
  std::string node{};
  std::string job{};
  std::string replicated_job{};
  int32_t completion_index = -1;
  bool operator==(const AttemptPod&) const = default;
};

// The pods of part `record` stored at `key`. DATA_LOSS naming the key when
// its columns disagree (lengths, a node index out of range).
absl::StatusOr<std::vector<AttemptPod>> ExpandAttemptPods(
    const api::AttemptPods& record, absl::string_view key);

// What is stored of one attempt of a JobSet: its pods in the order they
// were erased (parts in order), and how many were not kept.
struct StoredAttempt {
  int32_t attempt = 0;
  std::vector<AttemptPod> pods{};
  int64_t pods_dropped = 0;
};

// Reads the stored pods of JobSet `ns`/`name` whose uid is `jobset_uid`
// (parts left by an earlier JobSet of that name are skipped): of attempt
// `attempt`, or of every attempt when it is negative, oldest first.
// DATA_LOSS naming the key of a part that does not decode.
absl::StatusOr<std::vector<StoredAttempt>> ReadAttemptPods(
    store::Store* store, absl::string_view ns, absl::string_view name,
    absl::string_view jobset_uid, int32_t attempt = -1);

// Selects from `pods` (one attempt's) the pod named `name`; failing that,
// when `job` is not empty, Job `job`'s pod of completion index `index` (the
// last erased of several: a suspension's, then the restart's). kNotFound
// when there is none; kFailedPrecondition naming them when a NonIndexed
// Job (index -1) had several.
absl::StatusOr<AttemptPod> SelectAttemptPod(const std::vector<AttemptPod>& pods,
                                            absl::string_view name,
                                            absl::string_view job,
                                            int32_t index);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_RECORDS_ATTEMPT_PODS_H_
