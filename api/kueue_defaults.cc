#include "api/kueue_defaults.h"

#include <string>

#include "absl/strings/string_view.h"

namespace jobset::api {
namespace {

constexpr char kApiVersion[] = "kueue.x-k8s.io/v1beta1";
constexpr char kNone[] = "None";
constexpr char kNever[] = "Never";
constexpr char kMain[] = "main";

void SetFairSharingDefaults(FairSharing* fair_sharing) {
  if (fair_sharing->weight().empty()) fair_sharing->set_weight("1");
}

// Fills in apiVersion and kind, and clears a cluster-scoped object's
// namespace.
template <typename T>
void SetTypeDefaults(absl::string_view kind, bool namespaced, T* object) {
  if (object->api_version().empty()) object->set_api_version(kApiVersion);
  if (object->kind().empty()) object->set_kind(std::string(kind));
  if (!namespaced) object->mutable_metadata()->clear_namespace_();
}

}  // namespace

void SetClusterQueueDefaults(ClusterQueue* cq) {
  ClusterQueueSpec* spec = cq->mutable_spec();
  if (spec->queueing_strategy().empty()) {
    spec->set_queueing_strategy("BestEffortFIFO");
  }
  FlavorFungibility* fungibility = spec->mutable_flavor_fungibility();
  if (fungibility->when_can_borrow().empty()) {
    fungibility->set_when_can_borrow("MayStopSearch");
  }
  if (fungibility->when_can_preempt().empty()) {
    fungibility->set_when_can_preempt("TryNextFlavor");
  }
  ClusterQueuePreemption* preemption = spec->mutable_preemption();
  if (preemption->within_cluster_queue().empty()) {
    preemption->set_within_cluster_queue(kNever);
  }
  if (preemption->reclaim_within_cohort().empty()) {
    preemption->set_reclaim_within_cohort(kNever);
  }
  if (preemption->borrow_within_cohort().policy().empty()) {
    preemption->mutable_borrow_within_cohort()->set_policy(kNever);
  }
  if (spec->stop_policy().empty()) spec->set_stop_policy(kNone);
  if (spec->has_fair_sharing()) {
    SetFairSharingDefaults(spec->mutable_fair_sharing());
  }
}

void SetCohortDefaults(Cohort* cohort) {
  if (cohort->spec().has_fair_sharing()) {
    SetFairSharingDefaults(cohort->mutable_spec()->mutable_fair_sharing());
  }
}

void SetLocalQueueDefaults(LocalQueue* lq) {
  LocalQueueSpec* spec = lq->mutable_spec();
  if (spec->stop_policy().empty()) spec->set_stop_policy(kNone);
  if (spec->has_fair_sharing()) {
    SetFairSharingDefaults(spec->mutable_fair_sharing());
  }
}

void SetWorkloadDefaults(Workload* wl) {
  for (PodSet& ps : *wl->mutable_spec()->mutable_pod_sets()) {
    if (ps.name().empty()) ps.set_name(kMain);
    if (!ps.has_count()) ps.set_count(1);
  }
  if (!wl->spec().has_active()) wl->mutable_spec()->set_active(true);
  if (wl->status().has_admission()) {
    for (PodSetAssignment& psa : *wl->mutable_status()
                                      ->mutable_admission()
                                      ->mutable_pod_set_assignments()) {
      if (psa.name().empty()) psa.set_name(kMain);
    }
  }
}

void SetKueueDefaults(KueueObject* object) {
  switch (object->object_case()) {
    case KueueObject::kResourceFlavor:
      SetTypeDefaults("ResourceFlavor", false,
                      object->mutable_resource_flavor());
      break;
    case KueueObject::kClusterQueue:
      SetTypeDefaults("ClusterQueue", false, object->mutable_cluster_queue());
      SetClusterQueueDefaults(object->mutable_cluster_queue());
      break;
    case KueueObject::kCohort:
      SetTypeDefaults("Cohort", false, object->mutable_cohort());
      SetCohortDefaults(object->mutable_cohort());
      break;
    case KueueObject::kLocalQueue:
      SetTypeDefaults("LocalQueue", true, object->mutable_local_queue());
      SetLocalQueueDefaults(object->mutable_local_queue());
      break;
    case KueueObject::kWorkloadPriorityClass:
      SetTypeDefaults("WorkloadPriorityClass", false,
                      object->mutable_workload_priority_class());
      break;
    case KueueObject::kWorkload:
      SetTypeDefaults("Workload", true, object->mutable_workload());
      SetWorkloadDefaults(object->mutable_workload());
      break;
    case KueueObject::OBJECT_NOT_SET:
      break;
  }
}

}  // namespace jobset::api
