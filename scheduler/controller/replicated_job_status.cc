#include "scheduler/controller/replicated_job_status.h"

#include <algorithm>

#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"

namespace jobset::scheduler {

bool JobReady(const api::Job& job) {
  const api::JobSpec& spec = job.spec();
  int32_t needed = spec.has_parallelism() ? spec.parallelism() : 1;
  if (spec.has_completions()) needed = std::min(needed, spec.completions());
  return job.status().succeeded() + job.status().ready() >= needed;
}

const api::ReplicatedJobStatus* FindReplicatedJobStatus(
    const api::JobSetStatus& status, absl::string_view name) {
  for (const api::ReplicatedJobStatus& s : status.replicated_jobs_status()) {
    if (s.name() == name) return &s;
  }
  return nullptr;
}

std::vector<api::ReplicatedJobStatus> ComputeReplicatedJobsStatus(
    const api::JobSet& jobset, const ChildJobs& jobs) {
  const auto& rjobs = jobset.spec().replicated_jobs();
  std::vector<api::ReplicatedJobStatus> out(rjobs.size());
  for (int i = 0; i < rjobs.size(); ++i) {
    out[i].set_name(rjobs[i].name());
    if (const api::ReplicatedJobStatus* old =
            FindReplicatedJobStatus(jobset.status(), rjobs[i].name())) {
      *out[i].mutable_job_restarts() = old->job_restarts();
      *out[i].mutable_job_restarts_count_towards_max() =
          old->job_restarts_count_towards_max();
    }
  }
  for (const ChildJob& c : jobs.active) {
    api::ReplicatedJobStatus& s = out[ReplicatedJobIndex(jobset, c)];
    const api::Job& job = *c.job;
    if (JobReady(job)) s.set_ready(s.ready() + 1);
    if (job.status().active() > 0) s.set_active(s.active() + 1);
    if (job.spec().suspend()) s.set_suspended(s.suspended() + 1);
  }
  for (const ChildJob& c : jobs.successful) {
    api::ReplicatedJobStatus& s = out[ReplicatedJobIndex(jobset, c)];
    s.set_succeeded(s.succeeded() + 1);
  }
  for (const ChildJob& c : jobs.failed) {
    api::ReplicatedJobStatus& s = out[ReplicatedJobIndex(jobset, c)];
    s.set_failed(s.failed() + 1);
  }
  return out;
}

}  // namespace jobset::scheduler
