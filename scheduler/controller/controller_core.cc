#include "scheduler/controller/controller_core.h"

#include <algorithm>
#include <memory>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/pod_phase.h"
#include "common/log.h"
#include "common/parallel.h"
#include "common/status_macros.h"
#include "scheduler/controller/pass_metrics.h"
#include "scheduler/controller/reconcile_pass.h"
#include "scheduler/queues/jobset_workload.h"
#include "scheduler/records/conditions.h"
#include "scheduler/records/records.h"
#include "store/decode.h"

namespace jobset::scheduler {
namespace {

// A pass takes at most this many JobSets, so that its commit stays small and
// API writes queued behind it wait little; the rest go to the next pass,
// which the loop runs at once.
constexpr size_t kMaxJobSetsPerPass = 32;
// A pass with fewer Jobs to serialize and shape than this does it on the
// controller thread alone.
constexpr size_t kParallelJobs = 64;
// Gauges are counted at most this often (they walk every pod).
constexpr absl::Duration kGaugeInterval = absl::Seconds(1);

}  // namespace

ControllerCore::ControllerCore(store::Store* store, AgentFleet* fleet,
                               Clock* clock, Options options)
    : store_(store),
      clock_(clock),
      features_(options.features),
      max_pods_per_attempt_(options.max_pods_per_attempt),
      progress_(options.progress),
      fleet_(fleet),
      applier_(store, fleet),
      configs_(store),
      queues_(store,
              {.manage_jobs_without_queue_name =
                   options.features.manage_jobs_without_queue_name,
               .wait_for_pods_ready = options.features.wait_for_pods_ready,
               .fair_sharing = FairSharingOf(options.features.fair_sharing),
               .metrics = options.metrics}) {
  observed_.metrics = options.metrics;
  events_.set_retention(options.event_retention);
  if (options.quarantine.after > 0) {
    absl::StatusOr<NodeQuarantine> quarantine =
        NodeQuarantine::Create({.threshold = options.quarantine.after,
                                .window = options.quarantine.window},
                               options.quarantine.devices);
    if (quarantine.ok()) {
      quarantine_.emplace(*std::move(quarantine));
    } else {
      JOBSET_LOG(ERROR) << "quarantine off: " << quarantine.status();
    }
  }
}

absl::StatusOr<int64_t> ControllerCore::Load() {
  gangs_ = GangQueue();
  deferred_ = DeferredJobDeletions();
  configs_.Clear();
  JOBSET_ASSIGN_OR_RETURN(const int completed, applier_.Recover());
  if (completed > 0) {
    JOBSET_LOG(INFO) << "controller: completed " << completed
                     << " journaled commit(s) a crash or a store error had "
                        "interrupted";
  }
  JOBSET_ASSIGN_OR_RETURN(const int64_t revision, state_.Load(*store_));
  JOBSET_RETURN_IF_ERROR(queues_.Load());
  if (quarantine_.has_value())
    JOBSET_RETURN_IF_ERROR(quarantine_->Load(*store_));
  for (auto& [key, t] : state_.jobsets()) {
    for (const auto& [name, job] : t.jobs) {
      for (const auto& [pod_name, pod] : job.pods) {
        if (pod.waiting_for_config()) configs_.Waiting(key);
        // A gang that was waiting for room before the restart waits on.
        if (!job.deleting() && !Placed(pod) && !pod.has_deletion_timestamp() &&
            !PodFinished(pod)) {
          gangs_.Add(key);
          t.gang.priority = job.job.spec().template_().spec().priority();
        }
      }
    }
  }
  configs_.RetryAll();
  JOBSET_RETURN_IF_ERROR(events_.Load(*store_, state_));
  for (ControllerState::Undecodable& u : state_.TakeUndecodable()) {
    JOBSET_LOG(ERROR) << "controller: stored record " << u.key
                      << " does not decode; set aside (left in the store): "
                      << u.error;
    if (observed_.metrics != nullptr)
      observed_.metrics->Rejected("undecodable_record");
    if (!u.jobset.empty()) {
      state_.MarkDirty(u.jobset);
      events_.Queue(u.jobset,
                    {"Warning", kReasonUndecodableRecord,
                     absl::StrCat("stored record ", u.key,
                                  " does not decode and is set aside: ",
                                  u.error.message())});
    }
  }
  for (const std::string& key : set_aside_) state_.SetAside(key);
  for (auto& [key, message] : std::exchange(refused_, {})) {
    TrackedJobSet* t = state_.Find(key);
    if (t == nullptr) continue;
    t->fail = TrackedJobSet::Failure{
        kReasonCommitRefused,
        absl::StrCat("the store refused this JobSet's records: ", message)};
    failed_for_refusal_.insert(key);
    state_.MarkDirty(key);
  }
  return revision;
}

void ControllerCore::RememberRefused(const std::vector<std::string>& keys,
                                     const absl::Status& error) {
  for (const std::string& key : keys) {
    // jobsets/<ns>/<name>, and jobs/, pods/, events/<ns>/<jobset>/...
    std::vector<absl::string_view> parts = absl::StrSplit(key, '/');
    if (parts.size() < 3) continue;
    const std::string owner = ControllerState::KeyOf(parts[1], parts[2]);
    if (state_.Find(owner) == nullptr) continue;
    if (failed_for_refusal_.contains(owner)) {
      // Even failing it was refused: stop managing it rather than retry
      // for ever. It stays in the store as it is.
      JOBSET_LOG(ERROR) << "controller: the store refused JobSet " << owner
                        << " again after it failed; it is set aside until "
                           "jobsetd restarts: "
                        << error.message();
      set_aside_.insert(owner);
      if (observed_.metrics != nullptr)
        observed_.metrics->Rejected("jobset_set_aside");
      continue;
    }
    JOBSET_LOG(ERROR) << "controller: the store refused " << key << "; JobSet "
                      << owner << " fails: " << error.message();
    refused_.emplace(owner, std::string(error.message()));
    if (observed_.metrics != nullptr)
      observed_.metrics->Rejected("commit_refused");
  }
}

void ControllerCore::Announce() {
  const auto no_hosts = std::make_shared<const SharedHostTable>();
  // The orders carry what pods take from their Secrets and ConfigMaps.
  configs_.ResolveForAnnounce(state_);
  std::vector<Assignment> orders;
  std::vector<PodRef> stops;
  for (auto& [key, t] : state_.jobsets()) {
    t.AppendAssignments(&orders);
    // Pods still stopping: their agents keep them until they report.
    const int32_t in_place =
        t.jobset.status().current_in_place_restart_attempt();
    for (auto& [name, job] : t.jobs) {
      for (auto& [pod_name, pod] : job.pods) {
        if (!OnNode(pod)) continue;
        if (pod.has_deletion_timestamp()) {
          orders.push_back({job.Shape(), AssignedPodOf(pod), no_hosts});
          stops.push_back({pod.node_name(), pod.uid()});
        } else if (pod.in_place_restart_attempt() > in_place &&
                   !pod.in_place_stopped()) {
          // Stopping for a restart in place (its order is among the
          // attempt's, at the attempt it still runs).
          stops.push_back({pod.node_name(), pod.uid()});
        }
      }
    }
  }
  applier_.Announce(std::move(orders), stops);
}

void ControllerCore::LoseNode(const std::string& name,
                              const std::string& reason,
                              const std::string& message) {
  if (state_.SetNodeNotReady(name)) snapshots_.Forget();
  const absl::Time now = clock_->Now();
  for (auto& [key, t] : state_.jobsets()) {
    std::vector<std::string> lost;
    for (auto& [job_name, job] : t.jobs) {
      for (auto& [pod_name, pod] : job.pods) {
        if (pod.node_name() != name || PodFinished(pod)) continue;
        api::PodStatus* status = pod.mutable_status();
        status->set_phase(api::kPodFailed);
        status->set_reason(reason);
        status->set_message(message);
        for (api::ContainerStatus& c : *status->mutable_container_statuses()) {
          if (c.flat_state() == "terminated") continue;
          c.set_flat_state("terminated");
          c.set_ready(false);
          c.set_exit_code(137);
          c.set_reason(reason);
        }
        SetCondition(status->mutable_conditions(), "DisruptionTarget", true,
                     reason, message, now);
        for (const char* type : {"Ready", "ContainersReady"}) {
          SetCondition(status->mutable_conditions(), type, false, reason,
                       message, now);
        }
        t.reported.emplace(&pod, &job);
        t.MarkJobDirty(job);
        lost.push_back(pod_name);
      }
    }
    if (!lost.empty()) {
      std::sort(lost.begin(), lost.end());
      t.use_spares = true;  // its replacement may take a hot spare
      state_.MarkDirty(key);
      events_.Queue(key, {"Warning", reason,
                          absl::StrCat(message, "; pods failed: ",
                                       absl::StrJoin(lost, ", "))});
    }
  }
  gangs_.CapacityGrew();
}

void ControllerCore::SetNode(NodeInfo node) {
  snapshots_.Forget();
  if (quarantine_.has_value()) quarantine_->ObserveNode(node);
  state_.SetNode(std::move(node));
  gangs_.CapacityGrew();
}

void ControllerCore::OnJobSetEvent(const store::Event& event) {
  std::vector<absl::string_view> parts = absl::StrSplit(event.kv.key, '/');
  if (parts.size() != 3) return;
  const std::string key = ControllerState::KeyOf(parts[1], parts[2]);
  TrackedJobSet* held = state_.Find(key);
  if (event.type == store::Event::Type::kDelete) {
    // Its Workload goes with it.
    if (held == nullptr || queues_.Manages(held->jobset)) queues_.Touch();
    if (held != nullptr) {
      held->deleted = true;
      state_.MarkDirty(key);
    }
    return;
  }
  if (held != nullptr && event.kv.mod_revision <= held->revision) {
    return;  // Our own write, or older than what we hold.
  }
  absl::StatusOr<api::JobSet> js = store::DecodeValue<api::JobSet>(event.kv);
  if (!js.ok()) return;  // The API never writes garbage; Load reports it.
  // A JobSet Kueue manages changed, or one it managed left it (its queue
  // name removed).
  if (queues_.Manages(*js) ||
      (held != nullptr && queues_.Manages(held->jobset)))
    queues_.Touch();
  TrackedJobSet& t = state_.Track(key);
  if (held == nullptr) t.timing.accepted = clock_->Now();
  t.jobset = *std::move(js);
  t.revision = event.kv.mod_revision;
  t.deleted = false;
  state_.MarkDirty(key);
}

void ControllerCore::OnKueueEvent(const store::Event& event) {
  if (!event.kv.key.empty()) {
    queues_.OnEvent(event);
    return;
  }
  if (absl::Status s = queues_.Load(); !s.ok()) {
    // The next failed pass reloads everything; until then the queues keep
    // what they held.
    JOBSET_LOG(ERROR) << "controller: reading Kueue's objects again failed: "
                      << s;
  }
}

void ControllerCore::OnPodReport(const PodReport& report) {
  const PodLocation* where = state_.FindPod(report.pod_uid);
  // Agents speak only for their own node; a finished pod stays finished.
  if (where == nullptr || where->pod->node_name() != report.node ||
      PodFinished(*where->pod)) {
    ++observed_.stale_reports;
    if (observed_.metrics != nullptr) observed_.metrics->FencedReport();
    return;
  }
  auto [t, job, pod] = *where;
  // A restart in place: the attempt the agent runs is the record's, or the
  // JobSet's current one while the pod is told to stop for the next. A
  // report of an attempt left behind (resent at a reconnect), or about a
  // pod waiting at the barrier, changes nothing.
  const int32_t in_place =
      std::min(pod->in_place_restart_attempt(),
               t->jobset.status().current_in_place_restart_attempt());
  if (pod->in_place_stopped() || report.in_place_restart_attempt < in_place) {
    ++observed_.stale_reports;
    if (observed_.metrics != nullptr) observed_.metrics->FencedReport();
    return;
  }
  for (const api::PodEvent& e : report.events)
    t->pod_events.Hold(pod->name(), e);
  if (report.launch_reported != absl::InfinitePast() &&
      observed_.metrics != nullptr) {
    observed_.launch_reports.emplace_back(t->key, report.launch_reported);
  }
  api::PodStatus* status = pod->mutable_status();
  status->set_phase(report.status.phase());
  status->set_reason(report.status.reason());
  status->set_message(report.status.message());
  // A stopped pod goes at the next pass, unstored: that it stopped is all
  // that is looked at (a restart's stop confirmations come by thousands).
  const bool stopped = pod->has_deletion_timestamp() && PodFinished(*pod);
  if (!stopped) {
    *status->mutable_container_statuses() = report.status.container_statuses();
    *status->mutable_init_container_statuses() =
        report.status.init_container_statuses();
    // Each restart in place restarted every container once.
    for (auto* statuses : {status->mutable_container_statuses(),
                           status->mutable_init_container_statuses()}) {
      for (api::ContainerStatus& c : *statuses)
        c.set_restart_count(c.restart_count() + in_place);
    }
    if (report.status.has_start_time())
      *status->mutable_start_time() = report.status.start_time();
    const absl::Time now = clock_->Now();
    for (const api::Condition& c : report.status.conditions()) {
      // When it changed on the node (the pod's timeline), unless that is
      // not a time of the last day (the agent's clock, or its word, is off).
      absl::Time when = now;
      if (c.has_last_transition_time() &&
          c.last_transition_time().nanos() >= 0 &&
          c.last_transition_time().nanos() < 1'000'000'000) {
        const absl::Time reported = TransitionTime(c);
        if (reported <= now && reported >= now - absl::Hours(24))
          when = reported;
      }
      SetCondition(status->mutable_conditions(), c.type(), c.status() == "True",
                   c.reason(), c.message(), when);
    }
  }
  if (PodFinished(*pod)) gangs_.CapacityGrew();
  // Foreground: a Job being deleted goes with all its pods once none runs;
  // the Job layer looks at it again, and its stopped pods need no pass of
  // their own.
  if (!stopped || !job->deleting()) {
    t->reported.emplace(pod, job);
  }
  t->MarkJobDirty(*job);
  state_.MarkDirty(t->key);
}

void ControllerCore::OnConfigEvent(absl::string_view key) {
  std::vector<absl::string_view> parts = absl::StrSplit(key, '/');
  if (parts.size() != 3) return;
  configs_.ConfigChanged(parts[1]);
}

void ControllerCore::StoreDeferredDeletions(PassWrites& writes) {
  for (const auto& [key, names] : deferred_.TakeAll()) {
    TrackedJobSet* t = state_.Find(key);
    if (t == nullptr) continue;
    for (const std::string& name : names) {
      if (auto job = t->jobs.find(name); job != t->jobs.end())
        writes.JobChanged(*t, job->second);
    }
  }
}

absl::flat_hash_map<const JobState*, std::string>
ControllerCore::PlaceAlongsidePreparing(PassWrites& writes, absl::Time now) {
  std::vector<JobState*> unshaped;
  for (const std::string& key : gangs_.fresh()) {
    TrackedJobSet* t = state_.Find(key);
    if (t == nullptr) continue;
    for (auto& [name, job] : t->jobs) {
      if (job.shape == nullptr && !job.deleting()) unshaped.push_back(&job);
    }
  }
  std::vector<std::pair<const JobState*, std::string>> changed;
  for (const JobState* job : writes.ChangedJobs(state_))
    changed.emplace_back(job, "");
  GangPlacer placer(state_, gangs_, snapshots_, requirements_,
                    observed_.metrics, writes, now);
  // Without new gangs placement has nothing to do alongside, and
  // SerializeChildren serializes the Jobs on two threads. A restart has
  // 1,000 of each.
  if (unshaped.empty() || unshaped.size() + changed.size() < kParallelJobs) {
    placer.PlacePending();
    return {};
  }
  ParallelFor(2, 2, [&](size_t task) {
    if (task == 0) {
      placer.PlacePending();
      return;
    }
    for (JobState* job : unshaped) job->Shape();
    for (auto& [job, value] : changed) value = job->job.SerializeAsString();
  });
  return {std::make_move_iterator(changed.begin()),
          std::make_move_iterator(changed.end())};
}

absl::Status ControllerCore::Pass() {
  const absl::Time now = clock_->Now();
  PassWrites writes;
  for (std::string& key : state_.TakeOrphanKeys())
    writes.Delete(std::move(key));
  StoreDeferredDeletions(writes);
  // Kueue's admissions and evictions, committed before the reconcile that
  // starts and stops their pods.
  JOBSET_RETURN_IF_ERROR(queues_.Run(state_, events_, now));
  state_.MarkDue(now);
  // Reconciling may mark JobSets dirty again (placement, conflicts): those
  // wait for the next pass.
  ReconcilePass reconcile(
      {state_, gangs_, requirements_, events_, deferred_, observed_.metrics,
       features_, max_pods_per_attempt_, progress_,
       quarantine_ ? &quarantine_->pass_state() : nullptr},
      writes, now);
  const std::set<std::string> reconciled = state_.TakeDirty(kMaxJobSetsPerPass);
  for (const std::string& key : reconciled) reconcile.Reconcile(key);
  for (const std::string& key : reconciled) {
    if (const TrackedJobSet* t = state_.Find(key); t != nullptr)
      queues_.Reconciled(state_, *t);
  }
  if (quarantine_.has_value() && quarantine_->TaintDecided(state_))
    snapshots_.Forget();
  absl::flat_hash_map<const JobState*, std::string> serialized =
      PlaceAlongsidePreparing(writes, now);
  // Pods about to be sent take their Secrets and ConfigMaps now; those
  // that cannot wait, their records written with the pass.
  configs_.Resolve(reconciled, state_, writes, now);
  events_.Stage(now, state_, writes);
  writes.SerializeChildren(state_, std::move(serialized), deferred_);
  if (quarantine_.has_value()) quarantine_->Stage(now, writes);
  // New pods run with their attempt's host table; the attempt's pods already
  // running get the grown table too (their /etc/hosts is rewritten), since
  // an attempt may be placed in waves (Recreate, dependsOn, InOrder).
  std::vector<std::string> refused;
  absl::Status applied = applier_.Apply(
      writes, state_,
      [&] {
        std::vector<Assignment> orders;
        for (const std::string& key : writes.launched()) {
          if (TrackedJobSet* t = state_.Find(key); t != nullptr)
            t->AppendAssignments(&orders);
        }
        return orders;
      },
      &refused);
  if (applied.code() == absl::StatusCode::kInvalidArgument)
    RememberRefused(refused, applied);
  if (quarantine_.has_value()) quarantine_->Committed(applied.ok(), *fleet_);
  if (!observed_.launch_reports.empty()) {
    const absl::Time committed = clock_->Now();
    auto& waiting = observed_.launch_reports;
    waiting.erase(std::remove_if(
                      waiting.begin(), waiting.end(),
                      [&](const std::pair<std::string, absl::Time>& r) {
                        if (!reconciled.contains(r.first)) return false;
                        if (applied.ok()) {
                          observed_.metrics->PodStage(kStageReportedToCommitted,
                                                      committed - r.second, 1);
                        }
                        return true;
                      }),
                  waiting.end());
  }
  if (observed_.metrics != nullptr &&
      now - observed_.gauges_at >= kGaugeInterval) {
    observed_.gauges_at = now;
    RecordGauges(*observed_.metrics, state_,
                 static_cast<int64_t>(gangs_.pending().size()), now);
  }
  return applied;  // `writes` frees the records the pass erased.
}

std::optional<absl::Time> ControllerCore::NextWake() const {
  if (state_.HasDirty() || !deferred_.empty() || queues_.dirty())
    return absl::InfinitePast();
  std::optional<absl::Time> next = configs_.NextWake();
  if (std::optional<absl::Time> q = queues_.NextWake();
      q && (!next || *q < *next))
    next = q;
  if (std::optional<absl::Time> t = state_.NextWake();
      t && (!next || *t < *next))
    next = t;
  return next;
}

const api::JobSet* ControllerCore::FindJobSet(const std::string& ns,
                                              const std::string& name) const {
  const TrackedJobSet* t = state_.Find(ControllerState::KeyOf(ns, name));
  return t == nullptr ? nullptr : &t->jobset;
}

std::vector<api::Job> ControllerCore::Jobs(const std::string& ns,
                                           const std::string& name) const {
  std::vector<api::Job> out;
  const TrackedJobSet* t = state_.Find(ControllerState::KeyOf(ns, name));
  if (t == nullptr) return out;
  for (const auto& [n, job] : t->jobs) ExpandJob(&out.emplace_back(job.job));
  return out;
}

std::vector<api::Pod> ControllerCore::Pods(const std::string& ns,
                                           const std::string& name) const {
  std::vector<api::Pod> out;
  const TrackedJobSet* t = state_.Find(ControllerState::KeyOf(ns, name));
  if (t == nullptr) return out;
  for (const auto& [n, job] : t->jobs) {
    for (const auto& [pod_name, pod] : job.pods)
      out.push_back(ExpandPod(job.job, pod));
  }
  return out;
}

std::vector<JobSetEvent> ControllerCore::Events(const std::string& ns,
                                                const std::string& name) const {
  return events_.Events(ControllerState::KeyOf(ns, name));
}

}  // namespace jobset::scheduler
