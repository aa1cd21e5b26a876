#include "api/kueue_kinds.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/quote.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace jobset::api {
namespace {

using ::google::protobuf::FieldDescriptor;
using ::google::protobuf::Message;

constexpr KueueKind kKinds[] = {
    {"ResourceFlavor", "resourceflavors", false, KueueObject::kResourceFlavor},
    {"ClusterQueue", "clusterqueues", false, KueueObject::kClusterQueue},
    {"Cohort", "cohorts", false, KueueObject::kCohort},
    {"LocalQueue", "localqueues", true, KueueObject::kLocalQueue},
    {"WorkloadPriorityClass", "workloadpriorityclasses", false,
     KueueObject::kWorkloadPriorityClass},
    {"Workload", "workloads", true, KueueObject::kWorkload},
};

// The field of the object the oneof holds that every kind has, or null
// when it holds none.
const FieldDescriptor* HeldField(const KueueObject& object) {
  return object.GetReflection()->GetOneofFieldDescriptor(
      object, object.GetDescriptor()->oneof_decl(0));
}

const FieldDescriptor* MetadataOf(const Message& held) {
  return held.GetDescriptor()->FindFieldByName("metadata");
}

}  // namespace

absl::Span<const KueueKind> KueueKinds() { return kKinds; }

const KueueKind* FindKueueKind(absl::string_view kind) {
  for (const KueueKind& k : kKinds) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

const KueueKind* FindKueueKind(KueueObject::ObjectCase object_case) {
  for (const KueueKind& k : kKinds) {
    if (k.object_case == object_case) return &k;
  }
  return nullptr;
}

const KueueKind* FindKueueKindByResource(absl::string_view resource) {
  for (const KueueKind& k : kKinds) {
    if (k.resource == resource) return &k;
  }
  return nullptr;
}

absl::StatusOr<const KueueKind*> KueueKindNamed(absl::string_view kind) {
  if (const KueueKind* found = FindKueueKind(kind)) return found;
  std::vector<std::string> supported;
  for (const KueueKind& k : kKinds) supported.push_back(Quote(k.kind));
  return absl::InvalidArgumentError(
      absl::StrCat("kind: Unsupported value: ", Quote(kind.substr(0, 64)),
                   ": supported values: ", absl::StrJoin(supported, ", ")));
}

const ObjectMeta& KueueObjectMeta(const KueueObject& object) {
  const FieldDescriptor* field = HeldField(object);
  if (field == nullptr) return ObjectMeta::default_instance();
  const Message& held = object.GetReflection()->GetMessage(object, field);
  return static_cast<const ObjectMeta&>(
      held.GetReflection()->GetMessage(held, MetadataOf(held)));
}

ObjectMeta* MutableKueueObjectMeta(KueueObject* object) {
  const FieldDescriptor* field = HeldField(*object);
  if (field == nullptr) return nullptr;
  Message* held = object->GetReflection()->MutableMessage(object, field);
  return static_cast<ObjectMeta*>(
      held->GetReflection()->MutableMessage(held, MetadataOf(*held)));
}

}  // namespace jobset::api
