// Bad hosts (our addition, docs/resilience.md; on with --quarantine_after):
// a failed pod's failure is attributed to its node (resilience/
// node_fault.h); a node's fault (lost, or a device error the operator lists)
// fails its Job with reason NodeFault, which restarts the gang without
// counting against maxRestarts (failure_policy.cc); every attributed
// failure (and straggler) is evidence in the quarantine ledger, and a node
// past the threshold is tainted jobsetd.io/quarantined:NoSchedule after the
// pass's commit (ControllerCore::Pass), with an event listing the evidence.
#include <string>
#include <vector>

#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/job_reconcile.h"
#include "scheduler/controller/reconcile_pass.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"
#include "scheduler/resilience/node_fault.h"
#include "scheduler/resilience/quarantine_ledger.h"

namespace jobset::scheduler {
namespace {

// What the controller knows of a failed pod, for attribution.
resilience::PodFailure FailureOf(const TrackedJobSet& t,
                                 const api::PodRecord& pod) {
  resilience::PodFailure f;
  f.pod = pod.name();
  f.node = pod.node_name();
  const api::Condition* disruption =
      FindCondition(pod.status().conditions(), "DisruptionTarget");
  if (disruption != nullptr && disruption->status() == "True") {
    f.disruption_reason = disruption->reason();
  }
  for (const api::ContainerStatus& c : pod.status().container_statuses()) {
    f.exits.push_back({c.name(), c.exit_code(), c.signal(), c.reason()});
  }
  f.gang_size = 0;
  for (const auto& [name, job] : t.jobs) {
    if (job.deleting()) continue;
    for (const auto& [pod_name, other] : job.pods) {
      if (other.has_deletion_timestamp()) continue;
      ++f.gang_size;
      if (&other != &pod && other.status().phase() == api::kPodFailed)
        ++f.others_failed;
    }
  }
  return f;
}

}  // namespace

void ReconcilePass::AttributeFailure(TrackedJobSet& t, JobState& job,
                                     const api::PodRecord& pod) {
  if (parts_.quarantine == nullptr) return;
  const resilience::PodFailure failure = FailureOf(t, pod);
  const std::optional<resilience::Attribution> why =
      resilience::AttributeFailure(failure, parts_.quarantine->devices);
  if (!why.has_value()) return;
  if (resilience::IsNodeFault(why->kind) && !JobFinished(job.job)) {
    FailJobFor(t, job, resilience::kNodeFaultReason,
               absl::StrCat("pod ", pod.name(), " on node ", pod.node_name(),
                            ": ", why->detail));
  }
  RecordFault(t, pod.node_name(), why->kind, pod.name(), why->detail);
}

void ReconcilePass::RecordFault(TrackedJobSet& t, const std::string& node,
                                resilience::FaultKind kind,
                                const std::string& pod,
                                const std::string& detail) {
  if (parts_.quarantine == nullptr || node.empty()) return;
  resilience::Evidence e;
  e.time = now_;
  e.kind = kind;
  e.jobset_namespace = t.jobset.metadata().namespace_();
  e.jobset_name = t.jobset.metadata().name();
  e.jobset_uid = t.jobset.metadata().uid();
  e.attempt = t.jobset.status().restarts();
  e.pod = pod;
  e.detail = detail;
  std::optional<resilience::QuarantineDecision> decision =
      parts_.quarantine->ledger.Record(node, std::move(e));
  if (!decision.has_value()) return;
  writes_.Event(t.key, {"Warning", "NodeQuarantined", decision->message});
  parts_.quarantine->decided.push_back(*std::move(decision));
}

}  // namespace jobset::scheduler
