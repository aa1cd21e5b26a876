#ifndef JOBSET_SCHEDULER_CONTROLLER_PODS_H_
#define JOBSET_SCHEDULER_CONTROLLER_PODS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
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

// Builds a pod of `job` for completion `index` (-1 for NonIndexed) from its
// pod template, as the Kubernetes Job controller would: name, uid, the
// template's labels and annotations plus batch.kubernetes.io/
// job-completion-index, the stable hostname "<job>-<index>" (Indexed Jobs),
// phase Pending. The pod is not yet placed.
api::Pod ConstructPod(const api::Job& job, int index, const std::string& name,
                      const std::string& uid);

// Binds `pod` to `node` at `host_ip` and resolves every container's
// environment: literal values, the downward API (metadata.name, .namespace,
// .uid, .labels['k'], .annotations['k'], spec.nodeName,
// spec.serviceAccountName, status.hostIP, status.podIP) and jobsetd's
// variables; sets PodScheduled. kInvalidArgument names a fieldRef that
// cannot be resolved.
absl::Status BindPod(const std::string& node, const std::string& host_ip,
                     absl::Time now, api::Pod* pod);

// One line of a JobSet attempt's host table: every pod's hostname, and
// hostname.subdomain, resolve to its node's address.
struct HostEntry {
  std::string address;
  std::vector<std::string> names;
};

// Returns the host table of `pods` (those placed, with hostnames).
std::vector<HostEntry> HostTable(const std::vector<const api::Pod*>& pods);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_PODS_H_
