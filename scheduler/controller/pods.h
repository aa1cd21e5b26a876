#ifndef JOBSET_SCHEDULER_CONTROLLER_PODS_H_
#define JOBSET_SCHEDULER_CONTROLLER_PODS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"

namespace jobset::scheduler {

// Environment variables jobsetd adds to every container, beyond upstream
// (which injects none; Kubernetes adds JOB_COMPLETION_INDEX). Documented in
// scheduler/README.md. A container's own variable of the same name wins.
inline constexpr char kEnvJobSetName[] = "JOBSET_NAME";
inline constexpr char kEnvJobSetNamespace[] = "JOBSET_NAMESPACE";
inline constexpr char kEnvReplicatedJob[] = "JOBSET_REPLICATED_JOB";
inline constexpr char kEnvJobIndex[] = "JOBSET_JOB_INDEX";
inline constexpr char kEnvJobGlobalIndex[] = "JOBSET_JOB_GLOBAL_INDEX";
inline constexpr char kEnvRestartAttempt[] = "JOBSET_RESTART_ATTEMPT";
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

// What an agent needs of a pod's record to run it: launch orders carry this
// rather than the record, so that a restart's 15,000 orders copy five
// fields each, not the pod's status.
struct LaunchPod {
  std::string name;
  std::string uid;
  int32_t completion_index = -1;
  std::string node;
  std::string host_ip;
  absl::Time created;
};

// The parts of `record` an agent needs.
LaunchPod LaunchPodOf(const api::PodRecord& record);

// Builds the full pod of `record` in `job`, as the Kubernetes Job controller
// and kubelet would have it: the template's metadata and spec, name, uid,
// batch.kubernetes.io/job-name, controller-uid and job-completion-index,
// the stable hostname "<job>-<index>" (Indexed Jobs), the record's
// timestamps (or the Job's deletionTimestamp, when the Job is being deleted)
// and status; once bound, spec.nodeName and every container's
// environment resolved: literal values, the downward API (metadata.name,
// .namespace, .uid, .labels['k'], .annotations['k'], spec.nodeName,
// spec.serviceAccountName, status.hostIP, status.podIP) and jobsetd's
// variables.
api::Pod ExpandPod(const api::Job& job, const api::PodRecord& record);
// The same for a pod being launched (its status only the host's address).
api::Pod ExpandPod(const api::Job& job, const LaunchPod& pod);

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

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_PODS_H_
