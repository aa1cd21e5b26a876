#ifndef JOBSET_SCHEDULER_RECORDS_CONSTANTS_H_
#define JOBSET_SCHEDULER_RECORDS_CONSTANTS_H_

// Upstream JobSet's label, annotation, condition and reason names
// (pkg/constants, api/jobset/v1alpha2), spelled exactly as upstream.
namespace jobset::scheduler {

// Labels and annotations on every child Job and pod.
inline constexpr char kJobSetNameKey[] = "jobset.sigs.k8s.io/jobset-name";
inline constexpr char kJobSetUidKey[] = "jobset.sigs.k8s.io/jobset-uid";
inline constexpr char kReplicatedJobNameKey[] =
    "jobset.sigs.k8s.io/replicatedjob-name";
inline constexpr char kReplicatedJobReplicasKey[] =
    "jobset.sigs.k8s.io/replicatedjob-replicas";
inline constexpr char kGlobalReplicasKey[] =
    "jobset.sigs.k8s.io/global-replicas";
inline constexpr char kJobIndexKey[] = "jobset.sigs.k8s.io/job-index";
inline constexpr char kJobGlobalIndexKey[] =
    "jobset.sigs.k8s.io/job-global-index";
inline constexpr char kJobKey[] = "jobset.sigs.k8s.io/job-key";
inline constexpr char kRestartAttemptKey[] =
    "jobset.sigs.k8s.io/restart-attempt";
inline constexpr char kJobRestartAttemptKey[] =
    "jobset.sigs.k8s.io/job-restart-attempt";
// restartStrategy InPlaceRestart: the attempt a pod runs (KEP-467).
inline constexpr char kInPlaceRestartAttemptKey[] =
    "jobset.sigs.k8s.io/in-place-restart-attempt";
inline constexpr char kGroupNameKey[] = "jobset.sigs.k8s.io/group-name";
inline constexpr char kGroupReplicasKey[] = "jobset.sigs.k8s.io/group-replicas";
inline constexpr char kJobGroupIndexKey[] =
    "jobset.sigs.k8s.io/job-group-index";
inline constexpr char kCoordinatorKey[] = "jobset.sigs.k8s.io/coordinator";
inline constexpr char kExclusiveTopologyKey[] =
    "alpha.jobset.sigs.k8s.io/exclusive-topology";
inline constexpr char kNodeSelectorStrategyKey[] =
    "alpha.jobset.sigs.k8s.io/node-selector";
// Server-owned annotation: the Pod Security level (privileged, baseline,
// restricted) that jobsetd admitted the JobSet's pod templates at, its
// namespace's enforce level then. Copied to its Jobs (from the JobSet only)
// and sent to the agents, which run a container without runAsUser as root
// only at privileged (--default_pod_uid otherwise). Whatever a client sends
// under this key is replaced.
inline constexpr char kPodSecurityLevelKey[] = "jobsetd.io/pod-security-level";
inline constexpr char kCompletionIndexKey[] =
    "batch.kubernetes.io/job-completion-index";
// The label Kubernetes' Job controller puts on its pods: their Job's name.
inline constexpr char kBatchJobNameKey[] = "batch.kubernetes.io/job-name";
inline constexpr char kJobSetControllerName[] =
    "jobset.sigs.k8s.io/jobset-controller";

// JobSet condition types.
inline constexpr char kConditionCompleted[] = "Completed";
inline constexpr char kConditionFailed[] = "Failed";
inline constexpr char kConditionSuspended[] = "Suspended";
inline constexpr char kConditionStartupPolicyInProgress[] =
    "StartupPolicyInProgress";
inline constexpr char kConditionStartupPolicyCompleted[] =
    "StartupPolicyCompleted";
inline constexpr char kConditionRestartingJobSet[] = "RestartingJobSet";

// Job condition types.
inline constexpr char kJobComplete[] = "Complete";
inline constexpr char kJobFailed[] = "Failed";
inline constexpr char kJobFailureTarget[] = "FailureTarget";
inline constexpr char kJobSuspended[] = "Suspended";

// Pod condition types the controller sets.
inline constexpr char kPodScheduled[] = "PodScheduled";

// Terminal states.
inline constexpr char kTerminalCompleted[] = "Completed";
inline constexpr char kTerminalFailed[] = "Failed";

// Failure policy actions.
inline constexpr char kFailJobSet[] = "FailJobSet";
inline constexpr char kRestartJobSet[] = "RestartJobSet";
inline constexpr char kRestartJobSetAndIgnoreMaxRestarts[] =
    "RestartJobSetAndIgnoreMaxRestarts";
inline constexpr char kRestartJob[] = "RestartJob";
inline constexpr char kRestartJobAndIgnoreMaxRestarts[] =
    "RestartJobAndIgnoreMaxRestarts";

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_RECORDS_CONSTANTS_H_
