#include "scheduler/controller/job_reconcile.h"

#include <algorithm>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/pod_phase.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"

namespace jobset::scheduler {
namespace {

constexpr int32_t kDefaultBackoffLimit = 6;

bool Terminating(const api::PodRecord& pod) {
  return pod.has_deletion_timestamp();
}

std::string PodRef(const api::Job& job, const api::PodRecord& pod) {
  return absl::StrCat(job.metadata().namespace_(), "/", pod.name());
}

}  // namespace

bool PodFinished(const api::PodRecord& pod) {
  return pod.status().phase() == api::kPodSucceeded ||
         pod.status().phase() == api::kPodFailed;
}

std::string FormatIndexes(const std::vector<int>& sorted) {
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? absl::StrCat(sorted[i])
                  : absl::StrCat(sorted[i], "-", sorted[j]);
    i = j + 1;
  }
  return out;
}

PodFailureVerdict EvaluatePodFailurePolicy(const api::Job& job,
                                           const api::PodRecord& pod) {
  const auto& rules = job.spec().pod_failure_policy().rules();
  for (int i = 0; i < rules.size(); ++i) {
    const api::PodFailurePolicyRule& rule = rules[i];
    std::string message;
    if (rule.has_on_exit_codes()) {
      const auto& req = rule.on_exit_codes();
      for (const api::ContainerStatus& c : pod.status().container_statuses()) {
        if (!req.container_name().empty() && c.name() != req.container_name()) {
          continue;
        }
        if (c.flat_state() != "terminated" || c.exit_code() == 0) continue;
        const bool listed = std::find(req.values().begin(), req.values().end(),
                                      c.exit_code()) != req.values().end();
        if (listed == (req.operator_() != "NotIn")) {
          message = absl::StrCat("Container ", c.name(), " for pod ",
                                 PodRef(job, pod), " failed with exit code ",
                                 c.exit_code(), " matching ", rule.action(),
                                 " rule at index ", i);
          break;
        }
      }
    }
    for (const api::PodFailurePolicyOnPodConditionsPattern& pattern :
         rule.on_pod_conditions()) {
      if (!message.empty()) break;
      const std::string status =
          pattern.status().empty() ? "True" : pattern.status();
      const api::Condition* c =
          FindCondition(pod.status().conditions(), pattern.type());
      if (c != nullptr && c->status() == status) {
        message = absl::StrCat("Pod ", PodRef(job, pod), " has condition ",
                               pattern.type(), " matching ", rule.action(),
                               " rule at index ", i);
      }
    }
    if (message.empty()) continue;
    if (rule.action() == "FailJob") {
      return {PodFailureVerdict::Action::kFailJob, message};
    }
    if (rule.action() == "Ignore")
      return {PodFailureVerdict::Action::kIgnore, ""};
    return {PodFailureVerdict::Action::kCount, ""};
  }
  return {PodFailureVerdict::Action::kCount, ""};
}

JobActions ReconcileJob(const api::Job& job,
                        const std::vector<const api::PodRecord*>& pods,
                        absl::Time now) {
  JobActions out;
  out.status = job.status();
  api::JobStatus& status = out.status;
  const api::JobSpec& spec = job.spec();
  const bool indexed = spec.completion_mode() != "NonIndexed";
  const int32_t parallelism = spec.has_parallelism() ? spec.parallelism() : 1;
  const int32_t completions = spec.has_completions()
                                  ? spec.completions()
                                  : (indexed ? parallelism : -1);

  // Count. Terminating pods are gone as far as counts go; they only hold
  // their index.
  std::vector<const api::PodRecord*> active, failed;
  std::set<int> succeeded_indexes, busy_indexes;
  int32_t succeeded = 0, ready = 0, restarts = 0;
  for (const api::PodRecord* pod_ptr : pods) {
    const api::PodRecord& pod = *pod_ptr;
    const int index = pod.completion_index();
    if (!PodFinished(pod)) busy_indexes.insert(index);
    if (Terminating(pod)) continue;
    if (pod.status().phase() == api::kPodSucceeded) {
      ++succeeded;
      if (index >= 0 && index < completions) succeeded_indexes.insert(index);
    } else if (pod.status().phase() == api::kPodFailed) {
      failed.push_back(&pod);
    } else {
      active.push_back(&pod);
      if (IsConditionTrue(pod.status().conditions(), "Ready")) ++ready;
    }
    for (const api::ContainerStatus& c : pod.status().container_statuses()) {
      restarts += c.restart_count();
    }
  }
  status.set_active(static_cast<int32_t>(active.size()));
  status.set_ready(ready);
  status.set_failed(static_cast<int32_t>(failed.size()));
  status.set_succeeded(indexed ? static_cast<int32_t>(succeeded_indexes.size())
                               : succeeded);
  if (indexed) {
    status.set_completed_indexes(FormatIndexes(
        std::vector<int>(succeeded_indexes.begin(), succeeded_indexes.end())));
  }
  auto remove_active = [&] {
    for (const api::PodRecord* pod : active) out.remove.push_back(pod->name());
  };
  auto finish = [&] {
    // JobStatus has no map fields, so equal statuses serialize to equal
    // bytes; this runs for every Job in every round, and comparing bytes is
    // several times cheaper than MessageDifferencer's reflection.
    out.status_changed =
        out.status.SerializeAsString() != job.status().SerializeAsString();
    return out;
  };

  if (IsConditionTrue(status.conditions(), kJobComplete) ||
      IsConditionTrue(status.conditions(), kJobFailed)) {
    remove_active();
    return finish();
  }

  // Failure: a FailJob rule, the backoff limit, or the deadline.
  std::string reason, message;
  int32_t counted = 0;
  std::vector<const api::PodRecord*> by_name = failed;
  std::sort(by_name.begin(), by_name.end(),
            [](const api::PodRecord* a, const api::PodRecord* b) {
              return a->name() < b->name();
            });
  for (const api::PodRecord* pod : by_name) {
    PodFailureVerdict verdict = EvaluatePodFailurePolicy(job, *pod);
    if (verdict.action == PodFailureVerdict::Action::kFailJob) {
      reason = "PodFailurePolicy";
      message = verdict.message;
      break;
    }
    if (verdict.action == PodFailureVerdict::Action::kCount) ++counted;
  }
  if (job.spec().template_().spec().restart_policy() == "OnFailure") {
    counted += restarts;
  }
  const int32_t backoff_limit =
      spec.has_backoff_limit() ? spec.backoff_limit() : kDefaultBackoffLimit;
  if (reason.empty() && counted > backoff_limit) {
    reason = "BackoffLimitExceeded";
    message = "Job has reached the specified backoff limit";
  }
  if (reason.empty() && spec.has_active_deadline_seconds() &&
      status.has_start_time() && !spec.suspend() &&
      now >= absl::FromUnixSeconds(status.start_time().seconds()) +
                 absl::Seconds(spec.active_deadline_seconds())) {
    reason = "DeadlineExceeded";
    message = "Job was active longer than specified deadline";
  }
  if (!reason.empty()) {
    UpdateCondition(status.mutable_conditions(), kJobFailureTarget, true,
                    reason, message, now);
    UpdateCondition(status.mutable_conditions(), kJobFailed, true, reason,
                    message, now);
    remove_active();
    return finish();
  }

  // Completion.
  const bool complete =
      indexed ? static_cast<int32_t>(succeeded_indexes.size()) >= completions
              : (completions >= 0 ? succeeded >= completions
                                  : succeeded > 0 && active.empty());
  if (complete) {
    UpdateCondition(status.mutable_conditions(), kJobComplete, true, "", "",
                    now);
    status.mutable_completion_time()->set_seconds(absl::ToUnixSeconds(now));
    remove_active();
    return finish();
  }

  // Suspend and resume.
  if (spec.suspend()) {
    remove_active();
    UpdateCondition(status.mutable_conditions(), kJobSuspended, true,
                    "JobSuspended", "Job suspended", now);
    return finish();
  }
  UpdateCondition(status.mutable_conditions(), kJobSuspended, false,
                  "JobResumed", "Job resumed", now);
  if (!status.has_start_time()) {
    status.mutable_start_time()->set_seconds(absl::ToUnixSeconds(now));
  }

  // Start pods up to parallelism.
  int32_t room = parallelism - static_cast<int32_t>(active.size());
  if (indexed) {
    for (int index = 0; index < completions && room > 0; ++index) {
      if (succeeded_indexes.contains(index) || busy_indexes.contains(index))
        continue;
      out.create.push_back(index);
      --room;
    }
  } else {
    int32_t wanted = completions >= 0 ? completions - succeeded
                                      : (succeeded > 0 ? 0 : parallelism);
    wanted =
        std::min(wanted, parallelism) - static_cast<int32_t>(active.size());
    for (int i = 0; i < wanted; ++i) out.create.push_back(-1);
  }
  // The pods it starts are active at once, as upstream's manageJob counts
  // them (so the status is already right, and the Job needs no second look
  // once they exist).
  status.set_active(status.active() + static_cast<int32_t>(out.create.size()));
  return finish();
}

}  // namespace jobset::scheduler
