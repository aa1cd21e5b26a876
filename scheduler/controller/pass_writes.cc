#include "scheduler/controller/pass_writes.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "common/parallel.h"
#include "scheduler/records/records.h"
#include "store/keys.h"

namespace jobset::scheduler {
namespace {

// A pass with fewer records to serialize than this does it on the
// controller thread alone.
constexpr size_t kParallelRecords = 64;

}  // namespace

void DeferredJobDeletions::Done(const std::string& jobset_key,
                                const std::string& job) {
  auto it = jobs_.find(jobset_key);
  if (it == jobs_.end()) return;
  it->second.erase(job);
  if (it->second.empty()) jobs_.erase(it);
}

void PassWrites::Put(std::string key, std::string value) {
  keys_[std::move(key)] = std::move(value);
}

void PassWrites::Delete(std::string key) {
  keys_[std::move(key)] = std::nullopt;
}

void PassWrites::JobChanged(TrackedJobSet& t, JobState& job) {
  if (!job.job_changed && !job.pods_changed) staged_.insert(t.key);
  job.job_changed = true;
}

void PassWrites::PodsChanged(TrackedJobSet& t, JobState& job) {
  job.idle = false;
  if (!job.job_changed && !job.pods_changed) staged_.insert(t.key);
  job.pods_changed = true;
}

void PassWrites::Stop(const api::PodRecord& pod) {
  stops_.push_back({pod.node_name(), pod.uid()});
}

void PassWrites::Release(const api::PodRecord& pod) {
  releases_.push_back({pod.node_name(), pod.uid()});
}

void PassWrites::Event(const std::string& key, JobSetEvent e) {
  events_[key].push_back(std::move(e));
}

void PassWrites::ForgetJobSet(const std::string& key) {
  events_.erase(key);
  jobsets_.erase(key);
  staged_.erase(key);
  launched_.erase(key);
}

std::vector<const JobState*> PassWrites::ChangedJobs(
    ControllerState& state) const {
  std::vector<const JobState*> changed;
  for (const std::string& key : staged_) {
    const TrackedJobSet* t = state.Find(key);
    if (t == nullptr) continue;
    for (const auto& [name, job] : t->jobs) {
      if (job.job_changed) changed.push_back(&job);
    }
  }
  return changed;
}

void PassWrites::SerializeChildren(
    ControllerState& state,
    absl::flat_hash_map<const JobState*, std::string> serialized,
    DeferredJobDeletions& deferred) {
  // What to serialize where: a Job (into `value`) or its pods (into
  // `chunks`, as many JobPods records as they need).
  struct Record {
    const JobState* job;
    std::optional<std::string>* value;
    std::vector<std::string>* chunks;
  };
  std::vector<Record> records;
  struct PodsRecord {
    JobState* job;
    const TrackedJobSet* jobset;
    std::vector<std::string> chunks;
  };
  std::deque<PodsRecord> pods;  // Stable: records point into it.
  for (const std::string& key : staged_) {
    TrackedJobSet* t = state.Find(key);
    if (t == nullptr) continue;
    const std::string& ns = t->jobset.metadata().namespace_();
    const std::string& jobset = t->jobset.metadata().name();
    for (auto& [name, job] : t->jobs) {
      if (job.job_changed) {
        job.job_changed = false;
        deferred.Done(key, name);
        std::optional<std::string>& value =
            keys_[store::keys::JobKey(ns, jobset, name)];
        if (auto done = serialized.find(&job); done != serialized.end()) {
          value = std::move(done->second);
        } else {
          records.push_back({&job, &value, nullptr});
        }
      }
      if (!job.pods_changed) continue;
      job.pods_changed = false;
      if (job.pods.empty()) {
        for (int i = 0; i < std::max(1, job.stored_chunks); ++i)
          Delete(JobPodsChunkKey(ns, jobset, name, i));
        job.stored_chunks = 0;
      } else {
        pods.push_back({&job, t, {}});
        records.push_back({&job, nullptr, &pods.back().chunks});
      }
    }
  }
  staged_.clear();
  // Records are independent, and keys_ is not changed until all are done
  // (its nodes hold the values being written).
  ParallelFor(records.size(), kParallelRecords, [&records](size_t i) {
    const Record& r = records[i];
    if (r.chunks != nullptr) {
      *r.chunks =
          EncodeJobPodsChunks(r.job->job.metadata().name(), r.job->pods);
    } else {
      *r.value = r.job->job.SerializeAsString();
    }
  });
  for (PodsRecord& p : pods) {
    const std::string& ns = p.jobset->jobset.metadata().namespace_();
    const std::string& jobset = p.jobset->jobset.metadata().name();
    const std::string& name = p.job->job.metadata().name();
    const int n = static_cast<int>(p.chunks.size());
    for (int i = 0; i < n; ++i)
      Put(JobPodsChunkKey(ns, jobset, name, i), std::move(p.chunks[i]));
    // Fewer chunks than before: the rest go.
    for (int i = n; i < p.job->stored_chunks; ++i)
      Delete(JobPodsChunkKey(ns, jobset, name, i));
    p.job->stored_chunks = n;
  }
}

store::Batch PassWrites::ToBatch(const ControllerState& state) const {
  store::Batch batch;
  for (const auto& [key, value] : keys_) {
    if (value.has_value()) {
      batch.Put(key, *value);
    } else {
      batch.Delete(key);
    }
  }
  for (const std::string& key : jobsets_) {
    const TrackedJobSet* t = state.Find(key);
    if (t == nullptr) continue;
    api::JobSet js = t->jobset;
    js.mutable_metadata()->clear_resource_version();
    batch.Update(store::keys::JobSetKey(t->jobset.metadata().namespace_(),
                                        t->jobset.metadata().name()),
                 js.SerializeAsString(), t->revision);
  }
  return batch;
}

}  // namespace jobset::scheduler
