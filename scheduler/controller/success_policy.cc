#include "scheduler/controller/success_policy.h"

#include <algorithm>

#include "scheduler/controller/child_jobs.h"

namespace jobset::scheduler {

bool SuccessPolicySatisfied(const api::JobSet& jobset,
                            const std::vector<const api::Job*>& successful) {
  const api::SuccessPolicy& policy = jobset.spec().success_policy();
  const auto& targets = policy.target_replicated_jobs();
  const auto& rjobs = jobset.spec().replicated_jobs();
  auto targeted = [&](int rjob_index) {
    return targets.empty() ||
           std::find(targets.begin(), targets.end(),
                     rjobs[rjob_index].name()) != targets.end();
  };
  int64_t needed = 0;
  for (int i = 0; i < rjobs.size(); ++i) {
    if (targeted(i)) needed += rjobs[i].replicas();
  }
  int64_t succeeded = 0;
  for (const api::Job* job : successful) {
    const int index = ReplicatedJobIndex(jobset, *job);
    if (index >= 0 && targeted(index)) ++succeeded;
  }
  if (policy.operator_() == "Any") return succeeded >= 1;
  return succeeded >= needed;
}

}  // namespace jobset::scheduler
