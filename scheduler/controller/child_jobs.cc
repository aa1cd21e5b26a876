#include "scheduler/controller/child_jobs.h"

#include <openssl/sha.h>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/names.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"
#include "scheduler/records/records.h"

namespace jobset::scheduler {
namespace {

using StringMap = google::protobuf::Map<std::string, std::string>;

// The exclusive-topology and node-selector annotations apply from the
// ReplicatedJob's Job template, else from the JobSet.
void CopyPlacementAnnotations(const api::JobSet& jobset,
                              const api::ReplicatedJob& rjob, StringMap* out) {
  const StringMap& job_level = rjob.template_().metadata().annotations();
  const StringMap& jobset_level = jobset.metadata().annotations();
  for (const char* key : {kExclusiveTopologyKey, kNodeSelectorStrategyKey}) {
    if (auto it = job_level.find(key); it != job_level.end()) {
      (*out)[key] = it->second;
    } else if (auto it = jobset_level.find(key); it != jobset_level.end()) {
      (*out)[key] = it->second;
    }
  }
}

}  // namespace

std::string Subdomain(const api::JobSet& jobset) {
  const std::string& subdomain = jobset.spec().network().subdomain();
  return subdomain.empty() ? jobset.metadata().name() : subdomain;
}

bool DnsHostnamesEnabled(const api::JobSet& jobset) {
  const api::Network& network = jobset.spec().network();
  return !network.has_enable_dns_hostnames() || network.enable_dns_hostnames();
}

std::string JobKeyHash(absl::string_view ns, absl::string_view job_name) {
  const std::string input = absl::StrCat(ns, "/", job_name);
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(input.data()), input.size(),
       digest);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

ChildJobFactory::ChildJobFactory(const api::JobSet& jobset, int rjob_index,
                                 const api::Features& features)
    : jobset_(jobset), rjob_index_(rjob_index), features_(features) {
  const api::JobSetSpec& spec = jobset.spec();
  const api::ReplicatedJob& rjob = spec.replicated_jobs(rjob_index);
  const std::string& name = jobset.metadata().name();

  int64_t global_replicas = 0, group_replicas = 0;
  for (int i = 0; i < spec.replicated_jobs_size(); ++i) {
    const api::ReplicatedJob& other = spec.replicated_jobs(i);
    const int64_t replicas = other.replicas();
    global_replicas += replicas;
    if (i < rjob_index) global_index_ += replicas;
    if (other.group_name() == rjob.group_name()) {
      group_replicas += replicas;
      if (i < rjob_index) group_index_ += replicas;
    }
  }

  *prototype_.mutable_metadata() = rjob.template_().metadata();
  *prototype_.mutable_spec() = rjob.template_().spec();
  api::ObjectMeta* meta = prototype_.mutable_metadata();
  meta->set_namespace_(jobset.metadata().namespace_());
  // Compact (see CompactJob): the keys once, as the Job's labels. Make()
  // adds the keys of each Job's index.
  auto& labels = *meta->mutable_labels();
  labels[kJobSetNameKey] = name;
  labels[kJobSetUidKey] = jobset.metadata().uid();
  labels[kReplicatedJobNameKey] = rjob.name();
  labels[kReplicatedJobReplicasKey] = absl::StrCat(rjob.replicas());
  labels[kGlobalReplicasKey] = absl::StrCat(global_replicas);
  labels[kRestartAttemptKey] = absl::StrCat(jobset.status().restarts());
  labels[kGroupNameKey] = rjob.group_name();
  labels[kGroupReplicasKey] = absl::StrCat(group_replicas);
  if (spec.has_coordinator()) {
    labels[kCoordinatorKey] = api::CoordinatorEndpoint(
        name, spec.coordinator().replicated_job(),
        spec.coordinator().job_index(), spec.coordinator().pod_index(),
        Subdomain(jobset));
  }
  CopyPlacementAnnotations(jobset, rjob, meta->mutable_annotations());
  // From the JobSet only, where jobsetd wrote it: never a template's.
  if (auto it = jobset.metadata().annotations().find(kPodSecurityLevelKey);
      it != jobset.metadata().annotations().end()) {
    (*meta->mutable_annotations())[kPodSecurityLevelKey] = it->second;
  } else {
    meta->mutable_annotations()->erase(kPodSecurityLevelKey);
  }

  api::PodSpec* pod =
      prototype_.mutable_spec()->mutable_template_()->mutable_spec();
  if (DnsHostnamesEnabled(jobset)) pod->set_subdomain(Subdomain(jobset));
  // Upstream's node-selector strategy also pins each Job to nodes that a
  // script labelled namespaced-job=<ns>_<job>. Placement here picks a free
  // domain itself, so the strategy is treated as plain exclusive topology
  // and no such nodeSelector is added.
  prototype_.mutable_spec()->set_suspend(spec.suspend());
}

api::Job ChildJobFactory::Make(int job_index) const {
  const api::ReplicatedJob& rjob = jobset_.spec().replicated_jobs(rjob_index_);
  api::Job job = prototype_;
  api::ObjectMeta* meta = job.mutable_metadata();
  meta->set_name(
      api::JobName(jobset_.metadata().name(), rjob.name(), job_index));
  auto& labels = *meta->mutable_labels();
  labels[kJobIndexKey] = absl::StrCat(job_index);
  labels[kJobGlobalIndexKey] = absl::StrCat(global_index_ + job_index);
  labels[kJobKey] = JobKeyHash(meta->namespace_(), meta->name());
  if (features_.restart_job) {
    int32_t attempt = 0;
    for (const api::ReplicatedJobStatus& s :
         jobset_.status().replicated_jobs_status()) {
      if (s.name() == rjob.name() && job_index < s.job_restarts_size()) {
        attempt = s.job_restarts(job_index);
      }
    }
    labels[kJobRestartAttemptKey] = absl::StrCat(attempt);
  }
  labels[kJobGroupIndexKey] = absl::StrCat(group_index_ + job_index);
  return job;
}

api::Job ConstructJob(const api::JobSet& jobset, int rjob_index, int job_index,
                      const api::Features& features) {
  return ChildJobFactory(jobset, rjob_index, features).Make(job_index);
}

bool JobFinished(const api::Job& job) {
  return IsConditionTrue(job.status().conditions(), kJobComplete) ||
         IsConditionTrue(job.status().conditions(), kJobFailed);
}

namespace {

int RjobIndex(const api::JobSet& jobset, absl::string_view name) {
  for (int i = 0; i < jobset.spec().replicated_jobs_size(); ++i) {
    if (jobset.spec().replicated_jobs(i).name() == name) return i;
  }
  return -1;
}

}  // namespace

int ReplicatedJobIndex(const api::JobSet& jobset, const api::Job& job) {
  auto it = job.metadata().labels().find(kReplicatedJobNameKey);
  if (it == job.metadata().labels().end()) return -1;
  return RjobIndex(jobset, it->second);
}

int ReplicatedJobIndex(const api::JobSet& jobset, const ChildJob& job) {
  return job.replicated_job.empty() ? -1
                                    : RjobIndex(jobset, job.replicated_job);
}

int JobIndex(const api::Job& job) {
  auto it = job.metadata().labels().find(kJobIndexKey);
  int index;
  if (it == job.metadata().labels().end() ||
      !absl::SimpleAtoi(it->second, &index)) {
    return -1;
  }
  return index;
}

ChildJob ParseChildJob(const api::Job& job) {
  ChildJob child;
  child.job = &job;
  const auto& labels = job.metadata().labels();
  if (auto it = labels.find(kReplicatedJobNameKey); it != labels.end()) {
    child.replicated_job = it->second;
  }
  child.index = JobIndex(job);
  int value;
  if (auto it = labels.find(kRestartAttemptKey);
      it != labels.end() && absl::SimpleAtoi(it->second, &value)) {
    child.restart_attempt = value;
  }
  if (auto it = labels.find(kJobRestartAttemptKey); it != labels.end()) {
    if (absl::SimpleAtoi(it->second, &value)) {
      child.job_restart_attempt = value;
    } else {
      child.job_restart_attempt_ok = false;
    }
  }
  return child;
}

std::vector<ChildJob> ParseChildJobs(const std::vector<const api::Job*>& jobs) {
  std::vector<ChildJob> children;
  children.reserve(jobs.size());
  for (const api::Job* job : jobs) children.push_back(ParseChildJob(*job));
  return children;
}

std::vector<const api::Job*> JobsOf(const std::vector<ChildJob>& children) {
  std::vector<const api::Job*> jobs;
  jobs.reserve(children.size());
  for (const ChildJob& c : children) jobs.push_back(c.job);
  return jobs;
}

absl::StatusOr<ChildJobs> ClassifyJobs(const api::JobSet& jobset,
                                       const std::vector<const api::Job*>& jobs,
                                       const api::Features& features) {
  return ClassifyJobs(jobset, ParseChildJobs(jobs), features);
}

absl::StatusOr<ChildJobs> ClassifyJobs(const api::JobSet& jobset,
                                       const std::vector<ChildJob>& jobs,
                                       const api::Features& features) {
  ChildJobs out;
  for (const ChildJob& child : jobs) {
    const api::Job& job = *child.job;
    const int rjob_index = ReplicatedJobIndex(jobset, child);
    if (rjob_index < 0) continue;
    if (!child.restart_attempt.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("job ", job.metadata().name(), ": label ",
                       kRestartAttemptKey, " is missing or not an integer"));
    }
    bool previous = *child.restart_attempt < jobset.status().restarts();
    // A missing job-restart-attempt label is tolerated, as upstream (older
    // Jobs lack it).
    if (!previous && features.restart_job && child.index >= 0) {
      if (!child.job_restart_attempt_ok) {
        return absl::InvalidArgumentError(
            absl::StrCat("job ", job.metadata().name(), ": label ",
                         kJobRestartAttemptKey, " is not an integer"));
      }
      if (child.job_restart_attempt.has_value()) {
        const std::string& rjob =
            jobset.spec().replicated_jobs(rjob_index).name();
        for (const api::ReplicatedJobStatus& s :
             jobset.status().replicated_jobs_status()) {
          if (s.name() == rjob && child.index < s.job_restarts_size() &&
              *child.job_restart_attempt < s.job_restarts(child.index)) {
            previous = true;
          }
        }
      }
    }
    if (previous) {
      out.previous.push_back(child);
    } else if (IsConditionTrue(job.status().conditions(), kJobComplete)) {
      out.successful.push_back(child);
    } else if (IsConditionTrue(job.status().conditions(), kJobFailed)) {
      out.failed.push_back(child);
    } else {
      out.active.push_back(child);
    }
  }
  return out;
}

}  // namespace jobset::scheduler
