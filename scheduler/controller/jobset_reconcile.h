#ifndef JOBSET_SCHEDULER_CONTROLLER_JOBSET_RECONCILE_H_
#define JOBSET_SCHEDULER_CONTROLLER_JOBSET_RECONCILE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/features.h"
#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"
#include "scheduler/controller/child_jobs.h"

namespace jobset::scheduler {

// An event about a JobSet, in Kubernetes' terms.
struct JobSetEvent {
  std::string type;  // "Normal" or "Warning".
  std::string reason;
  std::string message;
  bool operator==(const JobSetEvent&) const = default;
};

// What one JobSet reconcile decides; the caller applies all of it in one
// store commit (events only if that commit succeeds, as upstream).
struct JobSetActions {
  // The JobSet's new status (equal to the old one when nothing changed).
  api::JobSetStatus status;
  bool status_changed = false;
  // Child Jobs to create (metadata.uid left for the caller).
  std::vector<api::Job> create;
  // Names of child Jobs to delete (foreground: they linger until their pods
  // are gone).
  std::vector<std::string> remove;
  // Child Jobs to write back changed (suspend flips, resumed templates).
  std::vector<api::Job> update;
  std::vector<JobSetEvent> events;
  // TTL: delete the JobSet now, or look again at `requeue_at`.
  bool delete_jobset = false;
  std::optional<absl::Time> requeue_at;
};

// Reconciles one JobSet against its child Jobs, following upstream's
// JobSetReconciler (jobset-semantics.md section 4.2) step by step, as a
// pure function. `jobs` holds every child Job, including those being
// deleted (metadata.deletionTimestamp set), which still block name reuse.
// kInvalidArgument when a child Job's labels are malformed. The Jobs come
// with their labels parsed (ParseChildJob), or are parsed first.
absl::StatusOr<JobSetActions> ReconcileJobSet(const api::JobSet& jobset,
                                              const std::vector<ChildJob>& jobs,
                                              absl::Time now,
                                              const api::Features& features);
absl::StatusOr<JobSetActions> ReconcileJobSet(
    const api::JobSet& jobset, const std::vector<const api::Job*>& jobs,
    absl::Time now, const api::Features& features);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_JOBSET_RECONCILE_H_
