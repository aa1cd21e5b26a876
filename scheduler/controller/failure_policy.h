#ifndef JOBSET_SCHEDULER_CONTROLLER_FAILURE_POLICY_H_
#define JOBSET_SCHEDULER_CONTROLLER_FAILURE_POLICY_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "api/features.h"
#include "proto/cluster.pb.h"
#include "proto/jobset.pb.h"

namespace jobset::scheduler {

// What the failure policy decides about a JobSet with failed Jobs: exactly
// one action per reconcile, as upstream's executeFailurePolicy.
struct FailureDecision {
  enum class Kind {
    kFailJobSet,     // Failed=True with `reason` and `message`.
    kRestartJobSet,  // restarts++, RestartingJobSet=True.
    kRestartJob,     // Only `job` is recreated (RestartJob gate).
  };
  Kind kind = Kind::kFailJobSet;
  // The failed Job the decision is about ("first failed job").
  const api::Job* job = nullptr;
  // Whether the restart counts toward spec.failurePolicy.maxRestarts.
  bool counts_towards_max = false;
  // For kFailJobSet: the Failed condition's reason and message. For
  // restarts: the RestartingJobSet condition's reason and message.
  std::string reason;
  std::string message;
  // For restarts: the Warning event (reason and message).
  std::string event_reason;
};

// Returns the failed Job that failed first (earliest Failed condition
// transition time, then name), or nullptr when `failed` is empty.
const api::Job* FirstFailedJob(const std::vector<const api::Job*>& failed);

// Returns whether failure-policy `rule` applies to the failed `job` of
// ReplicatedJob `rjob`: its Failed condition's reason is listed (or the list
// is empty), one message pattern matches anywhere in the message (or there
// are none; invalid patterns are skipped, as upstream), and the
// ReplicatedJob is targeted (or no targets are given).
bool RuleApplies(const api::FailurePolicyRule& rule, const api::Job& job,
                 absl::string_view rjob);

// Decides what to do about the failed Jobs `failed` (not empty).
FailureDecision DecideFailurePolicy(const api::JobSet& jobset,
                                    const std::vector<const api::Job*>& failed,
                                    const api::Features& features);

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_FAILURE_POLICY_H_
