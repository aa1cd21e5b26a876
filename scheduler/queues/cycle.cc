#include "scheduler/queues/cycle.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "scheduler/queues/cluster_state.h"
#include "scheduler/queues/flavor_assigner.h"
#include "scheduler/queues/model.h"
#include "scheduler/queues/preemption.h"
#include "scheduler/queues/queue_order.h"
#include "scheduler/queues/quota.h"

namespace jobset::scheduler::queues {
namespace {

std::vector<std::string> MissingFlavors(const ClusterQueue& cq,
                                        const FlavorIndex& flavors) {
  std::vector<std::string> missing;
  for (const ResourceGroup& group : cq.resource_groups) {
    for (const FlavorQuotas& fq : group.flavors) {
      if (!flavors.contains(fq.name) &&
          std::find(missing.begin(), missing.end(), fq.name) == missing.end()) {
        missing.push_back(fq.name);
      }
    }
  }
  return missing;
}

// A head of this cycle.
struct Entry {
  const Workload* workload = nullptr;
  const ClusterQueue* cq = nullptr;  // null when not in the snapshot
  QueueingStrategy strategy = QueueingStrategy::kBestEffortFIFO;
  Assignment assignment;
  std::vector<PreemptionTarget> targets;
  Decision decision;
};

class Cycle {
 public:
  Cycle(ClusterState& state, const FairSharing* fair_sharing, absl::Time now)
      : state_(state), fair_sharing_(fair_sharing), now_(now) {}

  // Returns whether the head was nominated; otherwise its decision is set.
  bool Nominate(Entry& e) {
    const Workload& w = *e.workload;
    if (e.cq == nullptr) {
      SetPending(e, RequeueReason::kGeneric, kReasonMisconfigured,
                 absl::StrCat("ClusterQueue ", w.cluster_queue, " not found"));
      return false;
    }
    const QuotaTree::NodeId node = state_.tree().ClusterQueueNode(e.cq->name);
    if (!ClusterQueueActive(*e.cq, state_.flavors(),
                            state_.tree().InCycle(node))
             .active) {
      SetPending(e, RequeueReason::kGeneric, kReasonSuspended,
                 absl::StrCat("ClusterQueue ", e.cq->name, " is inactive"));
      return false;
    }
    auto oracle = [this, &e](const FlavorResource& fr, int64_t quantity) {
      return SimulatePreemption(*e.workload, *e.cq, fair_sharing_, fr, quantity,
                                state_, now_);
    };
    e.assignment = AssignFlavors(w, *e.cq, state_.flavors(), state_.tree(),
                                 oracle, fair_sharing_ != nullptr);
    if (e.assignment.Mode() == AssignmentMode::kPreempt) {
      e.targets = GetTargets(Preemptor{&w, e.cq, e.assignment.NeedPreemption(),
                                       e.assignment.usage, fair_sharing_},
                             state_, now_);
    }
    return true;
  }

  // processEntry.
  void Process(Entry& e) {
    const AssignmentMode mode = e.assignment.Mode();
    const std::string message = e.assignment.Message();
    if (mode == AssignmentMode::kNoFit) {
      SetPending(e, RequeueReason::kNoFit, e.assignment.no_fit_reason, message);
      return;
    }
    if (mode == AssignmentMode::kPreempt && e.targets.empty()) {
      SetPending(e, RequeueReason::kPreemptionNoCandidates,
                 kReasonWaitingForQuota, message);
      ReserveUnreclaimable(e);
      return;
    }
    for (const PreemptionTarget& t : e.targets) {
      if (preempted_.contains(t.victim)) {
        SetPending(e, RequeueReason::kFailedAfterNomination,
                   kReasonWaitingForQuota,
                   "Workload has overlapping preemption targets with another "
                   "workload");
        return;
      }
    }
    if (!Fits(e)) {
      SetPending(e, RequeueReason::kFailedAfterNomination,
                 kReasonWaitingForQuota,
                 "Workload no longer fits after processing another workload");
      return;
    }
    for (const PreemptionTarget& t : e.targets) preempted_.insert(t.victim);
    const QuotaTree::NodeId node = state_.tree().ClusterQueueNode(e.cq->name);
    Book(node, e.assignment.usage);
    if (mode == AssignmentMode::kPreempt) {
      SetPending(e, RequeueReason::kPendingPreemption,
                 kReasonWaitingForPreemptedWorkloads,
                 absl::StrCat(message, ". Pending the preemption of ",
                              e.targets.size(), " workload(s)"));
      e.decision.kind = DecisionKind::kPreempt;
      const std::string preemptor_path = state_.tree().Path(node);
      for (const PreemptionTarget& t : e.targets) {
        const Workload& v = *t.victim->workload;
        e.decision.victims.push_back(
            Victim{WorkloadKey(v), v.uid, t.reason,
                   PreemptionMessage(*e.workload, t.reason, preemptor_path,
                                     state_.tree().Path(t.victim->cq)),
                   v.evicted});
      }
      return;
    }
    e.decision.kind = DecisionKind::kAdmit;
    e.decision.admission = e.assignment.ToAdmission(e.cq->name);
  }

  // How many bookings the cycle made so far (Process makes them).
  size_t booked() const { return booked_.size(); }

  // Takes back what the cycle booked, last first (QuotaTree's RemoveUsage
  // undoes the AddUsage just before it exactly).
  void Unbook() {
    for (auto it = booked_.rbegin(); it != booked_.rend(); ++it)
      state_.tree().RemoveUsage(it->first, it->second);
    booked_.clear();
  }

 private:
  void SetPending(Entry& e, RequeueReason why, absl::string_view reason,
                  std::string message) {
    e.decision.kind = DecisionKind::kPending;
    e.decision.outcome = QueueOutcome{std::string(reason), std::move(message),
                                      why, RequeueAfter(e.strategy, why),
                                      BecomesSticky(e.strategy, why)};
  }

  // fits: with every workload preempted so far and its own targets gone,
  // the head's usage is available.
  bool Fits(const Entry& e) {
    std::set<const AdmittedWorkload*> gone = preempted_;
    for (const PreemptionTarget& t : e.targets) gone.insert(t.victim);
    for (const AdmittedWorkload* w : gone) state_.RemoveUsage(*w);
    const QuotaTree& tree = state_.tree();
    const QuotaTree::NodeId node = tree.ClusterQueueNode(e.cq->name);
    bool fits = true;
    for (const auto& [fr, v] : e.assignment.usage) {
      if (v > tree.Available(node, fr)) fits = false;
    }
    for (const AdmittedWorkload* w : gone) state_.AddUsage(*w);
    return fits;
  }

  // reserveCapacityForUnreclaimablePreempt: unless the queue can always
  // reclaim what it lends, hold what it could use this cycle, so that
  // others cannot take it first.
  void ReserveUnreclaimable(const Entry& e) {
    if (e.cq->preemption.reclaim_within_cohort == PreemptionPolicy::kAny) {
      return;
    }
    QuotaTree& tree = state_.tree();
    const QuotaTree::NodeId node = tree.ClusterQueueNode(e.cq->name);
    for (const auto& [fr, usage] : e.assignment.usage) {
      const ResourceQuota& quota = tree.Quota(node, fr);
      const int64_t used = tree.Usage(node, fr);
      int64_t reserve = 0;
      if (e.assignment.borrowing > 0) {
        reserve = quota.borrowing_limit.has_value()
                      ? std::min(usage, quota.nominal_quota +
                                            *quota.borrowing_limit - used)
                      : usage;
      } else {
        reserve = std::min(usage, quota.nominal_quota - used);
      }
      if (reserve > 0) Book(node, {{fr, reserve}});
    }
  }

  // Adds `usage` at `node` for the rest of the cycle (Unbook).
  void Book(QuotaTree::NodeId node, FlavorResourceQuantities usage) {
    state_.tree().AddUsage(node, usage);
    booked_.emplace_back(node, std::move(usage));
  }

  ClusterState& state_;
  const FairSharing* const fair_sharing_;  // null: classical
  const absl::Time now_;
  std::set<const AdmittedWorkload*> preempted_;
  // What Process and ReserveUnreclaimable added to the snapshot, in order.
  std::vector<std::pair<QuotaTree::NodeId, FlavorResourceQuantities>> booked_;
};

// makeClassicalIterator's order, made total by queue name and UID.
bool ProcessBefore(const Entry& a, const Entry& b) {
  if (a.assignment.borrowing != b.assignment.borrowing) {
    return a.assignment.borrowing < b.assignment.borrowing;
  }
  const Workload& wa = *a.workload;
  const Workload& wb = *b.workload;
  if (wa.priority != wb.priority) return wa.priority > wb.priority;
  if (wa.times.queue_order != wb.times.queue_order) {
    return wa.times.queue_order < wb.times.queue_order;
  }
  if (wa.cluster_queue != wb.cluster_queue) {
    return wa.cluster_queue < wb.cluster_queue;
  }
  return wa.uid < wb.uid;
}

}  // namespace

absl::StatusOr<CycleResult> RunCycle(const CycleInput& input, absl::Time now) {
  absl::StatusOr<ClusterState> state =
      ClusterState::Build(input.flavors, input.cohorts, input.cluster_queues);
  if (!state.ok()) return state.status();
  for (const std::shared_ptr<const Workload>& w : input.admitted)
    state->AddAdmitted(*w);
  return RunCycle(input, *state, now);
}

absl::StatusOr<CycleResult> RunCycle(const CycleInput& input,
                                     ClusterState& state, absl::Time now) {
  absl::flat_hash_set<std::string> seen;
  std::vector<Entry> entries;
  for (const PendingQueue& queue : input.pending) {
    if (!seen.insert(queue.cluster_queue).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("pending: two entries for ClusterQueue \"",
                       queue.cluster_queue, "\""));
    }
    const std::optional<size_t> head = Head(queue, now);
    if (!head.has_value()) continue;
    Entry e;
    e.workload = queue.workloads[*head].workload.get();
    e.cq = state.FindClusterQueue(queue.cluster_queue);
    if (e.cq != nullptr) e.strategy = e.cq->queueing_strategy;
    e.decision.workload = WorkloadKey(*e.workload);
    e.decision.uid = e.workload->uid;
    e.decision.cluster_queue = queue.cluster_queue;
    entries.push_back(std::move(e));
  }

  Cycle cycle(state,
              input.fair_sharing.has_value() ? &*input.fair_sharing : nullptr,
              now);
  std::vector<Entry*> nominated;
  std::vector<Entry*> inadmissible;
  for (Entry& e : entries) {
    (cycle.Nominate(e) ? nominated : inadmissible).push_back(&e);
  }
  std::sort(
      nominated.begin(), nominated.end(),
      [](const Entry* a, const Entry* b) { return ProcessBefore(*a, *b); });
  CycleResult result;
  if (input.fair_sharing.has_value()) {
    // Each head processed changes the shares the next tournament sees.
    std::vector<FairSharingHead> heads;
    for (const Entry* e : nominated) {
      heads.push_back(FairSharingHead{
          state.tree().ClusterQueueNode(e->cq->name), &e->assignment.usage,
          e->workload->priority, e->workload->times.queue_order});
    }
    std::vector<bool> done(heads.size(), false);
    FairSharingOrder order(state.tree(), heads);
    for (size_t next = order.Next(done); next < heads.size();
         next = order.Next(done)) {
      done[next] = true;
      const size_t booked = cycle.booked();
      cycle.Process(*nominated[next]);
      if (cycle.booked() != booked) order.UsageChanged(heads[next].cq);
      result.decisions.push_back(std::move(nominated[next]->decision));
    }
  } else {
    for (Entry* e : nominated) {
      cycle.Process(*e);
      result.decisions.push_back(std::move(e->decision));
    }
  }
  for (Entry* e : inadmissible) {
    result.decisions.push_back(std::move(e->decision));
  }
  cycle.Unbook();
  return result;
}

ActiveCondition ClusterQueueActive(const ClusterQueue& cq,
                                   const FlavorIndex& flavors,
                                   bool in_cohort_cycle) {
  std::vector<std::string> reasons;
  std::vector<std::string> messages;
  if (cq.stop_policy != StopPolicy::kNone) {
    reasons.push_back("Stopped");
    messages.push_back("is stopped");
  }
  const std::vector<std::string> missing = MissingFlavors(cq, flavors);
  if (!missing.empty()) {
    reasons.push_back("FlavorNotFound");
    // Go's %v of a []string.
    messages.push_back(absl::StrCat("references missing ResourceFlavor(s): [",
                                    absl::StrJoin(missing, " "), "]"));
  }
  if (reasons.empty() && !in_cohort_cycle) {
    return ActiveCondition{true, "Ready", "Can admit new workloads"};
  }
  if (reasons.empty()) {
    return ActiveCondition{false, "Unknown", "Can't admit new workloads."};
  }
  return ActiveCondition{false, reasons.front(),
                         absl::StrCat("Can't admit new workloads: ",
                                      absl::StrJoin(messages, ", "), ".")};
}

}  // namespace jobset::scheduler::queues
