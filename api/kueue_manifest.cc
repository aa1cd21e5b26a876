#include "api/kueue_manifest.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/field_errors.h"
#include "api/manifest.h"
#include "common/status_macros.h"
#include "google/protobuf/message.h"

namespace jobset::api {
namespace {

constexpr absl::string_view kKinds[] = {
    "ResourceFlavor", "ClusterQueue",          "Cohort",
    "LocalQueue",     "WorkloadPriorityClass", "Workload"};
constexpr absl::string_view kApiVersions[] = {kKueueApiVersion,
                                              kKueueApiVersionV1beta2};
constexpr absl::string_view kMayStopSearch = "MayStopSearch";

// v1beta2's priorityClassRef groups and kinds, and the v1beta1
// priorityClassSource each pair stands for.
constexpr absl::string_view kWorkloadPriorityClassGroup = "kueue.x-k8s.io";
constexpr absl::string_view kPodPriorityClassGroup = "scheduling.k8s.io";
constexpr absl::string_view kWorkloadPriorityClassKind =
    "WorkloadPriorityClass";
constexpr absl::string_view kPodPriorityClassKind = "PriorityClass";
constexpr absl::string_view kWorkloadPriorityClassSource =
    "kueue.x-k8s.io/workloadpriorityclass";
constexpr absl::string_view kPodPriorityClassSource =
    "scheduling.k8s.io/priorityclass";

// A field of the other version, as the manifest loader reports one it does
// not know.
void UnknownField(absl::string_view path, absl::string_view instead,
                  FieldErrors* errors) {
  errors->Add(path,
              absl::StrCat("unknown field (did you mean \"", instead, "\"?)"));
}

// The message of `object` that a document of `kind` fills.
google::protobuf::Message* MutableByKind(absl::string_view kind,
                                         KueueObject* object) {
  if (kind == "ResourceFlavor") return object->mutable_resource_flavor();
  if (kind == "ClusterQueue") return object->mutable_cluster_queue();
  if (kind == "Cohort") return object->mutable_cohort();
  if (kind == "LocalQueue") return object->mutable_local_queue();
  if (kind == "WorkloadPriorityClass") {
    return object->mutable_workload_priority_class();
  }
  return object->mutable_workload();
}

void NormaliseClusterQueue(bool v1beta2, ClusterQueue* cq,
                           FieldErrors* errors) {
  if (!cq->has_spec()) return;
  ClusterQueueSpec* spec = cq->mutable_spec();
  if (!v1beta2 && spec->has_cohort_name()) {
    UnknownField("spec.cohortName", "cohort", errors);
  }
  if (v1beta2) {
    if (!spec->cohort().empty()) {
      UnknownField("spec.cohort", "cohortName", errors);
    }
    spec->set_cohort(spec->cohort_name());
    spec->clear_cohort_name();
  }
  if (!spec->has_flavor_fungibility()) return;
  FlavorFungibility* fungibility = spec->mutable_flavor_fungibility();
  const bool borrow = fungibility->when_can_borrow() == "Borrow";
  const bool preempt = fungibility->when_can_preempt() == "Preempt";
  if (!v1beta2) {
    // As Kueue converts them to v1beta2 (clusterqueue_conversion.go).
    if (borrow) fungibility->set_when_can_borrow(std::string(kMayStopSearch));
    if (preempt) fungibility->set_when_can_preempt(std::string(kMayStopSearch));
    return;
  }
  constexpr absl::string_view kPolicies[] = {kMayStopSearch, "TryNextFlavor"};
  if (borrow) {
    errors->NotSupported("spec.flavorFungibility.whenCanBorrow", "Borrow",
                         kPolicies);
  }
  if (preempt) {
    errors->NotSupported("spec.flavorFungibility.whenCanPreempt", "Preempt",
                         kPolicies);
  }
}

void NormaliseLocalQueue(bool v1beta2, LocalQueue* lq, FieldErrors* errors) {
  if (!lq->has_status()) return;
  LocalQueueStatus* status = lq->mutable_status();
  if (!v1beta2) {
    if (status->flavors_usage_size() > 0) {
      UnknownField("status.flavorsUsage", "flavorUsage", errors);
    }
    return;
  }
  if (status->flavor_usage_size() > 0) {
    UnknownField("status.flavorUsage", "flavorsUsage", errors);
  }
  status->mutable_flavor_usage()->Swap(status->mutable_flavors_usage());
  status->clear_flavors_usage();
}

// Turns v1beta2's priorityClassRef into v1beta1's name and source, checking
// what v1beta2's schema checks of it (the enums and its two CEL rules).
void ConvertPriorityClassRef(const PriorityClassRef& ref, WorkloadSpec* spec,
                             FieldErrors* errors) {
  const std::string path = "spec.priorityClassRef";
  const bool workload_group = ref.group() == kWorkloadPriorityClassGroup;
  const bool pod_group = ref.group() == kPodPriorityClassGroup;
  const bool workload_kind = ref.kind() == kWorkloadPriorityClassKind;
  const bool pod_kind = ref.kind() == kPodPriorityClassKind;
  if (ref.group().empty()) {
    errors->Required(Child(path, "group"));
  } else if (!workload_group && !pod_group) {
    errors->NotSupported(Child(path, "group"), ref.group(),
                         {kWorkloadPriorityClassGroup, kPodPriorityClassGroup});
  }
  if (ref.kind().empty()) {
    errors->Required(Child(path, "kind"));
  } else if (!workload_kind && !pod_kind) {
    errors->NotSupported(Child(path, "kind"), ref.kind(),
                         {kWorkloadPriorityClassKind, kPodPriorityClassKind});
  }
  if (ref.name().empty()) errors->Required(Child(path, "name"));
  if (pod_group && !pod_kind && workload_kind) {
    errors->Invalid(path, "object",
                    "only the PriorityClass kind is allowed for the "
                    "scheduling.k8s.io group");
  }
  if (workload_group && !workload_kind && pod_kind) {
    errors->Invalid(path, "object",
                    "only the WorkloadPriorityClass kind is allowed for the "
                    "kueue.x-k8s.io group");
  }
  spec->set_priority_class_name(ref.name());
  spec->set_priority_class_source(std::string(
      workload_group ? kWorkloadPriorityClassSource : kPodPriorityClassSource));
}

void NormaliseWorkload(bool v1beta2, Workload* wl, FieldErrors* errors) {
  if (wl->has_spec()) {
    WorkloadSpec* spec = wl->mutable_spec();
    if (!v1beta2 && spec->has_priority_class_ref()) {
      UnknownField("spec.priorityClassRef", "priorityClassName", errors);
    }
    if (v1beta2 && !spec->priority_class_name().empty()) {
      UnknownField("spec.priorityClassName", "priorityClassRef", errors);
    }
    if (v1beta2 && !spec->priority_class_source().empty()) {
      UnknownField("spec.priorityClassSource", "priorityClassRef", errors);
    }
    if (v1beta2 && spec->has_priority_class_ref()) {
      ConvertPriorityClassRef(spec->priority_class_ref(), spec, errors);
      spec->clear_priority_class_ref();
    }
  }
  if (wl->has_status()) {
    WorkloadStatus* status = wl->mutable_status();
    if (!v1beta2 && status->has_accumulated_past_execution_time_seconds()) {
      UnknownField("status.accumulatedPastExecutionTimeSeconds",
                   "accumulatedPastExexcutionTimeSeconds", errors);
    }
    if (v1beta2 && status->has_accumulated_past_exexcution_time_seconds()) {
      UnknownField("status.accumulatedPastExexcutionTimeSeconds",
                   "accumulatedPastExecutionTimeSeconds", errors);
    }
    if (v1beta2 && status->has_accumulated_past_execution_time_seconds()) {
      status->set_accumulated_past_exexcution_time_seconds(
          status->accumulated_past_execution_time_seconds());
      status->clear_accumulated_past_execution_time_seconds();
    }
  }
}

}  // namespace

bool IsKueueKind(absl::string_view kind) {
  for (absl::string_view k : kKinds) {
    if (k == kind) return true;
  }
  return false;
}

absl::StatusOr<KueueObject> ParseKueueDocument(
    absl::string_view text, std::vector<std::string>* warnings) {
  JOBSET_ASSIGN_OR_RETURN(const DocumentType type, ReadDocumentType(text));
  FieldErrors type_errors;
  if (!IsKueueKind(type.kind)) {
    type_errors.NotSupported("kind", type.kind, kKinds);
    return type_errors.ToStatus("document");
  }
  const bool v1beta2 = type.api_version == kKueueApiVersionV1beta2;
  if (!v1beta2 && type.api_version != kKueueApiVersion) {
    type_errors.NotSupported("apiVersion", type.api_version, kApiVersions);
    return type_errors.ToStatus("document");
  }

  KueueObject object;
  google::protobuf::Message* message = MutableByKind(type.kind, &object);
  std::vector<std::string> parse_warnings;
  JOBSET_RETURN_IF_ERROR(ParseManifestDocument(text, message, &parse_warnings));
  FieldErrors errors;
  switch (object.object_case()) {
    case KueueObject::kClusterQueue:
      NormaliseClusterQueue(v1beta2, object.mutable_cluster_queue(), &errors);
      object.mutable_cluster_queue()->set_api_version(
          std::string(kKueueApiVersion));
      break;
    case KueueObject::kLocalQueue:
      NormaliseLocalQueue(v1beta2, object.mutable_local_queue(), &errors);
      object.mutable_local_queue()->set_api_version(
          std::string(kKueueApiVersion));
      break;
    case KueueObject::kWorkload:
      NormaliseWorkload(v1beta2, object.mutable_workload(), &errors);
      object.mutable_workload()->set_api_version(std::string(kKueueApiVersion));
      break;
    case KueueObject::kResourceFlavor:
      object.mutable_resource_flavor()->set_api_version(
          std::string(kKueueApiVersion));
      break;
    case KueueObject::kCohort:
      object.mutable_cohort()->set_api_version(std::string(kKueueApiVersion));
      break;
    case KueueObject::kWorkloadPriorityClass:
      object.mutable_workload_priority_class()->set_api_version(
          std::string(kKueueApiVersion));
      break;
    case KueueObject::OBJECT_NOT_SET:
      break;
  }
  JOBSET_RETURN_IF_ERROR(errors.ToStatus("document"));
  if (warnings != nullptr) {
    for (std::string& w : parse_warnings) warnings->push_back(std::move(w));
  }
  return object;
}

}  // namespace jobset::api
