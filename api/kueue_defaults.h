#ifndef JOBSET_API_KUEUE_DEFAULTS_H_
#define JOBSET_API_KUEUE_DEFAULTS_H_

#include "proto/kueue.pb.h"

// Kueue's defaults (the CRD schema's, kueue-semantics.md §1), applied before
// validation as Kubernetes applies them on create and update. Each fills in
// only what is unset, so applying it twice changes nothing.

namespace jobset::api {

// Fills in the apiVersion (kueue.x-k8s.io/v1beta1) and kind when unset, then
// the kind's defaults below. A cluster-scoped object's metadata.namespace
// is cleared, as the Kubernetes API server clears it.
void SetKueueDefaults(KueueObject* object);

// spec.queueingStrategy BestEffortFIFO; spec.flavorFungibility
// {whenCanBorrow: MayStopSearch, whenCanPreempt: TryNextFlavor} (preference
// stays unset: BorrowingOverPreemption); spec.preemption
// {withinClusterQueue: Never, reclaimWithinCohort: Never,
// borrowWithinCohort: {policy: Never}}; spec.stopPolicy None;
// spec.fairSharing.weight 1 when fairSharing is given. namespaceSelector
// stays unset when unset: it then selects no namespace.
void SetClusterQueueDefaults(ClusterQueue* cq);

// spec.fairSharing.weight 1 when fairSharing is given.
void SetCohortDefaults(Cohort* cohort);

// spec.stopPolicy None; spec.fairSharing.weight 1 when fairSharing is given.
void SetLocalQueueDefaults(LocalQueue* lq);

// Each podSet's name "main" and count 1; spec.active true; each
// podSetAssignment's name "main".
void SetWorkloadDefaults(Workload* wl);

}  // namespace jobset::api

#endif  // JOBSET_API_KUEUE_DEFAULTS_H_
