#ifndef JOBSET_SCHEDULER_RECORDS_RECORDS_H_
#define JOBSET_SCHEDULER_RECORDS_RECORDS_H_

// The controller's stored, compact form of Jobs and pods, and how the full
// objects are built back from it: the one header the controller, the API
// server and the agent hub read it through. The format is described in
// scheduler/records/README.md.

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/pod_config.h"
#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"
#include "store/store.h"

namespace jobset::scheduler {

// ---- Jobs ----

// jobsetd holds and stores child Jobs compact. Upstream's constructJob puts
// the JobSet's keys (jobset-name, job-index, ... coordinator) on a Job as
// labels and again as annotations, and both again on its pod template, with
// the placement annotations (exclusive-topology, node-selector) on the Job
// and the template; a compact Job has each once, as the Job's labels and
// placement annotations, which is a third of the bytes. Clients and pods
// see upstream's shape: ExpandJob restores it, and ExpandPod builds pods
// with AddJobSetMetadata.
//
// CompactJob removes the copies that equal the Job's own; ExpandJob adds
// back every one that is missing (so a Job whose template lacked one of the
// Job's keys would gain it: jobsetd makes none).
void CompactJob(api::Job* job);
void ExpandJob(api::Job* job);
// Adds compact Job `job`'s JobSet keys (labels, also as annotations) and
// placement annotations to `pod` (a pod's or pod template's metadata) where
// it lacks them.
void AddJobSetMetadata(const api::ObjectMeta& job, api::ObjectMeta* pod);

// ---- Pods ----

// Environment variables jobsetd adds to every container, beyond upstream
// (which injects none; Kubernetes adds JOB_COMPLETION_INDEX). Documented in
// scheduler/README.md. A container's own variable of the same name wins.
inline constexpr char kEnvJobSetName[] = "JOBSET_NAME";
inline constexpr char kEnvJobSetNamespace[] = "JOBSET_NAMESPACE";
inline constexpr char kEnvReplicatedJob[] = "JOBSET_REPLICATED_JOB";
inline constexpr char kEnvJobIndex[] = "JOBSET_JOB_INDEX";
inline constexpr char kEnvJobGlobalIndex[] = "JOBSET_JOB_GLOBAL_INDEX";
inline constexpr char kEnvRestartAttempt[] = "JOBSET_RESTART_ATTEMPT";
// restartStrategy InPlaceRestart only: the attempt, as the pod's
// jobset.sigs.k8s.io/in-place-restart-attempt annotation.
inline constexpr char kEnvInPlaceRestartAttempt[] =
    "JOBSET_IN_PLACE_RESTART_ATTEMPT";
inline constexpr char kEnvCoordinator[] = "JOBSET_COORDINATOR";
inline constexpr char kEnvPodHostname[] = "JOBSET_POD_HOSTNAME";
inline constexpr char kEnvCompletionIndex[] = "JOB_COMPLETION_INDEX";

// A pod is kept as a PodRecord (proto/cluster.proto): its name, uid,
// completion index, node, status and the time it was bound. Everything else
// follows from its Job.

// The name of pod `index` (-1: NonIndexed) of Job `job` with uid `uid`:
// "<job>-<index>-<first five of uid>" ("<job>-<first five>" when
// NonIndexed), as Kubernetes names a Job's pods.
std::string PodName(absl::string_view job, int index, absl::string_view uid);
// The same, appended to `out`.
void AppendPodName(absl::string_view job, int index, absl::string_view uid,
                   std::string* out);

// Returns a new, unplaced record: phase Pending.
api::PodRecord NewPodRecord(std::string name, std::string uid, int index,
                            absl::Time now);

// What an agent needs of a pod's record to run it: assignments carry this
// rather than the record, so that a restart's 15,000 orders copy five
// fields each, not the pod's status.
struct AssignedPod {
  std::string name;
  std::string uid;
  int32_t completion_index = -1;
  std::string node;
  std::string host_ip;
  absl::Time created;
  // restartStrategy InPlaceRestart: the attempt the agent runs the pod at.
  std::optional<int32_t> in_place_attempt;
};

// The parts of `record` an agent needs.
AssignedPod AssignedPodOf(const api::PodRecord& record);

// Builds the full pod of `record` in `job`, as the Kubernetes Job controller
// and kubelet would have it: the template's metadata and spec, name, uid,
// batch.kubernetes.io/job-name, controller-uid and job-completion-index,
// the stable hostname "<job>-<index>" (Indexed Jobs), the record's
// timestamps (or the Job's deletionTimestamp, when the Job is being deleted)
// and status; once bound, spec.nodeName and every container's
// environment resolved: literal values, the downward API (metadata.name,
// .namespace, .uid, .labels['k'], .annotations['k'], spec.nodeName,
// spec.serviceAccountName, status.hostIP, status.podIP) and jobsetd's
// variables. secretKeyRef/configMapKeyRef variables and envFrom stay as the
// template has them (references: what clients see), unless `config` (what
// the pod takes from its Secrets and ConfigMaps, for its agent only) is
// given: then envFrom's variables come before env's (env wins, as in
// Kubernetes; both win over jobsetd's), key references become their values
// (an optional missing one is left out) and envFrom is cleared.
api::Pod ExpandPod(const api::Job& job, const api::PodRecord& record,
                   const api::PodConfig* config = nullptr);
// The same for a pod being launched (its status only the host's address).
api::Pod ExpandPod(const api::Job& job, const AssignedPod& pod,
                   const api::PodConfig* config = nullptr);

// The pod of `record` as API responses serve it: ExpandPod's, with its
// status in Kubernetes' core/v1 form (container_status.h
// ToKubernetesPodStatus) rather than the flat form agents report.
api::Pod ClientPod(const api::Job& job, const api::PodRecord& record);

// Checks that the environment of `job`'s pod template can be resolved:
// kInvalidArgument names a fieldRef that cannot.
absl::Status CheckPodEnv(const api::Job& job);

// Binds `record` to `node` at `host_ip` at `now` (ExpandPod shows it as
// PodScheduled=True), dropping a PodScheduled=False it had.
void BindPod(const std::string& node, const std::string& host_ip,
             absl::Time now, api::PodRecord* record);

// The stable hostname of pod `index` of `job` ("" for NonIndexed Jobs).
std::string PodHostname(const api::Job& job, int index);

// One line of a JobSet attempt's host table: every pod's hostname, and
// hostname.subdomain, resolve to its node's address.
struct HostEntry {
  std::string address;
  std::vector<std::string> names;
};

// Returns the host table of `pods` (each with its Job; those placed, with
// hostnames).
std::vector<HostEntry> HostTable(
    const std::vector<std::pair<const api::Job*, const api::PodRecord*>>& pods);

// A JobSet attempt's host table as its assignments share it: the entries,
// and their wire form (PodAssignment.hosts_table, api/host_table.h), encoded
// once, by whichever agent stream sends the table first, so that a P-pod
// attempt compresses one table, not P. Thread-safe.
class SharedHostTable {
 public:
  explicit SharedHostTable(std::vector<HostEntry> entries = {})
      : entries_(std::move(entries)) {}
  SharedHostTable(const SharedHostTable&) = delete;
  SharedHostTable& operator=(const SharedHostTable&) = delete;

  const std::vector<HostEntry>& entries() const { return entries_; }
  // Returns the encoded table ("" when it has no entries); the first call
  // encodes it, later ones return the same bytes.
  const std::string& Encoded() const;

 private:
  const std::vector<HostEntry> entries_;
  mutable std::once_flag encoded_once_;
  mutable std::string encoded_;
};

// ---- Pod records in the store ----

// A Job's pod records as the store holds them: one JobPods value per Job
// (proto/cluster.proto). Pods still exactly as NewPodRecord created them and
// BindPod bound them, at the same two times, go into its BoundPods columns
// without what follows from their Job (name, phase, condition), and every
// other pod as its whole PodRecord: a restart writes a new attempt's 15,000
// pods in a third of the bytes.

// Serializes `pods` (by name) of Job `job_name` as a JobPods message.
std::string EncodeJobPods(absl::string_view job_name,
                          const std::map<std::string, api::PodRecord>& pods);

// A Job whose pods take more than this is stored in chunks, each a JobPods
// value of at most this many bytes (a pod is never split: a value is larger
// only when one pod alone is), so that no record reaches the store's value
// limit (store::Store::kMaxValueBytes, 3 MiB) however many pods a Job has.
inline constexpr size_t kMaxJobPodsChunkBytes = 1 << 20;

// Serializes `pods` of Job `job_name` as one or more JobPods values of at
// most `max_bytes` each (see kMaxJobPodsChunkBytes), chunk 0 first; each
// pod is in exactly one. Empty `pods` make one empty chunk.
std::vector<std::string> EncodeJobPodsChunks(
    absl::string_view job_name,
    const std::map<std::string, api::PodRecord>& pods,
    size_t max_bytes = kMaxJobPodsChunkBytes);

// Returns the key of chunk `chunk` of Job `job`'s pods: chunk 0 is
// "pods/<ns>/<jobset>/<job>" (store::keys::JobPodsKey, where a jobsetd that
// did not split stored all of a Job's pods), chunk i > 0
// "pods/<ns>/<jobset>/<job>/<i>".
std::string JobPodsChunkKey(absl::string_view ns, absl::string_view jobset,
                            absl::string_view job, int chunk);

// What a pods key names; nothing if it is not one.
struct JobPodsKeyParts {
  std::string ns, jobset, job;
  int chunk = 0;
};
std::optional<JobPodsKeyParts> ParseJobPodsKey(absl::string_view key);

// The records stored at `kv` (a key of JobPodsChunkKey's form), by name.
// DATA_LOSS naming the key if its value is not a JobPods, or if its columns
// disagree (lengths, a uid not 16 bytes, an index below -1); INVALID_ARGUMENT
// if the key is not a pods key.
absl::StatusOr<std::vector<api::PodRecord>> DecodeJobPods(
    const store::KeyValue& kv);

// ---- Reading pods back, for clients ----

// Full pods read back from the store, for clients (the API's pod listing,
// logs): the controller stores one JobPods record per Job
// ("pods/<ns>/<jobset>/<job>"), and each pod is built from its Job
// ("jobs/<ns>/<jobset>/<job>") and its record with ClientPod.
struct StoredPods {
  std::vector<api::Pod> pods;  // By Job key, then as the Job lists them.
  int64_t revision = 0;        // The store revision of the first page read.
};

// One pods record (a chunk of a Job's pods) and the Job it belongs to, read
// now; nothing when the key is not a pods key or the Job is gone (deleted
// between the two reads). DATA_LOSS naming the key if a value does not decode.
struct StoredJobPods {
  api::Job job;
  std::vector<api::PodRecord> records;  // By name.
};
absl::StatusOr<std::optional<StoredJobPods>> ReadJobPodsRecord(
    store::Store* store, const store::KeyValue& kv);

// Reads every pod under `prefix` ("pods/<ns>/" or "pods/<ns>/<jobset>/"),
// every chunk of each Job's.
// A record whose Job is gone (deleted between the two reads) is skipped;
// a value that does not decode is DATA_LOSS naming the key; a prefix outside
// "pods/" is INVALID_ARGUMENT.
absl::StatusOr<StoredPods> ReadStoredPods(store::Store* store,
                                          absl::string_view prefix);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_RECORDS_RECORDS_H_
