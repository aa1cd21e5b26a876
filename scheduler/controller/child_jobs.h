#ifndef JOBSET_SCHEDULER_CONTROLLER_CHILD_JOBS_H_
#define JOBSET_SCHEDULER_CONTROLLER_CHILD_JOBS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "api/features.h"
#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"

namespace jobset::scheduler {

// Returns the subdomain of a JobSet's pods: spec.network.subdomain, or the
// JobSet's name.
std::string Subdomain(const api::JobSet& jobset);

// Returns whether pods get hostnames and a subdomain
// (spec.network.enableDNSHostnames, true by default).
bool DnsHostnamesEnabled(const api::JobSet& jobset);

// Returns the lowercase hex SHA-1 of "<namespace>/<jobName>", upstream's
// job-key label value.
std::string JobKeyHash(absl::string_view ns, absl::string_view job_name);

// Builds child Job `job_index` of spec.replicatedJobs[rjob_index], compact,
// as upstream's constructJobsFromTemplate does: a copy of the Job template
// with upstream's labels and annotations, the pod subdomain when DNS
// hostnames are enabled, and spec.suspend mirrored from the JobSet. Unlike
// upstream, the node-selector strategy adds no nodeSelector: placement
// chooses the exclusive domain itself. metadata.uid is left for the caller.
api::Job ConstructJob(const api::JobSet& jobset, int rjob_index, int job_index,
                      const api::Features& features);

// ConstructJob for many Jobs of one ReplicatedJob: what they share (the
// template, most labels, annotations) is built once. `jobset` must outlive
// the factory.
class ChildJobFactory {
 public:
  ChildJobFactory(const api::JobSet& jobset, int rjob_index,
                  const api::Features& features);
  // ConstructJob(jobset, rjob_index, job_index, features).
  api::Job Make(int job_index) const;

 private:
  const api::JobSet& jobset_;
  const int rjob_index_;
  const api::Features features_;
  int64_t global_index_ = 0;  // Of the ReplicatedJob's first Job.
  int64_t group_index_ = 0;   // Likewise, in its group.
  api::Job prototype_;        // Every label but the per-index ones.
};

// A child Job with what JobSet's logic reads of its labels, parsed once:
// the controller keeps one with each Job, so that reconciling 1,000 Jobs
// looks up no labels.
struct ChildJob {
  const api::Job* job = nullptr;
  std::string replicated_job;  // The replicatedjob-name label; "" if none.
  int index = -1;  // The job-index label; -1 if missing or malformed.
  // The restart-attempt label; nullopt if missing or malformed.
  std::optional<int> restart_attempt;
  // The job-restart-attempt label, nullopt if missing; a present but
  // malformed one leaves job_restart_attempt_ok false.
  std::optional<int> job_restart_attempt;
  bool job_restart_attempt_ok = true;
};

// Parses `job`'s labels; the result points at `job`.
ChildJob ParseChildJob(const api::Job& job);
// The same for each of `jobs`.
std::vector<ChildJob> ParseChildJobs(const std::vector<const api::Job*>& jobs);

// The Jobs of `children`.
std::vector<const api::Job*> JobsOf(const std::vector<ChildJob>& children);

// A JobSet's child Jobs sorted the way upstream's getChildJobs does.
struct ChildJobs {
  std::vector<ChildJob> active;
  std::vector<ChildJob> successful;
  std::vector<ChildJob> failed;
  // Of an earlier restart attempt (whole JobSet, or this Job alone with the
  // RestartJob gate): to be deleted.
  std::vector<ChildJob> previous;
};

// Classifies `jobs` (the Jobs they point at must outlive the result). Jobs
// of ReplicatedJobs not in the spec are ignored. kInvalidArgument when a
// Job's restart-attempt label is malformed (upstream aborts the reconcile).
absl::StatusOr<ChildJobs> ClassifyJobs(const api::JobSet& jobset,
                                       const std::vector<ChildJob>& jobs,
                                       const api::Features& features);
// The same, parsing each Job's labels first.
absl::StatusOr<ChildJobs> ClassifyJobs(const api::JobSet& jobset,
                                       const std::vector<const api::Job*>& jobs,
                                       const api::Features& features);

// Returns whether a Job finished (Complete or Failed is True).
bool JobFinished(const api::Job& job);

// Returns the index of `job`'s ReplicatedJob in the spec, or -1.
int ReplicatedJobIndex(const api::JobSet& jobset, const api::Job& job);
int ReplicatedJobIndex(const api::JobSet& jobset, const ChildJob& job);

// Returns the job-index label of `job` (-1 when missing or malformed).
int JobIndex(const api::Job& job);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_CHILD_JOBS_H_
