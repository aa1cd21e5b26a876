#ifndef JOBSET_SCHEDULER_QUEUES_MODEL_H_
#define JOBSET_SCHEDULER_QUEUES_MODEL_H_

// The inputs of Kueue's admission core, as plain values: ResourceFlavors,
// ClusterQueues, Cohorts and Workloads (kueue-semantics.md §1). api_objects.h
// converts the API objects into these; nothing here knows about protos.
//
// Quantities are int64 in one unit per resource: "cpu" in milli-cores
// (cpu: 1 is 1000, 250m is 250), every other resource in its base unit
// (memory and ephemeral-storage in bytes, nvidia.com/gpu and pods in count).
// FormatQuantity() writes them back as Kubernetes does in Kueue's messages.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace jobset::scheduler::queues {

inline constexpr absl::string_view kCpu = "cpu";
inline constexpr absl::string_view kMemory = "memory";
inline constexpr absl::string_view kPods = "pods";

// Quantities by resource name ("cpu" -> 4000).
using ResourceQuantities = std::map<std::string, int64_t>;

// A (flavor, resource) pair: the unit of quota.
struct FlavorResource {
  std::string flavor;
  std::string resource;

  friend bool operator==(const FlavorResource&,
                         const FlavorResource&) = default;
  friend auto operator<=>(const FlavorResource&,
                          const FlavorResource&) = default;
};

// Quantities by (flavor, resource); ordered, so iteration is deterministic.
using FlavorResourceQuantities = std::map<FlavorResource, int64_t>;

// ---------------------------------------------------------------------------
// ResourceFlavor (§1.2)

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
};

enum class TolerationOperator { kEqual, kExists };

struct Toleration {
  std::string key;  // empty with kExists: tolerates every taint
  TolerationOperator op = TolerationOperator::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // unset: every effect
};

struct ResourceFlavor {
  std::string name;
  std::map<std::string, std::string> node_labels;
  std::vector<Taint> node_taints;
  // Added to admitted pods; they also count against node_taints.
  std::vector<Toleration> tolerations;
};

// ---------------------------------------------------------------------------
// ClusterQueue and Cohort (§1.3, §1.5)

struct ResourceQuota {
  std::string name;  // the resource
  int64_t nominal_quota = 0;
  std::optional<int64_t> borrowing_limit;  // unset: unlimited
  std::optional<int64_t> lending_limit;    // unset: lends everything
};

struct FlavorQuotas {
  std::string name;  // the ResourceFlavor
  std::vector<ResourceQuota> resources;
};

struct ResourceGroup {
  std::vector<std::string> covered_resources;
  std::vector<FlavorQuotas> flavors;  // tried in this order
};

enum class QueueingStrategy { kBestEffortFIFO, kStrictFIFO };

// One type for withinClusterQueue (Never, LowerPriority,
// LowerOrNewerEqualPriority) and reclaimWithinCohort (Never, LowerPriority,
// Any), as Kueue's PreemptionPolicy.
enum class PreemptionPolicy {
  kNever,
  kLowerPriority,
  kLowerOrNewerEqualPriority,
  kAny,
};

enum class BorrowWithinCohortPolicy { kNever, kLowerPriority };

struct BorrowWithinCohort {
  BorrowWithinCohortPolicy policy = BorrowWithinCohortPolicy::kNever;
  std::optional<int32_t> max_priority_threshold;
};

struct ClusterQueuePreemption {
  PreemptionPolicy reclaim_within_cohort = PreemptionPolicy::kNever;
  BorrowWithinCohort borrow_within_cohort;
  PreemptionPolicy within_cluster_queue = PreemptionPolicy::kNever;
};

// v1beta2 MayStopSearch; v1beta1 spells it Borrow (whenCanBorrow) and Preempt
// (whenCanPreempt).
enum class FungibilityPolicy { kMayStopSearch, kTryNextFlavor };

enum class FungibilityPreference {
  kBorrowingOverPreemption,
  kPreemptionOverBorrowing,
};

struct FlavorFungibility {
  FungibilityPolicy when_can_borrow = FungibilityPolicy::kMayStopSearch;
  FungibilityPolicy when_can_preempt = FungibilityPolicy::kTryNextFlavor;
  FungibilityPreference preference =
      FungibilityPreference::kBorrowingOverPreemption;
};

enum class StopPolicy { kNone, kHold, kHoldAndDrain };

// namespaceSelector is checked before a workload reaches this core.
struct ClusterQueue {
  std::string name;
  std::string cohort;  // "" for none (v1beta2 cohortName)
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFIFO;
  std::vector<ResourceGroup> resource_groups;
  ClusterQueuePreemption preemption;
  FlavorFungibility flavor_fungibility;
  StopPolicy stop_policy = StopPolicy::kNone;
  // spec.fairSharing.weight (fair sharing only): 0 = always last.
  double fair_weight = 1.0;
};

// A Cohort object. A cohort named by a ClusterQueue or as a parent but with
// no object is a root without quota of its own.
struct Cohort {
  std::string name;
  std::string parent;  // "" for a root
  // An extra shared pool; limits apply only with a parent.
  std::vector<ResourceGroup> resource_groups;
  double fair_weight = 1.0;  // spec.fairSharing.weight
};

// ---------------------------------------------------------------------------
// Workload (§1.8)

// Required node affinity, as Kubernetes' NodeSelectorRequirement.
enum class SelectorOperator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

struct SelectorRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kIn;
  // kGt and kLt: one integer, compared with the label's value as integers.
  std::vector<std::string> values;
};

// Requirements ANDed; the terms of a podSet are ORed.
using NodeSelectorTerm = std::vector<SelectorRequirement>;

// What flavor selection reads from a podSet's pod template.
struct PodPlacement {
  std::map<std::string, std::string> node_selector;
  std::vector<NodeSelectorTerm> required_affinity;  // empty: none
  std::vector<Toleration> tolerations;
};

struct PodSet {
  std::string name;
  int32_t count = 1;
  ResourceQuantities requests;  // per pod, limits already filling requests
  PodPlacement placement;
  // Pods whose Jobs succeeded while admitted: they stop counting (§2.4).
  int32_t reclaimable = 0;
};

struct PodSetAssignment {
  std::string name;
  std::map<std::string, std::string> flavors;  // resource -> flavor
  ResourceQuantities resource_usage;           // the podSet's total
  int32_t count = 0;
};

struct Admission {
  std::string cluster_queue;
  std::vector<PodSetAssignment> pod_set_assignments;
};

struct WorkloadTimes {
  // The heap's timestamp: creation, or the eviction time after a
  // PodsReadyTimeout (GetQueueOrderTimestamp). A preempted workload keeps it.
  absl::Time queue_order = absl::UnixEpoch();
  // When QuotaReserved last became True; unset counts as `now` (§4.2).
  std::optional<absl::Time> quota_reserved;
  // Beyond Kueue: when the admitted JobSet last (re)started, as a proxy for
  // the work a preemption loses; InfinitePast() when unknown.
  absl::Time last_restart = absl::InfinitePast();
  // Beyond Kueue: a minimum runtime; the workload is no preemption candidate
  // before this time.
  absl::Time not_preemptible_before = absl::InfinitePast();
};

struct Workload {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string job_uid;        // label kueue.x-k8s.io/job-uid
  std::string cluster_queue;  // resolved through its LocalQueue
  std::string queue_name;     // spec.queueName: the LocalQueue; "" for none
  int32_t priority = 0;
  // spec.priorityClassName: the WorkloadPriorityClass the priority came
  // from; "" when none did.
  std::string priority_class;
  // spec.maximumExecutionTimeSeconds; unset: no limit.
  std::optional<int32_t> maximum_execution_time_seconds;
  std::vector<PodSet> pod_sets;
  WorkloadTimes times;
  std::optional<Admission> admission;  // set while it holds quota
  bool evicted = false;                // Evicted True, quota not yet released
};

// Returns "<namespace>/<name>".
std::string WorkloadKey(const Workload& workload);

// Returns the quota an admitted workload holds, by (flavor, resource): each
// podSet assignment's resource_usage, less its podSet's reclaimable pods.
// Empty for a workload without admission.
FlavorResourceQuantities AdmittedUsage(const Workload& workload);

// Returns `value` of `resource` as Kueue's messages print it (Kubernetes
// canonical form): cpu as DecimalSI from milli-units ("2", "1500m", "2k");
// memory, ephemeral-storage and hugepages-* as BinarySI ("8Gi", "1536");
// every other resource as DecimalSI ("16", "2k").
std::string FormatQuantity(absl::string_view resource, int64_t value);

// Returns the Kubernetes toleration check for one taint (ToleratesTaint).
bool Tolerates(const Toleration& toleration, const Taint& taint);

// Returns the taint as Go prints a corev1.Taint value in Kueue's messages:
// "{key value NoSchedule <nil>}".
std::string TaintString(const Taint& taint);

}  // namespace jobset::scheduler::queues

#endif  // JOBSET_SCHEDULER_QUEUES_MODEL_H_
