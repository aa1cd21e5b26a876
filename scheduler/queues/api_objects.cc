#include "scheduler/queues/api_objects.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "api/field_errors.h"
#include "api/quantity.h"
#include "common/quote.h"

namespace jobset::scheduler::queues {
namespace {

constexpr absl::string_view kKueueApiVersion = "kueue.x-k8s.io/v1beta1";
constexpr absl::string_view kWorkloadKind = "Workload";

// Condition types and Evicted reasons that set a queue-order timestamp
// (Kueue's apis/kueue/v1beta1 constants).
constexpr absl::string_view kEvicted = "Evicted";
constexpr absl::string_view kQuotaReserved = "QuotaReserved";
constexpr absl::string_view kPodsReadyTimeout = "PodsReadyTimeout";
constexpr absl::string_view kAdmissionCheck = "AdmissionCheck";

// Quantities in thousandths of a unit, by resource; std::less<> so that a
// string_view finds a key.
using MilliMap = std::map<std::string, int64_t, std::less<>>;

absl::Status Invalid(absl::string_view path, absl::string_view detail) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", detail));
}

// `path: Unsupported value: "v": supported values: "A", "B"`, in
// FieldErrors' words.
absl::Status NotSupported(absl::string_view path, absl::string_view value,
                          absl::Span<const absl::string_view> supported) {
  api::FieldErrors errors;
  errors.NotSupported(path, value, supported);
  return absl::InvalidArgumentError(errors.errors().front().ToString());
}

// Reads one quantity into thousandths of a unit. ParseQuantity's message
// echoes the text unquoted; the text is quoted here instead, as every
// message quotes what it echoes (common/quote.h).
absl::StatusOr<int64_t> ParseMilli(absl::string_view text,
                                   absl::string_view path) {
  absl::StatusOr<api::Quantity> quantity = api::ParseQuantity(text);
  if (!quantity.ok()) {
    return Invalid(path, absl::StrCat("quantity ", Quote(text),
                                      quantity.status().code() ==
                                              absl::StatusCode::kOutOfRange
                                          ? " is too large"
                                          : " is malformed"));
  }
  if (quantity->MilliValue() < 0) {
    return Invalid(path, "must be greater than or equal to 0");
  }
  return quantity->MilliValue();
}

// Kueue's ResourceValue of a value in thousandths.
int64_t ToModelUnits(absl::string_view resource, int64_t milli) {
  return resource == kCpu ? milli : api::Quantity::FromMilli(milli).Value();
}

// One container's requests, each missing one filled by its limit
// (UseLimitsAsMissingRequestsInPod), in thousandths of a unit.
absl::StatusOr<MilliMap> ContainerRequests(const api::Container& container,
                                           absl::string_view path) {
  MilliMap out;
  const api::ResourceRequirements& resources = container.resources();
  // Sorted, so that the first error reported does not depend on hashing.
  const std::map<std::string, std::string> requests(
      resources.requests().begin(), resources.requests().end());
  const std::map<std::string, std::string> limits(resources.limits().begin(),
                                                  resources.limits().end());
  auto add = [&](const std::map<std::string, std::string>& list,
                 absl::string_view field) -> absl::Status {
    for (const auto& [name, text] : list) {
      absl::StatusOr<int64_t> milli = ParseMilli(
          text, api::Key(absl::StrCat(path, ".resources.", field), name));
      if (!milli.ok()) return milli.status();
      out.try_emplace(name, *milli);  // a request wins
    }
    return absl::OkStatus();
  };
  if (absl::Status s = add(requests, "requests"); !s.ok()) return s;
  if (absl::Status s = add(limits, "limits"); !s.ok()) return s;
  return out;
}

// Kubernetes' PodRequests without sidecars or overhead (the proto has
// neither): per resource, max(sum over containers, max over init
// containers).
absl::StatusOr<MilliMap> PodRequestsMilli(const api::PodSpec& spec,
                                          absl::string_view path) {
  MilliMap sum;
  for (int i = 0; i < spec.containers_size(); ++i) {
    absl::StatusOr<MilliMap> one = ContainerRequests(
        spec.containers(i), api::Index(api::Child(path, "containers"), i));
    if (!one.ok()) return one.status();
    for (const auto& [name, milli] : *one) {
      if (__builtin_add_overflow(sum[name], milli, &sum[name])) {
        return Invalid(api::Child(path, "containers"),
                       absl::StrCat("the total request of ", name,
                                    " does not fit in 64 bits"));
      }
    }
  }
  for (int i = 0; i < spec.init_containers_size(); ++i) {
    absl::StatusOr<MilliMap> one =
        ContainerRequests(spec.init_containers(i),
                          api::Index(api::Child(path, "initContainers"), i));
    if (!one.ok()) return one.status();
    for (const auto& [name, milli] : *one) {
      int64_t& slot = sum[name];
      slot = std::max(slot, milli);
    }
  }
  return sum;
}

absl::StatusOr<TaintEffect> ConvertEffect(absl::string_view effect,
                                          absl::string_view path) {
  if (effect == "NoSchedule") return TaintEffect::kNoSchedule;
  if (effect == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (effect == "NoExecute") return TaintEffect::kNoExecute;
  return NotSupported(path, effect,
                      {"NoExecute", "NoSchedule", "PreferNoSchedule"});
}

absl::StatusOr<Toleration> ConvertToleration(const api::Toleration& in,
                                             absl::string_view path) {
  Toleration out;
  out.key = in.key();
  out.value = in.value();
  if (in.operator_().empty() || in.operator_() == "Equal") {
    out.op = TolerationOperator::kEqual;
  } else if (in.operator_() == "Exists") {
    out.op = TolerationOperator::kExists;
  } else {
    return NotSupported(api::Child(path, "operator"), in.operator_(),
                        {"Equal", "Exists"});
  }
  if (!in.effect().empty()) {
    absl::StatusOr<TaintEffect> effect =
        ConvertEffect(in.effect(), api::Child(path, "effect"));
    if (!effect.ok()) return effect.status();
    out.effect = *effect;
  }
  return out;
}

absl::StatusOr<std::vector<Toleration>> ConvertTolerations(
    const google::protobuf::RepeatedPtrField<api::Toleration>& in,
    absl::string_view path) {
  std::vector<Toleration> out;
  for (int i = 0; i < in.size(); ++i) {
    absl::StatusOr<Toleration> toleration =
        ConvertToleration(in[i], api::Index(path, i));
    if (!toleration.ok()) return toleration.status();
    out.push_back(*std::move(toleration));
  }
  return out;
}

absl::StatusOr<SelectorOperator> ConvertOperator(absl::string_view op,
                                                 absl::string_view path) {
  if (op == "In") return SelectorOperator::kIn;
  if (op == "NotIn") return SelectorOperator::kNotIn;
  if (op == "Exists") return SelectorOperator::kExists;
  if (op == "DoesNotExist") return SelectorOperator::kDoesNotExist;
  if (op == "Gt") return SelectorOperator::kGt;
  if (op == "Lt") return SelectorOperator::kLt;
  return NotSupported(path, op,
                      {"DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"});
}

// What flavor selection reads from the pod template (FA flavorSelector and
// the taint check).
absl::StatusOr<PodPlacement> PlacementFor(const api::PodSpec& spec,
                                          absl::string_view path) {
  PodPlacement out;
  out.node_selector.insert(spec.node_selector().begin(),
                           spec.node_selector().end());
  const api::NodeAffinity& affinity = spec.affinity().node_affinity();
  if (affinity.has_required_during_scheduling_ignored_during_execution()) {
    const std::string terms_path = api::Child(
        path,
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms");
    const auto& terms =
        affinity.required_during_scheduling_ignored_during_execution()
            .node_selector_terms();
    for (int i = 0; i < terms.size(); ++i) {
      NodeSelectorTerm term;
      for (int j = 0; j < terms[i].match_expressions_size(); ++j) {
        const api::NodeSelectorRequirement& in = terms[i].match_expressions(j);
        absl::StatusOr<SelectorOperator> op = ConvertOperator(
            in.operator_(),
            api::Child(api::Index(api::Child(api::Index(terms_path, i),
                                             "matchExpressions"),
                                  j),
                       "operator"));
        if (!op.ok()) return op.status();
        term.push_back(SelectorRequirement{
            in.key(), *op, {in.values().begin(), in.values().end()}});
      }
      out.required_affinity.push_back(std::move(term));
    }
  }
  absl::StatusOr<std::vector<Toleration>> tolerations =
      ConvertTolerations(spec.tolerations(), api::Child(path, "tolerations"));
  if (!tolerations.ok()) return tolerations.status();
  out.tolerations = *std::move(tolerations);
  return out;
}

// An enumeration's spellings and the value each reads as; the first entry's
// value is also what "" reads as (the CRD default).
template <typename Enum>
struct Spelling {
  absl::string_view text;
  Enum value;
};

template <typename Enum>
absl::StatusOr<Enum> ReadEnum(absl::string_view text, absl::string_view path,
                              absl::Span<const Spelling<Enum>> spellings) {
  if (text.empty()) return spellings.front().value;
  std::vector<absl::string_view> supported;
  for (const Spelling<Enum>& s : spellings) {
    if (s.text == text) return s.value;
    supported.push_back(s.text);
  }
  std::sort(supported.begin(), supported.end());
  return NotSupported(path, text, supported);
}

absl::StatusOr<std::optional<int64_t>> OptionalQuantity(
    bool present, absl::string_view resource, absl::string_view text,
    absl::string_view path) {
  if (!present) return std::nullopt;
  absl::StatusOr<int64_t> value = ResourceValue(resource, text, path);
  if (!value.ok()) return value.status();
  return *value;
}

absl::StatusOr<std::vector<ResourceGroup>> ConvertResourceGroups(
    const google::protobuf::RepeatedPtrField<api::ResourceGroup>& groups,
    absl::string_view path) {
  std::vector<ResourceGroup> out;
  for (int g = 0; g < groups.size(); ++g) {
    const std::string group_path = api::Index(path, g);
    ResourceGroup group;
    group.covered_resources.assign(groups[g].covered_resources().begin(),
                                   groups[g].covered_resources().end());
    for (int f = 0; f < groups[g].flavors_size(); ++f) {
      const api::FlavorQuotas& in = groups[g].flavors(f);
      const std::string flavor_path =
          api::Index(api::Child(group_path, "flavors"), f);
      FlavorQuotas flavor;
      flavor.name = in.name();
      for (int r = 0; r < in.resources_size(); ++r) {
        const api::ResourceQuota& q = in.resources(r);
        const std::string quota_path =
            api::Index(api::Child(flavor_path, "resources"), r);
        ResourceQuota quota;
        quota.name = q.name();
        absl::StatusOr<int64_t> nominal =
            ResourceValue(q.name(), q.nominal_quota(),
                          api::Child(quota_path, "nominalQuota"));
        if (!nominal.ok()) return nominal.status();
        quota.nominal_quota = *nominal;
        absl::StatusOr<std::optional<int64_t>> borrowing = OptionalQuantity(
            q.has_borrowing_limit(), q.name(), q.borrowing_limit(),
            api::Child(quota_path, "borrowingLimit"));
        if (!borrowing.ok()) return borrowing.status();
        quota.borrowing_limit = *borrowing;
        absl::StatusOr<std::optional<int64_t>> lending =
            OptionalQuantity(q.has_lending_limit(), q.name(), q.lending_limit(),
                             api::Child(quota_path, "lendingLimit"));
        if (!lending.ok()) return lending.status();
        quota.lending_limit = *lending;
        flavor.resources.push_back(std::move(quota));
      }
      group.flavors.push_back(std::move(flavor));
    }
    out.push_back(std::move(group));
  }
  return out;
}

constexpr Spelling<QueueingStrategy> kQueueingStrategies[] = {
    {"BestEffortFIFO", QueueingStrategy::kBestEffortFIFO},
    {"StrictFIFO", QueueingStrategy::kStrictFIFO},
};
constexpr Spelling<PreemptionPolicy> kWithinClusterQueue[] = {
    {"Never", PreemptionPolicy::kNever},
    {"LowerPriority", PreemptionPolicy::kLowerPriority},
    {"LowerOrNewerEqualPriority", PreemptionPolicy::kLowerOrNewerEqualPriority},
};
constexpr Spelling<PreemptionPolicy> kReclaimWithinCohort[] = {
    {"Never", PreemptionPolicy::kNever},
    {"LowerPriority", PreemptionPolicy::kLowerPriority},
    {"Any", PreemptionPolicy::kAny},
};
constexpr Spelling<BorrowWithinCohortPolicy> kBorrowWithinCohort[] = {
    {"Never", BorrowWithinCohortPolicy::kNever},
    {"LowerPriority", BorrowWithinCohortPolicy::kLowerPriority},
};
// v1beta1 spells MayStopSearch Borrow (whenCanBorrow) and Preempt
// (whenCanPreempt); the manifest reader converts them, a stored object may
// still hold them.
constexpr Spelling<FungibilityPolicy> kWhenCanBorrow[] = {
    {"MayStopSearch", FungibilityPolicy::kMayStopSearch},
    {"TryNextFlavor", FungibilityPolicy::kTryNextFlavor},
    {"Borrow", FungibilityPolicy::kMayStopSearch},
};
constexpr Spelling<FungibilityPolicy> kWhenCanPreempt[] = {
    {"TryNextFlavor", FungibilityPolicy::kTryNextFlavor},
    {"MayStopSearch", FungibilityPolicy::kMayStopSearch},
    {"Preempt", FungibilityPolicy::kMayStopSearch},
};
constexpr Spelling<FungibilityPreference> kPreferences[] = {
    {"BorrowingOverPreemption",
     FungibilityPreference::kBorrowingOverPreemption},
    {"PreemptionOverBorrowing",
     FungibilityPreference::kPreemptionOverBorrowing},
};
constexpr Spelling<StopPolicy> kStopPolicies[] = {
    {"None", StopPolicy::kNone},
    {"Hold", StopPolicy::kHold},
    {"HoldAndDrain", StopPolicy::kHoldAndDrain},
};

absl::StatusOr<ClusterQueuePreemption> ConvertPreemption(
    const api::ClusterQueuePreemption& in, absl::string_view path) {
  ClusterQueuePreemption out;
  absl::StatusOr<PreemptionPolicy> reclaim = ReadEnum<PreemptionPolicy>(
      in.reclaim_within_cohort(), api::Child(path, "reclaimWithinCohort"),
      kReclaimWithinCohort);
  if (!reclaim.ok()) return reclaim.status();
  out.reclaim_within_cohort = *reclaim;
  const std::string borrow_path = api::Child(path, "borrowWithinCohort");
  absl::StatusOr<BorrowWithinCohortPolicy> borrow =
      ReadEnum<BorrowWithinCohortPolicy>(in.borrow_within_cohort().policy(),
                                         api::Child(borrow_path, "policy"),
                                         kBorrowWithinCohort);
  if (!borrow.ok()) return borrow.status();
  out.borrow_within_cohort.policy = *borrow;
  if (in.borrow_within_cohort().has_max_priority_threshold()) {
    out.borrow_within_cohort.max_priority_threshold =
        in.borrow_within_cohort().max_priority_threshold();
  }
  absl::StatusOr<PreemptionPolicy> within = ReadEnum<PreemptionPolicy>(
      in.within_cluster_queue(), api::Child(path, "withinClusterQueue"),
      kWithinClusterQueue);
  if (!within.ok()) return within.status();
  out.within_cluster_queue = *within;
  return out;
}

absl::StatusOr<FlavorFungibility> ConvertFungibility(
    const api::FlavorFungibility& in, absl::string_view path) {
  FlavorFungibility out;
  absl::StatusOr<FungibilityPolicy> borrow = ReadEnum<FungibilityPolicy>(
      in.when_can_borrow(), api::Child(path, "whenCanBorrow"), kWhenCanBorrow);
  if (!borrow.ok()) return borrow.status();
  out.when_can_borrow = *borrow;
  absl::StatusOr<FungibilityPolicy> preempt = ReadEnum<FungibilityPolicy>(
      in.when_can_preempt(), api::Child(path, "whenCanPreempt"),
      kWhenCanPreempt);
  if (!preempt.ok()) return preempt.status();
  out.when_can_preempt = *preempt;
  absl::StatusOr<FungibilityPreference> preference =
      ReadEnum<FungibilityPreference>(
          in.preference(), api::Child(path, "preference"), kPreferences);
  if (!preference.ok()) return preference.status();
  out.preference = *preference;
  return out;
}

absl::Time ToTime(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

// meta.FindStatusCondition: the first condition of `type`, or nullptr.
const api::Condition* FindCondition(
    const google::protobuf::RepeatedPtrField<api::Condition>& conditions,
    absl::string_view type) {
  for (const api::Condition& c : conditions) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

bool IsTrue(const api::Condition* c) {
  return c != nullptr && c->status() == "True";
}

absl::StatusOr<Admission> ConvertAdmission(const api::Admission& in,
                                           const std::vector<PodSet>& pod_sets,
                                           absl::string_view path) {
  Admission out;
  out.cluster_queue = in.cluster_queue();
  for (int i = 0; i < in.pod_set_assignments_size(); ++i) {
    const api::PodSetAssignment& psa = in.pod_set_assignments(i);
    const std::string psa_path =
        api::Index(api::Child(path, "podSetAssignments"), i);
    PodSetAssignment assignment;
    assignment.name = psa.name();
    assignment.flavors.insert(psa.flavors().begin(), psa.flavors().end());
    // Sorted, so that the first error reported does not depend on hashing.
    const std::map<std::string, std::string> usage(psa.resource_usage().begin(),
                                                   psa.resource_usage().end());
    for (const auto& [resource, text] : usage) {
      absl::StatusOr<int64_t> value = ResourceValue(
          resource, text,
          api::Key(api::Child(psa_path, "resourceUsage"), resource));
      if (!value.ok()) return value.status();
      assignment.resource_usage[resource] = *value;
    }
    if (psa.has_count()) {
      if (psa.count() < 0) {
        return Invalid(api::Child(psa_path, "count"),
                       absl::StrCat("Invalid value: ", psa.count(),
                                    ": must be greater than or equal to 0"));
      }
      assignment.count = psa.count();
    } else {
      // Kueue: a missing count is the podSet's (Workloads older than it).
      for (const PodSet& ps : pod_sets) {
        if (ps.name == psa.name()) assignment.count = ps.count;
      }
    }
    out.pod_set_assignments.push_back(std::move(assignment));
  }
  return out;
}

absl::Status ReadReclaimable(const api::WorkloadStatus& status,
                             std::vector<PodSet>* pod_sets) {
  std::set<std::string> seen;
  for (int i = 0; i < status.reclaimable_pods_size(); ++i) {
    const api::ReclaimablePod& rp = status.reclaimable_pods(i);
    const std::string path = api::Index("status.reclaimablePods", i);
    if (!seen.insert(rp.name()).second) {
      return Invalid(api::Child(path, "name"),
                     absl::StrCat("Duplicate value: ", Quote(rp.name())));
    }
    if (rp.count() < 0) {
      return Invalid(api::Child(path, "count"),
                     absl::StrCat("Invalid value: ", rp.count(),
                                  ": must be greater than or equal to 0"));
    }
    auto ps =
        std::find_if(pod_sets->begin(), pod_sets->end(),
                     [&](const PodSet& p) { return p.name == rp.name(); });
    if (ps == pod_sets->end()) {
      return Invalid(api::Child(path, "name"),
                     absl::StrCat("Not found: ", Quote(rp.name()),
                                  ": no podSet of that name"));
    }
    ps->reclaimable = rp.count();
  }
  return absl::OkStatus();
}

}  // namespace

absl::Time QueueOrderTime(const api::Workload& wl) {
  const api::Condition* evicted =
      FindCondition(wl.status().conditions(), kEvicted);
  if (IsTrue(evicted) && (evicted->reason() == kPodsReadyTimeout ||
                          evicted->reason() == kAdmissionCheck)) {
    return ToTime(evicted->last_transition_time());
  }
  return wl.metadata().has_creation_timestamp()
             ? ToTime(wl.metadata().creation_timestamp())
             : absl::UnixEpoch();
}

absl::StatusOr<int64_t> ResourceValue(absl::string_view resource,
                                      absl::string_view quantity,
                                      absl::string_view path) {
  absl::StatusOr<int64_t> milli = ParseMilli(quantity, path);
  if (!milli.ok()) return milli.status();
  return ToModelUnits(resource, *milli);
}

absl::StatusOr<PodSet> PodSetFromTemplate(
    absl::string_view name, int32_t count,
    const api::PodTemplateSpec& pod_template, absl::string_view path) {
  const std::string spec_path = api::Child(path, "spec");
  absl::StatusOr<MilliMap> requests =
      PodRequestsMilli(pod_template.spec(), spec_path);
  if (!requests.ok()) return requests.status();
  absl::StatusOr<PodPlacement> placement =
      PlacementFor(pod_template.spec(), spec_path);
  if (!placement.ok()) return placement.status();

  PodSet pod_set;
  pod_set.name = std::string(name);
  pod_set.count = count;
  for (const auto& [resource, milli] : *requests) {
    pod_set.requests[resource] = ToModelUnits(resource, milli);
  }
  pod_set.placement = *std::move(placement);
  return pod_set;
}

absl::StatusOr<ResourceFlavor> FlavorFromApi(
    const api::ResourceFlavor& flavor) {
  ResourceFlavor out;
  out.name = flavor.metadata().name();
  const api::ResourceFlavorSpec& spec = flavor.spec();
  out.node_labels.insert(spec.node_labels().begin(), spec.node_labels().end());
  for (int i = 0; i < spec.node_taints_size(); ++i) {
    const api::Taint& in = spec.node_taints(i);
    absl::StatusOr<TaintEffect> effect = ConvertEffect(
        in.effect(), api::Child(api::Index("spec.nodeTaints", i), "effect"));
    if (!effect.ok()) return effect.status();
    out.node_taints.push_back(Taint{in.key(), in.value(), *effect});
  }
  absl::StatusOr<std::vector<Toleration>> tolerations =
      ConvertTolerations(spec.tolerations(), "spec.tolerations");
  if (!tolerations.ok()) return tolerations.status();
  out.tolerations = *std::move(tolerations);
  return out;
}

// spec.fairSharing.weight as a number: 1 when unset. Read in thousandths,
// so a weight below 0.001 (Kueue allows down to 1e-9) counts as 0.001.
absl::StatusOr<double> FairWeight(const api::FairSharing& fair_sharing) {
  if (fair_sharing.weight().empty()) return 1.0;
  absl::StatusOr<int64_t> milli =
      ParseMilli(fair_sharing.weight(), "spec.fairSharing.weight");
  if (!milli.ok()) return milli.status();
  return static_cast<double>(*milli) / 1000.0;
}

absl::StatusOr<ClusterQueue> ClusterQueueFromApi(const api::ClusterQueue& cq) {
  const api::ClusterQueueSpec& spec = cq.spec();
  ClusterQueue out;
  out.name = cq.metadata().name();
  // The reader moves cohortName into cohort; a stored object may not have
  // been through it.
  out.cohort = spec.cohort().empty() ? spec.cohort_name() : spec.cohort();

  absl::StatusOr<QueueingStrategy> strategy = ReadEnum<QueueingStrategy>(
      spec.queueing_strategy(), "spec.queueingStrategy", kQueueingStrategies);
  if (!strategy.ok()) return strategy.status();
  out.queueing_strategy = *strategy;

  absl::StatusOr<std::vector<ResourceGroup>> groups =
      ConvertResourceGroups(spec.resource_groups(), "spec.resourceGroups");
  if (!groups.ok()) return groups.status();
  out.resource_groups = *std::move(groups);

  absl::StatusOr<ClusterQueuePreemption> preemption =
      ConvertPreemption(spec.preemption(), "spec.preemption");
  if (!preemption.ok()) return preemption.status();
  out.preemption = *preemption;

  absl::StatusOr<FlavorFungibility> fungibility =
      ConvertFungibility(spec.flavor_fungibility(), "spec.flavorFungibility");
  if (!fungibility.ok()) return fungibility.status();
  out.flavor_fungibility = *fungibility;

  absl::StatusOr<StopPolicy> stop = ReadEnum<StopPolicy>(
      spec.stop_policy(), "spec.stopPolicy", kStopPolicies);
  if (!stop.ok()) return stop.status();
  out.stop_policy = *stop;

  absl::StatusOr<double> weight = FairWeight(spec.fair_sharing());
  if (!weight.ok()) return weight.status();
  out.fair_weight = *weight;
  return out;
}

absl::StatusOr<Cohort> CohortFromApi(const api::Cohort& cohort) {
  Cohort out;
  out.name = cohort.metadata().name();
  out.parent = cohort.spec().parent_name();
  absl::StatusOr<std::vector<ResourceGroup>> groups = ConvertResourceGroups(
      cohort.spec().resource_groups(), "spec.resourceGroups");
  if (!groups.ok()) return groups.status();
  out.resource_groups = *std::move(groups);
  absl::StatusOr<double> weight = FairWeight(cohort.spec().fair_sharing());
  if (!weight.ok()) return weight.status();
  out.fair_weight = *weight;
  return out;
}

absl::StatusOr<Workload> WorkloadFromApi(const api::Workload& workload,
                                         absl::string_view cluster_queue) {
  const api::ObjectMeta& meta = workload.metadata();
  const api::WorkloadSpec& spec = workload.spec();
  Workload out;
  out.namespace_name = meta.namespace_();
  out.name = meta.name();
  out.uid = meta.uid();
  auto job_uid = meta.labels().find(std::string(kJobUidLabel));
  if (job_uid != meta.labels().end()) out.job_uid = job_uid->second;
  out.cluster_queue = std::string(cluster_queue);
  out.queue_name = spec.queue_name();
  out.priority = spec.has_priority() ? spec.priority() : 0;
  if (spec.priority_class_source() == kWorkloadPriorityClassSource) {
    out.priority_class = spec.priority_class_name();
  }
  if (spec.has_maximum_execution_time_seconds()) {
    if (spec.maximum_execution_time_seconds() < 1) {
      return Invalid(
          "spec.maximumExecutionTimeSeconds",
          absl::StrCat("Invalid value: ", spec.maximum_execution_time_seconds(),
                       ": must be greater than or equal to 1"));
    }
    out.maximum_execution_time_seconds = spec.maximum_execution_time_seconds();
  }

  for (int i = 0; i < spec.pod_sets_size(); ++i) {
    const api::PodSet& in = spec.pod_sets(i);
    const std::string path = api::Index("spec.podSets", i);
    const int32_t count = in.has_count() ? in.count() : 1;
    if (count < 0) {
      return Invalid(api::Child(path, "count"),
                     absl::StrCat("Invalid value: ", count,
                                  ": must be greater than or equal to 0"));
    }
    absl::StatusOr<PodSet> pod_set = PodSetFromTemplate(
        in.name(), count, in.template_(), api::Child(path, "template"));
    if (!pod_set.ok()) return pod_set.status();
    out.pod_sets.push_back(*std::move(pod_set));
  }
  if (absl::Status s = ReadReclaimable(workload.status(), &out.pod_sets);
      !s.ok()) {
    return s;
  }

  const api::WorkloadStatus& status = workload.status();
  if (status.has_admission()) {
    absl::StatusOr<Admission> admission =
        ConvertAdmission(status.admission(), out.pod_sets, "status.admission");
    if (!admission.ok()) return admission.status();
    out.admission = *std::move(admission);
  }
  out.evicted = status.has_admission() &&
                IsTrue(FindCondition(status.conditions(), kEvicted));

  out.times.queue_order = QueueOrderTime(workload);
  const api::Condition* reserved =
      FindCondition(status.conditions(), kQuotaReserved);
  if (IsTrue(reserved) && reserved->has_last_transition_time()) {
    out.times.quota_reserved = ToTime(reserved->last_transition_time());
  }
  return out;
}

api::Admission AdmissionToApi(const Admission& admission) {
  api::Admission out;
  out.set_cluster_queue(admission.cluster_queue);
  for (const PodSetAssignment& psa : admission.pod_set_assignments) {
    api::PodSetAssignment* assignment = out.add_pod_set_assignments();
    assignment->set_name(psa.name);
    assignment->mutable_flavors()->insert(psa.flavors.begin(),
                                          psa.flavors.end());
    for (const auto& [resource, value] : psa.resource_usage) {
      (*assignment->mutable_resource_usage())[resource] =
          FormatQuantity(resource, value);
    }
    assignment->set_count(psa.count);
  }
  return out;
}

absl::StatusOr<api::Workload> WorkloadObjectFor(const api::JobSet& jobset,
                                                const Workload& workload) {
  const auto& rjobs = jobset.spec().replicated_jobs();
  if (static_cast<int>(workload.pod_sets.size()) != rjobs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload ", Quote(WorkloadKey(workload)), " has ",
                     workload.pod_sets.size(), " podSets; the JobSet has ",
                     rjobs.size(), " replicatedJobs"));
  }
  api::Workload out;
  out.set_api_version(std::string(kKueueApiVersion));
  out.set_kind(std::string(kWorkloadKind));
  api::ObjectMeta* meta = out.mutable_metadata();
  meta->set_name(workload.name);
  meta->set_namespace_(workload.namespace_name);
  if (!workload.job_uid.empty()) {
    (*meta->mutable_labels())[std::string(kJobUidLabel)] = workload.job_uid;
  }

  api::WorkloadSpec* spec = out.mutable_spec();
  for (int i = 0; i < rjobs.size(); ++i) {
    const PodSet& ps = workload.pod_sets[i];
    if (ps.name != absl::AsciiStrToLower(rjobs[i].name())) {
      return absl::InvalidArgumentError(
          absl::StrCat("workload ", Quote(WorkloadKey(workload)), " podSet ", i,
                       " is ", Quote(ps.name), "; the JobSet's replicatedJob ",
                       i, " is ", Quote(rjobs[i].name())));
    }
    api::PodSet* pod_set = spec->add_pod_sets();
    pod_set->set_name(ps.name);
    *pod_set->mutable_template_() = rjobs[i].template_().spec().template_();
    pod_set->set_count(ps.count);
  }
  spec->set_queue_name(workload.queue_name);
  spec->set_priority(workload.priority);
  if (!workload.priority_class.empty()) {
    spec->set_priority_class_name(workload.priority_class);
    spec->set_priority_class_source(std::string(kWorkloadPriorityClassSource));
  }
  if (workload.maximum_execution_time_seconds.has_value()) {
    spec->set_maximum_execution_time_seconds(
        *workload.maximum_execution_time_seconds);
  }
  spec->set_active(true);
  return out;
}

SavedPodTemplates SavedTemplatesOf(const api::Workload& workload) {
  SavedPodTemplates out;
  for (const api::PodSet& ps : workload.spec().pod_sets()) {
    out.push_back(SaveTemplate(ps.template_()));
  }
  return out;
}

}  // namespace jobset::scheduler::queues
