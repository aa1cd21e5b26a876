#include "api/kueue_validation.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "api/field_errors.h"
#include "api/kueue_validation_internal.h"
#include "api/metadata_validation.h"
#include "api/names.h"
#include "common/quote.h"

// Upstream: pkg/webhooks/{resourceflavor,clusterqueue,cohort,common}.go and
// the kubebuilder markers of apis/kueue/v1beta1/*_types.go (the CRD schema).

namespace jobset::api {
namespace {

using kueue_internal::CanonicalQuantity;
using kueue_internal::CelRule;
using kueue_internal::CelRulesApply;
using kueue_internal::CompareQuantities;
using kueue_internal::KubeQuantity;
using kueue_internal::NonNegativeQuantity;
using kueue_internal::ObjectName;
using kueue_internal::ReadQuantity;
using kueue_internal::Repeated;
using kueue_internal::SchemaEnum;
using kueue_internal::SchemaMaxItems;
using kueue_internal::SchemaQuantity;
using kueue_internal::SchemaReference;
using kueue_internal::ValidateMeta;
using kueue_internal::ValidateMetaUpdate;

constexpr int kMaxResourceGroups = 16;
constexpr int kMaxPerResourceGroup = 64;  // coveredResources, flavors, ...
constexpr int kMaxTotal = 256;            // flavors, or covered resources
constexpr int kMaxFlavorResources = 512;  // flavor x resource in a group
constexpr int kMaxFlavorItems = 8;        // nodeLabels, nodeTaints

constexpr absl::string_view kMayStopSearch = "MayStopSearch";
constexpr absl::string_view kTryNextFlavor = "TryNextFlavor";
constexpr absl::string_view kNever = "Never";
constexpr absl::string_view kStopPolicies[] = {"None", "Hold", "HoldAndDrain"};
constexpr absl::string_view kQueueingStrategies[] = {"StrictFIFO",
                                                     "BestEffortFIFO"};
constexpr absl::string_view kWhenCanBorrow[] = {kMayStopSearch, kTryNextFlavor,
                                                "Borrow"};
constexpr absl::string_view kWhenCanPreempt[] = {kMayStopSearch, kTryNextFlavor,
                                                 "Preempt"};
constexpr absl::string_view kPreferences[] = {"BorrowingOverPreemption",
                                              "PreemptionOverBorrowing"};
constexpr absl::string_view kReclaimWithinCohort[] = {kNever, "LowerPriority",
                                                      "Any"};
constexpr absl::string_view kWithinClusterQueue[] = {
    kNever, "LowerPriority", "LowerOrNewerEqualPriority"};
constexpr absl::string_view kBorrowWithinCohort[] = {kNever, "LowerPriority"};
constexpr absl::string_view kTaintEffects[] = {"NoSchedule", "PreferNoSchedule",
                                               "NoExecute"};

// ---- resourceGroups, fairSharing, namespaceSelector ----

void SchemaResourceGroups(const Repeated<ResourceGroup>& groups,
                          absl::string_view path, FieldErrors* errors) {
  SchemaMaxItems(path, groups.size(), kMaxResourceGroups, errors);
  for (int i = 0; i < groups.size(); ++i) {
    const ResourceGroup& group = groups[i];
    const std::string group_path = Index(path, i);
    const std::string covered_path = Child(group_path, "coveredResources");
    if (group.covered_resources().empty()) errors->Required(covered_path);
    SchemaMaxItems(covered_path, group.covered_resources_size(),
                   kMaxPerResourceGroup, errors);
    const std::string flavors_path = Child(group_path, "flavors");
    if (group.flavors().empty()) errors->Required(flavors_path);
    SchemaMaxItems(flavors_path, group.flavors_size(), kMaxPerResourceGroup,
                   errors);
    for (int j = 0; j < group.flavors_size(); ++j) {
      const FlavorQuotas& flavor = group.flavors(j);
      const std::string flavor_path = Index(flavors_path, j);
      if (flavor.name().empty()) {
        errors->Required(Child(flavor_path, "name"));
      }
      SchemaReference(Child(flavor_path, "name"), flavor.name(), errors);
      const std::string resources_path = Child(flavor_path, "resources");
      if (flavor.resources().empty()) errors->Required(resources_path);
      SchemaMaxItems(resources_path, flavor.resources_size(),
                     kMaxPerResourceGroup, errors);
      for (int k = 0; k < flavor.resources_size(); ++k) {
        const ResourceQuota& quota = flavor.resources(k);
        const std::string quota_path = Index(resources_path, k);
        if (quota.name().empty()) errors->Required(Child(quota_path, "name"));
        const std::string nominal_path = Child(quota_path, "nominalQuota");
        if (quota.nominal_quota().empty()) {
          errors->Required(nominal_path);
        } else {
          SchemaQuantity(nominal_path, quota.nominal_quota(), errors);
        }
        if (quota.has_borrowing_limit()) {
          SchemaQuantity(Child(quota_path, "borrowingLimit"),
                         quota.borrowing_limit(), errors);
        }
        if (quota.has_lending_limit()) {
          SchemaQuantity(Child(quota_path, "lendingLimit"),
                         quota.lending_limit(), errors);
        }
      }
    }
  }
}

void CelResourceGroups(const Repeated<ResourceGroup>& groups,
                       absl::string_view path, FieldErrors* errors) {
  for (int i = 0; i < groups.size(); ++i) {
    const ResourceGroup& group = groups[i];
    if (std::any_of(group.flavors().begin(), group.flavors().end(),
                    [&](const FlavorQuotas& f) {
                      return f.resources_size() !=
                             group.covered_resources_size();
                    })) {
      CelRule(Index(path, i), "object",
              "flavors must have the same number of resources as the "
              "coveredResources",
              errors);
    }
  }
}

// Kueue's validateLimit: a borrowingLimit or lendingLimit needs a parent.
void LimitNeedsParent(absl::string_view path, absl::string_view text,
                      bool has_parent, absl::string_view owner,
                      FieldErrors* errors) {
  if (has_parent) return;
  const std::optional<KubeQuantity> q = ReadQuantity(text);
  errors->Invalid(path, q.has_value() ? CanonicalQuantity(*q) : text,
                  absl::StrCat("must be nil when ", owner, " is empty"));
}

// Kueue's validateFlavorQuotas.
void WebhookFlavorQuotas(const FlavorQuotas& flavor,
                         const Repeated<std::string>& covered, bool has_parent,
                         absl::string_view owner, bool lending_within_nominal,
                         absl::string_view path, FieldErrors* errors) {
  for (int k = 0; k < flavor.resources_size() && k < covered.size(); ++k) {
    const ResourceQuota& quota = flavor.resources(k);
    const std::string quota_path = Index(Child(path, "resources"), k);
    if (quota.name() != covered[k]) {
      errors->Invalid(Child(quota_path, "name"), quota.name(),
                      "must match the name in coveredResources");
    }
    NonNegativeQuantity(Child(quota_path, "nominalQuota"),
                        quota.nominal_quota(), errors);
    if (quota.has_borrowing_limit()) {
      const std::string limit_path = Child(quota_path, "borrowingLimit");
      LimitNeedsParent(limit_path, quota.borrowing_limit(), has_parent, owner,
                       errors);
      NonNegativeQuantity(limit_path, quota.borrowing_limit(), errors);
    }
    if (quota.has_lending_limit()) {
      const std::string limit_path = Child(quota_path, "lendingLimit");
      NonNegativeQuantity(limit_path, quota.lending_limit(), errors);
      LimitNeedsParent(limit_path, quota.lending_limit(), has_parent, owner,
                       errors);
      const std::optional<KubeQuantity> lend =
          ReadQuantity(quota.lending_limit());
      const std::optional<KubeQuantity> nominal =
          ReadQuantity(quota.nominal_quota());
      if (lending_within_nominal && lend.has_value() && nominal.has_value() &&
          CompareQuantities(*lend, *nominal) > 0) {
        errors->Invalid(limit_path, CanonicalQuantity(*lend),
                        "must be less than or equal to the nominalQuota");
      }
    }
  }
}

// Kueue's validateResourceGroups: `owner` is what the limits need ("cohort"
// for a ClusterQueue, "parent" for a Cohort).
void WebhookResourceGroups(const Repeated<ResourceGroup>& groups,
                           bool has_parent, absl::string_view owner,
                           bool lending_within_nominal, absl::string_view path,
                           FieldErrors* errors) {
  std::set<std::string> seen_resources;
  std::set<std::string> seen_flavors;
  for (int i = 0; i < groups.size(); ++i) {
    const ResourceGroup& group = groups[i];
    const std::string group_path = Index(path, i);
    for (int j = 0; j < group.covered_resources_size(); ++j) {
      const std::string& name = group.covered_resources(j);
      const std::string resource_path =
          Index(Child(group_path, "coveredResources"), j);
      for (const std::string& error : IsQualifiedName(name)) {
        errors->Invalid(resource_path, name, error);
      }
      if (!seen_resources.insert(name).second) {
        errors->Duplicate(resource_path, name);
      }
    }
    for (int j = 0; j < group.flavors_size(); ++j) {
      const FlavorQuotas& flavor = group.flavors(j);
      const std::string flavor_path = Index(Child(group_path, "flavors"), j);
      WebhookFlavorQuotas(flavor, group.covered_resources(), has_parent, owner,
                          lending_within_nominal, flavor_path, errors);
      if (!seen_flavors.insert(flavor.name()).second) {
        errors->Duplicate(Child(flavor_path, "name"), flavor.name());
      }
    }
  }
}

// Kueue's validateTotalFlavors, validateTotalCoveredResources and
// validateFlavorResourceCombinations (ClusterQueues only).
void WebhookResourceTotals(const Repeated<ResourceGroup>& groups,
                           absl::string_view path, FieldErrors* errors) {
  int flavors = 0;
  int covered = 0;
  for (const ResourceGroup& group : groups) {
    flavors += group.flavors_size();
    covered += group.covered_resources_size();
  }
  if (flavors > kMaxTotal) {
    errors->Invalid(path, flavors,
                    absl::StrCat("total number of flavors across all "
                                 "resourceGroups must be ≤ 256, got ",
                                 flavors));
  }
  if (covered > kMaxTotal) {
    errors->Invalid(path, covered,
                    absl::StrCat("total number of covered resources across "
                                 "all resourceGroups must be ≤ 256, got ",
                                 covered));
  }
  for (int i = 0; i < groups.size(); ++i) {
    int combinations = 0;
    for (const FlavorQuotas& flavor : groups[i].flavors()) {
      combinations += flavor.resources_size();
    }
    if (combinations > kMaxFlavorResources) {
      errors->Invalid(Index(path, i), combinations,
                      absl::StrCat("number of flavor-resource combinations in "
                                   "a resourceGroup must be ≤ 512, got ",
                                   combinations));
    }
  }
}

void SchemaFairSharing(const FairSharing& fair_sharing, absl::string_view path,
                       FieldErrors* errors) {
  if (fair_sharing.weight().empty()) return;
  SchemaQuantity(Child(path, "weight"), fair_sharing.weight(), errors);
}

// Kueue's validateFairSharing: the errors name fairSharing, not its weight.
void WebhookFairSharing(const FairSharing& fair_sharing, absl::string_view path,
                        FieldErrors* errors) {
  const std::optional<KubeQuantity> weight =
      ReadQuantity(fair_sharing.weight());
  if (!weight.has_value()) return;
  if (weight->amount < 0) {
    errors->Invalid(path, CanonicalQuantity(*weight),
                    "must be greater than or equal to 0");
  }
  const KubeQuantity nano{1, -9, KubeQuantity::Format::kDecimalSi};
  if (weight->amount > 0 && CompareQuantities(*weight, nano) <= 0) {
    errors->Invalid(path, CanonicalQuantity(*weight),
                    "When not 0, weight must be > 10e-9");
  }
}

void SchemaLabelSelector(const LabelSelectorSpec& selector,
                         absl::string_view path, FieldErrors* errors) {
  for (int i = 0; i < selector.match_expressions_size(); ++i) {
    const LabelSelectorRequirement& r = selector.match_expressions(i);
    const std::string r_path = Index(Child(path, "matchExpressions"), i);
    if (r.key().empty()) errors->Required(Child(r_path, "key"));
    if (r.operator_().empty()) errors->Required(Child(r_path, "operator"));
  }
}

// meta/v1 ValidateLabelSelector.
void WebhookLabelSelector(const LabelSelectorSpec& selector,
                          absl::string_view path, FieldErrors* errors) {
  ValidateLabels(selector.match_labels(), Child(path, "matchLabels"), errors);
  for (int i = 0; i < selector.match_expressions_size(); ++i) {
    const LabelSelectorRequirement& r = selector.match_expressions(i);
    const std::string r_path = Index(Child(path, "matchExpressions"), i);
    const std::string values_path = Child(r_path, "values");
    if (r.operator_() == "In" || r.operator_() == "NotIn") {
      if (r.values().empty()) {
        errors->Required(values_path,
                         "must be specified when `operator` is 'In' or "
                         "'NotIn'");
      }
    } else if (r.operator_() == "Exists" || r.operator_() == "DoesNotExist") {
      if (!r.values().empty()) {
        errors->Forbidden(values_path,
                          "may not be specified when `operator` is 'Exists' "
                          "or 'DoesNotExist'");
      }
    } else {
      errors->Invalid(Child(r_path, "operator"), r.operator_(),
                      "not a valid selector operator");
    }
    for (const std::string& error : IsQualifiedName(r.key())) {
      errors->Invalid(Child(r_path, "key"), r.key(), error);
    }
    for (int k = 0; k < r.values_size(); ++k) {
      for (const std::string& error : IsValidLabelValue(r.values(k))) {
        errors->Invalid(Index(values_path, k), r.values(k), error);
      }
    }
  }
}

// ---- ResourceFlavor ----

void SchemaResourceFlavor(const ResourceFlavorSpec& spec, FieldErrors* errors) {
  SchemaMaxItems("spec.nodeLabels", spec.node_labels_size(), kMaxFlavorItems,
                 errors);
  SchemaMaxItems("spec.nodeTaints", spec.node_taints_size(), kMaxFlavorItems,
                 errors);
  for (int i = 0; i < spec.node_taints_size(); ++i) {
    const std::string path = Index("spec.nodeTaints", i);
    if (spec.node_taints(i).key().empty()) errors->Required(Child(path, "key"));
    if (spec.node_taints(i).effect().empty()) {
      errors->Required(Child(path, "effect"));
    }
  }
  kueue_internal::SchemaTolerations(spec.tolerations(), "spec.tolerations",
                                    errors);
  if (spec.has_topology_name()) {
    SchemaReference("spec.topologyName", spec.topology_name(), errors);
  }
}

void CelResourceFlavor(const ResourceFlavorSpec& spec, FieldErrors* errors) {
  if (spec.has_topology_name() && spec.node_labels().empty()) {
    CelRule("spec", "object",
            "at least one nodeLabel is required when topology is set", errors);
  }
  if (std::any_of(spec.node_taints().begin(), spec.node_taints().end(),
                  [](const Taint& t) {
                    return std::find(std::begin(kTaintEffects),
                                     std::end(kTaintEffects),
                                     t.effect()) == std::end(kTaintEffects);
                  })) {
    CelRule("spec.nodeTaints", "array",
            "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', "
            "'NoExecute'",
            errors);
  }
  kueue_internal::CelTolerations(spec.tolerations(), "spec.tolerations",
                                 errors);
}

// Kueue's validateNodeTaints (after Kubernetes' own).
void WebhookNodeTaints(const Repeated<Taint>& taints, FieldErrors* errors) {
  std::set<std::pair<std::string, std::string>> seen;  // effect, key
  for (int i = 0; i < taints.size(); ++i) {
    const Taint& taint = taints[i];
    const std::string path = Index("spec.nodeTaints", i);
    for (const std::string& error : IsQualifiedName(taint.key())) {
      errors->Invalid(Child(path, "key"), taint.key(), error);
    }
    if (std::vector<std::string> bad = IsValidLabelValue(taint.value());
        !bad.empty()) {
      errors->Invalid(Child(path, "value"), taint.value(),
                      absl::StrJoin(bad, ";"));
    }
    if (!seen.emplace(taint.effect(), taint.key()).second) {
      // Go's %#v of the corev1.Taint.
      errors->Add(path, absl::StrCat("Duplicate value: v1.Taint{Key:",
                                     Quote(taint.key()),
                                     ", Value:", Quote(taint.value()),
                                     ", Effect:", Quote(taint.effect()),
                                     ", TimeAdded:<nil>}: taints must be "
                                     "unique by key and effect pair"));
    }
  }
}

void CheckResourceFlavor(const ResourceFlavor* old_rf, const ResourceFlavor& rf,
                         FieldErrors* errors) {
  const ResourceFlavorSpec& spec = rf.spec();
  SchemaResourceFlavor(spec, errors);
  if (CelRulesApply(errors)) {
    CelResourceFlavor(spec, errors);
    if (old_rf != nullptr && old_rf->spec().has_topology_name() &&
        (!spec.has_topology_name() ||
         spec.topology_name() != old_rf->spec().topology_name())) {
      CelRule("spec", "object",
              "topologyName is immutable when topologyName is set", errors);
    }
  }
  if (!errors->empty()) return;
  ValidateLabels(spec.node_labels(), "spec.nodeLabels", errors);
  WebhookNodeTaints(spec.node_taints(), errors);
  kueue_internal::WebhookTolerations(spec.tolerations(), "spec.tolerations",
                                     errors);
}

// ---- ClusterQueue ----

void SchemaClusterQueue(const ClusterQueueSpec& spec, FieldErrors* errors) {
  SchemaResourceGroups(spec.resource_groups(), "spec.resourceGroups", errors);
  SchemaReference("spec.cohort", spec.cohort(), errors);
  SchemaEnum("spec.queueingStrategy", spec.queueing_strategy(),
             kQueueingStrategies, errors);
  if (spec.has_namespace_selector()) {
    SchemaLabelSelector(spec.namespace_selector(), "spec.namespaceSelector",
                        errors);
  }
  const FlavorFungibility& fungibility = spec.flavor_fungibility();
  SchemaEnum("spec.flavorFungibility.whenCanBorrow",
             fungibility.when_can_borrow(), kWhenCanBorrow, errors);
  SchemaEnum("spec.flavorFungibility.whenCanPreempt",
             fungibility.when_can_preempt(), kWhenCanPreempt, errors);
  if (fungibility.has_preference() &&
      std::find(std::begin(kPreferences), std::end(kPreferences),
                fungibility.preference()) == std::end(kPreferences)) {
    errors->NotSupported("spec.flavorFungibility.preference",
                         fungibility.preference(), kPreferences);
  }
  const ClusterQueuePreemption& preemption = spec.preemption();
  SchemaEnum("spec.preemption.reclaimWithinCohort",
             preemption.reclaim_within_cohort(), kReclaimWithinCohort, errors);
  SchemaEnum("spec.preemption.withinClusterQueue",
             preemption.within_cluster_queue(), kWithinClusterQueue, errors);
  SchemaEnum("spec.preemption.borrowWithinCohort.policy",
             preemption.borrow_within_cohort().policy(), kBorrowWithinCohort,
             errors);
  SchemaEnum("spec.stopPolicy", spec.stop_policy(), kStopPolicies, errors);
  SchemaFairSharing(spec.fair_sharing(), "spec.fairSharing", errors);
}

void CelClusterQueue(const ClusterQueueSpec& spec, FieldErrors* errors) {
  bool borrowing_limit = false;
  for (const ResourceGroup& group : spec.resource_groups()) {
    for (const FlavorQuotas& flavor : group.flavors()) {
      for (const ResourceQuota& quota : flavor.resources()) {
        borrowing_limit = borrowing_limit || quota.has_borrowing_limit();
      }
    }
  }
  if (spec.cohort().empty() && borrowing_limit) {
    CelRule("spec", "object", "borrowingLimit must be nil when cohort is empty",
            errors);
  }
  CelResourceGroups(spec.resource_groups(), "spec.resourceGroups", errors);
  // Unset values read as the defaults the schema would have filled in.
  const FlavorFungibility& fungibility = spec.flavor_fungibility();
  const absl::string_view when_can_borrow =
      fungibility.when_can_borrow().empty()
          ? kMayStopSearch
          : absl::string_view(fungibility.when_can_borrow());
  const absl::string_view when_can_preempt =
      fungibility.when_can_preempt().empty()
          ? kTryNextFlavor
          : absl::string_view(fungibility.when_can_preempt());
  if (fungibility.has_preference() && (when_can_borrow != kTryNextFlavor ||
                                       when_can_preempt != kTryNextFlavor)) {
    CelRule("spec.flavorFungibility", "object",
            "preference can only be set when both whenCanBorrow and "
            "whenCanPreempt are TryNextFlavor",
            errors);
  }
  const ClusterQueuePreemption& preemption = spec.preemption();
  const absl::string_view reclaim = preemption.reclaim_within_cohort();
  const absl::string_view borrow = preemption.borrow_within_cohort().policy();
  if ((reclaim.empty() || reclaim == kNever) && !borrow.empty() &&
      borrow != kNever) {
    CelRule("spec.preemption", "object",
            "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
            errors);
  }
}

void CheckClusterQueue(const ClusterQueue& cq, FieldErrors* errors) {
  const ClusterQueueSpec& spec = cq.spec();
  SchemaClusterQueue(spec, errors);
  if (CelRulesApply(errors)) CelClusterQueue(spec, errors);
  if (!errors->empty()) return;
  WebhookResourceGroups(spec.resource_groups(), !spec.cohort().empty(),
                        "cohort", /*lending_within_nominal=*/true,
                        "spec.resourceGroups", errors);
  if (spec.has_namespace_selector()) {
    WebhookLabelSelector(spec.namespace_selector(), "spec.namespaceSelector",
                         errors);
  }
  // Kueue's webhook checks preemption and flavorFungibility again as the
  // CEL rules above do; they never reach it.
  WebhookFairSharing(spec.fair_sharing(), "spec.fairSharing", errors);
  WebhookResourceTotals(spec.resource_groups(), "spec.resourceGroups", errors);
}

// ---- Cohort ----

void CheckCohort(const Cohort& cohort, FieldErrors* errors) {
  const CohortSpec& spec = cohort.spec();
  SchemaReference("spec.parentName", spec.parent_name(), errors);
  SchemaResourceGroups(spec.resource_groups(), "spec.resourceGroups", errors);
  SchemaFairSharing(spec.fair_sharing(), "spec.fairSharing", errors);
  if (CelRulesApply(errors)) {
    CelResourceGroups(spec.resource_groups(), "spec.resourceGroups", errors);
  }
  if (!errors->empty()) return;
  WebhookFairSharing(spec.fair_sharing(), "spec.fairSharing", errors);
  WebhookResourceGroups(spec.resource_groups(), !spec.parent_name().empty(),
                        "parent", /*lending_within_nominal=*/false,
                        "spec.resourceGroups", errors);
}

// ---- LocalQueue ----

void CheckLocalQueue(const LocalQueue* old_lq, const LocalQueue& lq,
                     FieldErrors* errors) {
  const LocalQueueSpec& spec = lq.spec();
  SchemaReference("spec.clusterQueue", spec.cluster_queue(), errors);
  SchemaEnum("spec.stopPolicy", spec.stop_policy(), kStopPolicies, errors);
  SchemaFairSharing(spec.fair_sharing(), "spec.fairSharing", errors);
  // A transition rule: Kubernetes checks it only where both have the field.
  if (CelRulesApply(errors) && old_lq != nullptr &&
      !old_lq->spec().cluster_queue().empty() &&
      !spec.cluster_queue().empty() &&
      old_lq->spec().cluster_queue() != spec.cluster_queue()) {
    CelRule("spec.clusterQueue", "string", "field is immutable", errors);
  }
}

// ---- WorkloadPriorityClass ----

void CheckWorkloadPriorityClass(const WorkloadPriorityClass& wpc,
                                FieldErrors* errors) {
  if (!wpc.has_value()) errors->Required("value");
}

// jobsetd's kMinimumRuntimeAnnotation, after Kueue's own checks.
void CheckMinimumRuntime(const ObjectMeta& meta, FieldErrors* errors) {
  auto it = meta.annotations().find(std::string(kMinimumRuntimeAnnotation));
  if (it == meta.annotations().end() || MinimumRuntime(meta).ok()) return;
  errors->Invalid(
      absl::StrCat("metadata.annotations[", kMinimumRuntimeAnnotation, "]"),
      it->second,
      "must be a duration from 0 to 168h, such as \"30m\" (jobsetd's "
      "minimum runtime before preemption)");
}

}  // namespace

absl::Status ValidateResourceFlavor(const ResourceFlavor& rf) {
  FieldErrors errors;
  ValidateMeta(rf.metadata(), /*namespaced=*/false, &errors);
  CheckResourceFlavor(nullptr, rf, &errors);
  return errors.ToStatus(ObjectName("ResourceFlavor", rf.metadata()));
}

absl::Status ValidateResourceFlavorUpdate(const ResourceFlavor& old_rf,
                                          const ResourceFlavor& new_rf) {
  FieldErrors errors;
  ValidateMetaUpdate(old_rf.metadata(), new_rf.metadata(), &errors);
  CheckResourceFlavor(&old_rf, new_rf, &errors);
  return errors.ToStatus(ObjectName("ResourceFlavor", new_rf.metadata()));
}

absl::Status ValidateClusterQueue(const ClusterQueue& cq) {
  FieldErrors errors;
  ValidateMeta(cq.metadata(), /*namespaced=*/false, &errors);
  CheckClusterQueue(cq, &errors);
  CheckMinimumRuntime(cq.metadata(), &errors);
  return errors.ToStatus(ObjectName("ClusterQueue", cq.metadata()));
}

absl::Status ValidateClusterQueueUpdate(const ClusterQueue& old_cq,
                                        const ClusterQueue& new_cq) {
  FieldErrors errors;
  ValidateMetaUpdate(old_cq.metadata(), new_cq.metadata(), &errors);
  CheckClusterQueue(new_cq, &errors);
  CheckMinimumRuntime(new_cq.metadata(), &errors);
  return errors.ToStatus(ObjectName("ClusterQueue", new_cq.metadata()));
}

absl::Status ValidateCohort(const Cohort& cohort) {
  FieldErrors errors;
  ValidateMeta(cohort.metadata(), /*namespaced=*/false, &errors);
  CheckCohort(cohort, &errors);
  return errors.ToStatus(ObjectName("Cohort", cohort.metadata()));
}

absl::Status ValidateCohortUpdate(const Cohort& old_cohort,
                                  const Cohort& new_cohort) {
  FieldErrors errors;
  ValidateMetaUpdate(old_cohort.metadata(), new_cohort.metadata(), &errors);
  CheckCohort(new_cohort, &errors);
  return errors.ToStatus(ObjectName("Cohort", new_cohort.metadata()));
}

absl::Status ValidateLocalQueue(const LocalQueue& lq) {
  FieldErrors errors;
  ValidateMeta(lq.metadata(), /*namespaced=*/true, &errors);
  CheckLocalQueue(nullptr, lq, &errors);
  return errors.ToStatus(ObjectName("LocalQueue", lq.metadata()));
}

absl::Status ValidateLocalQueueUpdate(const LocalQueue& old_lq,
                                      const LocalQueue& new_lq) {
  FieldErrors errors;
  ValidateMetaUpdate(old_lq.metadata(), new_lq.metadata(), &errors);
  CheckLocalQueue(&old_lq, new_lq, &errors);
  return errors.ToStatus(ObjectName("LocalQueue", new_lq.metadata()));
}

absl::Status ValidateWorkloadPriorityClass(const WorkloadPriorityClass& wpc) {
  FieldErrors errors;
  ValidateMeta(wpc.metadata(), /*namespaced=*/false, &errors);
  CheckWorkloadPriorityClass(wpc, &errors);
  CheckMinimumRuntime(wpc.metadata(), &errors);
  return errors.ToStatus(ObjectName("WorkloadPriorityClass", wpc.metadata()));
}

absl::Status ValidateWorkloadPriorityClassUpdate(
    const WorkloadPriorityClass& old_wpc,
    const WorkloadPriorityClass& new_wpc) {
  FieldErrors errors;
  ValidateMetaUpdate(old_wpc.metadata(), new_wpc.metadata(), &errors);
  CheckWorkloadPriorityClass(new_wpc, &errors);
  CheckMinimumRuntime(new_wpc.metadata(), &errors);
  return errors.ToStatus(
      ObjectName("WorkloadPriorityClass", new_wpc.metadata()));
}

absl::StatusOr<absl::Duration> MinimumRuntime(const ObjectMeta& meta) {
  auto it = meta.annotations().find(std::string(kMinimumRuntimeAnnotation));
  if (it == meta.annotations().end()) return absl::ZeroDuration();
  absl::Duration d;
  if (!absl::ParseDuration(it->second, &d) || d < absl::ZeroDuration() ||
      d > kMaxMinimumRuntime || d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kMinimumRuntimeAnnotation, ": ", Quote(it->second),
                     " is not a duration from 0 to 168h"));
  }
  return d;
}

}  // namespace jobset::api
