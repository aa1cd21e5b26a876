#include "scheduler/controller/controller_core.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "common/uid.h"
#include "scheduler/controller/child_jobs.h"
#include "scheduler/controller/conditions.h"
#include "scheduler/controller/constants.h"
#include "scheduler/controller/job_reconcile.h"
#include "scheduler/placement/pending_order.h"
#include "scheduler/placement/placement.h"
#include "store/decode.h"
#include "store/keys.h"

namespace jobset::scheduler {
namespace {

constexpr size_t kScanPage = 1000;
constexpr int kMaxReconcileRounds = 10;
constexpr int kMaxCommitRetries = 5;
constexpr size_t kMaxJobSetsPerPass = 32;
constexpr char kJobNameLabel[] = "batch.kubernetes.io/job-name";

std::string JobSetStoreKey(const api::JobSet& js) {
  return store::keys::JobSetKey(js.metadata().namespace_(),
                                js.metadata().name());
}

// Scans every key under `prefix`, page by page.
absl::Status ScanAll(
    store::Store* store, absl::string_view prefix,
    const std::function<absl::Status(const store::KeyValue&)>& fn) {
  std::string after;
  for (bool more = true; more;) {
    JOBSET_ASSIGN_OR_RETURN(store::ScanResult page,
                            store->Scan(prefix, after, kScanPage));
    for (const store::KeyValue& kv : page.kvs) {
      JOBSET_RETURN_IF_ERROR(fn(kv));
      after = kv.key;
    }
    more = page.more;
  }
  return absl::OkStatus();
}

void Add(const placement::Resources& r, placement::Resources* sum) {
  sum->cpu_millis += r.cpu_millis;
  sum->memory_bytes += r.memory_bytes;
  for (const auto& [name, n] : r.extended) sum->extended[name] += n;
}

std::string JobLabel(const api::Pod& pod) {
  auto it = pod.metadata().labels().find(kJobNameLabel);
  return it == pod.metadata().labels().end() ? "" : it->second;
}

bool Placed(const api::Pod& pod) { return !pod.spec().node_name().empty(); }

}  // namespace

ControllerCore::ControllerCore(store::Store* store, AgentFleet* fleet,
                               Clock* clock, api::Features features)
    : store_(store), fleet_(fleet), clock_(clock), features_(features) {}

std::string ControllerCore::KeyOf(const std::string& ns,
                                  const std::string& name) {
  return absl::StrCat(ns, "/", name);
}

absl::StatusOr<int64_t> ControllerCore::Load() {
  jobsets_.clear();
  dirty_.clear();
  pod_by_uid_.clear();
  orphan_keys_.clear();
  pending_gangs_.clear();
  new_gangs_.clear();
  capacity_grew_ = true;
  const int64_t revision = store_->CurrentRevision();
  JOBSET_RETURN_IF_ERROR(
      ScanAll(store_, store::keys::kJobSets,
              [&](const store::KeyValue& kv) -> absl::Status {
                JOBSET_ASSIGN_OR_RETURN(api::JobSet js,
                                        store::DecodeValue<api::JobSet>(kv));
                const std::string key =
                    KeyOf(js.metadata().namespace_(), js.metadata().name());
                Tracked& t = jobsets_[key];
                t.jobset = std::move(js);
                t.revision = kv.mod_revision;
                dirty_.insert(key);
                return absl::OkStatus();
              }));
  // Children of a JobSet that is gone are deleted by the first pass.
  PendingWrites orphans;
  JOBSET_RETURN_IF_ERROR(ScanAll(
      store_, store::keys::kJobs,
      [&](const store::KeyValue& kv) -> absl::Status {
        JOBSET_ASSIGN_OR_RETURN(api::Job job, store::DecodeValue<api::Job>(kv));
        auto it =
            jobsets_.find(KeyOf(job.metadata().namespace_(),
                                job.metadata().labels().contains(kJobSetNameKey)
                                    ? job.metadata().labels().at(kJobSetNameKey)
                                    : ""));
        if (it == jobsets_.end()) {
          orphan_keys_.push_back(kv.key);
        } else {
          it->second.dirty_jobs.insert(job.metadata().name());
          it->second.jobs[job.metadata().name()] = std::move(job);
        }
        return absl::OkStatus();
      }));
  JOBSET_RETURN_IF_ERROR(ScanAll(
      store_, store::keys::kPods,
      [&](const store::KeyValue& kv) -> absl::Status {
        JOBSET_ASSIGN_OR_RETURN(api::Pod pod, store::DecodeValue<api::Pod>(kv));
        auto it =
            jobsets_.find(KeyOf(pod.metadata().namespace_(),
                                pod.metadata().labels().contains(kJobSetNameKey)
                                    ? pod.metadata().labels().at(kJobSetNameKey)
                                    : ""));
        if (it == jobsets_.end()) {
          orphan_keys_.push_back(kv.key);
          return absl::OkStatus();
        }
        Tracked& t = it->second;
        const std::string name = pod.metadata().name();
        pod_by_uid_[pod.metadata().uid()] = {it->first, name};
        t.pods_of_job[JobLabel(pod)].insert(name);
        if (Placed(pod))
          t.last_node[{JobLabel(pod), CompletionIndex(pod)}] =
              pod.spec().node_name();
        t.pods[name] = std::move(pod);
        return absl::OkStatus();
      }));
  JOBSET_RETURN_IF_ERROR(ScanAll(
      store_, store::keys::kEvents,
      [&](const store::KeyValue& kv) -> absl::Status {
        // events/<ns>/<jobset>/<seq>
        std::vector<std::string> parts = absl::StrSplit(kv.key, '/');
        uint64_t seq = 0;
        auto it = parts.size() == 4 ? jobsets_.find(KeyOf(parts[1], parts[2]))
                                    : jobsets_.end();
        if (it == jobsets_.end() || !absl::SimpleAtoi(parts[3], &seq)) {
          orphan_keys_.push_back(kv.key);
          return absl::OkStatus();
        }
        JOBSET_ASSIGN_OR_RETURN(api::Event e,
                                store::DecodeValue<api::Event>(kv));
        it->second.events.emplace_back(
            seq, JobSetEvent{e.type(), e.reason(), e.note()});
        last_event_seq_ = std::max(last_event_seq_, seq);
        return absl::OkStatus();
      }));
  return revision;
}

void ControllerCore::Announce() {
  for (auto& [key, t] : jobsets_) {
    std::vector<const api::Pod*> placed;
    for (const auto& [name, pod] : t.pods) {
      if (Placed(pod) && !PodFinished(pod)) placed.push_back(&pod);
    }
    if (placed.empty()) continue;
    std::vector<const api::Pod*> current;
    for (const api::Pod* pod : placed) {
      if (!pod->metadata().has_deletion_timestamp()) current.push_back(pod);
    }
    const std::vector<HostEntry> table = HostTable(current);
    for (const api::Pod* pod : placed) {
      fleet_->Run(*pod, table);
      if (pod->metadata().has_deletion_timestamp()) {
        fleet_->Stop(pod->spec().node_name(), pod->metadata().uid());
      }
    }
  }
}

void ControllerCore::LoseNode(const std::string& name,
                              const std::string& reason,
                              const std::string& message) {
  if (auto node = nodes_.find(name); node != nodes_.end()) {
    node->second.ready = false;
  }
  const absl::Time now = clock_->Now();
  for (auto& [key, t] : jobsets_) {
    std::vector<std::string> lost;
    for (auto& [pod_name, pod] : t.pods) {
      if (pod.spec().node_name() != name || PodFinished(pod)) continue;
      api::PodStatus* status = pod.mutable_status();
      status->set_phase("Failed");
      status->set_reason(reason);
      status->set_message(message);
      for (api::ContainerStatus& c : *status->mutable_container_statuses()) {
        if (c.state() == "terminated") continue;
        c.set_state("terminated");
        c.set_ready(false);
        c.set_exit_code(137);
        c.set_reason(reason);
      }
      SetCondition(status->mutable_conditions(), "DisruptionTarget", true,
                   reason, message, now);
      SetCondition(status->mutable_conditions(), "Ready", false, reason,
                   message, now);
      t.reported.insert(pod_name);
      t.dirty_jobs.insert(JobLabel(pod));
      lost.push_back(pod_name);
    }
    if (!lost.empty()) {
      dirty_.insert(key);
      queued_events_[key].push_back({"Warning", reason,
                                     absl::StrCat(message, "; pods failed: ",
                                                  absl::StrJoin(lost, ", "))});
    }
  }
  capacity_grew_ = true;
}

void ControllerCore::SetNode(NodeInfo node) {
  nodes_[node.name] = std::move(node);
  capacity_grew_ = true;
}

void ControllerCore::OnJobSetEvent(const store::Event& event) {
  std::vector<std::string> parts = absl::StrSplit(event.kv.key, '/');
  if (parts.size() != 3) return;
  const std::string key = KeyOf(parts[1], parts[2]);
  auto it = jobsets_.find(key);
  if (event.type == store::Event::Type::kDelete) {
    if (it != jobsets_.end()) {
      it->second.deleted = true;
      dirty_.insert(key);
    }
    return;
  }
  if (it != jobsets_.end() && event.kv.mod_revision <= it->second.revision) {
    return;  // Our own write, or older than what we hold.
  }
  absl::StatusOr<api::JobSet> js = store::DecodeValue<api::JobSet>(event.kv);
  if (!js.ok()) return;  // The API never writes garbage; Load reports it.
  Tracked& t = jobsets_[key];
  t.jobset = *std::move(js);
  t.revision = event.kv.mod_revision;
  t.deleted = false;
  dirty_.insert(key);
}

void ControllerCore::OnPodReport(const PodReport& report) {
  auto where = pod_by_uid_.find(report.pod_uid);
  if (where == pod_by_uid_.end()) {
    ++stale_reports_;
    if (metrics_ != nullptr) metrics_->fenced_reports.Increment();
    return;
  }
  Tracked& t = jobsets_[where->second.first];
  api::Pod& pod = t.pods[where->second.second];
  // Agents speak only for their own node; a finished pod stays finished.
  if (pod.spec().node_name() != report.node || PodFinished(pod)) {
    ++stale_reports_;
    if (metrics_ != nullptr) metrics_->fenced_reports.Increment();
    return;
  }
  api::PodStatus* status = pod.mutable_status();
  status->set_phase(report.status.phase());
  status->set_reason(report.status.reason());
  status->set_message(report.status.message());
  *status->mutable_container_statuses() = report.status.container_statuses();
  *status->mutable_init_container_statuses() =
      report.status.init_container_statuses();
  if (report.status.has_start_time())
    *status->mutable_start_time() = report.status.start_time();
  const absl::Time now = clock_->Now();
  for (const api::Condition& c : report.status.conditions()) {
    SetCondition(status->mutable_conditions(), c.type(), c.status() == "True",
                 c.reason(), c.message(), now);
  }
  if (PodFinished(pod)) capacity_grew_ = true;
  t.reported.insert(pod.metadata().name());
  t.dirty_jobs.insert(JobLabel(pod));
  dirty_.insert(where->second.first);
}

void ControllerCore::PutJob(const Tracked& t, const api::Job& job,
                            PendingWrites* w) {
  w->keys[store::keys::JobKey(job.metadata().namespace_(),
                              t.jobset.metadata().name(),
                              job.metadata().name())] = job.SerializeAsString();
}

void ControllerCore::PutPod(const Tracked& t, const api::Pod& pod,
                            PendingWrites* w) {
  w->keys[store::keys::PodKey(pod.metadata().namespace_(),
                              t.jobset.metadata().name(),
                              pod.metadata().name())] = pod.SerializeAsString();
}

void ControllerCore::AddPod(Tracked& t, api::Pod pod, PendingWrites* w) {
  const std::string name = pod.metadata().name();
  pod_by_uid_[pod.metadata().uid()] = {
      KeyOf(t.jobset.metadata().namespace_(), t.jobset.metadata().name()),
      name};
  t.pods_of_job[JobLabel(pod)].insert(name);
  t.dirty_jobs.insert(JobLabel(pod));
  PutPod(t, pod, w);
  const std::string key =
      KeyOf(t.jobset.metadata().namespace_(), t.jobset.metadata().name());
  pending_gangs_.insert(key);
  new_gangs_.insert(key);
  t.gang_priority = pod.spec().priority();
  t.pods[name] = std::move(pod);
}

void ControllerCore::ErasePod(Tracked& t, const std::string& name,
                              PendingWrites* w) {
  auto it = t.pods.find(name);
  if (it == t.pods.end()) return;
  const api::Pod& pod = it->second;
  w->keys[store::keys::PodKey(pod.metadata().namespace_(),
                              t.jobset.metadata().name(), name)] = std::nullopt;
  pod_by_uid_.erase(pod.metadata().uid());
  t.dirty_jobs.insert(JobLabel(pod));
  auto of_job = t.pods_of_job.find(JobLabel(pod));
  if (of_job != t.pods_of_job.end()) {
    of_job->second.erase(name);
    if (of_job->second.empty()) t.pods_of_job.erase(of_job);
  }
  if (Placed(pod)) {
    capacity_grew_ = true;
    w->release.emplace_back(pod.spec().node_name(), pod.metadata().uid());
  }
  t.pods.erase(it);
}

void ControllerCore::RemovePod(Tracked& t, api::Pod& pod, absl::Time now,
                               PendingWrites* w) {
  if (!Placed(pod) || PodFinished(pod)) {
    ErasePod(t, pod.metadata().name(), w);
    return;
  }
  if (pod.metadata().has_deletion_timestamp()) return;  // Already stopping.
  pod.mutable_metadata()->mutable_deletion_timestamp()->set_seconds(
      absl::ToUnixSeconds(now));
  PutPod(t, pod, w);
  w->stop.emplace_back(pod.spec().node_name(), pod.metadata().uid());
}

bool ControllerCore::ReconcileJobs(Tracked& t, absl::Time now,
                                   PendingWrites* w) {
  bool changed = false;
  const std::set<std::string> names = std::exchange(t.dirty_jobs, {});
  for (const std::string& name : names) {
    auto job_it = t.jobs.find(name);
    if (job_it == t.jobs.end()) continue;
    api::Job& job = job_it->second;
    std::vector<std::string> pod_names;
    if (auto it = t.pods_of_job.find(name); it != t.pods_of_job.end()) {
      pod_names.assign(it->second.begin(), it->second.end());
    }
    if (job.metadata().has_deletion_timestamp()) {
      // Foreground deletion: the Job goes once its pods are gone.
      for (const std::string& p : pod_names) RemovePod(t, t.pods[p], now, w);
      if (!t.pods_of_job.contains(name)) {
        w->keys[store::keys::JobKey(job.metadata().namespace_(),
                                    t.jobset.metadata().name(), name)] =
            std::nullopt;
        t.jobs.erase(name);
        changed = true;
      }
      continue;
    }
    std::vector<const api::Pod*> pods;
    pods.reserve(pod_names.size());
    for (const std::string& p : pod_names) pods.push_back(&t.pods[p]);
    JobActions a = ReconcileJob(job, pods, now);
    if (a.status_changed) {
      *job.mutable_status() = a.status;
      PutJob(t, job, w);
      changed = true;
    }
    for (const std::string& p : a.remove) {
      if (auto it = t.pods.find(p); it != t.pods.end())
        RemovePod(t, it->second, now, w);
      changed = true;
    }
    for (int index : a.create) {
      const std::string uid = NewUid();
      const std::string pod_name =
          index >= 0 ? absl::StrCat(name, "-", index, "-", uid.substr(0, 5))
                     : absl::StrCat(name, "-", uid.substr(0, 5));
      api::Pod pod = ConstructPod(job, index, pod_name, uid);
      pod.mutable_metadata()->mutable_creation_timestamp()->set_seconds(
          absl::ToUnixSeconds(now));
      AddPod(t, std::move(pod), w);
      changed = true;
    }
    if (job.spec().has_active_deadline_seconds() &&
        job.status().has_start_time() && !JobFinished(job)) {
      const absl::Time deadline =
          absl::FromUnixSeconds(job.status().start_time().seconds()) +
          absl::Seconds(job.spec().active_deadline_seconds());
      if (!t.wake || deadline < *t.wake) t.wake = deadline;
    }
  }
  return changed;
}

void ControllerCore::ReconcileOne(const std::string& key, absl::Time now,
                                  PendingWrites* w) {
  Tracked& t = jobsets_[key];
  // Agents' reports first: persist them, and let stopped pods go.
  for (const std::string& name : t.reported) {
    auto it = t.pods.find(name);
    if (it == t.pods.end()) continue;
    if (it->second.metadata().has_deletion_timestamp() &&
        PodFinished(it->second)) {
      ErasePod(t, name, w);
    } else {
      PutPod(t, it->second, w);
      if (PodFinished(it->second)) {
        w->release.emplace_back(it->second.spec().node_name(),
                                it->second.metadata().uid());
      }
    }
  }
  t.reported.clear();
  t.wake.reset();

  const api::JobSetStatus before = t.jobset.status();
  std::vector<JobSetEvent> decided;  // This reconcile's events (metrics).
  for (int round = 0; round < kMaxReconcileRounds; ++round) {
    bool changed = ReconcileJobs(t, now, w);
    std::vector<const api::Job*> jobs;
    jobs.reserve(t.jobs.size());
    for (const auto& [name, job] : t.jobs) jobs.push_back(&job);
    absl::StatusOr<JobSetActions> actions =
        ::jobset::scheduler::ReconcileJobSet(t.jobset, jobs, now, features_);
    if (!actions.ok()) {
      JobSetEvent e{"Warning", "ReconcileError",
                    std::string(actions.status().message())};
      w->events[key].push_back(e);
      break;
    }
    if (actions->status_changed) {
      *t.jobset.mutable_status() = actions->status;
      w->jobsets.insert(key);
      changed = true;
    }
    for (api::Job& job : actions->create) {
      job.mutable_metadata()->set_uid(NewUid());
      job.mutable_metadata()->mutable_creation_timestamp()->set_seconds(
          absl::ToUnixSeconds(now));
      PutJob(t, job, w);
      t.dirty_jobs.insert(job.metadata().name());
      t.jobs[job.metadata().name()] = std::move(job);
      changed = true;
    }
    for (const std::string& name : actions->remove) {
      auto it = t.jobs.find(name);
      if (it == t.jobs.end() || it->second.metadata().has_deletion_timestamp())
        continue;
      it->second.mutable_metadata()->mutable_deletion_timestamp()->set_seconds(
          absl::ToUnixSeconds(now));
      PutJob(t, it->second, w);
      t.dirty_jobs.insert(name);
      changed = true;
    }
    for (api::Job& job : actions->update) {
      PutJob(t, job, w);
      t.dirty_jobs.insert(job.metadata().name());
      t.jobs[job.metadata().name()] = std::move(job);
      changed = true;
    }
    for (JobSetEvent& e : actions->events) {
      if (metrics_ != nullptr) decided.push_back(e);
      w->events[key].push_back(std::move(e));
    }
    if (actions->delete_jobset) {
      DeleteJobSet(key, w);
      w->keys[JobSetStoreKey(t.jobset)] = std::nullopt;
      jobsets_.erase(key);
      return;
    }
    if (actions->requeue_at && (!t.wake || *actions->requeue_at < *t.wake)) {
      t.wake = actions->requeue_at;
    }
    if (!changed) break;
  }
  if (metrics_ != nullptr) RecordReconcile(t, before, decided, now);
}

void ControllerCore::RecordReconcile(Tracked& t,
                                     const api::JobSetStatus& before,
                                     const std::vector<JobSetEvent>& events,
                                     absl::Time now) {
  const api::JobSetStatus& after = t.jobset.status();
  const prometheus::Labels jobset = {
      {"jobset_name", t.jobset.metadata().name()},
      {"namespace", t.jobset.metadata().namespace_()}};
  if (before.terminal_state().empty() && !after.terminal_state().empty()) {
    (after.terminal_state() == "Completed" ? metrics_->completed
                                           : metrics_->failed)
        .Add(jobset)
        .Increment();
  }
  const std::string reason = events.empty() ? "" : events.back().reason;
  if (after.restarts() > before.restarts()) {
    metrics_->restarts.Add({{"action", "RestartJobSet"}, {"reason", reason}})
        .Increment(after.restarts() - before.restarts());
    t.restart_decided = now;
  }
  auto job_restarts = [](const api::JobSetStatus& s) {
    int64_t n = 0;
    for (const api::ReplicatedJobStatus& r : s.replicated_jobs_status())
      for (int32_t c : r.job_restarts()) n += c;
    return n;
  };
  if (job_restarts(after) > job_restarts(before)) {
    metrics_->restarts.Add({{"action", "RestartJob"}, {"reason", reason}})
        .Increment(
            static_cast<double>(job_restarts(after) - job_restarts(before)));
  }
  if ((t.first_running_seen && !t.restart_decided) ||
      !after.terminal_state().empty()) {
    return;
  }
  // Is every pod of the current attempt running?
  int64_t expected = 0;
  for (const api::ReplicatedJob& r : t.jobset.spec().replicated_jobs()) {
    const api::JobSpec& job = r.template_().spec();
    const int64_t per_job =
        std::min(job.has_parallelism() ? job.parallelism() : 1,
                 job.has_completions() ? job.completions() : 1 << 30);
    expected += r.replicas() * per_job;
  }
  const std::string attempt = absl::StrCat(after.restarts());
  int64_t running = 0;
  for (const auto& [name, pod] : t.pods) {
    auto label = pod.metadata().labels().find(kRestartAttemptKey);
    if (label == pod.metadata().labels().end() || label->second != attempt ||
        pod.metadata().has_deletion_timestamp()) {
      continue;
    }
    if (pod.status().phase() != "Running") return;
    ++running;
  }
  if (expected == 0 || running < expected) return;
  if (t.restart_decided) {
    metrics_->restart_seconds.Observe(
        absl::ToDoubleSeconds(now - *t.restart_decided));
    t.restart_decided.reset();
  } else {
    metrics_->submit_to_running_seconds.Observe(absl::ToDoubleSeconds(
        now - absl::FromUnixSeconds(
                  t.jobset.metadata().creation_timestamp().seconds())));
  }
  t.first_running_seen = true;
}

void ControllerCore::RecordGauges(absl::Time now) {
  if (metrics_ == nullptr || now - gauges_at_ < absl::Seconds(1)) return;
  gauges_at_ = now;
  std::map<std::string, int64_t> states = {{"pending", 0},
                                           {"running", 0},
                                           {"suspended", 0},
                                           {"completed", 0},
                                           {"failed", 0}};
  std::map<std::string, int64_t> phases = {
      {"Pending", 0}, {"Running", 0}, {"Succeeded", 0}, {"Failed", 0}};
  for (const auto& [key, t] : jobsets_) {
    const api::JobSetStatus& status = t.jobset.status();
    bool running = false;
    for (const auto& [name, pod] : t.pods) {
      const std::string& phase =
          pod.status().phase().empty() ? "Pending" : pod.status().phase();
      ++phases[phase];
      running |= phase == "Running";
    }
    if (status.terminal_state() == "Completed") {
      ++states["completed"];
    } else if (status.terminal_state() == "Failed") {
      ++states["failed"];
    } else if (t.jobset.spec().suspend()) {
      ++states["suspended"];
    } else {
      ++states[running ? "running" : "pending"];
    }
  }
  for (const auto& [state, n] : states)
    metrics_->jobsets.Add({{"state", state}}).Set(static_cast<double>(n));
  for (const auto& [phase, n] : phases)
    metrics_->pods.Add({{"phase", phase}}).Set(static_cast<double>(n));
  metrics_->pending.Set(static_cast<double>(pending_gangs_.size()));
}

void ControllerCore::DeleteJobSet(const std::string& key, PendingWrites* w) {
  Tracked& t = jobsets_[key];
  std::vector<std::string> pods;
  for (const auto& [name, pod] : t.pods) pods.push_back(name);
  for (const std::string& name : pods) {
    api::Pod& pod = t.pods[name];
    if (Placed(pod) && !PodFinished(pod) &&
        !pod.metadata().has_deletion_timestamp()) {
      w->stop.emplace_back(pod.spec().node_name(), pod.metadata().uid());
    }
    ErasePod(t, name, w);
  }
  for (const auto& [name, job] : t.jobs) {
    w->keys[store::keys::JobKey(job.metadata().namespace_(),
                                t.jobset.metadata().name(), name)] =
        std::nullopt;
  }
  t.jobs.clear();
  for (const auto& [seq, e] : t.events) {
    w->keys[store::keys::EventKey(t.jobset.metadata().namespace_(),
                                  t.jobset.metadata().name(), seq)] =
        std::nullopt;
  }
  t.events.clear();
  w->events.erase(key);
  w->jobsets.erase(key);
  pending_gangs_.erase(key);
  new_gangs_.erase(key);
}

absl::StatusOr<std::shared_ptr<const placement::PodRequirements>>
ControllerCore::Requirements(const api::Job& job) {
  auto it = requirements_.find(job.metadata().uid());
  if (it != requirements_.end()) return it->second;
  JOBSET_ASSIGN_OR_RETURN(
      placement::PodRequirements r,
      placement::RequirementsFromPodSpec(job.spec().template_().spec()));
  auto shared =
      std::make_shared<const placement::PodRequirements>(std::move(r));
  requirements_[job.metadata().uid()] = shared;
  return shared;
}

absl::StatusOr<placement::ClusterSnapshot> ControllerCore::Snapshot() const {
  std::map<std::string, placement::HostRecord> records;
  for (const auto& [name, node] : nodes_) {
    placement::HostRecord& r = records[name];
    r.name = name;
    r.labels = node.labels;
    r.taints = node.taints;
    r.allocatable = node.allocatable;
    r.ready = node.ready;
    r.cordoned = node.cordoned;
  }
  placement::ClusterSnapshotBuilder builder(records.size());
  for (const auto& [key, t] : jobsets_) {
    for (const auto& [name, job] : t.jobs) {
      auto pod_names = t.pods_of_job.find(name);
      if (pod_names == t.pods_of_job.end()) continue;
      auto req = requirements_.find(job.metadata().uid());
      const int32_t priority = job.spec().template_().spec().priority();
      const std::string job_key =
          absl::StrCat(job.metadata().namespace_(), "/", name);
      auto topology = job.metadata().annotations().find(kExclusiveTopologyKey);
      bool held = false;
      for (const std::string& p : pod_names->second) {
        const api::Pod& pod = t.pods.at(p);
        if (!Placed(pod) || PodFinished(pod)) continue;
        auto host = records.find(pod.spec().node_name());
        if (host == records.end()) continue;
        // Capacity and host ports of pods still stopping count as used.
        if (req != requirements_.end()) {
          Add(req->second->resources, &host->second.allocated);
          std::vector<placement::HostPort>& used = host->second.used_host_ports;
          used.insert(used.end(), req->second->host_ports.begin(),
                      req->second->host_ports.end());
        }
        host->second.jobs.push_back({job_key, priority});
        if (topology != job.metadata().annotations().end() && !held) {
          auto value = host->second.labels.find(topology->second);
          if (value != host->second.labels.end()) {
            builder.AddHold(
                {topology->second, value->second, job_key, priority});
            held = true;
          }
        }
      }
    }
  }
  for (auto& [name, r] : records) {
    std::sort(r.used_host_ports.begin(), r.used_host_ports.end());
    builder.AddHost(std::move(r));
  }
  return builder.Build();
}

void ControllerCore::PlacePending(absl::Time now, PendingWrites* w) {
  // A gang that did not fit is tried again only once capacity has grown;
  // placing others only shrinks it.
  if (!capacity_grew_ && new_gangs_.empty()) return;
  const bool grew = std::exchange(capacity_grew_, false);
  const std::set<std::string> fresh = std::exchange(new_gangs_, {});
  // Gangs waiting for placement, in placement's pending order (priority,
  // then submission, with its no-starvation rule).
  std::vector<placement::PendingJobSet> pending;
  for (const std::string& key : pending_gangs_) {
    const Tracked& t = jobsets_.at(key);
    pending.push_back({key, t.gang_priority,
                       absl::FromUnixSeconds(
                           t.jobset.metadata().creation_timestamp().seconds()),
                       t.skips});
  }
  if (pending.empty()) return;
  absl::StatusOr<placement::ClusterSnapshot> snapshot = Snapshot();
  if (!snapshot.ok()) return;
  placement::PendingPass pass = placement::RunPendingPass(
      pending, now, placement::PendingPolicy(), [&](size_t i) {
        if (!snapshot.ok()) return placement::FitResult::kNoRoomNow;
        if (!grew && !fresh.contains(pending[i].key)) {
          return placement::FitResult::kNoRoomNow;  // Still does not fit.
        }
        if (!TryPlace(pending[i].key, pending[i].priority, *snapshot, now, w)) {
          return placement::FitResult::kNoRoomNow;
        }
        snapshot = Snapshot();
        return placement::FitResult::kPlaced;
      });
  for (size_t i : pass.placed) {
    jobsets_[pending[i].key].skips = 0;
    pending_gangs_.erase(pending[i].key);
  }
  for (size_t i : pass.skipped) ++jobsets_[pending[i].key].skips;
}

bool ControllerCore::TryPlace(const std::string& key, int32_t priority,
                              const placement::ClusterSnapshot& snapshot,
                              absl::Time now, PendingWrites* w) {
  Tracked& t = jobsets_[key];
  placement::PlacementRequest request;
  request.jobset_uid = t.jobset.metadata().uid();
  request.restart_attempt = t.jobset.status().restarts();
  request.priority = priority;
  std::vector<std::vector<api::Pod*>> pods_by_job;
  std::string error;
  for (auto& [name, job] : t.jobs) {
    if (job.metadata().has_deletion_timestamp()) continue;
    std::vector<api::Pod*> unplaced;
    if (auto it = t.pods_of_job.find(name); it != t.pods_of_job.end()) {
      for (const std::string& p : it->second) {
        api::Pod& pod = t.pods[p];
        if (!Placed(pod) && !pod.metadata().has_deletion_timestamp())
          unplaced.push_back(&pod);
      }
    }
    if (unplaced.empty()) continue;
    std::sort(unplaced.begin(), unplaced.end(), [](api::Pod* a, api::Pod* b) {
      return CompletionIndex(*a) < CompletionIndex(*b);
    });
    absl::StatusOr<std::shared_ptr<const placement::PodRequirements>> req =
        Requirements(job);
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
    for (api::Pod* pod : unplaced) {
      auto last = t.last_node.find({name, CompletionIndex(*pod)});
      jr.previous_hosts.push_back(last == t.last_node.end() ? ""
                                                            : last->second);
    }
    pods_by_job.push_back(std::move(unplaced));
  }
  if (error.empty() && request.jobs.empty()) return true;  // Nothing waits.
  const absl::Time place_start = absl::Now();
  absl::StatusOr<placement::Placement> placed =
      error.empty() ? placement::Place(snapshot, request)
                    : absl::StatusOr<placement::Placement>(
                          absl::InvalidArgumentError(error));
  if (metrics_ != nullptr) {
    metrics_->placement_seconds.Observe(
        absl::ToDoubleSeconds(absl::Now() - place_start));
  }
  if (placed.ok() && placed->placed()) {
    for (size_t j = 0; j < placed->jobs.size(); ++j) {
      for (size_t i = 0; i < placed->jobs[j].hosts.size(); ++i) {
        api::Pod& pod = *pods_by_job[j][i];
        const std::string& host = placed->jobs[j].hosts[i];
        absl::Status bound = BindPod(host, nodes_[host].address, now, &pod);
        if (!bound.ok()) {
          // The template cannot run anywhere: fail the pod, and the Job's
          // policies take it from there.
          pod.mutable_status()->set_phase("Failed");
          pod.mutable_status()->set_reason("InvalidEnvironment");
          pod.mutable_status()->set_message(std::string(bound.message()));
          pod.mutable_spec()->clear_node_name();
          t.dirty_jobs.insert(JobLabel(pod));
        } else {
          t.last_node[{JobLabel(pod), CompletionIndex(pod)}] = host;
          w->run.push_back(pod);
        }
        PutPod(t, pod, w);
      }
    }
    t.unschedulable.clear();
    dirty_.insert(key);
    return true;
  }
  const std::string reason = placed.ok()
                                 ? placed->RejectionSummary()
                                 : std::string(placed.status().message());
  if (reason == t.unschedulable) return false;
  t.unschedulable = reason;
  for (auto& unplaced : pods_by_job) {
    for (api::Pod* pod : unplaced) {
      SetCondition(pod->mutable_status()->mutable_conditions(), "PodScheduled",
                   false, "Unschedulable", reason, now);
      PutPod(t, *pod, w);
    }
  }
  w->events[key].push_back({"Warning", "FailedScheduling", reason});
  return false;
}

void ControllerCore::TrimEvents(Tracked& t, absl::Time now, PendingWrites* w) {
  const uint64_t oldest = static_cast<uint64_t>(
      std::max<int64_t>(0, absl::ToUnixNanos(now - retention_.max_age)));
  while (!t.events.empty() && (t.events.size() > retention_.per_jobset ||
                               t.events.front().first < oldest)) {
    w->keys[store::keys::EventKey(t.jobset.metadata().namespace_(),
                                  t.jobset.metadata().name(),
                                  t.events.front().first)] = std::nullopt;
    t.events.pop_front();
  }
}

void ControllerCore::StageEvents(absl::Time now, PendingWrites* w) {
  for (auto& [key, events] : w->events) {
    auto it = jobsets_.find(key);
    if (it == jobsets_.end()) continue;
    Tracked& t = it->second;
    const std::string& ns = t.jobset.metadata().namespace_();
    const std::string& name = t.jobset.metadata().name();
    for (JobSetEvent& e : events) {
      last_event_seq_ = std::max(last_event_seq_ + 1,
                                 static_cast<uint64_t>(absl::ToUnixNanos(now)));
      api::Event stored;
      stored.mutable_metadata()->set_namespace_(ns);
      stored.mutable_metadata()->set_name(
          absl::StrCat(name, ".", absl::Hex(last_event_seq_)));
      stored.set_regarding(absl::StrCat("JobSet/", name));
      stored.set_type(e.type);
      stored.set_reason(e.reason);
      stored.set_note(e.message);
      stored.mutable_event_time()->set_seconds(absl::ToUnixSeconds(now));
      w->keys[store::keys::EventKey(ns, name, last_event_seq_)] =
          stored.SerializeAsString();
      t.events.emplace_back(last_event_seq_, std::move(e));
    }
    TrimEvents(t, now, w);
  }
  w->events.clear();
  if (now - events_swept_ >= absl::Minutes(1)) {
    events_swept_ = now;
    for (auto& [key, t] : jobsets_) TrimEvents(t, now, w);
  }
}

absl::Status ControllerCore::Commit(PendingWrites* w) {
  for (int attempt = 0; attempt < kMaxCommitRetries; ++attempt) {
    store::Batch batch;
    for (const auto& [key, value] : w->keys) {
      if (value.has_value()) {
        batch.Put(key, *value);
      } else {
        batch.Delete(key);
      }
    }
    for (const std::string& key : w->jobsets) {
      const Tracked& t = jobsets_.at(key);
      api::JobSet js = t.jobset;
      js.mutable_metadata()->clear_resource_version();
      batch.Update(JobSetStoreKey(t.jobset), js.SerializeAsString(),
                   t.revision);
    }
    if (batch.empty()) break;
    absl::StatusOr<int64_t> revision = store_->Commit(batch);
    if (revision.ok()) {
      for (const std::string& key : w->jobsets)
        jobsets_.at(key).revision = *revision;
      break;
    }
    if (revision.status().code() != absl::StatusCode::kAborted)
      return revision.status();
    // A JobSet changed through the API since we read it: keep its new spec
    // and metadata, put our status on it, and try again.
    std::set<std::string> gone;
    for (const std::string& key : w->jobsets) {
      Tracked& t = jobsets_.at(key);
      JOBSET_ASSIGN_OR_RETURN(std::optional<store::KeyValue> kv,
                              store_->Get(JobSetStoreKey(t.jobset)));
      if (!kv.has_value()) {
        gone.insert(key);
        continue;
      }
      if (kv->mod_revision == t.revision) continue;
      JOBSET_ASSIGN_OR_RETURN(api::JobSet stored,
                              store::DecodeValue<api::JobSet>(*kv));
      *stored.mutable_status() = t.jobset.status();
      t.jobset = std::move(stored);
      t.revision = kv->mod_revision;
      dirty_.insert(key);
    }
    for (const std::string& key : gone) {
      w->jobsets.erase(key);
      jobsets_.at(key).deleted = true;
      dirty_.insert(key);
    }
  }
  // Tell the agents, now that it is durable.
  for (const auto& [node, uid] : w->stop) fleet_->Stop(node, uid);
  // New pods run with their attempt's host table; the attempt's pods already
  // running get the grown table too (their /etc/hosts is rewritten), since
  // an attempt may be placed in waves (Recreate, dependsOn, InOrder).
  std::set<std::string> grown;
  for (const api::Pod& pod : w->run) {
    grown.insert(KeyOf(pod.metadata().namespace_(),
                       pod.metadata().labels().at(kJobSetNameKey)));
  }
  for (const std::string& key : grown) {
    auto it = jobsets_.find(key);
    if (it == jobsets_.end()) continue;
    std::vector<const api::Pod*> placed;
    for (const auto& [name, p] : it->second.pods) {
      if (Placed(p) && !PodFinished(p) &&
          !p.metadata().has_deletion_timestamp()) {
        placed.push_back(&p);
      }
    }
    const std::vector<HostEntry> table = HostTable(placed);
    for (const api::Pod* pod : placed) fleet_->Run(*pod, table);
  }
  for (const auto& [node, uid] : w->release) fleet_->Release(node, uid);
  return absl::OkStatus();
}

absl::Status ControllerCore::Pass() {
  const absl::Time now = clock_->Now();
  PendingWrites w;
  for (const std::string& key : orphan_keys_) w.keys[key] = std::nullopt;
  orphan_keys_.clear();
  for (auto& [key, t] : jobsets_) {
    if (t.wake && *t.wake <= now) {
      dirty_.insert(key);
      for (const auto& [name, job] : t.jobs) t.dirty_jobs.insert(name);
    }
  }
  // Reconciling may mark JobSets dirty again (placement, conflicts): those
  // wait for the next pass. A pass takes a bounded number of JobSets, so
  // that its commit stays small and API writes queued behind it wait little;
  // the rest go to the next pass, which the loop runs at once.
  std::set<std::string> dirty;
  while (!dirty_.empty() && dirty.size() < kMaxJobSetsPerPass) {
    dirty.insert(dirty_.extract(dirty_.begin()));
  }
  for (const std::string& key : dirty) {
    auto it = jobsets_.find(key);
    if (it == jobsets_.end()) continue;
    if (it->second.deleted) {
      DeleteJobSet(key, &w);
      jobsets_.erase(it);
      continue;
    }
    ReconcileOne(key, now, &w);
  }
  PlacePending(now, &w);
  for (auto& [key, events] : std::exchange(queued_events_, {})) {
    if (!jobsets_.contains(key)) continue;
    for (JobSetEvent& e : events) w.events[key].push_back(std::move(e));
  }
  StageEvents(now, &w);
  absl::Status committed = Commit(&w);
  RecordGauges(now);
  return committed;
}

std::optional<absl::Time> ControllerCore::NextWake() const {
  std::optional<absl::Time> next;
  for (const auto& [key, t] : jobsets_) {
    if (t.wake && (!next || *t.wake < *next)) next = t.wake;
  }
  if (!dirty_.empty()) next = absl::InfinitePast();
  return next;
}

const api::JobSet* ControllerCore::FindJobSet(const std::string& ns,
                                              const std::string& name) const {
  auto it = jobsets_.find(KeyOf(ns, name));
  return it == jobsets_.end() ? nullptr : &it->second.jobset;
}

std::vector<api::Job> ControllerCore::Jobs(const std::string& ns,
                                           const std::string& name) const {
  std::vector<api::Job> out;
  auto it = jobsets_.find(KeyOf(ns, name));
  if (it == jobsets_.end()) return out;
  for (const auto& [n, job] : it->second.jobs) out.push_back(job);
  return out;
}

std::vector<api::Pod> ControllerCore::Pods(const std::string& ns,
                                           const std::string& name) const {
  std::vector<api::Pod> out;
  auto it = jobsets_.find(KeyOf(ns, name));
  if (it == jobsets_.end()) return out;
  for (const auto& [n, pod] : it->second.pods) out.push_back(pod);
  return out;
}

std::vector<JobSetEvent> ControllerCore::Events(const std::string& ns,
                                                const std::string& name) const {
  auto it = jobsets_.find(KeyOf(ns, name));
  if (it == jobsets_.end()) return {};
  std::vector<JobSetEvent> out;
  for (const auto& [seq, e] : it->second.events) out.push_back(e);
  return out;
}

}  // namespace jobset::scheduler
