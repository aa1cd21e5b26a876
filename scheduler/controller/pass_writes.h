#ifndef JOBSET_SCHEDULER_CONTROLLER_PASS_WRITES_H_
#define JOBSET_SCHEDULER_CONTROLLER_PASS_WRITES_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "scheduler/controller/attempt_pods.h"
#include "scheduler/controller/controller_state.h"
#include "scheduler/controller/jobset_reconcile.h"
#include "store/store.h"

namespace jobset::scheduler {

// A pod an agent is told about: its node and uid, by value, so that an order
// outlives the record it was made from (a restart erases the old attempt's
// records in the pass that stops them).
struct PodRef {
  std::string node;
  std::string uid;
  bool operator==(const PodRef&) const = default;
};

// Jobs the JobSet layer deleted whose deletionTimestamp is not stored yet.
// The pass that decides a restart commits only what recovery needs (the
// JobSet's status, from which the JobSet layer deletes the previous
// attempt's Jobs again after a crash), so that the old attempt's pods are
// told to stop without waiting for 1,000 Jobs to be rewritten; the next pass,
// which runs at once, writes them while the agents stop the pods. Likewise
// the pods a pass erased of live JobSets (`retired`), which the next pass
// records for their logs (attempt_pods.h).
// Used only from the controller thread.
class DeferredJobDeletions {
 public:
  void Add(const std::string& jobset_key, const std::string& job) {
    jobs_[jobset_key].insert(job);
  }
  // The Job was written (with its deletionTimestamp) or erased.
  void Done(const std::string& jobset_key, const std::string& job);
  bool empty() const { return jobs_.empty() && retired_.empty(); }
  // Takes every deferred Job, by JobSet key.
  std::map<std::string, std::set<std::string>> TakeAll() {
    return std::exchange(jobs_, {});
  }
  RetiredPods& retired() { return retired_; }

 private:
  std::map<std::string, std::set<std::string>> jobs_;
  RetiredPods retired_;
};

// What one pass decided, to commit in one batch and then tell the fleet:
// store writes, the JobSets whose object changed, the Jobs and pod records
// to serialize, JobSets with pods placed, pods to stop and release, events.
// Used only from the controller thread.
class PassWrites {
 public:
  // Store writes by key (nullopt: delete).
  void Put(std::string key, std::string value);
  void Delete(std::string key);

  // JobSet `key`'s object (its status) changed.
  void JobSetChanged(const std::string& key) { jobsets_.insert(key); }
  // `job`'s Job, or its JobPods record, must be written.
  void JobChanged(TrackedJobSet& t, JobState& job);
  void PodsChanged(TrackedJobSet& t, JobState& job);
  // Pods of JobSet `key` were placed: send its assignments after the
  // commit.
  void Launched(const std::string& key) { launched_.insert(key); }
  // A JobSet's restart-all was decided (its status.restarts grew).
  void RestartDecided() { restart_decided_ = true; }
  void Stop(const api::PodRecord& pod);
  void Release(const api::PodRecord& pod);
  void Event(const std::string& key, JobSetEvent e);
  // Keeps an erased Job, or pod, until the pass ends: freeing a restart's
  // old attempt (1,000 Jobs, 15,000 pods) takes longer than launching the
  // new one, so it is done after the fleet has been told.
  void Retire(JobState job) { retired_jobs_.push_back(std::move(job)); }
  void Retire(std::map<std::string, api::PodRecord>::node_type pod) {
    retired_pods_.push_back(std::move(pod));
  }
  // JobSet `key` is gone: drops what the pass had for its object, children,
  // launches and events (its deletes stay).
  void ForgetJobSet(const std::string& key);

  // Serializes every changed Job and JobPods record of the staged JobSets
  // into store writes (a restart's thousands on two threads), clearing
  // their changed flags; Jobs in `serialized` are written as serialized
  // there. Tells `deferred` which Jobs got written.
  void SerializeChildren(
      ControllerState& state,
      absl::flat_hash_map<const JobState*, std::string> serialized,
      DeferredJobDeletions& deferred);
  // The Jobs SerializeChildren will write, to serialize ahead of it.
  std::vector<const JobState*> ChangedJobs(ControllerState& state) const;

  // The batch: every write, and each changed JobSet compared and swapped
  // at its tracked revision.
  store::Batch ToBatch(const ControllerState& state) const;

  const std::set<std::string>& jobsets() const { return jobsets_; }
  // JobSet `key` was deleted through the API meanwhile: its object is not
  // written.
  void DropJobSet(const std::string& key) { jobsets_.erase(key); }
  const std::set<std::string>& launched() const { return launched_; }
  bool restart_decided() const { return restart_decided_; }
  const std::vector<PodRef>& stops() const { return stops_; }
  const std::vector<PodRef>& releases() const { return releases_; }
  std::map<std::string, std::vector<JobSetEvent>> TakeEvents() {
    return std::exchange(events_, {});
  }

 private:
  std::map<std::string, std::optional<std::string>> keys_;
  std::set<std::string> jobsets_;
  // JobSets whose Jobs or pod records changed: serialized before the commit.
  std::set<std::string> staged_;
  std::set<std::string> launched_;
  bool restart_decided_ = false;
  std::vector<PodRef> stops_;
  std::vector<PodRef> releases_;
  std::map<std::string, std::vector<JobSetEvent>> events_;
  std::vector<JobState> retired_jobs_;
  std::vector<std::map<std::string, api::PodRecord>::node_type> retired_pods_;
};

}  // namespace jobset::scheduler

#endif  // JOBSET_SCHEDULER_CONTROLLER_PASS_WRITES_H_
