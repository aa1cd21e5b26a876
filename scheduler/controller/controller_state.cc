#include "scheduler/controller/controller_state.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "api/pod_phase.h"
#include "common/status_macros.h"
#include "scheduler/controller/attempt_pods.h"
#include "scheduler/controller/limits.h"
#include "scheduler/records/records.h"
#include "store/decode.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {

const std::shared_ptr<const api::Job>& JobState::Shape() {
  if (shape == nullptr) {
    auto built = std::make_shared<api::Job>();
    *built->mutable_metadata() = job.metadata();
    *built->mutable_spec() = job.spec();
    shape = std::move(built);
  }
  return shape;
}

void JobState::SetJob(api::Job new_job) {
  job = std::move(new_job);
  child = ParseChildJob(job);
  shape.reset();
  env = CheckPodEnv(job);
  config.reset();
  config_error.clear();
}

void TrackedJobSet::MarkJobDirty(JobState& job) {
  job.idle = false;
  if (job.dirty) return;
  job.dirty = true;
  dirty_jobs.insert(job.job.metadata().name());
}

void TrackedJobSet::RememberNode(const std::string& job, int index,
                                 const std::string& node) {
  if (index < 0) return;
  std::vector<std::string>& last = last_node[job];
  if (static_cast<int>(last.size()) <= index) last.resize(index + 1);
  last[index] = node;
}

const std::string& TrackedJobSet::LastNode(const std::string& job,
                                           int index) const {
  static const std::string* const kNone = new std::string();
  auto it = last_node.find(job);
  if (it == last_node.end() || index < 0 ||
      index >= static_cast<int>(it->second.size())) {
    return *kNone;
  }
  return it->second[index];
}

void TrackedJobSet::AppendAssignments(std::vector<Assignment>* orders) {
  std::vector<std::pair<const api::Job*, const api::PodRecord*>> current;
  std::vector<JobState*> owners;
  for (auto& [name, job] : jobs) {
    for (const auto& [pod_name, pod] : job.pods) {
      if (!OnNode(pod) || pod.has_deletion_timestamp()) continue;
      current.emplace_back(&job.job, &pod);
      owners.push_back(&job);
    }
  }
  if (current.empty()) return;
  // Held pods are in the host table (their names are theirs once they
  // start) but are not sent.
  auto held = [&](size_t i) {
    const api::PodRecord& pod = *current[i].second;
    return pod.waiting_for_config() ||
           (!owners[i]->config_error.empty() && !PodStarted(pod));
  };
  auto table = std::make_shared<const SharedHostTable>(HostTable(current));
  orders->reserve(orders->size() + current.size());
  const int32_t in_place = jobset.status().current_in_place_restart_attempt();
  for (size_t i = 0; i < current.size(); ++i) {
    if (held(i)) continue;
    Assignment order{owners[i]->Shape(), AssignedPodOf(*current[i].second),
                     table};
    order.config = owners[i]->config;
    // A launch: placed by this jobsetd, not yet reported by its agent.
    const api::PodStatus& status = current[i].second->status();
    if (gang.placed.has_value() &&
        (status.phase().empty() || status.phase() == api::kPodPending) &&
        status.container_statuses().empty()) {
      order.bound = *gang.placed;
    }
    // A pod told to run a restart in place's next attempt keeps the one it
    // runs until the barrier is down.
    if (order.pod.in_place_attempt.has_value() &&
        *order.pod.in_place_attempt > in_place) {
      order.pod.in_place_attempt = in_place;
    }
    orders->push_back(std::move(order));
  }
}

std::string ControllerState::KeyOf(absl::string_view ns,
                                   absl::string_view name) {
  return absl::StrCat(ns, "/", name);
}

namespace {

// A Job's records that do not decode leave its JobSet's state unknown.
TrackedJobSet::Failure UndecodableFailure(const std::string& key,
                                          const absl::Status& error) {
  return {kReasonUndecodableRecord,
          absl::StrCat("stored record ", key,
                       " does not decode, so what this JobSet runs is "
                       "unknown; the record is left in the store: ",
                       error.message())};
}

}  // namespace

absl::StatusOr<int64_t> ControllerState::Load(store::Store& store) {
  pod_by_uid_.clear();  // Before the records its keys view.
  jobsets_.clear();
  dirty_.clear();
  wakes_ = {};
  orphan_keys_.clear();
  undecodable_.clear();
  undecodable_jobsets_.clear();
  undecodable_jobs_.clear();
  const int64_t revision = store.CurrentRevision();
  JOBSET_RETURN_IF_ERROR(store::ScanAll(
      store, store::keys::kJobSets,
      [&](const store::KeyValue& kv) -> absl::Status {
        absl::StatusOr<api::JobSet> js = store::DecodeValue<api::JobSet>(kv);
        if (!js.ok()) {
          // jobsets/<ns>/<name>: its children are left alone too.
          std::vector<absl::string_view> parts = absl::StrSplit(kv.key, '/');
          if (parts.size() == 3)
            undecodable_jobsets_.insert(KeyOf(parts[1], parts[2]));
          undecodable_.push_back({kv.key, js.status(), ""});
          return absl::OkStatus();
        }
        const std::string key =
            KeyOf(js->metadata().namespace_(), js->metadata().name());
        TrackedJobSet& t = Track(key);
        t.jobset = *std::move(js);
        t.revision = kv.mod_revision;
        dirty_.insert(key);
        return absl::OkStatus();
      }));
  // Children of a JobSet that is gone are deleted by the first pass.
  // jobs/<ns>/<jobset>/<job> and pods/<ns>/<jobset>/<job>.
  struct Owner {
    TrackedJobSet* jobset = nullptr;
    std::string job;     // "<ns>/<jobset>/<job>"
    bool leave = false;  // Its JobSet or Job did not decode.
  };
  auto owner = [&](const std::string& key) -> Owner {
    // jobs/<ns>/<jobset>/<job>, and pods/ the same or with a chunk after.
    std::vector<absl::string_view> parts = absl::StrSplit(key, '/');
    if (parts.size() != 4 && parts.size() != 5) return {};
    const std::string jobset = KeyOf(parts[1], parts[2]);
    Owner o{Find(jobset), absl::StrCat(jobset, "/", parts[3])};
    o.leave = undecodable_jobsets_.contains(jobset) ||
              undecodable_jobs_.contains(o.job);
    return o;
  };
  auto set_aside = [&](const store::KeyValue& kv, const absl::Status& error,
                       Owner& o) {
    undecodable_.push_back(
        {kv.key, error, o.jobset == nullptr ? "" : o.jobset->key});
    if (o.jobset == nullptr) return;
    undecodable_jobs_.insert(o.job);
    if (!o.jobset->fail.has_value())
      o.jobset->fail = UndecodableFailure(kv.key, error);
  };
  JOBSET_RETURN_IF_ERROR(store::ScanAll(
      store, store::keys::kJobs,
      [&](const store::KeyValue& kv) -> absl::Status {
        Owner o = owner(kv.key);
        if (o.leave) return absl::OkStatus();
        absl::StatusOr<api::Job> job = store::DecodeValue<api::Job>(kv);
        if (!job.ok()) {
          set_aside(kv, job.status(), o);
        } else if (o.jobset == nullptr) {
          orphan_keys_.push_back(kv.key);
        } else {
          TrackedJobSet& t = *o.jobset;
          t.dirty_jobs.insert(job->metadata().name());
          CompactJob(&*job);  // Written by an older jobsetd: it may not be.
          AddJob(t, *std::move(job));
        }
        return absl::OkStatus();
      }));
  JOBSET_RETURN_IF_ERROR(store::ScanAll(
      store, store::keys::kPods,
      [&](const store::KeyValue& kv) -> absl::Status {
        Owner o = owner(kv.key);
        if (o.leave) return absl::OkStatus();
        TrackedJobSet* t = o.jobset;
        const std::optional<JobPodsKeyParts> key = ParseJobPodsKey(kv.key);
        const std::string job_name = key.has_value() ? key->job : "";
        auto job = t == nullptr ? decltype(t->jobs)::iterator()
                                : t->jobs.find(job_name);
        absl::StatusOr<std::vector<api::PodRecord>> pods = DecodeJobPods(kv);
        if (!pods.ok()) {
          set_aside(kv, pods.status(), o);
          // Without its pods the Job is not known either: left out.
          if (t != nullptr && job != t->jobs.end()) {
            for (const auto& [name, pod] : job->second.pods) UnindexPod(pod);
            t->dirty_jobs.erase(job_name);
            t->jobs.erase(job);
          }
          return absl::OkStatus();
        }
        if (t == nullptr || job == t->jobs.end()) {
          orphan_keys_.push_back(kv.key);
          return absl::OkStatus();
        }
        JobState& state = job->second;
        state.stored_chunks = std::max(state.stored_chunks, key->chunk + 1);
        for (api::PodRecord& pod : *pods) {
          std::string name = pod.name();
          api::PodRecord& held = state.pods[name] = std::move(pod);
          IndexPod(*t, state, held);
          if (Placed(held)) {
            t->RememberNode(job_name, held.completion_index(),
                            held.node_name());
          }
        }
        return absl::OkStatus();
      }));
  JOBSET_RETURN_IF_ERROR(LoadAttemptHistories(store, *this));
  return revision;
}

std::vector<ControllerState::Undecodable> ControllerState::TakeUndecodable() {
  return std::exchange(undecodable_, {});
}

TrackedJobSet* ControllerState::Find(const std::string& key) {
  auto it = jobsets_.find(key);
  return it == jobsets_.end() ? nullptr : &it->second;
}

const TrackedJobSet* ControllerState::Find(const std::string& key) const {
  auto it = jobsets_.find(key);
  return it == jobsets_.end() ? nullptr : &it->second;
}

TrackedJobSet& ControllerState::Track(const std::string& key) {
  TrackedJobSet& t = jobsets_[key];
  t.key = key;
  return t;
}

void ControllerState::Untrack(const std::string& key) { jobsets_.erase(key); }

void ControllerState::WakeAt(TrackedJobSet& t, absl::Time at) {
  if (t.wake && *t.wake <= at) return;
  t.wake = at;
  wakes_.emplace(at, t.key);
  // A JobSet reconciled again sets its wake again (a far deadline, a
  // progress timeout that moves): entries that went stale before their time
  // are rebuilt away once they outnumber the JobSets, a walk per that many
  // pushes.
  if (wakes_.size() > 2 * jobsets_.size() + 64) {
    std::vector<Wake> current;
    current.reserve(jobsets_.size());
    for (const auto& [key, js] : jobsets_) {
      if (js.wake) current.emplace_back(*js.wake, key);
    }
    wakes_ = decltype(wakes_)(std::greater<Wake>(), std::move(current));
  }
}

bool ControllerState::WakeCurrent(const Wake& w) const {
  auto it = jobsets_.find(w.second);
  return it != jobsets_.end() && it->second.wake == w.first;
}

void ControllerState::MarkDue(absl::Time now) {
  while (!wakes_.empty() && wakes_.top().first <= now) {
    const Wake w = wakes_.top();
    wakes_.pop();
    if (!WakeCurrent(w)) continue;
    // It stays dirty until a pass reconciles it, which clears its wake and
    // sets the next.
    TrackedJobSet& t = jobsets_.at(w.second);
    MarkDirty(t.key);
    for (const auto& [name, job] : t.jobs) t.dirty_jobs.insert(name);
  }
}

std::optional<absl::Time> ControllerState::NextWake() const {
  while (!wakes_.empty() && !WakeCurrent(wakes_.top())) wakes_.pop();
  if (wakes_.empty()) return std::nullopt;
  return wakes_.top().first;
}

void ControllerState::SetAside(const std::string& key) {
  auto it = jobsets_.find(key);
  if (it == jobsets_.end()) return;
  for (const auto& [name, job] : it->second.jobs) {
    for (const auto& [pod_name, pod] : job.pods) UnindexPod(pod);
  }
  dirty_.erase(key);
  jobsets_.erase(it);
}

JobState& ControllerState::AddJob(TrackedJobSet& t, api::Job job) {
  JobState& state = t.jobs[job.metadata().name()];
  state.SetJob(std::move(job));
  return state;
}

void ControllerState::IndexPod(TrackedJobSet& t, JobState& job,
                               api::PodRecord& pod) {
  pod_by_uid_[pod.uid()] = {&t, &job, &pod};
}

void ControllerState::UnindexPod(const api::PodRecord& pod) {
  pod_by_uid_.erase(pod.uid());
}

const PodLocation* ControllerState::FindPod(absl::string_view uid) const {
  auto it = pod_by_uid_.find(uid);
  return it == pod_by_uid_.end() ? nullptr : &it->second;
}

void ControllerState::SetNode(NodeInfo node) {
  nodes_.insert_or_assign(node.name, std::move(node));
}

bool ControllerState::SetNodeNotReady(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return false;
  it->second.ready = false;
  return true;
}

std::set<std::string> ControllerState::TakeDirty(size_t max) {
  std::set<std::string> taken;
  while (!dirty_.empty() && taken.size() < max) {
    taken.insert(dirty_.extract(dirty_.begin()));
  }
  return taken;
}

std::vector<std::string> ControllerState::TakeOrphanKeys() {
  return std::exchange(orphan_keys_, {});
}

}  // namespace jobset::scheduler
