// ValidateWorkload and ValidateWorkloadUpdate (api/kueue_validation.h).
// Upstream: pkg/webhooks/workload_webhook.go and the kubebuilder markers of
// apis/kueue/v1beta1/workload_types.go (the CRD schema).

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "api/field_errors.h"
#include "api/kueue_validation.h"
#include "api/kueue_validation_internal.h"
#include "api/metadata_validation.h"
#include "api/names.h"
#include "common/quote.h"
#include "google/protobuf/util/message_differencer.h"

namespace jobset::api {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using kueue_internal::CanonicalQuantity;
using kueue_internal::CelRule;
using kueue_internal::CelRulesApply;
using kueue_internal::KubeQuantity;
using kueue_internal::NonNegativeQuantity;
using kueue_internal::ObjectName;
using kueue_internal::ReadQuantity;
using kueue_internal::Repeated;
using kueue_internal::SchemaEnum;
using kueue_internal::SchemaMaxItems;
using kueue_internal::SchemaMinimum;
using kueue_internal::SchemaPodSetName;
using kueue_internal::SchemaQuantity;
using kueue_internal::SchemaReference;

constexpr int kMaxPodSets = 18;
constexpr absl::string_view kDefaultPodSetName = "main";
constexpr absl::string_view kWorkloadPriorityClassSource =
    "kueue.x-k8s.io/workloadpriorityclass";
constexpr absl::string_view kPriorityClassSources[] = {
    kWorkloadPriorityClassSource, "scheduling.k8s.io/priorityclass", ""};
constexpr absl::string_view kImmutable = "field is immutable";
// Where Kubernetes reports a rule on the whole object.
constexpr absl::string_view kRoot = "<nil>";

// Kubernetes' meta/v1 condition limits and reason syntax.
constexpr size_t kMaxReasonLength = 1024;
constexpr size_t kMaxMessageLength = 32 * 1024;
constexpr absl::string_view kReasonMessage =
    "a condition reason must start with alphabetic character, optionally "
    "followed by a string of alphanumeric characters or '_,:', and must end "
    "with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  "
    "or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used "
    "for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";

std::string PodSetName(const PodSet& ps) {
  return ps.name().empty() ? std::string(kDefaultPodSetName) : ps.name();
}

int32_t PodSetCount(const PodSet& ps) {
  return ps.has_count() ? ps.count() : 1;
}

bool HasTrueCondition(const Workload& wl, absl::string_view type) {
  return std::any_of(wl.status().conditions().begin(),
                     wl.status().conditions().end(), [&](const Condition& c) {
                       return c.type() == type && c.status() == "True";
                     });
}

bool HasQuotaReservation(const Workload& wl) {
  return HasTrueCondition(wl, "QuotaReserved");
}

bool ReservesQuotaWithoutAdmission(const Workload* wl) {
  return wl != nullptr && HasQuotaReservation(*wl) &&
         !wl->status().has_admission();
}

bool IsConditionReason(absl::string_view reason) {
  auto word = [](char c) { return absl::ascii_isalnum(c) || c == '_'; };
  if (!absl::ascii_isalpha(reason.front()) || !word(reason.back())) {
    return false;
  }
  return std::all_of(reason.begin(), reason.end(),
                     [&](char c) { return word(c) || c == ',' || c == ':'; });
}

// ---- Schema and CEL ----

void SchemaResources(const Container& c, absl::string_view path,
                     FieldErrors* errors) {
  for (const auto& [name, list] :
       {std::make_pair("requests", &c.resources().requests()),
        std::make_pair("limits", &c.resources().limits())}) {
    const std::map<std::string, std::string> sorted(list->begin(), list->end());
    for (const auto& [resource, quantity] : sorted) {
      SchemaQuantity(Key(Child(Child(path, "resources"), name), resource),
                     quantity, errors);
    }
  }
}

void SchemaWorkload(const Workload& wl, FieldErrors* errors) {
  const WorkloadSpec& spec = wl.spec();
  if (spec.pod_sets().empty()) errors->Required("spec.podSets");
  SchemaMaxItems("spec.podSets", spec.pod_sets_size(), kMaxPodSets, errors);
  std::set<std::string> names;
  for (int i = 0; i < spec.pod_sets_size(); ++i) {
    const PodSet& ps = spec.pod_sets(i);
    const std::string path = Index("spec.podSets", i);
    SchemaPodSetName(Child(path, "name"), PodSetName(ps), errors);
    if (!ps.has_template_()) errors->Required(Child(path, "template"));
    if (ps.has_count()) {
      SchemaMinimum(Child(path, "count"), ps.count(), 0, errors);
    }
    if (ps.has_min_count()) {
      SchemaMinimum(Child(path, "minCount"), ps.min_count(), 1, errors);
    }
    const PodSpec& pod = ps.template_().spec();
    for (int c = 0; c < pod.init_containers_size(); ++c) {
      SchemaResources(pod.init_containers(c),
                      Index(Child(path, "template.spec.initContainers"), c),
                      errors);
    }
    for (int c = 0; c < pod.containers_size(); ++c) {
      SchemaResources(pod.containers(c),
                      Index(Child(path, "template.spec.containers"), c),
                      errors);
    }
  }
  // listType=map keyed by name: the apiserver's wording for a repeated key.
  for (int i = 0; i < spec.pod_sets_size(); ++i) {
    const std::string name = PodSetName(spec.pod_sets(i));
    if (!names.insert(name).second) {
      errors->Add(Index("spec.podSets", i),
                  absl::StrCat("Duplicate value: map[string]interface "
                               "{}{\"name\":",
                               Quote(name), "}"));
    }
  }
  SchemaReference("spec.queueName", spec.queue_name(), errors);
  SchemaReference("spec.priorityClassName", spec.priority_class_name(), errors);
  SchemaEnum("spec.priorityClassSource", spec.priority_class_source(),
             kPriorityClassSources, errors);
  if (spec.has_maximum_execution_time_seconds()) {
    SchemaMinimum("spec.maximumExecutionTimeSeconds",
                  spec.maximum_execution_time_seconds(), 1, errors);
  }

  const WorkloadStatus& status = wl.status();
  if (status.has_admission()) {
    const Admission& admission = status.admission();
    if (admission.cluster_queue().empty()) {
      errors->Required("status.admission.clusterQueue");
    }
    SchemaReference("status.admission.clusterQueue", admission.cluster_queue(),
                    errors);
    const std::string assignments = "status.admission.podSetAssignments";
    if (admission.pod_set_assignments().empty()) errors->Required(assignments);
    SchemaMaxItems(assignments, admission.pod_set_assignments_size(),
                   kMaxPodSets, errors);
    for (int i = 0; i < admission.pod_set_assignments_size(); ++i) {
      const PodSetAssignment& psa = admission.pod_set_assignments(i);
      const std::string path = Index(assignments, i);
      SchemaPodSetName(Child(path, "name"),
                       psa.name().empty() ? kDefaultPodSetName : psa.name(),
                       errors);
      if (psa.has_count()) {
        SchemaMinimum(Child(path, "count"), psa.count(), 0, errors);
      }
      const std::map<std::string, std::string> usage(
          psa.resource_usage().begin(), psa.resource_usage().end());
      for (const auto& [resource, quantity] : usage) {
        SchemaQuantity(Key(Child(path, "resourceUsage"), resource), quantity,
                       errors);
      }
    }
  }
  if (status.requeue_state().has_count()) {
    SchemaMinimum("status.requeueState.count", status.requeue_state().count(),
                  0, errors);
  }
  SchemaMaxItems("status.reclaimablePods", status.reclaimable_pods_size(),
                 kMaxPodSets, errors);
  for (int i = 0; i < status.reclaimable_pods_size(); ++i) {
    const ReclaimablePod& rp = status.reclaimable_pods(i);
    const std::string path = Index("status.reclaimablePods", i);
    if (rp.name().empty()) {
      errors->Required(Child(path, "name"));
    } else {
      SchemaPodSetName(Child(path, "name"), rp.name(), errors);
    }
    SchemaMinimum(Child(path, "count"), rp.count(), 0, errors);
  }
}

void CelWorkload(const Workload* old_wl, const Workload& wl,
                 FieldErrors* errors) {
  const WorkloadSpec& spec = wl.spec();
  if (HasQuotaReservation(wl) && wl.status().has_admission() &&
      spec.pod_sets_size() !=
          wl.status().admission().pod_set_assignments_size()) {
    CelRule(kRoot, "object",
            "podSetAssignments must have the same number of podSets as the "
            "spec",
            errors);
  }
  if (old_wl != nullptr) {
    const WorkloadSpec& old_spec = old_wl->spec();
    const bool old_reserved = HasQuotaReservation(*old_wl);
    // priorityClassSource defaults to "", so both always have it.
    if (old_reserved &&
        old_spec.priority_class_source() != spec.priority_class_source()) {
      CelRule(kRoot, "object",
              "priorityClassSource is immutable while workload quota reserved",
              errors);
    }
    if (old_reserved &&
        spec.priority_class_source() != kWorkloadPriorityClassSource &&
        !old_spec.priority_class_name().empty() &&
        !spec.priority_class_name().empty() &&
        old_spec.priority_class_name() != spec.priority_class_name()) {
      CelRule(kRoot, "object",
              "priorityClassName is immutable while workload quota reserved "
              "and priorityClassSource is not equal to "
              "kueue.x-k8s.io/workloadpriorityclass",
              errors);
    }
    if (old_reserved && HasQuotaReservation(wl) &&
        old_spec.queue_name() != spec.queue_name()) {
      CelRule(kRoot, "object",
              "queueName is immutable while workload quota "
              "reserved",
              errors);
    }
    if (HasTrueCondition(*old_wl, "Admitted") &&
        HasTrueCondition(wl, "Admitted") &&
        old_spec.maximum_execution_time_seconds() !=
            spec.maximum_execution_time_seconds()) {
      CelRule(kRoot, "object",
              "maximumExecutionTimeSeconds is immutable while workload quota "
              "reserved",
              errors);
    }
  }
  if (!spec.priority_class_name().empty() && !spec.has_priority()) {
    CelRule("spec", "object",
            "priority should not be nil when priorityClassName is set", errors);
  }
  for (int i = 0; i < spec.pod_sets_size(); ++i) {
    const PodSet& ps = spec.pod_sets(i);
    if (ps.has_min_count() && ps.min_count() > PodSetCount(ps)) {
      CelRule(Index("spec.podSets", i), "object",
              "minCount should be positive and less or equal to count", errors);
    }
  }
}

// ---- Kueue's webhook ----

// Kueue's validateResourceList: no "pods", nothing negative.
void WebhookResources(const Container& c, absl::string_view path,
                      FieldErrors* errors) {
  for (const auto& [name, list] :
       {std::make_pair("requests", &c.resources().requests()),
        std::make_pair("limits", &c.resources().limits())}) {
    const std::string list_path = Child(Child(path, "resources"), name);
    const std::map<std::string, std::string> sorted(list->begin(), list->end());
    for (const auto& [resource, quantity] : sorted) {
      if (resource == "pods") {
        errors->Invalid(Key(list_path, resource), "pods",
                        "the key is reserved for internal kueue use");
      }
      NonNegativeQuantity(Key(list_path, resource), quantity, errors);
    }
  }
}

void WebhookPodSet(const PodSet& ps, absl::string_view path,
                   FieldErrors* errors) {
  const PodTemplateSpec& tmpl = ps.template_();
  ValidateLabels(tmpl.metadata().labels(),
                 Child(path, "template.metadata.labels"), errors);
  ValidateAnnotations(tmpl.metadata().annotations(),
                      Child(path, "template.metadata.annotations"), errors);
  for (int c = 0; c < tmpl.spec().init_containers_size(); ++c) {
    WebhookResources(tmpl.spec().init_containers(c),
                     Index(Child(path, "template.spec.initContainers"), c),
                     errors);
  }
  for (int c = 0; c < tmpl.spec().containers_size(); ++c) {
    WebhookResources(tmpl.spec().containers(c),
                     Index(Child(path, "template.spec.containers"), c), errors);
  }
}

// Kubernetes' Quantity.MilliValue() for cpu, Value() (whole units) for
// anything else, rounded up as Kubernetes rounds; nullopt beyond 10^30.
std::optional<__int128> ResourceValue(absl::string_view resource,
                                      const KubeQuantity& q) {
  constexpr __int128 kLimit = static_cast<__int128>(1e30);
  const int unit_scale = resource == "cpu" ? -3 : 0;
  __int128 value = q.amount;
  int scale = q.scale;
  for (; scale > unit_scale; --scale) {
    if (value > kLimit || value < -kLimit) return std::nullopt;
    value *= 10;
  }
  bool remainder = false;
  for (; scale < unit_scale; ++scale) {
    remainder = remainder || value % 10 != 0;
    value /= 10;
  }
  return remainder && q.amount > 0 ? value + 1 : value;
}

// Kueue's validateAdmission.
void WebhookAdmission(const Workload& wl, const Workload* old_wl,
                      FieldErrors* errors) {
  if (!wl.status().has_admission()) {
    if (ReservesQuotaWithoutAdmission(old_wl)) return;
    errors->Required("status.admission",
                     "must be set while the QuotaReserved condition is true");
    return;
  }
  std::set<std::string> names;
  for (const PodSet& ps : wl.spec().pod_sets()) names.insert(PodSetName(ps));
  const Admission& admission = wl.status().admission();
  for (int i = 0; i < admission.pod_set_assignments_size(); ++i) {
    const PodSetAssignment& psa = admission.pod_set_assignments(i);
    const std::string path = Index("status.admission.podSetAssignments", i);
    const std::string name =
        psa.name().empty() ? std::string(kDefaultPodSetName) : psa.name();
    if (names.count(name) == 0) {
      errors->Add(Child(path, "name"),
                  absl::StrCat("Not found: ", Quote(name)));
    }
    const int32_t count = psa.has_count() ? psa.count() : 0;
    if (count <= 0) continue;
    const std::map<std::string, std::string> usage(psa.resource_usage().begin(),
                                                   psa.resource_usage().end());
    for (const auto& [resource, text] : usage) {
      const std::optional<KubeQuantity> q = ReadQuantity(text);
      if (!q.has_value()) continue;
      const std::optional<__int128> value = ResourceValue(resource, *q);
      if (value.has_value() && *value % count != 0) {
        errors->Invalid(Key(Child(path, "resourceUsage"), resource),
                        CanonicalQuantity(*q),
                        absl::StrCat("is not a multiple of ", count));
      }
    }
  }
}

// meta/v1 ValidateConditions.
void WebhookConditions(const Repeated<Condition>& conditions,
                       absl::string_view path, FieldErrors* errors) {
  std::set<std::string> types;
  for (int i = 0; i < conditions.size(); ++i) {
    const Condition& c = conditions[i];
    const std::string c_path = Index(path, i);
    if (!types.insert(c.type()).second) errors->Duplicate(c_path, c.type());
    if (c.type().empty()) {
      errors->Required(Child(c_path, "type"), "is required");
    } else {
      for (const std::string& error : IsQualifiedName(c.type())) {
        errors->Invalid(Child(c_path, "type"), c.type(), error);
      }
    }
    if (c.status().empty()) {
      errors->Required(Child(c_path, "status"));
    } else if (c.status() != "True" && c.status() != "False" &&
               c.status() != "Unknown") {
      errors->NotSupported(Child(c_path, "status"), c.status(),
                           {"False", "True", "Unknown"});
    }
    if (c.observed_generation() < 0) {
      errors->Invalid(Child(c_path, "observedGeneration"),
                      c.observed_generation(),
                      "must be greater than or equal to zero");
    }
    if (!c.has_last_transition_time()) {
      errors->Required(Child(c_path, "lastTransitionTime"));
    }
    if (c.reason().empty()) {
      errors->Required(Child(c_path, "reason"));
    } else {
      if (!IsConditionReason(c.reason())) {
        errors->Invalid(Child(c_path, "reason"), c.reason(), kReasonMessage);
      }
      if (c.reason().size() > kMaxReasonLength) {
        errors->TooLong(Child(c_path, "reason"), kMaxReasonLength);
      }
    }
    if (c.message().size() > kMaxMessageLength) {
      errors->TooLong(Child(c_path, "message"), kMaxMessageLength);
    }
  }
}

// Kueue's validateReclaimablePods.
void WebhookReclaimablePods(const Workload& wl, FieldErrors* errors) {
  std::map<std::string, int32_t> counts;
  std::vector<absl::string_view> names;
  for (const PodSet& ps : wl.spec().pod_sets()) {
    counts.emplace(PodSetName(ps), PodSetCount(ps));
  }
  for (const PodSet& ps : wl.spec().pod_sets()) {
    names.push_back(counts.find(PodSetName(ps))->first);
  }
  for (const ReclaimablePod& rp : wl.status().reclaimable_pods()) {
    const std::string path = Key("status.reclaimablePods", rp.name());
    const auto found = counts.find(rp.name());
    if (found == counts.end()) {
      errors->NotSupported(Child(path, "name"), rp.name(), names);
    } else if (rp.count() > found->second) {
      errors->Invalid(
          Child(path, "count"), rp.count(),
          absl::StrCat("should be less or equal to ", found->second));
    }
  }
}

void WebhookWorkload(const Workload& wl, const Workload* old_wl,
                     FieldErrors* errors) {
  int min_counts = 0;
  for (int i = 0; i < wl.spec().pod_sets_size(); ++i) {
    const PodSet& ps = wl.spec().pod_sets(i);
    WebhookPodSet(ps, Index("spec.podSets", i), errors);
    if (ps.has_min_count()) ++min_counts;
  }
  if (min_counts > 1) {
    errors->Invalid("spec.podSets", min_counts,
                    "at most one podSet can use minCount");
  }
  if (HasQuotaReservation(wl)) WebhookAdmission(wl, old_wl, errors);
  WebhookConditions(wl.status().conditions(), "status.conditions", errors);
  WebhookReclaimablePods(wl, errors);
}

// Kueue's validateImmutablePodSets: a podSet's count may only go down
// (ElasticJobsViaWorkloadSlices, on by default).
void WebhookImmutablePodSets(const Repeated<PodSet>& new_sets,
                             const Repeated<PodSet>& old_sets,
                             FieldErrors* errors) {
  if (new_sets.size() != old_sets.size()) {
    errors->Invalid("spec.podSets", "array", kImmutable);
    return;
  }
  for (int i = 0; i < new_sets.size(); ++i) {
    PodSet updated = new_sets[i];
    if (PodSetCount(updated) < PodSetCount(old_sets[i])) {
      updated.set_count(PodSetCount(old_sets[i]));
    }
    PodSet old = old_sets[i];
    if (!old.has_count()) old.set_count(1);
    if (!updated.has_count()) updated.set_count(1);
    if (!MessageDifferencer::Equals(updated, old)) {
      // Kueue names the element "podSets.<i>" (field.Path.Child).
      errors->Invalid(absl::StrCat("spec.podSets.", i), "object", kImmutable);
    }
  }
}

// Kueue's validateReclaimablePodsUpdate, both Workloads holding quota.
void WebhookReclaimablePodsUpdate(const Workload& wl, const Workload& old_wl,
                                  FieldErrors* errors) {
  std::map<std::string, int32_t> old_counts;
  for (const ReclaimablePod& rp : old_wl.status().reclaimable_pods()) {
    old_counts[rp.name()] = rp.count();
  }
  std::map<std::string, int32_t> new_counts;
  for (const ReclaimablePod& rp : wl.status().reclaimable_pods()) {
    new_counts[rp.name()] = rp.count();
  }
  if (new_counts == old_counts || old_counts.empty()) return;
  for (const ReclaimablePod& rp : wl.status().reclaimable_pods()) {
    const auto found = old_counts.find(rp.name());
    if (found != old_counts.end() && rp.count() < found->second) {
      errors->Invalid(Child(Key("status.reclaimablePods", rp.name()), "count"),
                      rp.count(),
                      absl::StrCat("cannot be less than ", found->second));
    }
  }
  for (const auto& [name, count] : old_counts) {
    if (new_counts.count(name) == 0) {
      errors->Required(Key("status.reclaimablePods", name),
                       "cannot be removed");
    }
  }
}

void CheckWorkload(const Workload* old_wl, const Workload& wl,
                   FieldErrors* errors) {
  SchemaWorkload(wl, errors);
  if (CelRulesApply(errors)) CelWorkload(old_wl, wl, errors);
  if (!errors->empty()) return;
  WebhookWorkload(wl, old_wl, errors);
  if (old_wl == nullptr) return;
  if (HasQuotaReservation(*old_wl)) {
    WebhookImmutablePodSets(wl.spec().pod_sets(), old_wl->spec().pod_sets(),
                            errors);
  }
  if (HasQuotaReservation(wl) && HasQuotaReservation(*old_wl)) {
    WebhookReclaimablePodsUpdate(wl, *old_wl, errors);
  }
  if (wl.status().has_admission() && old_wl->status().has_admission() &&
      !MessageDifferencer::Equals(wl.status().admission(),
                                  old_wl->status().admission())) {
    errors->Invalid("status.admission", "object", kImmutable);
  }
}

}  // namespace

absl::Status ValidateWorkload(const Workload& wl) {
  FieldErrors errors;
  kueue_internal::ValidateMeta(wl.metadata(), /*namespaced=*/true, &errors);
  CheckWorkload(nullptr, wl, &errors);
  return errors.ToStatus(ObjectName("Workload", wl.metadata()));
}

absl::Status ValidateWorkloadUpdate(const Workload& old_wl,
                                    const Workload& new_wl) {
  FieldErrors errors;
  kueue_internal::ValidateMetaUpdate(old_wl.metadata(), new_wl.metadata(),
                                     &errors);
  CheckWorkload(&old_wl, new_wl, &errors);
  return errors.ToStatus(ObjectName("Workload", new_wl.metadata()));
}

}  // namespace jobset::api
