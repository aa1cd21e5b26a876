#include "scheduler/controller/gang_placement.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/pod_phase.h"
#include "common/clock.h"
#include "scheduler/controller/in_place_restart.h"
#include "scheduler/placement/pending_order.h"
#include "scheduler/placement/placement.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/constants.h"
#include "scheduler/records/records.h"
#include "scheduler/resilience/node_fault.h"

namespace jobset::scheduler {
namespace {

void Add(const placement::Resources& r, placement::Resources* sum) {
  sum->cpu_millis += r.cpu_millis;
  sum->memory_bytes += r.memory_bytes;
  for (const auto& [name, n] : r.extended) sum->extended[name] += n;
}

// Whether a Job of `t` is being deleted: a previous attempt's, or one
// Job's own restart, whose pods are still stopping.
bool PreviousJobsStopping(const TrackedJobSet& t) {
  for (const auto& [name, state] : t.jobs) {
    if (state.deleting()) return true;
  }
  return false;
}

}  // namespace

void GangPlacer::PlacePending() {
  // A gang held at its restart in place's barrier, now down (or gone), is
  // tried in this round (the pass that took the barrier down).
  for (const std::string& key :
       std::vector<std::string>(gangs_.held().begin(), gangs_.held().end())) {
    const TrackedJobSet* t = state_.Find(key);
    if (t == nullptr || !InPlaceRestartWaits(t->jobset.status()))
      gangs_.Release(key);
  }
  if (!gangs_.Worthwhile()) return;
  // Named, not structured bindings: clang 14 cannot capture those.
  const std::pair<bool, std::set<std::string>> round = gangs_.TakeRound();
  const bool grew = round.first;
  const std::set<std::string>& fresh = round.second;
  std::vector<placement::PendingJobSet> pending;
  std::vector<std::string> barred;
  for (const std::string& key : gangs_.pending()) {
    if (gangs_.held().contains(key)) continue;
    const TrackedJobSet& t = *state_.Find(key);
    // Its new pods (a lost host's replacements) wait for the barrier.
    if (InPlaceRestartWaits(t.jobset.status())) {
      barred.push_back(key);
      continue;
    }
    // A restart's new Jobs are made one by one as the old ones' pods stop
    // (they share names): the new attempt is placed once none is left, whole.
    // The last old Job to go frees capacity, which brings the gang back.
    if (PreviousJobsStopping(t)) continue;
    pending.push_back({key, t.gang.priority,
                       absl::FromUnixSeconds(
                           t.jobset.metadata().creation_timestamp().seconds()),
                       t.gang.skips});
  }
  for (const std::string& key : barred) gangs_.Hold(key);
  if (pending.empty()) return;
  // Built when first needed, and again after each gang placed.
  std::optional<absl::StatusOr<placement::ClusterSnapshot>> snapshot;
  placement::PendingPass pass = placement::RunPendingPass(
      pending, now_, placement::PendingPolicy(), [&](size_t i) {
        if (!grew && !fresh.contains(pending[i].key)) {
          return placement::FitResult::kNoRoomNow;  // Still does not fit.
        }
        if (!snapshot.has_value()) snapshot = Snapshot();
        BoundPods bound;
        if (!snapshot->ok() || !TryPlace(pending[i].key, pending[i].priority,
                                         **snapshot, &bound)) {
          return placement::FitResult::kNoRoomNow;
        }
        absl::StatusOr<placement::ClusterSnapshot> next =
            AddBound(**std::move(snapshot), bound);
        // Should that fail, the next gang walks every pod again.
        snapshot.reset();
        if (next.ok()) snapshot = std::move(next);
        return placement::FitResult::kPlaced;
      });
  if (snapshot.has_value()) snapshots_.Recycle(*std::move(snapshot));
  for (size_t i : pass.placed) {
    state_.Find(pending[i].key)->gang.skips = 0;
    gangs_.Remove(pending[i].key);
  }
  for (size_t i : pass.skipped) ++state_.Find(pending[i].key)->gang.skips;
}

bool GangPlacer::MayUseSpares(
    const TrackedJobSet& t, const std::vector<std::string>& last_nodes) const {
  if (t.use_spares) return true;
  for (const std::string& name : last_nodes) {
    auto node = state_.nodes().find(name);
    if (node == state_.nodes().end() || !node->second.ready) return true;
    const NodeInfo& n = node->second;
    if (auto spare = n.labels.find(placement::kSpareLabel);
        spare != n.labels.end() && spare->second == "true") {
      return true;
    }
    for (const placement::Taint& taint : n.taints) {
      if (taint.key == resilience::kQuarantineTaintKey) return true;
    }
  }
  return false;
}

absl::StatusOr<placement::ClusterSnapshot> GangPlacer::Snapshot() {
  placement::ClusterSnapshotBuilder builder =
      snapshots_.TakeBuilder(state_.nodes());
  holding_.clear();
  std::vector<const api::PodRecord*> on_node;
  for (auto& [key, t] : state_.jobsets()) {
    for (auto& [name, job_state] : t.jobs) {
      if (job_state.idle) continue;
      on_node.clear();
      for (const auto& [pod_name, pod] : job_state.pods) {
        if (OnNode(pod)) on_node.push_back(&pod);
      }
      if (on_node.empty()) {
        job_state.idle = true;
        continue;
      }
      Charge(job_state, on_node, builder);
    }
  }
  return builder.Build();
}

absl::StatusOr<placement::ClusterSnapshot> GangPlacer::AddBound(
    placement::ClusterSnapshot snapshot, const BoundPods& bound) {
  placement::ClusterSnapshotBuilder builder =
      placement::ClusterSnapshotBuilder::Adding(std::move(snapshot));
  for (const auto& [job_state, pods] : bound) Charge(*job_state, pods, builder);
  return builder.Build();
}

void GangPlacer::Charge(const JobState& job_state,
                        const std::vector<const api::PodRecord*>& pods,
                        placement::ClusterSnapshotBuilder& builder) {
  const api::Job& job = job_state.job;
  // Read from the template when not cached yet: after a jobsetd restart the
  // pods already running were never placed by this process.
  absl::StatusOr<std::shared_ptr<const placement::PodRequirements>> read =
      requirements_.Get(job);
  const placement::PodRequirements* req = read.ok() ? read->get() : nullptr;
  const int32_t priority = job.spec().template_().spec().priority();
  const std::string job_key =
      absl::StrCat(job.metadata().namespace_(), "/", job.metadata().name());
  auto topology = job.metadata().annotations().find(kExclusiveTopologyKey);
  bool held = topology == job.metadata().annotations().end() ||
              holding_.contains(job_key);
  for (const api::PodRecord* pod : pods) {
    std::optional<size_t> id = snapshots_.NodeOf(pod->node_name());
    if (!id.has_value()) continue;
    placement::NodeRecord* record = &builder.node(*id);
    if (req != nullptr) {
      Add(req->resources, &record->allocated);
      std::vector<placement::HostPort>& used = record->used_host_ports;
      used.insert(used.end(), req->host_ports.begin(), req->host_ports.end());
    }
    record->jobs.push_back({job_key, priority});
    if (held) continue;
    auto value = record->labels.find(topology->second);
    if (value != record->labels.end()) {
      builder.AddHold({topology->second, value->second, job_key, priority});
      holding_.insert(job_key);
      held = true;
    }
  }
}

bool GangPlacer::TryPlace(const std::string& key, int32_t priority,
                          const placement::ClusterSnapshot& snapshot,
                          BoundPods* bound) {
  TrackedJobSet& t = *state_.Find(key);
  placement::PlacementRequest request;
  request.jobset_uid = t.jobset.metadata().uid();
  request.restart_attempt = t.jobset.status().restarts();
  request.priority = priority;
  request.excluded_nodes.assign(t.excluded_nodes.begin(),
                                t.excluded_nodes.end());
  std::vector<std::pair<JobState*, std::vector<api::PodRecord*>>> pods_by_job;
  std::vector<std::string> last_nodes;
  std::string error;
  for (auto& [name, state] : t.jobs) {
    const api::Job& job = state.job;
    if (state.deleting()) continue;
    std::vector<api::PodRecord*> unplaced;
    for (auto& [pod_name, pod] : state.pods) {
      if (!Placed(pod) && !pod.has_deletion_timestamp() && !PodFinished(pod))
        unplaced.push_back(&pod);
    }
    if (unplaced.empty()) continue;
    std::sort(unplaced.begin(), unplaced.end(),
              [](api::PodRecord* a, api::PodRecord* b) {
                return a->completion_index() < b->completion_index();
              });
    absl::StatusOr<std::shared_ptr<const placement::PodRequirements>> req =
        requirements_.Get(job);
    if (!req.ok()) {
      error = std::string(req.status().message());
      break;
    }
    placement::JobRequest& jr = request.jobs.emplace_back();
    jr.job_key = absl::StrCat(job.metadata().namespace_(), "/", name);
    jr.requirements = *req;
    jr.pod_count = static_cast<int32_t>(unplaced.size());
    if (auto topo = job.metadata().annotations().find(kExclusiveTopologyKey);
        topo != job.metadata().annotations().end()) {
      jr.exclusive_topology_key = topo->second;
    }
    for (api::PodRecord* pod : unplaced) {
      jr.previous_nodes.push_back(t.LastNode(name, pod->completion_index()));
      if (!jr.previous_nodes.back().empty())
        last_nodes.push_back(jr.previous_nodes.back());
    }
    pods_by_job.emplace_back(&state, std::move(unplaced));
  }
  if (error.empty() && request.jobs.empty()) return true;  // Nothing waits.
  request.use_spares = MayUseSpares(t, last_nodes);
  if (!t.gang.waiting.has_value()) t.gang.waiting = now_;
  // Real time: this measures how long placement takes, not when.
  const Stopwatch place_time;
  absl::StatusOr<placement::Placement> placed =
      error.empty() ? placement::Place(snapshot, request)
                    : absl::StatusOr<placement::Placement>(
                          absl::InvalidArgumentError(error));
  if (metrics_ != nullptr) metrics_->Placed(place_time.Elapsed());
  if (placed.ok() && placed->placed()) {
    for (size_t j = 0; j < placed->jobs.size(); ++j) {
      auto& [state, pods] = pods_by_job[j];
      const std::string& job_name = state->job.metadata().name();
      std::vector<const api::PodRecord*>& bound_pods =
          bound->emplace_back(state, std::vector<const api::PodRecord*>())
              .second;
      for (size_t i = 0; i < placed->jobs[j].nodes.size(); ++i) {
        api::PodRecord& pod = *pods[i];
        if (!state->env.ok()) {
          // The template cannot run anywhere: fail the pod, and the Job's
          // policies take it from there.
          pod.mutable_status()->set_phase(api::kPodFailed);
          pod.mutable_status()->set_reason("InvalidEnvironment");
          pod.mutable_status()->set_message(
              absl::StrCat("pod ", pod.name(), ": ", state->env.message()));
          t.MarkJobDirty(*state);
        } else {
          const NodeInfo& node = snapshots_.NodeAt(placed->jobs[j].node_ids[i]);
          BindPod(node.name, node.address, now_, &pod);
          t.RememberNode(job_name, pod.completion_index(), node.name);
          bound_pods.push_back(&pod);
        }
      }
      writes_.PodsChanged(t, *state);
    }
    writes_.Launched(key);
    t.gang.unschedulable.clear();
    t.gang.placed = now_;
    if (metrics_ != nullptr) {
      int64_t pods = 0;
      for (const auto& job : placed->jobs) pods += job.nodes.size();
      metrics_->PodStage(kStageCreatedToBound, now_ - *t.gang.waiting, pods);
    }
    t.gang.waiting.reset();
    state_.MarkDirty(key);
    return true;
  }
  const std::string reason = placed.ok()
                                 ? placed->RejectionSummary()
                                 : std::string(placed.status().message());
  if (reason == t.gang.unschedulable) return false;
  t.gang.unschedulable = reason;
  for (auto& [state, pods] : pods_by_job) {
    for (api::PodRecord* pod : pods) {
      SetCondition(pod->mutable_status()->mutable_conditions(), kPodScheduled,
                   false, "Unschedulable", reason, now_);
    }
    writes_.PodsChanged(t, *state);
  }
  writes_.Event(key, {"Warning", "FailedScheduling", reason});
  return false;
}

}  // namespace jobset::scheduler
