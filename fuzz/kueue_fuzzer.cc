// ParseKueueDocument on arbitrary YAML or JSON text, then Kueue's defaults
// and validation of whatever kind it reads, and the update rules against
// itself: never a crash, a sanitizer report or unbounded work.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/kueue_defaults.h"
#include "api/kueue_manifest.h"
#include "api/kueue_validation.h"
#include "proto/kueue.pb.h"

namespace {

using jobset::api::KueueObject;

void Validate(const KueueObject& o) {
  namespace api = jobset::api;
  switch (o.object_case()) {
    case KueueObject::kResourceFlavor:
      (void)api::ValidateResourceFlavor(o.resource_flavor());
      (void)api::ValidateResourceFlavorUpdate(o.resource_flavor(),
                                              o.resource_flavor());
      break;
    case KueueObject::kClusterQueue:
      (void)api::ValidateClusterQueue(o.cluster_queue());
      (void)api::ValidateClusterQueueUpdate(o.cluster_queue(),
                                            o.cluster_queue());
      break;
    case KueueObject::kCohort:
      (void)api::ValidateCohort(o.cohort());
      (void)api::ValidateCohortUpdate(o.cohort(), o.cohort());
      break;
    case KueueObject::kLocalQueue:
      (void)api::ValidateLocalQueue(o.local_queue());
      (void)api::ValidateLocalQueueUpdate(o.local_queue(), o.local_queue());
      break;
    case KueueObject::kWorkloadPriorityClass:
      (void)api::ValidateWorkloadPriorityClass(o.workload_priority_class());
      (void)api::ValidateWorkloadPriorityClassUpdate(
          o.workload_priority_class(), o.workload_priority_class());
      break;
    case KueueObject::kWorkload:
      (void)api::ValidateWorkload(o.workload());
      (void)api::ValidateWorkloadUpdate(o.workload(), o.workload());
      break;
    case KueueObject::OBJECT_NOT_SET:
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  absl::StatusOr<KueueObject> object =
      jobset::api::ParseKueueDocument(text, &warnings);
  if (!object.ok()) return 0;
  Validate(*object);
  jobset::api::SetKueueDefaults(&*object);
  Validate(*object);
  return 0;
}
