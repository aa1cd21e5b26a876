#include "scheduler/controller/failure_policy.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "re2/re2.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"

namespace jobset::scheduler {
namespace {

absl::Time FailureTime(const api::Job& job) {
  const api::Condition* c =
      FindCondition(job.status().conditions(), kJobFailed);
  return c == nullptr ? absl::InfiniteFuture() : TransitionTime(*c);
}

std::string FirstFailedSuffix(const api::Job& job) {
  return absl::StrCat(" (first failed job: ", job.metadata().name(), ")");
}

const std::string& RJobName(const api::Job& job) {
  static const std::string kEmpty;
  auto it = job.metadata().labels().find(kReplicatedJobNameKey);
  return it == job.metadata().labels().end() ? kEmpty : it->second;
}

FailureDecision Fail(const api::Job* job, std::string reason,
                     std::string message) {
  FailureDecision d;
  d.kind = FailureDecision::Kind::kFailJobSet;
  d.job = job;
  d.reason = std::move(reason);
  d.message = std::move(message);
  return d;
}

}  // namespace

const api::Job* FirstFailedJob(const std::vector<const api::Job*>& failed) {
  const api::Job* first = nullptr;
  for (const api::Job* job : failed) {
    if (first == nullptr ||
        std::make_tuple(FailureTime(*job), job->metadata().name()) <
            std::make_tuple(FailureTime(*first), first->metadata().name())) {
      first = job;
    }
  }
  return first;
}

bool RuleApplies(const api::FailurePolicyRule& rule, const api::Job& job,
                 absl::string_view rjob) {
  const api::Condition* failed =
      FindCondition(job.status().conditions(), kJobFailed);
  const std::string reason = failed ? failed->reason() : "";
  const std::string message = failed ? failed->message() : "";
  if (!rule.on_job_failure_reasons().empty() &&
      std::find(rule.on_job_failure_reasons().begin(),
                rule.on_job_failure_reasons().end(),
                reason) == rule.on_job_failure_reasons().end()) {
    return false;
  }
  if (!rule.on_job_failure_message_patterns().empty()) {
    bool matched = false;
    for (const std::string& pattern : rule.on_job_failure_message_patterns()) {
      RE2 re(pattern, RE2::Quiet);
      if (re.ok() && RE2::PartialMatch(message, re)) matched = true;
    }
    if (!matched) return false;
  }
  if (!rule.target_replicated_jobs().empty() &&
      std::find(rule.target_replicated_jobs().begin(),
                rule.target_replicated_jobs().end(),
                rjob) == rule.target_replicated_jobs().end()) {
    return false;
  }
  return true;
}

FailureDecision DecideFailurePolicy(const api::JobSet& jobset,
                                    const std::vector<const api::Job*>& failed,
                                    const api::Features& features) {
  const api::JobSetSpec& spec = jobset.spec();
  if (!spec.has_failure_policy()) {
    const api::Job* first = FirstFailedJob(failed);
    return Fail(first, "FailedJobs",
                absl::StrCat("jobset failed due to one or more job failures",
                             FirstFailedSuffix(*first)));
  }
  const api::FailurePolicy& policy = spec.failure_policy();

  // The first rule with a matching Job wins, on its earliest failed Job.
  std::string action = kRestartJobSet;
  std::string condition_reason = "DefaultFailurePolicy";
  const api::Job* job = nullptr;
  for (const api::FailurePolicyRule& rule : policy.rules()) {
    std::vector<const api::Job*> matching;
    for (const api::Job* j : failed) {
      if (RuleApplies(rule, *j, RJobName(*j))) matching.push_back(j);
    }
    if (!matching.empty()) {
      job = FirstFailedJob(matching);
      action = rule.action();
      condition_reason = absl::StrCat("FailurePolicy_", rule.name());
      break;
    }
  }
  if (job == nullptr) {
    job = FirstFailedJob(failed);
    // jobsetd's addition (docs/resilience.md): a Job failed for its node's
    // fault (NodeFault: lost, or a device error, with --quarantine_after)
    // restarts the gang without counting against maxRestarts, unless a rule
    // said otherwise.
    const api::Condition* why =
        FindCondition(job->status().conditions(), kJobFailed);
    if (why != nullptr && why->reason() == "NodeFault") {
      action = kRestartJobSetAndIgnoreMaxRestarts;
      condition_reason = "NodeFault";
    }
  }

  const std::string action_message = absl::StrCat(
      "applying ", action, " failure policy action", FirstFailedSuffix(*job));
  if (action == kFailJobSet) {
    return Fail(job, "FailJobSetFailurePolicyAction", action_message);
  }

  int64_t counted = jobset.status().restarts_count_towards_max();
  if (features.restart_job) {
    for (const api::ReplicatedJobStatus& s :
         jobset.status().replicated_jobs_status()) {
      for (int32_t n : s.job_restarts_count_towards_max()) counted += n;
    }
  }
  const bool counts = action == kRestartJobSet || action == kRestartJob;
  if (counts && counted >= policy.max_restarts()) {
    return Fail(job, "ReachedMaxRestarts",
                absl::StrCat("jobset failed due to reaching max number of "
                             "restarts",
                             FirstFailedSuffix(*job)));
  }
  FailureDecision d;
  d.job = job;
  d.counts_towards_max = counts;
  d.kind = (action == kRestartJob || action == kRestartJobAndIgnoreMaxRestarts)
               ? FailureDecision::Kind::kRestartJob
               : FailureDecision::Kind::kRestartJobSet;
  d.reason = condition_reason;
  d.message = action_message;
  d.event_reason = absl::StrCat(action, "FailurePolicyAction");
  return d;
}

}  // namespace jobset::scheduler
