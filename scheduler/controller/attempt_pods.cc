#include "scheduler/controller/attempt_pods.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "scheduler/controller/pass_writes.h"
#include "scheduler/records/attempt_pods.h"
#include "store/decode.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {
namespace {

// Whether `pod` reached a node's agent, which may have its log.
bool MayHaveLog(const api::PodRecord& pod) {
  return Placed(pod) && !pod.waiting_for_config();
}

int32_t AttemptOf(const TrackedJobSet& t, const JobState& job) {
  return job.child.restart_attempt.value_or(t.jobset.status().restarts());
}

void DeleteParts(const std::string& ns, const std::string& name,
                 const api::AttemptHistory::Attempt& a, PassWrites& writes) {
  for (int part = 0; part < a.parts(); ++part)
    writes.Delete(store::keys::AttemptPodsKey(ns, name, a.attempt(), part));
}

}  // namespace

void RetiredPods::KeepJob(const TrackedJobSet& t, JobState job,
                          PassWrites& writes) {
  if (std::none_of(job.pods.begin(), job.pods.end(),
                   [](const auto& p) { return MayHaveLog(p.second); })) {
    writes.Retire(std::move(job));
    return;
  }
  kept_[t.key][AttemptOf(t, job)].jobs.push_back(std::move(job));
}

void RetiredPods::KeepPod(const TrackedJobSet& t, const JobState& job,
                          std::map<std::string, api::PodRecord>::node_type pod,
                          PassWrites& writes) {
  if (!MayHaveLog(pod.mapped())) {
    writes.Retire(std::move(pod));
    return;
  }
  kept_[t.key][AttemptOf(t, job)].pods.push_back(
      {job.job.metadata().name(), job.child.replicated_job, std::move(pod)});
}

void RetiredPods::Forget(const std::string& key, PassWrites& writes) {
  auto it = kept_.find(key);
  if (it == kept_.end()) return;
  for (auto& [attempt, kept] : it->second) {
    for (JobState& job : kept.jobs) writes.Retire(std::move(job));
    for (Pod& pod : kept.pods) writes.Retire(std::move(pod.record));
  }
  kept_.erase(it);
}

void RetiredPods::Record(ControllerState& state, int history,
                         PassWrites& writes) {
  for (auto& [key, attempts] : std::exchange(kept_, {})) {
    TrackedJobSet* t = state.Find(key);
    if (t != nullptr && !t->deleted) {
      const std::string& ns = t->jobset.metadata().namespace_();
      const std::string& name = t->jobset.metadata().name();
      const std::string& uid = t->jobset.metadata().uid();
      const AttemptRange range =
          KeptAttempts(t->jobset.status().restarts(), history);
      api::AttemptHistory& h = t->attempt_history;
      bool changed = h.jobset_uid() != uid;
      h.set_jobset_uid(uid);
      for (auto& [attempt, kept] : attempts) {
        if (!range.Contains(attempt)) continue;
        // A structured binding cannot be captured (C++17): a copy is.
        const auto index = attempt;
        auto a = std::find_if(
            h.mutable_attempts()->begin(), h.mutable_attempts()->end(),
            [index](const auto& e) { return e.attempt() == index; });
        if (a == h.mutable_attempts()->end()) {
          api::AttemptHistory::Attempt* added = h.add_attempts();
          added->set_attempt(attempt);
          a = h.mutable_attempts()->end() - 1;
        }
        if (a->parts() >= kMaxAttemptParts) continue;
        const size_t used =
            static_cast<size_t>(std::max<int64_t>(a->bytes(), 0));
        AttemptPodsBuilder part(
            uid, attempt,
            kMaxAttemptPodsBytes - std::min(used, kMaxAttemptPodsBytes));
        for (const JobState& job : kept.jobs) {
          for (const auto& [pod_name, pod] : job.pods) {
            if (MayHaveLog(pod)) {
              part.Add(job.job.metadata().name(), job.child.replicated_job,
                       pod);
            }
          }
        }
        for (const Pod& pod : kept.pods)
          part.Add(pod.job, pod.replicated_job, pod.record.mapped());
        std::string value = part.Build().SerializeAsString();
        writes.Put(store::keys::AttemptPodsKey(ns, name, attempt, a->parts()),
                   value);
        a->set_parts(a->parts() + 1);
        a->set_bytes(a->bytes() + static_cast<int64_t>(value.size()));
        changed = true;
      }
      // Oldest first; attempts that fell out of the range go.
      std::sort(h.mutable_attempts()->begin(), h.mutable_attempts()->end(),
                [](const auto& x, const auto& y) {
                  return x.attempt() < y.attempt();
                });
      api::AttemptHistory trimmed;
      trimmed.set_jobset_uid(uid);
      for (api::AttemptHistory::Attempt& e : *h.mutable_attempts()) {
        if (range.Contains(e.attempt())) {
          *trimmed.add_attempts() = std::move(e);
        } else {
          DeleteParts(ns, name, e, writes);
          changed = true;
        }
      }
      h = std::move(trimmed);
      if (changed) {
        writes.Put(store::keys::AttemptHistoryKey(ns, name),
                   h.SerializeAsString());
      }
    }
    // Freed when the pass ends, as the records the pass erases are.
    for (auto& [attempt, kept] : attempts) {
      for (JobState& job : kept.jobs) writes.Retire(std::move(job));
      for (Pod& pod : kept.pods) writes.Retire(std::move(pod.record));
    }
  }
}

void EraseAttemptPods(TrackedJobSet& t, PassWrites& writes) {
  api::AttemptHistory& h = t.attempt_history;
  if (h.jobset_uid().empty() && h.attempts().empty()) return;
  const std::string& ns = t.jobset.metadata().namespace_();
  const std::string& name = t.jobset.metadata().name();
  for (const api::AttemptHistory::Attempt& a : h.attempts())
    DeleteParts(ns, name, a, writes);
  writes.Delete(store::keys::AttemptHistoryKey(ns, name));
  h.Clear();
}

absl::Status LoadAttemptHistories(store::Store& store, ControllerState& state) {
  return store::ScanAll(
      store, store::keys::kAttempts,
      [&](const store::KeyValue& kv) -> absl::Status {
        // attempts/<ns>/<jobset>
        absl::string_view rest = kv.key;
        absl::ConsumePrefix(&rest, store::keys::kAttempts);
        std::vector<std::string> parts = absl::StrSplit(rest, '/');
        if (parts.size() != 2) {
          state.AddOrphanKey(kv.key);
          return absl::OkStatus();
        }
        const std::string key = ControllerState::KeyOf(parts[0], parts[1]);
        if (state.IsUndecodable(key)) return absl::OkStatus();
        TrackedJobSet* t = state.Find(key);
        absl::StatusOr<api::AttemptHistory> h =
            store::DecodeValue<api::AttemptHistory>(kv);
        if (!h.ok()) {
          // Left in the store; the JobSet's next record replaces it.
          state.AddUndecodable({kv.key, h.status(), t ? t->key : ""});
          return absl::OkStatus();
        }
        if (t != nullptr && h->jobset_uid() == t->jobset.metadata().uid()) {
          t->attempt_history = *std::move(h);
          return absl::OkStatus();
        }
        // Its JobSet is gone (deleted while jobsetd was down, or before
        // its pass), or is another of the name (which writes its own): the
        // history and its parts go.
        for (const api::AttemptHistory::Attempt& a : h->attempts()) {
          for (int part = 0; part < a.parts(); ++part) {
            state.AddOrphanKey(store::keys::AttemptPodsKey(parts[0], parts[1],
                                                           a.attempt(), part));
          }
        }
        state.AddOrphanKey(kv.key);
        return absl::OkStatus();
      });
}

}  // namespace jobset::scheduler
