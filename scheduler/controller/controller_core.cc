#include "scheduler/controller/controller_core.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "common/uid.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "scheduler/controller/child_jobs.h"
#include "scheduler/controller/conditions.h"
#include "scheduler/controller/constants.h"
#include "scheduler/controller/job_pods.h"
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
// A pass with fewer records to serialize, or Jobs to shape, than this does
// it on the controller thread alone.
constexpr size_t kParallelRecords = 64;

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

bool Placed(const api::PodRecord& pod) { return !pod.node_name().empty(); }

// A placed pod that is not finished: it holds its node's resources.
bool OnNode(const api::PodRecord& pod) {
  return Placed(pod) && !PodFinished(pod);
}

// Remembers that completion index `index` of a Job ran on `node`, for sticky
// restarts (`last` is the Job's entry in Tracked::last_node).
void RememberNode(int index, const std::string& node,
                  std::vector<std::string>* last) {
  if (index < 0) return;
  if (static_cast<int>(last->size()) <= index) last->resize(index + 1);
  (*last)[index] = node;
}

std::string Label(const api::ObjectMeta& meta, const char* key) {
  auto it = meta.labels().find(key);
  return it == meta.labels().end() ? "" : it->second;
}

}  // namespace

ControllerCore::ControllerCore(store::Store* store, AgentFleet* fleet,
                               Clock* clock, api::Features features)
    : store_(store), fleet_(fleet), clock_(clock), features_(features) {}

std::string ControllerCore::KeyOf(const std::string& ns,
                                  const std::string& name) {
  return absl::StrCat(ns, "/", name);
}

absl::StatusOr<int64_t> ControllerCore::Load() {
  pod_by_uid_.clear();  // Before the records its keys view.
  jobsets_.clear();
  erased_.clear();
  erased_pods_.clear();
  dirty_.clear();
  orphan_keys_.clear();
  unstored_deletions_.clear();
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
                t.key = key;
                t.jobset = std::move(js);
                t.revision = kv.mod_revision;
                dirty_.insert(key);
                return absl::OkStatus();
              }));
  // Children of a JobSet that is gone are deleted by the first pass.
  // jobs/<ns>/<jobset>/<job> and pods/<ns>/<jobset>/<job>.
  auto owner = [&](const std::string& key) -> Tracked* {
    std::vector<std::string> parts = absl::StrSplit(key, '/');
    if (parts.size() != 4) return nullptr;
    auto it = jobsets_.find(KeyOf(parts[1], parts[2]));
    return it == jobsets_.end() ? nullptr : &it->second;
  };
  JOBSET_RETURN_IF_ERROR(ScanAll(
      store_, store::keys::kJobs,
      [&](const store::KeyValue& kv) -> absl::Status {
        JOBSET_ASSIGN_OR_RETURN(api::Job job, store::DecodeValue<api::Job>(kv));
        Tracked* t = owner(kv.key);
        if (t == nullptr) {
          orphan_keys_.push_back(kv.key);
        } else {
          t->dirty_jobs.insert(job.metadata().name());
          CompactJob(&job);  // Written by an older jobsetd: it may not be.
          AddJob(*t, std::move(job));
        }
        return absl::OkStatus();
      }));
  JOBSET_RETURN_IF_ERROR(ScanAll(
      store_, store::keys::kPods,
      [&](const store::KeyValue& kv) -> absl::Status {
        JOBSET_ASSIGN_OR_RETURN(std::vector<api::PodRecord> pods,
                                DecodeJobPods(kv));
        Tracked* t = owner(kv.key);
        const std::string job_name(kv.key.substr(kv.key.rfind('/') + 1));
        auto job = t == nullptr ? decltype(t->jobs)::iterator()
                                : t->jobs.find(job_name);
        if (t == nullptr || job == t->jobs.end()) {
          orphan_keys_.push_back(kv.key);
          return absl::OkStatus();
        }
        JobState& state = job->second;
        for (api::PodRecord& pod : pods) {
          std::string name = pod.name();
          api::PodRecord& held = state.pods[name] = std::move(pod);
          pod_by_uid_[held.uid()] = {t, &state, &held};
          if (Placed(held)) {
            RememberNode(held.completion_index(), held.node_name(),
                         &t->last_node[job_name]);
          }
        }
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
  const auto no_hosts = std::make_shared<const std::vector<HostEntry>>();
  for (auto& [key, t] : jobsets_) {
    std::vector<LaunchOrder> orders;
    LaunchOrders(t, &orders);
    for (LaunchOrder& order : orders) fleet_->Run(std::move(order));
    // Pods still stopping: their agents keep them until they report.
    for (auto& [name, job] : t.jobs) {
      for (auto& [pod_name, pod] : job.pods) {
        if (!OnNode(pod) || !pod.has_deletion_timestamp()) continue;
        fleet_->Run({Shape(job), LaunchPodOf(pod), no_hosts});
        fleet_->Stop(pod.node_name(), pod.uid());
      }
    }
  }
}

const std::shared_ptr<const api::Job>& ControllerCore::Shape(JobState& job) {
  if (job.shape == nullptr) {
    auto shape = std::make_shared<api::Job>();
    *shape->mutable_metadata() = job.job.metadata();
    *shape->mutable_spec() = job.job.spec();
    job.shape = std::move(shape);
  }
  return job.shape;
}

void ControllerCore::LaunchOrders(Tracked& t,
                                  std::vector<LaunchOrder>* orders) {
  std::vector<std::pair<const api::Job*, const api::PodRecord*>> current;
  std::vector<JobState*> jobs;
  for (auto& [name, job] : t.jobs) {
    for (const auto& [pod_name, pod] : job.pods) {
      if (!OnNode(pod) || pod.has_deletion_timestamp()) continue;
      current.emplace_back(&job.job, &pod);
      jobs.push_back(&job);
    }
  }
  if (current.empty()) return;
  auto table =
      std::make_shared<const std::vector<HostEntry>>(HostTable(current));
  orders->reserve(orders->size() + current.size());
  for (size_t i = 0; i < current.size(); ++i) {
    orders->push_back(
        {Shape(*jobs[i]), LaunchPodOf(*current[i].second), table});
  }
}

void ControllerCore::LoseNode(const std::string& name,
                              const std::string& reason,
                              const std::string& message) {
  if (auto node = nodes_.find(name); node != nodes_.end()) {
    node->second.ready = false;
    ForgetSnapshot();
  }
  const absl::Time now = clock_->Now();
  for (auto& [key, t] : jobsets_) {
    std::vector<std::string> lost;
    for (auto& [job_name, job] : t.jobs) {
      for (auto& [pod_name, pod] : job.pods) {
        if (pod.node_name() != name || PodFinished(pod)) continue;
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
        t.reported.emplace(&pod, &job);
        MarkDirty(t, job);
        lost.push_back(pod_name);
      }
    }
    if (!lost.empty()) {
      std::sort(lost.begin(), lost.end());
      dirty_.insert(key);
      queued_events_[key].push_back({"Warning", reason,
                                     absl::StrCat(message, "; pods failed: ",
                                                  absl::StrJoin(lost, ", "))});
    }
  }
  capacity_grew_ = true;
}

void ControllerCore::SetNode(NodeInfo node) {
  ForgetSnapshot();
  nodes_.insert_or_assign(node.name, std::move(node));
  capacity_grew_ = true;
}

void ControllerCore::ForgetSnapshot() {
  last_snapshot_.reset();
  ++nodes_generation_;
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
  t.key = key;
  t.jobset = *std::move(js);
  t.revision = event.kv.mod_revision;
  t.deleted = false;
  dirty_.insert(key);
}

void ControllerCore::OnPodReport(const PodReport& report) {
  auto where = pod_by_uid_.find(report.pod_uid);
  // Agents speak only for their own node; a finished pod stays finished.
  if (where == pod_by_uid_.end() ||
      where->second.pod->node_name() != report.node ||
      PodFinished(*where->second.pod)) {
    ++stale_reports_;
    if (metrics_ != nullptr) metrics_->fenced_reports.Increment();
    return;
  }
  auto [t, job, pod] = where->second;
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
    if (report.status.has_start_time())
      *status->mutable_start_time() = report.status.start_time();
    const absl::Time now = clock_->Now();
    for (const api::Condition& c : report.status.conditions()) {
      SetCondition(status->mutable_conditions(), c.type(), c.status() == "True",
                   c.reason(), c.message(), now);
    }
  }
  if (PodFinished(*pod)) capacity_grew_ = true;
  // A Job being deleted goes with all its pods once none runs: the Job layer
  // looks at it again, and its stopped pods need no pass of their own.
  if (!stopped || !job->job.metadata().has_deletion_timestamp()) {
    t->reported.emplace(pod, job);
  }
  MarkDirty(*t, *job);
  dirty_.insert(t->key);
}

void ControllerCore::MarkDirty(Tracked& t, JobState& job) {
  if (job.dirty) return;
  job.dirty = true;
  t.dirty_jobs.insert(job.job.metadata().name());
}

void ControllerCore::MarkJobChanged(Tracked& t, JobState& job,
                                    PendingWrites* w) {
  if (!job.job_changed && !job.pods_changed) w->staged.insert(t.key);
  job.job_changed = true;
}

ControllerCore::JobState& ControllerCore::AddJob(Tracked& t, api::Job job) {
  JobState& state = t.jobs[job.metadata().name()];
  UpdateJob(state, std::move(job));
  return state;
}

void ControllerCore::UpdateJob(JobState& state, api::Job job) {
  state.job = std::move(job);
  state.child = ParseChildJob(state.job);
  state.shape.reset();
  state.env = CheckPodEnv(state.job);
}

void ControllerCore::MarkPodsChanged(Tracked& t, JobState& job,
                                     PendingWrites* w) {
  if (!job.job_changed && !job.pods_changed) w->staged.insert(t.key);
  job.pods_changed = true;
}

void ControllerCore::StageChildren(
    PendingWrites* w,
    absl::flat_hash_map<const JobState*, std::string> serialized_jobs) {
  // What to serialize where: a Job (pods false) or its JobPods record.
  struct Record {
    const JobState* job;
    bool pods;
    std::optional<std::string>* value;
  };
  std::vector<Record> records;
  for (const std::string& key : w->staged) {
    auto it = jobsets_.find(key);
    if (it == jobsets_.end()) continue;
    Tracked& t = it->second;
    const std::string& ns = t.jobset.metadata().namespace_();
    const std::string& jobset = t.jobset.metadata().name();
    for (auto& [name, job] : t.jobs) {
      if (job.job_changed) {
        job.job_changed = false;
        job.deletion_unstored = false;
        std::optional<std::string>& value =
            w->keys[store::keys::JobKey(ns, jobset, name)];
        if (auto done = serialized_jobs.find(&job);
            done != serialized_jobs.end()) {
          value = std::move(done->second);
        } else {
          records.push_back({&job, false, &value});
        }
      }
      if (!job.pods_changed) continue;
      job.pods_changed = false;
      std::optional<std::string>& value =
          w->keys[store::keys::JobPodsKey(ns, jobset, name)];
      if (job.pods.empty()) {
        value = std::nullopt;
      } else {
        records.push_back({&job, true, &value});
      }
    }
  }
  w->staged.clear();
  // Records are independent (and w->keys is not resized from here on): a
  // restart's thousands of them are serialized on two threads, each taking
  // the next one not yet taken (a Job's record costs more than its pods').
  std::atomic<size_t> next{0};
  auto serialize = [&records, &next] {
    for (size_t i = next++; i < records.size(); i = next++) {
      const Record& r = records[i];
      *r.value = r.pods
                     ? EncodeJobPods(r.job->job.metadata().name(), r.job->pods)
                     : r.job->job.SerializeAsString();
    }
  };
  if (records.size() < kParallelRecords) {
    serialize();
    return;
  }
  std::thread helper(serialize);
  serialize();
  helper.join();
}

void ControllerCore::AddPods(Tracked& t, JobState& job,
                             const std::vector<int>& indexes, absl::Time now,
                             PendingWrites* w) {
  if (indexes.empty()) return;
  const std::string& job_name = job.job.metadata().name();
  for (int index : indexes) {
    std::string uid = NewUid();
    auto [it, added] = job.pods.try_emplace(PodName(job_name, index, uid));
    it->second = NewPodRecord(it->first, std::move(uid), index, now);
    pod_by_uid_[it->second.uid()] = {&t, &job, &it->second};
  }
  // The Job's status counts them already: the Job layer need not look again.
  MarkPodsChanged(t, job, w);
  pending_gangs_.insert(t.key);
  new_gangs_.insert(t.key);
  t.gang_priority = job.job.spec().template_().spec().priority();
}

void ControllerCore::ErasePod(Tracked& t, JobState& job,
                              const std::string& name, PendingWrites* w) {
  auto it = job.pods.find(name);
  if (it == job.pods.end()) return;
  const api::PodRecord& pod = it->second;
  pod_by_uid_.erase(pod.uid());
  MarkDirty(t, job);
  if (Placed(pod)) {
    capacity_grew_ = true;
    w->release.push_back(&pod);
  }
  // Freed with the pass, after its orders name it.
  erased_pods_.push_back(job.pods.extract(it));
  MarkPodsChanged(t, job, w);
}

void ControllerCore::EraseJob(Tracked& t, const std::string& name,
                              PendingWrites* w) {
  auto it = t.jobs.find(name);
  if (it == t.jobs.end()) return;
  for (auto& [pod_name, pod] : it->second.pods) {
    pod_by_uid_.erase(pod.uid());
    if (Placed(pod)) {
      capacity_grew_ = true;
      w->release.push_back(&pod);
    }
  }
  const std::string& ns = t.jobset.metadata().namespace_();
  const std::string& jobset = t.jobset.metadata().name();
  w->keys[store::keys::JobKey(ns, jobset, name)] = std::nullopt;
  w->keys[store::keys::JobPodsKey(ns, jobset, name)] = std::nullopt;
  requirements_.erase(it->second.job.metadata().uid());
  // Freed once the pass has sent its orders (a restart erases every Job of
  // the old attempt just before launching the new one).
  erased_.push_back(std::move(it->second));
  t.jobs.erase(it);
}

void ControllerCore::RemovePod(Tracked& t, JobState& job, api::PodRecord& pod,
                               absl::Time now, PendingWrites* w) {
  if (!OnNode(pod)) {
    ErasePod(t, job, pod.name(), w);
    return;
  }
  if (pod.has_deletion_timestamp()) return;  // Already stopping.
  pod.mutable_deletion_timestamp()->set_seconds(absl::ToUnixSeconds(now));
  // The pods of a Job being deleted are stopping because it is (the store
  // shows them with its deletionTimestamp, and Load stops them again), so
  // a restart does not rewrite every pod record to say so.
  if (!job.job.metadata().has_deletion_timestamp()) MarkPodsChanged(t, job, w);
  w->stop.push_back(&pod);
}

void ControllerCore::ReconcileJobs(Tracked& t, absl::Time now,
                                   PendingWrites* w) {
  const std::set<std::string> names = std::exchange(t.dirty_jobs, {});
  for (const std::string& name : names) {
    auto job_it = t.jobs.find(name);
    if (job_it == t.jobs.end()) continue;
    JobState& state = job_it->second;
    state.dirty = false;
    api::Job& job = state.job;
    if (job.metadata().has_deletion_timestamp()) {
      // Foreground deletion: the Job goes, with its pods, once none of them
      // runs any more.
      bool running = false;
      for (auto& [pod_name, pod] : state.pods) {
        if (!OnNode(pod)) continue;
        running = true;
        RemovePod(t, state, pod, now, w);
      }
      if (!running) EraseJob(t, name, w);
      continue;
    }
    std::vector<const api::PodRecord*> pods;
    pods.reserve(state.pods.size());
    for (const auto& [pod_name, pod] : state.pods) pods.push_back(&pod);
    JobActions a = ReconcileJob(job, pods, now);
    if (a.status_changed) {
      *job.mutable_status() = a.status;
      MarkJobChanged(t, state, w);
    }
    for (const std::string& p : a.remove) {
      if (auto it = state.pods.find(p); it != state.pods.end())
        RemovePod(t, state, it->second, now, w);
    }
    AddPods(t, state, a.create, now, w);
    if (job.spec().has_active_deadline_seconds() &&
        job.status().has_start_time() && !JobFinished(job)) {
      const absl::Time deadline =
          absl::FromUnixSeconds(job.status().start_time().seconds()) +
          absl::Seconds(job.spec().active_deadline_seconds());
      if (!t.wake || deadline < *t.wake) t.wake = deadline;
    }
  }
}

void ControllerCore::ReconcileOne(const std::string& key, absl::Time now,
                                  PendingWrites* w) {
  Tracked& t = jobsets_[key];
  // Agents' reports first: persist them, and let stopped pods go.
  for (const auto& [pod, job] : std::exchange(t.reported, {})) {
    if (pod->has_deletion_timestamp() && PodFinished(*pod)) {
      // A Job being deleted goes with all its pods at once, when the last
      // one has stopped (the Job layer looks at it again).
      if (job->job.metadata().has_deletion_timestamp()) {
        MarkDirty(t, *job);
      } else {
        ErasePod(t, *job, std::string(pod->name()), w);
      }
      continue;
    }
    MarkPodsChanged(t, *job, w);
    if (PodFinished(*pod)) w->release.push_back(pod);
  }
  t.wake.reset();

  const api::JobSetStatus before = t.jobset.status();
  std::vector<JobSetEvent> decided;  // This reconcile's events (metrics).
  for (int round = 0; round < kMaxReconcileRounds; ++round) {
    ReconcileJobs(t, now, w);
    // Whether the JobSet layer changed anything; the Job layer ran first, so
    // when it did not and no Job waits, another round would see the same.
    bool changed = false;
    std::vector<ChildJob> jobs;
    jobs.reserve(t.jobs.size());
    for (const auto& [name, job] : t.jobs) jobs.push_back(job.child);
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
      t.dirty_jobs.insert(job.metadata().name());
      MarkJobChanged(t, AddJob(t, std::move(job)), w);
      changed = true;
    }
    for (const std::string& name : actions->remove) {
      auto it = t.jobs.find(name);
      if (it == t.jobs.end() ||
          it->second.job.metadata().has_deletion_timestamp())
        continue;
      it->second.job.mutable_metadata()
          ->mutable_deletion_timestamp()
          ->set_seconds(absl::ToUnixSeconds(now));
      // Stored by the next pass (unless this one writes the Job anyway).
      it->second.deletion_unstored = true;
      unstored_deletions_.insert(key);
      t.dirty_jobs.insert(name);
      changed = true;
    }
    for (api::Job& job : actions->update) {
      t.dirty_jobs.insert(job.metadata().name());
      auto it = t.jobs.find(job.metadata().name());
      if (it == t.jobs.end()) {
        MarkJobChanged(t, AddJob(t, std::move(job)), w);
      } else {
        UpdateJob(it->second, std::move(job));
        MarkJobChanged(t, it->second, w);
      }
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
    if (!changed && t.dirty_jobs.empty()) break;
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
  for (const auto& [name, job] : t.jobs) {
    if (Label(job.job.metadata(), kRestartAttemptKey) != attempt) continue;
    for (const auto& [pod_name, pod] : job.pods) {
      if (pod.has_deletion_timestamp()) continue;
      if (pod.status().phase() != "Running") return;
      ++running;
    }
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
    for (const auto& [name, job] : t.jobs) {
      for (const auto& [pod_name, pod] : job.pods) {
        const std::string& phase =
            pod.status().phase().empty() ? "Pending" : pod.status().phase();
        ++phases[phase];
        running |= phase == "Running";
      }
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
  std::vector<std::string> jobs;
  for (const auto& [name, job] : t.jobs) {
    jobs.push_back(name);
    for (const auto& [pod_name, pod] : job.pods) {
      if (OnNode(pod) && !pod.has_deletion_timestamp()) w->stop.push_back(&pod);
    }
  }
  for (const std::string& name : jobs) EraseJob(t, name, w);
  for (const auto& [seq, e] : t.events) {
    w->keys[store::keys::EventKey(t.jobset.metadata().namespace_(),
                                  t.jobset.metadata().name(), seq)] =
        std::nullopt;
  }
  t.events.clear();
  w->events.erase(key);
  w->jobsets.erase(key);
  w->staged.erase(key);
  w->launched.erase(key);
  pending_gangs_.erase(key);
  new_gangs_.erase(key);
}

absl::StatusOr<std::shared_ptr<const placement::PodRequirements>>
ControllerCore::Requirements(const api::Job& job) {
  auto it = requirements_.find(job.metadata().uid());
  if (it != requirements_.end()) return it->second;
  // Jobs with the same pod spec (a ReplicatedJob's) share one: placement
  // then evaluates the template once, not once per Job.
  const api::PodSpec& spec = job.spec().template_().spec();
  std::string key;
  {
    google::protobuf::io::StringOutputStream out(&key);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    spec.SerializeToCodedStream(&coded);
  }
  std::weak_ptr<const placement::PodRequirements>& by_spec =
      requirements_by_spec_[key];
  std::shared_ptr<const placement::PodRequirements> shared = by_spec.lock();
  if (shared == nullptr) {
    JOBSET_ASSIGN_OR_RETURN(placement::PodRequirements r,
                            placement::RequirementsFromPodSpec(spec));
    shared = std::make_shared<const placement::PodRequirements>(std::move(r));
    by_spec = shared;
    // Specs no Job uses any more go once they are most of the entries.
    if (requirements_by_spec_.size() > 2 * swept_specs_ + 16) {
      absl::erase_if(requirements_by_spec_,
                     [](const auto& entry) { return entry.second.expired(); });
      swept_specs_ = requirements_by_spec_.size();
    }
  }
  requirements_[job.metadata().uid()] = shared;
  return shared;
}

absl::StatusOr<placement::ClusterSnapshot> ControllerCore::Snapshot() {
  // The last snapshot's hosts and indexes with its usage cleared, or the
  // nodes' records afresh when a node changed since (nodes_ is in name order,
  // as snapshots number their hosts).
  std::optional<placement::ClusterSnapshotBuilder> builder;
  if (last_snapshot_.has_value()) {
    builder.emplace(*std::move(last_snapshot_));
    last_snapshot_.reset();
  } else {
    builder.emplace(nodes_.size());
    host_position_.clear();
    host_position_.reserve(nodes_.size());
    node_at_.clear();
    node_at_.reserve(nodes_.size());
    for (const auto& [name, node] : nodes_) {
      host_position_[name] = node_at_.size();
      node_at_.push_back(&node);
      placement::HostRecord r;
      r.name = name;
      r.labels = node.labels;
      r.taints = node.taints;
      r.allocatable = node.allocatable;
      r.ready = node.ready;
      r.cordoned = node.cordoned;
      builder->AddHost(std::move(r));
    }
  }
  lent_generation_ = nodes_generation_;
  for (const auto& [key, t] : jobsets_) {
    for (const auto& [name, state] : t.jobs) {
      const api::Job& job = state.job;
      auto req = requirements_.find(job.metadata().uid());
      const int32_t priority = job.spec().template_().spec().priority();
      const std::string job_key =
          absl::StrCat(job.metadata().namespace_(), "/", name);
      auto topology = job.metadata().annotations().find(kExclusiveTopologyKey);
      bool held = false;
      for (const auto& [pod_name, pod] : state.pods) {
        if (!OnNode(pod)) continue;
        auto position = host_position_.find(pod.node_name());
        if (position == host_position_.end()) continue;
        placement::HostRecord* host = &builder->host(position->second);
        // Capacity and host ports of pods still stopping count as used.
        if (req != requirements_.end()) {
          Add(req->second->resources, &host->allocated);
          std::vector<placement::HostPort>& used = host->used_host_ports;
          used.insert(used.end(), req->second->host_ports.begin(),
                      req->second->host_ports.end());
        }
        host->jobs.push_back({job_key, priority});
        if (topology != job.metadata().annotations().end() && !held) {
          auto value = host->labels.find(topology->second);
          if (value != host->labels.end()) {
            builder->AddHold(
                {topology->second, value->second, job_key, priority});
            held = true;
          }
        }
      }
    }
  }
  return builder->Build();
}

void ControllerCore::RecycleSnapshot(
    absl::StatusOr<placement::ClusterSnapshot> snapshot) {
  if (!snapshot.ok() || lent_generation_ != nodes_generation_) return;
  last_snapshot_ = *std::move(snapshot);
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
  // Built when first needed, and again after each gang placed.
  std::optional<absl::StatusOr<placement::ClusterSnapshot>> snapshot;
  placement::PendingPass pass = placement::RunPendingPass(
      pending, now, placement::PendingPolicy(), [&](size_t i) {
        if (!grew && !fresh.contains(pending[i].key)) {
          return placement::FitResult::kNoRoomNow;  // Still does not fit.
        }
        if (!snapshot.has_value()) snapshot = Snapshot();
        if (!snapshot->ok() || !TryPlace(pending[i].key, pending[i].priority,
                                         **snapshot, now, w)) {
          return placement::FitResult::kNoRoomNow;
        }
        RecycleSnapshot(*std::move(snapshot));
        snapshot.reset();
        return placement::FitResult::kPlaced;
      });
  if (snapshot.has_value()) RecycleSnapshot(*std::move(snapshot));
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
  std::vector<std::pair<JobState*, std::vector<api::PodRecord*>>> pods_by_job;
  std::string error;
  for (auto& [name, state] : t.jobs) {
    const api::Job& job = state.job;
    if (job.metadata().has_deletion_timestamp()) continue;
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
    const std::vector<std::string>* last = nullptr;
    if (auto it = t.last_node.find(name); it != t.last_node.end())
      last = &it->second;
    for (api::PodRecord* pod : unplaced) {
      const int index = pod->completion_index();
      jr.previous_hosts.push_back(last != nullptr && index >= 0 &&
                                          index < static_cast<int>(last->size())
                                      ? (*last)[index]
                                      : "");
    }
    pods_by_job.emplace_back(&state, std::move(unplaced));
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
      auto& [state, pods] = pods_by_job[j];
      std::vector<std::string>& last =
          t.last_node[state->job.metadata().name()];
      for (size_t i = 0; i < placed->jobs[j].hosts.size(); ++i) {
        api::PodRecord& pod = *pods[i];
        if (!state->env.ok()) {
          // The template cannot run anywhere: fail the pod, and the Job's
          // policies take it from there.
          pod.mutable_status()->set_phase("Failed");
          pod.mutable_status()->set_reason("InvalidEnvironment");
          pod.mutable_status()->set_message(
              absl::StrCat("pod ", pod.name(), ": ", state->env.message()));
          MarkDirty(t, *state);
        } else {
          const NodeInfo& node = *node_at_[placed->jobs[j].host_ids[i]];
          BindPod(node.name, node.address, now, &pod);
          RememberNode(pod.completion_index(), node.name, &last);
        }
      }
      MarkPodsChanged(t, *state, w);
    }
    w->launched.insert(key);
    t.unschedulable.clear();
    dirty_.insert(key);
    return true;
  }
  const std::string reason = placed.ok()
                                 ? placed->RejectionSummary()
                                 : std::string(placed.status().message());
  if (reason == t.unschedulable) return false;
  t.unschedulable = reason;
  for (auto& [state, pods] : pods_by_job) {
    for (api::PodRecord* pod : pods) {
      SetCondition(pod->mutable_status()->mutable_conditions(), kPodScheduled,
                   false, "Unschedulable", reason, now);
    }
    MarkPodsChanged(t, *state, w);
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
  // New pods run with their attempt's host table; the attempt's pods already
  // running get the grown table too (their /etc/hosts is rewritten), since
  // an attempt may be placed in waves (Recreate, dependsOn, InOrder). The
  // orders are built while the store writes the batch (a commit conflict
  // changes only JobSet objects, never pods), and handed out once it is
  // durable.
  std::vector<LaunchOrder> orders;
  auto build_orders = [&] {
    for (const std::string& key : w->launched) {
      auto it = jobsets_.find(key);
      if (it != jobsets_.end()) LaunchOrders(it->second, &orders);
    }
  };
  bool built = false;
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
    absl::StatusOr<int64_t> revision;
    if (!built && !w->launched.empty()) {
      // The store is thread-safe, and the commit touches no controller state.
      std::thread writer([&] { revision = store_->Commit(batch); });
      build_orders();
      built = true;
      writer.join();
    } else {
      revision = store_->Commit(batch);
    }
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
  for (const api::PodRecord* pod : w->stop)
    fleet_->Stop(pod->node_name(), pod->uid());
  if (!built) build_orders();
  for (LaunchOrder& order : orders) fleet_->Run(std::move(order));
  for (const api::PodRecord* pod : w->release)
    fleet_->Release(pod->node_name(), pod->uid());
  return absl::OkStatus();
}

absl::flat_hash_map<const ControllerCore::JobState*, std::string>
ControllerCore::PlaceAlongsidePreparing(absl::Time now, PendingWrites* w) {
  std::vector<JobState*> unshaped;
  for (const std::string& key : new_gangs_) {
    auto it = jobsets_.find(key);
    if (it == jobsets_.end()) continue;
    for (auto& [name, job] : it->second.jobs) {
      if (job.shape == nullptr && !job.job.metadata().has_deletion_timestamp())
        unshaped.push_back(&job);
    }
  }
  std::vector<std::pair<const JobState*, std::string>> changed;
  for (const std::string& key : w->staged) {
    auto it = jobsets_.find(key);
    if (it == jobsets_.end()) continue;
    for (const auto& [name, job] : it->second.jobs) {
      if (job.job_changed) changed.emplace_back(&job, "");
    }
  }
  // Without new gangs placement has nothing to do alongside, and
  // StageChildren serializes the Jobs on two threads. A restart has 1,000 of
  // each.
  std::optional<std::thread> helper;
  if (!unshaped.empty() &&
      unshaped.size() + changed.size() >= kParallelRecords) {
    helper.emplace([&unshaped, &changed] {
      for (JobState* job : unshaped) Shape(*job);
      for (auto& [job, value] : changed) value = job->job.SerializeAsString();
    });
  }
  PlacePending(now, w);
  if (!helper.has_value()) return {};  // StageChildren serializes them.
  helper->join();
  return {std::make_move_iterator(changed.begin()),
          std::make_move_iterator(changed.end())};
}

absl::Status ControllerCore::Pass() {
  const absl::Time now = clock_->Now();
  PendingWrites w;
  for (const std::string& key : orphan_keys_) w.keys[key] = std::nullopt;
  orphan_keys_.clear();
  for (const std::string& key : std::exchange(unstored_deletions_, {})) {
    auto it = jobsets_.find(key);
    if (it == jobsets_.end()) continue;
    for (auto& [name, job] : it->second.jobs) {
      if (!std::exchange(job.deletion_unstored, false)) continue;
      MarkJobChanged(it->second, job, &w);
    }
  }
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
  absl::flat_hash_map<const JobState*, std::string> serialized_jobs =
      PlaceAlongsidePreparing(now, &w);
  for (auto& [key, events] : std::exchange(queued_events_, {})) {
    if (!jobsets_.contains(key)) continue;
    for (JobSetEvent& e : events) w.events[key].push_back(std::move(e));
  }
  StageEvents(now, &w);
  StageChildren(&w, std::move(serialized_jobs));
  absl::Status committed = Commit(&w);
  erased_.clear();
  erased_pods_.clear();
  RecordGauges(now);
  return committed;
}

std::optional<absl::Time> ControllerCore::NextWake() const {
  std::optional<absl::Time> next;
  for (const auto& [key, t] : jobsets_) {
    if (t.wake && (!next || *t.wake < *next)) next = t.wake;
  }
  if (!dirty_.empty() || !unstored_deletions_.empty()) {
    next = absl::InfinitePast();
  }
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
  for (const auto& [n, job] : it->second.jobs) {
    ExpandJob(&out.emplace_back(job.job));
  }
  return out;
}

std::vector<api::Pod> ControllerCore::Pods(const std::string& ns,
                                           const std::string& name) const {
  std::vector<api::Pod> out;
  auto it = jobsets_.find(KeyOf(ns, name));
  if (it == jobsets_.end()) return out;
  for (const auto& [n, job] : it->second.jobs) {
    for (const auto& [pod_name, pod] : job.pods)
      out.push_back(ExpandPod(job.job, pod));
  }
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
