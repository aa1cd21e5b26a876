#include "scheduler/controller/startup_policy.h"

namespace jobset::scheduler {

bool ReplicatedJobStarted(const api::ReplicatedJob& rjob,
                          const api::ReplicatedJobStatus& status) {
  return status.ready() + status.succeeded() + status.failed() ==
         rjob.replicas();
}

bool DependenciesMet(const api::JobSet& jobset, int index,
                     const std::vector<api::ReplicatedJobStatus>& statuses) {
  const auto& rjobs = jobset.spec().replicated_jobs();
  for (const api::DependsOn& dep : rjobs[index].depends_on()) {
    bool met = false;
    for (int i = 0; i < rjobs.size(); ++i) {
      if (rjobs[i].name() != dep.name()) continue;
      met = dep.status() == "Complete"
                ? statuses[i].succeeded() == rjobs[i].replicas()
                : ReplicatedJobStarted(rjobs[i], statuses[i]);
    }
    if (!met) return false;
  }
  return true;
}

bool InOrderStartup(const api::JobSet& jobset) {
  return jobset.spec().startup_policy().startup_policy_order() == "InOrder";
}

namespace {

StartupPlan Walk(const api::JobSet& jobset,
                 const std::vector<api::ReplicatedJobStatus>& statuses) {
  const auto& rjobs = jobset.spec().replicated_jobs();
  StartupPlan plan{std::vector<bool>(rjobs.size(), false), false};
  for (int i = 0; i < rjobs.size(); ++i) {
    if (!DependenciesMet(jobset, i, statuses)) continue;
    plan.allowed[i] = true;
    if (InOrderStartup(jobset) &&
        !ReplicatedJobStarted(rjobs[i], statuses[i])) {
      plan.in_progress = true;
      break;
    }
  }
  return plan;
}

}  // namespace

StartupPlan PlanCreation(
    const api::JobSet& jobset,
    const std::vector<api::ReplicatedJobStatus>& statuses) {
  if (jobset.spec().suspend()) {
    const auto& rjobs = jobset.spec().replicated_jobs();
    StartupPlan plan{std::vector<bool>(rjobs.size(), false), false};
    for (int i = 0; i < rjobs.size(); ++i) {
      plan.allowed[i] = rjobs[i].depends_on().empty();
    }
    return plan;
  }
  return Walk(jobset, statuses);
}

StartupPlan PlanResume(const api::JobSet& jobset,
                       const std::vector<api::ReplicatedJobStatus>& statuses) {
  return Walk(jobset, statuses);
}

}  // namespace jobset::scheduler
