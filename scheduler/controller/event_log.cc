#include "scheduler/controller/event_log.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "store/decode.h"
#include "store/keys.h"
#include "store/scan.h"

namespace jobset::scheduler {

absl::Status EventLog::Load(store::Store& store, ControllerState& state) {
  by_jobset_.clear();
  return store::ScanAll(
      store, store::keys::kEvents,
      [&](const store::KeyValue& kv) -> absl::Status {
        // events/<ns>/<jobset>/<seq>
        std::vector<absl::string_view> parts = absl::StrSplit(kv.key, '/');
        uint64_t seq = 0;
        const std::string key =
            parts.size() == 4 ? ControllerState::KeyOf(parts[1], parts[2]) : "";
        if (!key.empty() && state.IsUndecodable(key)) {
          return absl::OkStatus();  // Left alone with its JobSet.
        }
        if (key.empty() || state.Find(key) == nullptr ||
            !absl::SimpleAtoi(parts[3], &seq)) {
          state.AddOrphanKey(kv.key);
          return absl::OkStatus();
        }
        absl::StatusOr<api::Event> e = store::DecodeValue<api::Event>(kv);
        if (!e.ok()) {
          state.AddUndecodable({kv.key, e.status(), key});
          return absl::OkStatus();
        }
        by_jobset_[key].emplace_back(
            seq, JobSetEvent{e->type(), e->reason(), e->note()});
        last_seq_ = std::max(last_seq_, seq);
        return absl::OkStatus();
      });
}

void EventLog::Queue(const std::string& key, JobSetEvent e) {
  queued_[key].push_back(std::move(e));
}

void EventLog::Trim(const TrackedJobSet& t, absl::Time now, HeldEvents& events,
                    PassWrites& writes) {
  const uint64_t oldest = static_cast<uint64_t>(
      std::max<int64_t>(0, absl::ToUnixNanos(now - retention_.max_age)));
  while (!events.empty() && (events.size() > retention_.per_jobset ||
                             events.front().first < oldest)) {
    writes.Delete(store::keys::EventKey(t.jobset.metadata().namespace_(),
                                        t.jobset.metadata().name(),
                                        events.front().first));
    events.pop_front();
  }
}

void EventLog::Stage(absl::Time now, const ControllerState& state,
                     PassWrites& writes) {
  for (auto& [key, events] : std::exchange(queued_, {})) {
    if (state.Find(key) == nullptr) continue;
    for (JobSetEvent& e : events) writes.Event(key, std::move(e));
  }
  for (auto& [key, events] : writes.TakeEvents()) {
    const TrackedJobSet* t = state.Find(key);
    if (t == nullptr) continue;
    const std::string& ns = t->jobset.metadata().namespace_();
    const std::string& name = t->jobset.metadata().name();
    HeldEvents& held = by_jobset_[key];
    for (JobSetEvent& e : events) {
      last_seq_ = std::max(last_seq_ + 1,
                           static_cast<uint64_t>(absl::ToUnixNanos(now)));
      api::Event stored;
      stored.mutable_metadata()->set_namespace_(ns);
      stored.mutable_metadata()->set_name(
          absl::StrCat(name, ".", absl::Hex(last_seq_)));
      stored.set_regarding(absl::StrCat("JobSet/", name));
      stored.set_type(e.type);
      stored.set_reason(e.reason);
      stored.set_note(e.message);
      stored.mutable_event_time()->set_seconds(absl::ToUnixSeconds(now));
      writes.Put(store::keys::EventKey(ns, name, last_seq_),
                 stored.SerializeAsString());
      held.emplace_back(last_seq_, std::move(e));
    }
    Trim(*t, now, held, writes);
  }
  if (now - swept_ >= absl::Minutes(1)) {
    swept_ = now;
    for (auto& [key, events] : by_jobset_) {
      if (const TrackedJobSet* t = state.Find(key); t != nullptr)
        Trim(*t, now, events, writes);
    }
  }
}

void EventLog::Erase(const TrackedJobSet& t, PassWrites& writes) {
  auto it = by_jobset_.find(t.key);
  if (it == by_jobset_.end()) return;
  for (const auto& [seq, e] : it->second) {
    writes.Delete(store::keys::EventKey(t.jobset.metadata().namespace_(),
                                        t.jobset.metadata().name(), seq));
  }
  by_jobset_.erase(it);
}

std::vector<JobSetEvent> EventLog::Events(const std::string& key) const {
  std::vector<JobSetEvent> out;
  auto it = by_jobset_.find(key);
  if (it == by_jobset_.end()) return out;
  for (const auto& [seq, e] : it->second) out.push_back(e);
  return out;
}

}  // namespace jobset::scheduler
